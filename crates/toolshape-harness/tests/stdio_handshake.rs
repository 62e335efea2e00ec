#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Version negotiation against the test server over real pipes: the legacy
//! `initialize` handshake on every revision, 2026-07-28 `server/discover`
//! and per-request `_meta` versions, and what happens without a version.

mod common;

use common::{ALL, LEGACY, MODERN, Peer, modern_meta};
use serde_json::{Value, json};

#[tokio::test]
async fn initialize_answers_each_handshake_revision() {
    for version in LEGACY {
        let mut peer = Peer::test_server::<_, &str>([]);
        let result = peer.initialize(version).await;
        assert_eq!(result["protocolVersion"], version, "{result}");
        assert_eq!(result["serverInfo"]["name"], "test_server", "{result}");
        assert_eq!(result["serverInfo"]["version"], "0.0.1", "{result}");
        assert_eq!(
            result["capabilities"]["tools"]["listChanged"], true,
            "{version}: listChanged is advertised: {result}"
        );
        assert!(
            result.get("resultType").is_none(),
            "{version}: no 2026-07-28 fields in a handshake result: {result}"
        );
        // The connection now serves requests without `_meta`.
        let ping = peer.result("ping", Value::Null).await;
        assert_eq!(ping, json!({}));
        let page = peer.result("tools/list", json!({})).await;
        assert!(!page["tools"].as_array().unwrap().is_empty(), "{page}");
        assert!(page.get("ttlMs").is_none(), "{version}: {page}");
    }
}

#[tokio::test]
async fn initialize_with_an_unknown_version_answers_the_latest_handshake_revision() {
    for requested in ["1999-01-01", "2099-12-31", "not a date", MODERN] {
        let mut peer = Peer::test_server::<_, &str>([]);
        let result = peer.initialize(requested).await;
        assert_eq!(
            result["protocolVersion"], "2025-11-25",
            "requested {requested:?}: {result}"
        );
        assert_eq!(peer.result("ping", Value::Null).await, json!({}));
    }
}

#[tokio::test]
async fn initialize_with_malformed_params_is_invalid_params() {
    let mut peer = Peer::test_server::<_, &str>([]);
    let no_params = peer.error("initialize", Value::Null).await;
    assert_eq!(no_params["code"], -32602, "{no_params}");
    let no_version = peer
        .error(
            "initialize",
            json!({"capabilities": {}, "clientInfo": {"name": "x", "version": "1"}}),
        )
        .await;
    assert_eq!(no_version["code"], -32602, "{no_version}");
    // The connection is still usable.
    let result = peer.initialize("2025-06-18").await;
    assert_eq!(result["protocolVersion"], "2025-06-18");
}

#[tokio::test]
async fn discover_lists_the_supported_versions() {
    let mut peer = Peer::test_server::<_, &str>([]);
    let result = peer
        .result("server/discover", json!({"_meta": modern_meta()}))
        .await;
    let mut supported: Vec<&str> = result["supportedVersions"]
        .as_array()
        .expect("supportedVersions is an array")
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    supported.sort_unstable();
    assert_eq!(supported, ALL, "{result}");
    assert_eq!(result["resultType"], "complete", "{result}");
    assert!(result["ttlMs"].is_u64(), "ttlMs: {result}");
    assert!(
        ["public", "private"].contains(&result["cacheScope"].as_str().unwrap_or("")),
        "cacheScope: {result}"
    );
    let info = &result["_meta"]["io.modelcontextprotocol/serverInfo"];
    assert_eq!(info["name"], "test_server", "{result}");
    assert_eq!(info["version"], "0.0.1", "{result}");
    assert_eq!(result["capabilities"]["tools"]["listChanged"], true);

    // A client probing without `_meta` gets the same answer.
    let bare = peer.result("server/discover", Value::Null).await;
    assert_eq!(bare["supportedVersions"], result["supportedVersions"]);
}

