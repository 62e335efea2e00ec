#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The proxy (the library, served over real HTTP on loopback) in front of
//! a toolshape server pinned to 2025-11-25 (the `test_server` binary, a
//! real child process), which wraps its non-object outputs as
//! `{"result": value}` with their schemas wrapped to match: 2026-07-28
//! clients get them unwrapped, schemas whose references point into the
//! wrapper (`#/properties/result/$defs/...`) included, and 2025 clients get
//! them wrapped again; no tool is hidden as unusable. And in front of the
//! hostile server on 2025-11-25, whose values may come without text.

mod client_common;

use std::path::Path;

use serde_json::{Map, Value, json};
use toolshape::client::{Client, Negotiation, ServerCommand, StderrMode};
use toolshape::protocol::ProtocolVersion;
use toolshape::schema::SchemaEngine;
use toolshape_proxy::{Proxy, ProxyOptions, UpstreamSpec};

/// A proxy in front of `server`, its client pinned to 2025-11-25.
async fn proxy_on_2025_11_25(server: &Path) -> Proxy {
    let command = ServerCommand::new(server).stderr(StderrMode::Capture);
    let upstream = Client::builder().negotiation(Negotiation::Pinned(ProtocolVersion::V2025_11_25));
    Proxy::start(
        UpstreamSpec::Command(command),
        upstream,
        ProxyOptions::default(),
    )
    .await
    .expect("the proxy starts")
}

#[tokio::test]
async fn wrapped_outputs_of_a_legacy_upstream_reach_every_era_with_working_schemas() {
    let proxy = proxy_on_2025_11_25(Path::new(env!("CARGO_BIN_EXE_test_server"))).await;
    assert!(
        proxy.broken_tools().is_empty(),
        "{:?}",
        proxy.broken_tools()
    );
    let url = client_common::serve_proxy_over_http(proxy.registry().clone()).await;

    let points = json!([{"x": 0, "y": 0}, {"x": 1, "y": 2}]);
    let modern =
        client_common::connect_http(&url, Negotiation::Pinned(ProtocolVersion::V2026_07_28)).await;
    let tools = modern.list_tools().await.unwrap();
    let listed = tools
        .iter()
        .find(|t| t.name == "points")
        .expect("points is listed");
    let schema = listed
        .output_schema
        .clone()
        .expect("with its output schema");
    // Unwrapped: the array schema itself, its reference re-pointed at its own `$defs`.
    assert_eq!(schema["type"], "array", "{schema}");
    assert_eq!(schema["items"]["$ref"], "#/$defs/Point", "{schema}");
    let compiled = SchemaEngine::default().compile(&schema).unwrap();
    assert!(compiled.validate(&points).is_ok());
    assert!(compiled.validate(&json!([{"x": -1, "y": 0}])).is_err());

    let arguments: Option<Map<String, Value>> = json!({"n": 2}).as_object().cloned();
    let result = modern.call_tool("points", arguments.clone()).await.unwrap();
    assert!(!result.is_error, "{}", result.text());
    assert_eq!(result.structured, Some(points.clone()));

    // A 2025 client gets it wrapped again, and its client unwraps it.
    let legacy =
        client_common::connect_http(&url, Negotiation::Pinned(ProtocolVersion::V2025_06_18)).await;
    let tools = legacy.list_tools().await.unwrap();
    let listed = tools.iter().find(|t| t.name == "points").unwrap();
    let wrapped = listed.output_schema.clone().unwrap();
    assert_eq!(wrapped["type"], "object", "{wrapped}");
    assert_eq!(
        wrapped["properties"]["result"]["items"]["$ref"], "#/properties/result/$defs/Point",
        "{wrapped}"
    );
    let result = legacy.call_tool("points", arguments).await.unwrap();
    assert!(!result.is_error, "{}", result.text());
    assert_eq!(result.structured, Some(points));
}

/// A value with no text block: a client on the upstream's revision, whose
/// result would go as written, gets the value's text beside it all the same,
/// as from any toolshape server (clients that read only content get the
/// value), and so do the others.
#[tokio::test]
async fn a_value_without_its_text_gets_one_on_every_revision() {
    let proxy = proxy_on_2025_11_25(&client_common::hostile_server_bin()).await;
    let url = client_common::serve_proxy_over_http(proxy.registry().clone()).await;
    let arguments: Option<Map<String, Value>> = json!({"bare": true}).as_object().cloned();
    for version in [
        ProtocolVersion::V2025_11_25,
        ProtocolVersion::V2025_06_18,
        ProtocolVersion::V2026_07_28,
    ] {
        let client = client_common::connect_http(&url, Negotiation::Pinned(version)).await;
        let result = client.call_tool("ok", arguments.clone()).await.unwrap();
        assert!(!result.is_error, "{version:?}: {}", result.text());
        assert_eq!(
            result.structured,
            Some(json!({"value": "ok"})),
            "{version:?}"
        );
        assert_eq!(result.text(), r#"{"value":"ok"}"#, "{version:?}");
    }
}

/// An upstream on 2025-11-25 whose tool lists an array schema and answers
/// an array as `structuredContent` (which that revision forbids): a client
/// on the upstream's own revision, whose result would otherwise go as
/// written, gets it wrapped as the listing says (`{"result": [...]}`,
/// marked), never the array; a 2026-07-28 client gets the array.
#[tokio::test]
async fn a_value_its_revision_forbids_is_wrapped_even_for_the_upstreams_revision() {
    let command = ServerCommand::new(client_common::hostile_server_bin())
        .args(["--legacy-only", "--check-defects"])
        .stderr(StderrMode::Capture);
    let proxy = Proxy::start(
        UpstreamSpec::Command(command),
        Client::builder(),
        ProxyOptions::default(),
    )
    .await
    .expect("the proxy starts");
    let url = client_common::serve_proxy_over_http(proxy.registry().clone()).await;
    for version in [
        ProtocolVersion::V2025_11_25,
        ProtocolVersion::V2025_06_18,
        ProtocolVersion::V2026_07_28,
    ] {
        let client = client_common::connect_http(&url, Negotiation::Pinned(version)).await;
        let result = client.call_tool("output_not_object", None).await;
        let result = result.unwrap_or_else(|e| panic!("{version:?}: {e}"));
        assert!(!result.is_error, "{version:?}: {}", result.text());
        assert_eq!(result.structured, Some(json!([1, 2])), "{version:?}");
        let sent = if version.allows_any_structured_content() {
            "[1,2]"
        } else {
            r#"{"result":[1,2]}"#
        };
        assert_eq!(result.structured_json(), Some(sent), "{version:?}");
    }
}
