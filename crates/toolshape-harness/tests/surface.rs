#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Resources, prompts and completions through `toolshape::client`, against
//! the conformance fixtures served over stdio (a child process), Streamable
//! HTTP sessions (2025-11-25) and stateless HTTP (2026-07-28).

mod client_common;

use std::time::Duration;

use serde_json::{Map, Value, json};
use toolshape::client::{Client, ClientBuilder, ClientErrorKind, Negotiation, ServerCommand};
use toolshape::protocol::ProtocolVersion;
use toolshape::protocol::asks::ElicitResult;
use toolshape::protocol::content::{ContentBlock, ResourceContents};
use toolshape_harness::conformance;

const MODES: [(&str, Negotiation); 2] = [
    (
        "2025-11-25",
        Negotiation::Pinned(ProtocolVersion::V2025_11_25),
    ),
    ("2026-07-28", Negotiation::Auto),
];

/// A client that answers the prompt's question with "rust".
fn builder(negotiation: Negotiation) -> ClientBuilder {
    Client::builder()
        .negotiation(negotiation)
        .request_timeout(Duration::from_secs(10))
        .on_elicit(false, |_| async {
            let mut content = Map::new();
            content.insert("context".into(), json!("rust"));
            Ok(ElicitResult::accept(content))
        })
}

fn server() -> toolshape::Server {
    toolshape::Server::builder("surface", "1")
        .tools(conformance::asking_tools())
        .prompts(conformance::prompts())
        .resources(conformance::resources())
        .resource_templates(conformance::resource_templates())
        .build()
        .unwrap()
}

fn text_of(contents: &ResourceContents) -> &str {
    match contents {
        ResourceContents::Text(text) => &text.text,
        other => panic!("not text: {other:?}"),
    }
}

/// Every feature, checked on one connected client.
async fn exercise(client: &Client, label: &str) {
    let version = client.protocol_version();
    assert!(
        label.ends_with(version.as_str()),
        "{label}: spoke {version:?}"
    );
    let resources = client.list_resources().await.unwrap();
    let mut uris: Vec<_> = resources.iter().map(|r| r.uri.as_str()).collect();
    uris.sort_unstable();
    assert_eq!(
        uris,
        [
            "test://static-binary",
            "test://static-text",
            "test://watched-resource"
        ],
        "{label}"
    );
    let templates = client.list_resource_templates().await.unwrap();
    assert_eq!(templates.len(), 1, "{label}");
    assert_eq!(templates[0].uri_template, "test://template/{id}/data");

    let text = client.read_resource("test://static-text").await.unwrap();
    assert_eq!(
        text_of(&text[0]),
        "This is the content of the static text resource.",
        "{label}"
    );
    let binary = client.read_resource("test://static-binary").await.unwrap();
    match &binary[0] {
        ResourceContents::Blob(blob) => {
            assert_eq!(blob.mime_type.as_deref(), Some("image/png"));
            assert!(blob.blob.starts_with("iVBORw0KGgo"), "{label}");
        }
        other => panic!("{label}: not a blob: {other:?}"),
    }
    let templated = client
        .read_resource("test://template/42/data")
        .await
        .unwrap();
    let data: Value = serde_json::from_str(text_of(&templated[0])).unwrap();
    assert_eq!(data["id"], "42", "{label}");
    assert_eq!(data["data"], "Data for ID: 42", "{label}");

    // An unknown resource names the URI: invalid params on 2026-07-28
    // (SEP-2164), -32002 on the revisions before it.
    let missing = client.read_resource("test://nowhere").await.unwrap_err();
    client_common::assert_not_found(client, &missing, "test://nowhere");
    // The same from a reader that finds nothing at a URI its template matches.
    let uri = "test://template/missing/data";
    let missing = client.read_resource(uri).await.unwrap_err();
    client_common::assert_not_found(client, &missing, uri);
    if !version.is_stateless() {
        client.subscribe("test://watched-resource").await.unwrap();
    }

    let prompts = client.list_prompts().await.unwrap();
    assert_eq!(prompts.len(), 5, "{label}");
    let mut arguments = Map::new();
    arguments.insert("arg1".into(), json!("one"));
    arguments.insert("arg2".into(), json!("two"));
    let prompt = client
        .get_prompt("test_prompt_with_arguments", Some(arguments))
        .await
        .unwrap();
    match &prompt.messages[0].content {
        ContentBlock::Text(text) => assert_eq!(
            text.text, "Prompt with arguments: arg1='one', arg2='two'",
            "{label}"
        ),
        other => panic!("{label}: {other:?}"),
    }
    let image = client
        .get_prompt("test_prompt_with_image", None)
        .await
        .unwrap();
    assert!(
        matches!(image.messages[0].content, ContentBlock::Image(_)),
        "{label}"
    );
    // A prompt that asks the user: a request over the session, or a round.
    let asked = client
        .get_prompt("test_input_required_result_prompt", None)
        .await
        .unwrap();
    match &asked.messages[0].content {
        ContentBlock::Text(text) => assert_eq!(text.text, "Prompt with context: rust", "{label}"),
        other => panic!("{label}: {other:?}"),
    }

    let (places, ids) = client_common::conformance_completions(client).await;
    assert_eq!(places, ["paris", "park", "party"], "{label}");
    assert_eq!(ids, ["456"], "{label}");
}

