#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The proxy (the library, served with `Proxy::add_to` over real HTTP on
//! loopback) in front of the conformance server (a real child process over
//! stdio): its resources, resource templates and prompts, and the completion
//! of their arguments, reach a client as
//! a direct client sees them, on every pair of 2025-11-25 and 2026-07-28,
//! and an unknown resource is "not found" in the shape of the client's
//! revision. In front of the hostile server, a prompt and a template
//! listed twice are served once, the proxy starts, and the upstream's
//! refusal of a prompt's arguments reaches the client as invalid params.

mod client_common;

use serde_json::{Map, Value, json};
use toolshape::client::{Client, ClientErrorKind, Negotiation, ServerCommand, StderrMode};
use toolshape::protocol::ProtocolVersion;
use toolshape_proxy::{Proxy, ProxyOptions};

fn conformance_server() -> ServerCommand {
    ServerCommand::new(env!("CARGO_BIN_EXE_conformance_server"))
        .arg("--stdio")
        .stderr(StderrMode::Capture)
}

const ERAS: [Negotiation; 2] = [
    Negotiation::Pinned(ProtocolVersion::V2025_11_25),
    Negotiation::Pinned(ProtocolVersion::V2026_07_28),
];

/// Serves everything `proxy` offers over HTTP on loopback; its URL.
async fn serve(proxy: &Proxy) -> String {
    let server = proxy
        .add_to(toolshape::Server::builder("proxy", "1.0.0"))
        .build()
        .expect("the server builds");
    client_common::serve_over_http(server).await
}

/// What a client sees of the server's resources and prompts, as JSON.
async fn surface(client: &Client) -> Value {
    let mut resources = client.list_resources().await.unwrap();
    resources.sort_by(|a, b| a.uri.cmp(&b.uri));
    let templates = client.list_resource_templates().await.unwrap();
    let mut prompts = client.list_prompts().await.unwrap();
    prompts.sort_by(|a, b| a.name.cmp(&b.name));
    let mut read = Map::new();
    for uri in [
        "test://static-text",
        "test://static-binary",
        "test://template/42/data",
    ] {
        let contents = client.read_resource(uri).await.unwrap();
        read.insert(uri.into(), serde_json::to_value(contents).unwrap());
    }
    let mut arguments = Map::new();
    arguments.insert("arg1".into(), json!("one"));
    arguments.insert("arg2".into(), json!("two"));
    let rendered = client
        .get_prompt("test_prompt_with_arguments", Some(arguments))
        .await
        .unwrap();
    let image = client
        .get_prompt("test_prompt_with_image", None)
        .await
        .unwrap();
    // Completions of a prompt argument and a template variable (non-empty:
    // equal but empty would prove nothing).
    let (by_prompt, by_template) = client_common::conformance_completions(client).await;
    assert!(!by_prompt.is_empty() && !by_template.is_empty());
    json!({
        "resources": resources,
        "templates": templates,
        "prompts": prompts,
        "read": read,
        "rendered": rendered.messages,
        "image": image.messages,
        "completed": [by_prompt, by_template],
    })
}

#[tokio::test]
async fn resources_and_prompts_pass_through_on_every_pair_of_revisions() {
    for upstream_era in ERAS {
        let proxy =
            client_common::start_proxy(conformance_server(), upstream_era, ProxyOptions::default())
                .await;
        assert!(proxy.resources().is_some());
        assert_eq!(
            proxy.resource_templates().map(|t| t.uri_templates().len()),
            Some(1)
        );
        assert_eq!(proxy.prompts().map(|p| p.names().len()), Some(5));
        let url = serve(&proxy).await;
        for client_era in ERAS {
            let label = format!("upstream {upstream_era:?}, client {client_era:?}");
            let direct =
                client_common::connect(conformance_server(), client_era, client_common::options())
                    .await;
            let proxied = client_common::connect_http(&url, client_era).await;
            let (expected, got) = (surface(&direct).await, surface(&proxied).await);
            assert_eq!(got, expected, "{label}");
            assert_eq!(expected["prompts"].as_array().map(Vec::len), Some(5));

            // Nothing there: "not found", naming the URI, in the client's shape.
            let missing = proxied.read_resource("test://nowhere").await.unwrap_err();
            client_common::assert_not_found(&proxied, &missing, "test://nowhere");
        }
        proxy.shutdown(std::time::Duration::from_secs(2)).await;
    }
}

#[tokio::test]
async fn a_prompt_or_template_listed_twice_is_served_once() {
    let upstream = ServerCommand::new(client_common::hostile_server_bin())
        .arg("--surface")
        .stderr(StderrMode::Capture);
    let proxy =
        client_common::start_proxy(upstream, Negotiation::Auto, ProxyOptions::default()).await;
    assert_eq!(proxy.prompts().map(|p| p.names().len()), Some(1));
    assert_eq!(
        proxy.resource_templates().map(|t| t.uri_templates().len()),
        Some(1)
    );
    let url = serve(&proxy).await;
    for era in ERAS {
        let client = client_common::connect_http(&url, era).await;
        let prompts = client.list_prompts().await.unwrap();
        assert_eq!(prompts.len(), 1, "{era:?}");
        let mut arguments = Map::new();
        arguments.insert("who".into(), json!("you"));
        let greeting = client.get_prompt("greet", Some(arguments)).await.unwrap();
        assert_eq!(
            serde_json::to_value(&greeting.messages[0].content).unwrap()["text"],
            "hello, you",
            "{era:?}"
        );
        assert_eq!(client.list_resource_templates().await.unwrap().len(), 1);
        for uri in ["hostile://note", "hostile://notes/7"] {
            let read = client.read_resource(uri).await.unwrap();
            assert_eq!(
                serde_json::to_value(&read[0]).unwrap()["text"],
                format!("the note at {uri}"),
                "{era:?}"
            );
        }
        let missing = client.read_resource("hostile://other").await.unwrap_err();
        client_common::assert_not_found(&client, &missing, "hostile://other");
        // Refused as the TypeScript SDK's 1.x servers refuse a URI they do
        // not know (-32602, no `data`): passed on as the upstream wrote it,
        // not as something that broke.
        let refused = client.read_resource("hostile://gone").await.unwrap_err();
        match refused.kind() {
            ClientErrorKind::Protocol(error) => {
                assert_eq!(error.code, -32602, "{era:?}: {error:?}");
                assert_eq!(error.message, "Resource hostile://gone not found");
            }
            other => panic!("{era:?}: {other:?}"),
        }
        // The upstream refuses the argument: the client is told so (invalid
        // params, the upstream's reason), not that something broke.
        let mut arguments = Map::new();
        arguments.insert("who".into(), json!(""));
        let refused = client
            .get_prompt("greet", Some(arguments))
            .await
            .unwrap_err();
        match refused.kind() {
            ClientErrorKind::Protocol(error) => {
                assert_eq!(error.code, -32602, "{era:?}: {error:?}");
                assert!(error.message.contains("who must name someone"), "{error:?}");
            }
            other => panic!("{era:?}: {other:?}"),
        }
    }
    proxy.shutdown(std::time::Duration::from_secs(2)).await;
}
