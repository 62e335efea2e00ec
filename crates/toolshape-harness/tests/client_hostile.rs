#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The client against `examples/hostile_server.rs`, a raw JSON-RPC server
//! whose tools misbehave. Every case must end in a clear error (or pass,
//! where the output is in fact valid), and the connection must stay usable:
//! each test makes a normal call afterwards on the same connection.
//!
//! The example is built on first use (see `client_common`).

mod client_common;

use std::net::TcpListener;
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::{Map, Value, json};
use toolshape::CallOptions;
use toolshape::client::{
    Client, ClientErrorKind, ClientOptions, Negotiation, ServerCommand, StderrMode,
};
use toolshape::protocol::ProtocolVersion;
use toolshape::schema::{SchemaErrorKind, ValidationErrorKind};

use client_common::{LONG_NAME, connect, hostile_server_bin};

/// Every tool the hostile server lists, in order.
const TOOLS: [&str; 24] = [
    "ok",
    "pair",
    "mismatch",
    "no_structured",
    "tuple",
    "tuple_bad",
    "unevaluated",
    "draft07",
    "remote_ref",
    "exponential",
    "deep",
    "huge",
    "huge_id_last",
    "malformed_error",
    "bad_result",
    "tool_error",
    "hang",
    "received",
    "echo",
    "twice",
    "unknown_id",
    "flood",
    "die",
    "deaf",
];

fn test_options() -> ClientOptions {
    let mut options = ClientOptions::default();
    options.request_timeout = Duration::from_secs(20);
    options.probe_timeout = Duration::from_secs(5);
    options
}

fn command(args: &[&str]) -> ServerCommand {
    ServerCommand::new(hostile_server_bin())
        .args(args)
        .stderr(StderrMode::Capture)
}

async fn hostile(args: &[&str]) -> Client {
    connect(command(args), Negotiation::Auto, test_options()).await
}

fn no_arguments() -> Option<Map<String, Value>> {
    None
}

#[derive(Debug, Deserialize, PartialEq)]
struct Fine {
    value: String,
}

/// A normal call on the same connection still works.
async fn assert_usable(client: &Client) {
    let ok: Fine = client.call("ok", json!({})).await.unwrap();
    assert_eq!(ok.value, "ok");
}

#[tokio::test]
async fn negotiates_modern_and_legacy() {
    let client = hostile(&[]).await;
    assert_eq!(client.protocol_version(), ProtocolVersion::V2026_07_28);
    assert_eq!(client.server_info().unwrap().name, "hostile");
    assert_usable(&client).await;

    // server/discover answered with -32601: the client falls back to initialize.
    let legacy = hostile(&["--legacy-only"]).await;
    assert_eq!(legacy.protocol_version(), ProtocolVersion::V2025_11_25);
    assert_usable(&legacy).await;
    let received = received(&legacy).await;
    assert!(
        received
            .iter()
            .any(|n| n["method"] == "notifications/initialized"),
        "{received:?}"
    );
}

#[tokio::test]
async fn a_paginated_listing_is_followed_to_the_end() {
    for (page_size, pages) in [("4", 6), ("1", 24), ("100", 1)] {
        let client = hostile(&["--page-size", page_size]).await;
        let tools = client.list_tools().await.unwrap();
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, TOOLS, "page size {page_size} ({pages} pages)");
        assert_usable(&client).await;
    }
}

/// A name listed twice: the first definition is kept, and it is the one
/// calls are validated against.
#[tokio::test]
async fn a_tool_listed_twice_keeps_its_first_definition() {
    let client = hostile(&["--duplicate", "--page-size", "4"]).await;
    let tools = client.list_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, TOOLS);
    let ok = tools.iter().find(|t| t.name == "ok").unwrap();
    assert_eq!(
        ok.output_schema.as_ref().unwrap()["properties"]["value"]["type"],
        json!("string")
    );
    assert_usable(&client).await;
}

/// A listed tool the client cannot read (its inputSchema nests past
/// serde_json's 128 levels) is left out, not the listing with it; names
/// outside MCP's naming guidance (a SHOULD) are listed and callable.
#[tokio::test]
async fn an_unreadable_tool_is_left_out_of_the_listing_alone() {
    for page_size in ["100", "2"] {
        let client = hostile(&["--foreign-names", "--page-size", page_size]).await;
        let tools = client.list_tools().await.unwrap();
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
        let mut expected = TOOLS.to_vec();
        expected.extend([
            "github/create_issue",
            "ns:tool",
            "get weather",
            "café",
            LONG_NAME,
            "esc\u{1b}[31mred",
        ]);
        assert_eq!(names, expected, "page size {page_size}");
        let named: Fine = client.call("github/create_issue", json!({})).await.unwrap();
        assert_eq!(named.value, "github/create_issue");
        assert_usable(&client).await;
    }
}

