#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Protocol versions refused over stateless 2026-07-28 HTTP, spoken by hand
//! to an in-process server: an unsupported one is `-32022` listing the
//! revisions served (also beside a stray session id), and a 2026-07-28-only
//! endpoint names its revision to a handshake client.

mod http_support;

use reqwest::StatusCode;
use serde_json::json;
use toolshape::HttpOptions;

use http_support::{LEGACY, MODERN, Serving, modern_params, post_raw, request};

#[tokio::test]
async fn an_unsupported_version_is_400_with_the_supported_list() {
    let serving = Serving::start(HttpOptions::default()).await;
    let body = request(
        3,
        "tools/list",
        json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2099-01-01"}}),
    );
    let reply = post_raw(
        &serving.url,
        &[
            ("mcp-protocol-version", "2099-01-01"),
            ("mcp-method", "tools/list"),
        ],
        body.to_string(),
    )
    .await;
    assert_eq!(reply.status, StatusCode::BAD_REQUEST, "{reply:?}");
    let body = reply.json();
    assert_eq!(body["id"], 3);
    assert_eq!(body["error"]["code"], -32022, "{body}");
    let supported: Vec<&str> = body["error"]["data"]["supported"]
        .as_array()
        .unwrap_or_else(|| panic!("no data.supported: {body}"))
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert!(supported.contains(&MODERN), "{body}");
    assert!(supported.contains(&"2025-11-25"), "{body}");
    assert_eq!(body["error"]["data"]["requested"], "2099-01-01", "{body}");
}

/// An endpoint serving 2026-07-28 only: a handshake client's `initialize` is
/// told the revision served (`-32022`, as the spec asks of such a server),
/// and a request without the version in `_meta` (nor in a header) is
/// malformed, `-32602`; both `400`.
#[tokio::test]
async fn a_stateless_only_endpoint_names_its_revision_to_a_handshake_client() {
    let mut options = HttpOptions::default();
    options.sessions = false;
    let serving = Serving::start(options).await;
    let initialize = request(
        1,
        "initialize",
        json!({
            "protocolVersion": LEGACY,
            "capabilities": {},
            "clientInfo": {"name": "old", "version": "1"},
        }),
    );
    let reply = post_raw(&serving.url, &[], initialize.to_string()).await;
    assert_eq!(reply.status, StatusCode::BAD_REQUEST, "{reply:?}");
    let body = reply.json();
    assert_eq!(body["id"], 1, "{body}");
    assert_eq!(body["error"]["code"], -32022, "{body}");
    assert_eq!(
        body["error"]["data"]["supported"],
        json!([MODERN]),
        "{body}"
    );
    assert_eq!(body["error"]["data"]["requested"], LEGACY, "{body}");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(message.contains(MODERN), "{message}");

    let list = request(2, "tools/list", json!({}));
    let reply = post_raw(&serving.url, &[], list.to_string()).await;
    assert_eq!(reply.status, StatusCode::BAD_REQUEST, "{reply:?}");
    let body = reply.json();
    assert_eq!(
        (body["id"].clone(), body["error"]["code"].clone()),
        (json!(2), json!(-32602)),
        "{body}"
    );
}

/// A stray `Mcp-Session-Id` beside a header naming no known revision: the
/// refusal is `-32022` listing the revisions served, as without it.
#[tokio::test]
async fn a_stray_session_id_with_an_unknown_version_gets_the_supported_ones() {
    let serving = Serving::start(HttpOptions::default()).await;
    let mut meta = modern_params(json!({}));
    meta["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("2099-01-01");
    let body = request(3, "tools/list", meta);
    let headers = [
        ("mcp-protocol-version", "2099-01-01"),
        ("mcp-method", "tools/list"),
        ("mcp-session-id", "0123456789abcdef0123456789abcdef"),
    ];
    let reply = post_raw(&serving.url, &headers, body.to_string()).await;
    assert_eq!(reply.status, StatusCode::BAD_REQUEST, "{reply:?}");
    let body = reply.json();
    assert_eq!(body["error"]["code"], -32022, "{body}");
    let supported = body["error"]["data"]["supported"].as_array().unwrap();
    assert!(supported.contains(&json!(MODERN)), "{body}");
    assert_eq!(body["error"]["data"]["requested"], "2099-01-01", "{body}");
}