#[tokio::test]
async fn an_unsupported_meta_version_gets_32022_with_the_supported_list() {
    let mut peer = Peer::test_server::<_, &str>([]);
    let mut meta = modern_meta();
    meta["io.modelcontextprotocol/protocolVersion"] = json!("1900-01-01");
    for (method, params) in [
        ("tools/list", json!({"_meta": meta})),
        (
            "tools/call",
            json!({"name": "numbers", "arguments": {"n": 1}, "_meta": meta}),
        ),
        ("server/discover", json!({"_meta": meta})),
    ] {
        let error = peer.error(method, params).await;
        assert_eq!(error["code"], -32022, "{method}: {error}");
        assert_eq!(error["data"]["requested"], "1900-01-01", "{error}");
        let supported = error["data"]["supported"]
            .as_array()
            .expect("data.supported");
        assert!(supported.contains(&json!(MODERN)), "{error}");
        assert!(supported.contains(&json!("2025-11-25")), "{error}");
    }

    // A handshake revision named in `_meta` without that handshake is not
    // served either: nothing was negotiated.
    let mut meta = modern_meta();
    meta["io.modelcontextprotocol/protocolVersion"] = json!("2025-06-18");
    let error = peer.error("tools/list", json!({"_meta": meta})).await;
    assert_eq!(error["code"], -32022, "{error}");

    // A version that is not a string is malformed params.
    let mut meta = modern_meta();
    meta["io.modelcontextprotocol/protocolVersion"] = json!(20260728);
    let error = peer.error("tools/list", json!({"_meta": meta})).await;
    assert_eq!(error["code"], -32602, "{error}");
}

#[tokio::test]
async fn a_request_without_a_version_before_initialize_fails() {
    let mut peer = Peer::test_server::<_, &str>([]);
    let list = peer.error("tools/list", Value::Null).await;
    // Malformed as a 2026-07-28 request (its version is missing), -32602.
    assert_eq!(list["code"], -32602, "{list}");
    assert!(
        list["message"].as_str().unwrap().contains("initialize"),
        "the message says what to do: {list}"
    );
    let call = peer
        .error(
            "tools/call",
            json!({"name": "numbers", "arguments": {"n": 2}}),
        )
        .await;
    assert_eq!(call["code"], -32602, "{call}");

    // After the handshake the same requests work.
    peer.initialize("2025-11-25").await;
    peer.result("tools/list", Value::Null).await;
    let called = peer
        .result(
            "tools/call",
            json!({"name": "numbers", "arguments": {"n": 2}}),
        )
        .await;
    assert_eq!(called["structuredContent"], json!({"result": [0, 1]}));
}

#[tokio::test]
async fn ping_works_before_and_after_initialize() {
    let mut peer = Peer::test_server::<_, &str>([]);
    assert_eq!(peer.result("ping", Value::Null).await, json!({}));
    assert_eq!(peer.result("ping", json!({})).await, json!({}));
    peer.initialize("2024-11-05").await;
    assert_eq!(peer.result("ping", Value::Null).await, json!({}));
}

#[tokio::test]
async fn a_modern_request_on_a_handshake_connection_is_served_under_its_own_version() {
    let mut peer = Peer::test_server::<_, &str>([]);
    peer.initialize("2025-06-18").await;
    let legacy = peer.result("tools/list", json!({})).await;
    assert!(legacy.get("resultType").is_none(), "{legacy}");
    let modern = peer
        .result("tools/list", json!({"_meta": modern_meta()}))
        .await;
    assert_eq!(modern["resultType"], "complete", "{modern}");
    let numbers = |page: &Value| {
        page["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|tool| tool["name"] == "numbers")
            .cloned()
            .unwrap()
    };
    assert_eq!(numbers(&legacy)["outputSchema"]["type"], "object");
    assert_eq!(numbers(&modern)["outputSchema"]["type"], "array");
}