#[tokio::test]
async fn output_that_breaks_its_schema_is_a_validation_error() {
    for args in [&[][..], &["--legacy-only"][..]] {
        let client = hostile(args).await;
        let error = client
            .call_tool("mismatch", no_arguments())
            .await
            .unwrap_err();
        let ClientErrorKind::Validation { tool, source } = error.kind() else {
            panic!("expected a validation error, got {error:?}");
        };
        assert_eq!(tool, "mismatch");
        let violations: Vec<(&str, &str)> = source
            .violations()
            .iter()
            .map(|v| (v.instance_path.as_str(), v.keyword.as_str()))
            .collect();
        assert!(violations.contains(&("/count", "type")), "{violations:?}");
        assert!(violations.contains(&("", "required")), "{violations:?}");
        let message = error.to_string();
        assert!(message.contains("mismatch"), "{message}");
        assert!(message.contains("/count"), "{message}");
        assert!(error.is_validation_error());
        // The typed call fails the same way.
        let typed = client
            .call::<Value>("mismatch", json!({}))
            .await
            .unwrap_err();
        assert!(matches!(typed.kind(), ClientErrorKind::Validation { .. }));
        assert_usable(&client).await;
    }
}

#[tokio::test]
async fn a_declared_schema_without_structured_content_is_refused() {
    let client = hostile(&[]).await;
    let error = client
        .call_tool("no_structured", no_arguments())
        .await
        .unwrap_err();
    assert!(
        matches!(error.kind(), ClientErrorKind::MissingStructuredContent { tool } if tool == "no_structured"),
        "{error:?}"
    );
    assert_usable(&client).await;
}

#[tokio::test]
async fn a_2020_12_tuple_passes_and_is_checked() {
    #[derive(Debug, Deserialize, PartialEq)]
    struct Pair {
        pair: (String, i64),
    }
    let client = hostile(&[]).await;
    let pair: Pair = client.call("tuple", json!({})).await.unwrap();
    assert_eq!(
        pair,
        Pair {
            pair: ("a".into(), 1)
        }
    );
    // prefixItems is evaluated, not ignored: a string in the integer slot fails.
    let error = client
        .call::<Value>("tuple_bad", json!({}))
        .await
        .unwrap_err();
    let ClientErrorKind::Validation { source, .. } = error.kind() else {
        panic!("expected a validation error, got {error:?}");
    };
    assert!(
        source
            .violations()
            .iter()
            .any(|v| v.instance_path == "/pair/1"),
        "{source}"
    );
    assert_usable(&client).await;
}

#[tokio::test]
async fn unevaluated_properties_are_enforced() {
    let client = hostile(&[]).await;
    let error = client
        .call::<Value>("unevaluated", json!({}))
        .await
        .unwrap_err();
    let ClientErrorKind::Validation { source, .. } = error.kind() else {
        panic!("expected a validation error, got {error:?}");
    };
    assert!(
        source
            .violations()
            .iter()
            .any(|v| v.keyword == "unevaluatedProperties"),
        "{source}"
    );
    assert_usable(&client).await;
}

#[tokio::test]
async fn a_draft_07_schema_is_honoured() {
    #[derive(Debug, Deserialize, PartialEq)]
    struct Pair {
        pair: (String, i64),
    }
    let client = hostile(&[]).await;
    // Draft-07 tuple `items` with `additionalItems: false`: this one fits.
    let pair: Pair = client.call("draft07", json!({})).await.unwrap();
    assert_eq!(pair.pair, ("a".to_owned(), 1));
    // `additionalProperties: false` is enforced.
    let error = client
        .call::<Value>("draft07", json!({"extra": true}))
        .await
        .unwrap_err();
    let ClientErrorKind::Validation { source, .. } = error.kind() else {
        panic!("expected a validation error, got {error:?}");
    };
    assert!(
        source
            .violations()
            .iter()
            .any(|v| v.keyword == "additionalProperties"),
        "{source}"
    );
    assert_usable(&client).await;
}

/// Connections waiting on the canary listener.
fn connections(listener: &TcpListener) -> usize {
    let mut count = 0;
    while listener.accept().is_ok() {
        count += 1;
    }
    count
}