#[tokio::test]
async fn resources_prompts_and_completions_over_stdio() {
    for (label, negotiation) in MODES {
        let command =
            ServerCommand::new(env!("CARGO_BIN_EXE_conformance_server")).args(["--stdio"]);
        let client = builder(negotiation).connect_stdio(command).await.unwrap();
        exercise(&client, &format!("stdio {label}")).await;
        client.close(Duration::from_secs(2)).await;
    }
}

#[tokio::test]
async fn resources_prompts_and_completions_over_http() {
    let url = client_common::serve_over_http(server()).await;
    for (label, negotiation) in MODES {
        let client = builder(negotiation).connect_http(&url).await.unwrap();
        exercise(&client, &format!("http {label}")).await;
        client.close(Duration::from_secs(2)).await;
    }
}

/// A server without resources or prompts offers neither: the methods are
/// not found, and the capabilities do not name them.
#[tokio::test]
async fn a_tools_only_server_offers_no_resources_or_prompts() {
    let command = ServerCommand::new(env!("CARGO_BIN_EXE_test_server"));
    let client = Client::builder().connect_stdio(command).await.unwrap();
    for outcome in [
        client.list_resources().await.map(|_| ()),
        client.list_prompts().await.map(|_| ()),
    ] {
        match outcome.unwrap_err().kind() {
            ClientErrorKind::Protocol(error) => assert_eq!(error.code, -32601),
            other => panic!("{other:?}"),
        }
    }
    client.close(Duration::from_secs(2)).await;
}

/// A session subscribed to a resource hears of its changes on the
/// session's stream; an unsubscribed resource's changes are not sent.
#[tokio::test]
async fn a_subscribed_session_hears_of_resource_updates() {
    let server = server();
    let url = client_common::serve_over_http(server.clone()).await;
    let (sender, mut updates) = tokio::sync::mpsc::unbounded_channel();
    let client = builder(MODES[0].1)
        .on_message(move |message| {
            let message: Value = serde_json::from_slice(message).unwrap_or_default();
            if message["method"] == "notifications/resources/updated" {
                let _ = sender.send(message["params"]["uri"].clone());
            }
        })
        .connect_http(&url)
        .await
        .unwrap();
    client.subscribe("test://watched-resource").await.unwrap();
    server.resource_updated("test://static-text");
    server.resource_updated("test://watched-resource");
    let first = tokio::time::timeout(Duration::from_secs(5), updates.recv())
        .await
        .expect("no resources/updated arrived");
    assert_eq!(first, Some(json!("test://watched-resource")));
    client.close(Duration::from_secs(2)).await;
}
