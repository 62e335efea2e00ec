#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Every result to a 2026-07-28 request names its server in `_meta`
//! (`io.modelcontextprotocol/serverInfo`, that revision's SHOULD); results
//! on a handshake revision do not; `ServerOptions::server_info_in_results`
//! turns it off. A relaying caller (the proxy) leaves an upstream's name
//! out of the result it relays as written, and the proxy names itself.
//! Real HTTP on loopback; the proxy's upstream is the harness's
//! `test_server` (a toolshape server), a child process.

mod client_common;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use toolshape::client::{Client, Negotiation, ServerCommand, StderrMode};
use toolshape::protocol::ProtocolVersion;
use toolshape::protocol::meta::keys::SERVER_INFO;
use toolshape::{CallOptions, Server, ServerOptions, Tool, ToolError};

#[derive(Deserialize, JsonSchema)]
struct AddIn {
    a: i64,
    b: i64,
}

#[derive(Serialize, JsonSchema)]
struct Sum {
    sum: i64,
}

fn adder(options: ServerOptions) -> Server {
    Server::builder("adder", "2.0.0")
        .options(options)
        .tool(Tool::typed("add", |input: AddIn| async move {
            Ok::<_, ToolError>(Sum {
                sum: input.a + input.b,
            })
        }))
        .build()
        .unwrap()
}

async fn add(client: &Client, options: CallOptions) -> toolshape::client::ToolResult {
    let arguments = json!({"a": 2, "b": 40});
    client
        .call_tool_with("add", arguments.as_object().cloned(), options)
        .await
        .unwrap()
}

fn named(result: &toolshape::client::ToolResult) -> Option<&Value> {
    result.meta.as_ref().and_then(|meta| meta.get(SERVER_INFO))
}

#[tokio::test]
async fn results_name_their_server_on_2026_07_28_only() {
    let url = client_common::serve_over_http(adder(ServerOptions::default())).await;
    let modern = Negotiation::Pinned(ProtocolVersion::V2026_07_28);
    let client = client_common::connect_http(&url, modern).await;
    let result = add(&client, CallOptions::new()).await;
    assert_eq!(result.structured, Some(json!({"sum": 42})));
    assert_eq!(
        named(&result),
        Some(&json!({"name": "adder", "version": "2.0.0"}))
    );
    // A relaying caller gets the result as written, without the name (its
    // own server writes its own), and no `_meta` at all.
    let mut relayed = add(&client, CallOptions::new().relaying()).await;
    assert_eq!(relayed.meta, None);
    let received = relayed.take_received().expect("relayable as written");
    let written: Value = serde_json::from_str(received.json()).unwrap();
    assert_eq!(written.get("_meta"), None, "{written}");
    assert_eq!(written["structuredContent"], json!({"sum": 42}));

    for legacy in [ProtocolVersion::V2025_06_18, ProtocolVersion::V2025_11_25] {
        let client = client_common::connect_http(&url, Negotiation::Pinned(legacy)).await;
        let result = add(&client, CallOptions::new()).await;
        assert_eq!(result.structured, Some(json!({"sum": 42})));
        assert_eq!(result.meta, None, "{legacy:?}");
    }

    let mut options = ServerOptions::default();
    options.server_info_in_results = false;
    let url = client_common::serve_over_http(adder(options)).await;
    let client = client_common::connect_http(&url, modern).await;
    assert_eq!(add(&client, CallOptions::new()).await.meta, None);
}

/// The proxy in front of a toolshape server (which names itself in every
/// 2026-07-28 result): its client reads the proxy's name, not the
/// upstream's.
#[tokio::test]
async fn the_proxy_names_itself_in_what_it_relays() {
    let upstream =
        ServerCommand::new(env!("CARGO_BIN_EXE_test_server")).stderr(StderrMode::Capture);
    let modern = Negotiation::Pinned(ProtocolVersion::V2026_07_28);
    let proxy = client_common::start_proxy(upstream, modern, Default::default()).await;
    let url = client_common::serve_proxy_over_http(proxy.registry().clone()).await;
    let client = client_common::connect_http(&url, modern).await;
    for (tool, arguments, expected) in [
        ("sleep", json!({"ms": 1}), json!({"slept": 1})),
        ("numbers", json!({"n": 4}), json!([0, 1, 2, 3])),
    ] {
        let result = client
            .call_tool(tool, arguments.as_object().cloned())
            .await
            .unwrap();
        assert_eq!(result.structured, Some(expected), "{}", result.text());
        assert_eq!(
            named(&result),
            Some(&json!({"name": "proxy", "version": "1.0.0"})),
            "{tool}"
        );
        assert_eq!(result.meta.as_ref().map(|meta| meta.len()), Some(1));
    }
}