#[tokio::test]
async fn a_network_ref_is_never_fetched_and_only_that_tool_fails() {
    let canary = TcpListener::bind("127.0.0.1:0").unwrap();
    canary.set_nonblocking(true).unwrap();
    let port = canary.local_addr().unwrap().port().to_string();
    let client = hostile(&["--canary-port", &port]).await;

    // The listing itself is fine: schemas compile when a tool is called.
    let tools = client.list_tools().await.unwrap();
    assert_eq!(tools.len(), TOOLS.len());
    let remote = tools.iter().find(|t| t.name == "remote_ref").unwrap();
    assert_eq!(
        remote.output_schema.as_ref().unwrap()["$ref"],
        json!(format!("http://127.0.0.1:{port}/schema.json"))
    );

    for _ in 0..2 {
        let error = client
            .call_tool("remote_ref", no_arguments())
            .await
            .unwrap_err();
        let ClientErrorKind::UnusableSchema { tool, source } = error.kind() else {
            panic!("expected an unusable schema, got {error:?}");
        };
        assert_eq!(tool, "remote_ref");
        assert!(
            matches!(source.kind(), SchemaErrorKind::RemoteReference { uri } if uri.contains(&port)),
            "{source:?}"
        );
    }
    assert_usable(&client).await;
    let tuple: Value = client.call("tuple", json!({})).await.unwrap();
    assert_eq!(tuple, json!({"pair": ["a", 1]}));

    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(
        connections(&canary),
        0,
        "the client connected to the canary"
    );
}

#[tokio::test]
async fn an_exponential_schema_fails_fast() {
    let client = hostile(&[]).await;
    let started = Instant::now();
    let error = client
        .call_tool("exponential", no_arguments())
        .await
        .unwrap_err();
    let elapsed = started.elapsed();
    assert!(elapsed < Duration::from_secs(3), "took {elapsed:?}");
    match error.kind() {
        ClientErrorKind::UnusableSchema { source, .. } => assert!(
            matches!(source.kind(), SchemaErrorKind::ExpansionTooCostly { .. }),
            "{source:?}"
        ),
        ClientErrorKind::Validation { source, .. } => assert!(
            matches!(source.kind(), ValidationErrorKind::BudgetExceeded { .. }),
            "{source:?}"
        ),
        _ => panic!("expected a refused schema or an exceeded budget, got {error:?}"),
    }
    // A second call is refused from the cache, just as fast.
    let started = Instant::now();
    assert!(
        client
            .call_tool("exponential", no_arguments())
            .await
            .is_err()
    );
    assert!(started.elapsed() < Duration::from_secs(1));
    assert_usable(&client).await;
}

#[tokio::test]
async fn a_10000_deep_instance_is_refused() {
    for args in [&[][..], &["--legacy-only"][..]] {
        let client = hostile(args).await;
        let started = Instant::now();
        let error = client.call_tool("deep", no_arguments()).await.unwrap_err();
        assert!(started.elapsed() < Duration::from_secs(5));
        match error.kind() {
            // serde_json stops at 128 levels while reading the result.
            ClientErrorKind::InvalidResponse(message) => {
                assert!(message.contains("recursion limit"), "{message}");
            }
            ClientErrorKind::Validation { source, .. } => assert!(
                matches!(source.kind(), ValidationErrorKind::InstanceTooDeep { .. }),
                "{source:?}"
            ),
            _ => panic!("expected a clear refusal, got {error:?}"),
        }
        assert_usable(&client).await;
    }
}

#[tokio::test]
async fn responses_out_of_order_reach_their_callers() {
    #[derive(Debug, Deserialize, PartialEq)]
    struct N {
        n: i64,
    }
    let client = hostile(&[]).await;
    client.list_tools().await.unwrap();
    let (first, second) = tokio::join!(
        client.call::<N>("pair", json!({"n": 1})),
        client.call::<N>("pair", json!({"n": 2})),
    );
    assert_eq!(first.unwrap(), N { n: 1 });
    assert_eq!(second.unwrap(), N { n: 2 });
    // Several pairs at once, from clones of the client.
    let calls = (0..8).map(|n| {
        let client = client.clone();
        tokio::spawn(async move { client.call::<N>("pair", json!({"n": n})).await })
    });
    for (n, call) in calls.collect::<Vec<_>>().into_iter().enumerate() {
        assert_eq!(call.await.unwrap().unwrap(), N { n: n as i64 });
    }
    assert_usable(&client).await;
}

#[tokio::test]
async fn an_unknown_tool_answered_as_an_is_error_result() {
    let client = hostile(&["--unknown-tool", "result"]).await;
    let result = client
        .call_tool("no_such_tool", no_arguments())
        .await
        .unwrap();
    assert!(result.is_error);
    assert!(result.text().contains("Unknown tool: no_such_tool"));
    let error = client
        .call::<Value>("no_such_tool", json!({}))
        .await
        .unwrap_err();
    let ClientErrorKind::Tool { tool, message } = error.kind() else {
        panic!("expected a tool error, got {error:?}");
    };
    assert_eq!(tool, "no_such_tool");
    assert!(message.contains("Unknown tool"), "{message}");
    assert!(error.is_tool_error());
    assert_usable(&client).await;
}

#[tokio::test]
async fn an_unknown_tool_answered_with_invalid_params() {
    let client = hostile(&["--unknown-tool", "error"]).await;
    for error in [
        client
            .call_tool("no_such_tool", no_arguments())
            .await
            .unwrap_err(),
        client
            .call::<Value>("no_such_tool", json!({}))
            .await
            .unwrap_err(),
    ] {
        let ClientErrorKind::Protocol(object) = error.kind() else {
            panic!("expected a protocol error, got {error:?}");
        };
        assert_eq!(object.code, -32602);
        assert!(object.message.contains("no_such_tool"));
        assert!(error.to_string().contains("-32602"), "{error}");
    }
    assert_usable(&client).await;
}

#[tokio::test]
async fn a_tool_error_is_its_own_kind() {
    let client = hostile(&[]).await;
    let result = client
        .call_tool("tool_error", no_arguments())
        .await
        .unwrap();
    assert!(result.is_error);
    assert_eq!(result.structured, None);
    let error = client
        .call::<Value>("tool_error", json!({}))
        .await
        .unwrap_err();
    assert!(
        matches!(error.kind(), ClientErrorKind::Tool { message, .. } if message == "the tool failed on purpose"),
        "{error:?}"
    );
    assert_usable(&client).await;
}

#[tokio::test]
async fn a_result_that_is_not_a_call_result_is_invalid() {
    let client = hostile(&[]).await;
    let error = client
        .call_tool("bad_result", no_arguments())
        .await
        .unwrap_err();
    assert!(
        matches!(error.kind(), ClientErrorKind::InvalidResponse(m) if m.contains("bad tools/call result")),
        "{error:?}"
    );
    assert_usable(&client).await;
}

#[tokio::test]
async fn a_malformed_error_response_fails_its_call() {
    let client = hostile(&[]).await;
    let settings = CallOptions::new().timeout(Duration::from_secs(5));
    let started = Instant::now();
    let error = client
        .call_tool_with("malformed_error", no_arguments(), settings)
        .await
        .unwrap_err();
    assert!(
        matches!(error.kind(), ClientErrorKind::InvalidResponse(m) if m.contains("`error` must be an object")),
        "{error:?} after {:?}",
        started.elapsed()
    );
    assert!(started.elapsed() < Duration::from_secs(2));
    assert_usable(&client).await;
}

/// The notifications the hostile server has received.
async fn received(client: &Client) -> Vec<Value> {
    #[derive(Deserialize)]
    struct Received {
        notifications: Vec<Value>,
    }
    let received: Received = client.call("received", json!({})).await.unwrap();
    received.notifications
}

#[tokio::test]
async fn a_timeout_or_a_dropped_call_sends_cancelled() {
    for args in [&[][..], &["--legacy-only"][..]] {
        let client = hostile(args).await;
        client.list_tools().await.unwrap();
        let settings = CallOptions::new().timeout(Duration::from_millis(300));
        let error = client
            .call_tool_with("hang", no_arguments(), settings)
            .await
            .unwrap_err();
        assert!(
            matches!(error.kind(), ClientErrorKind::Timeout(d) if *d == Duration::from_millis(300)),
            "{error:?}"
        );
        // A call whose future is dropped is cancelled too.
        let dropped =
            tokio::time::timeout(Duration::from_millis(300), client.call_tool("hang", None)).await;
        assert!(dropped.is_err());

        let cancelled: Vec<Value> = received(&client)
            .await
            .into_iter()
            .filter(|n| n["method"] == "notifications/cancelled")
            .collect();
        assert_eq!(cancelled.len(), 2, "{cancelled:?}");
        let ids: Vec<&Value> = cancelled
            .iter()
            .map(|n| &n["params"]["requestId"])
            .collect();
        assert!(ids.iter().all(|id| id.is_i64()), "{ids:?}");
        assert_ne!(ids[0], ids[1]);
        assert_usable(&client).await;
    }
}
