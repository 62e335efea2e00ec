#![allow(clippy::unwrap_used, clippy::expect_used)]
//! JSON-RPC batches over real HTTP: a 2025-03-26 session takes them (that
//! revision's MUST), a later revision's session refuses them.

mod http_support;

use reqwest::StatusCode;
use serde_json::json;
use toolshape::HttpOptions;

use http_support::{Serving, TIMEOUT, open_session, open_session_on, post_raw, session_post};

/// A POST of `body` in `session`, a 2025-03-26 one.
async fn post_in_2025_03_26(url: &str, session: &str, body: &str) -> http_support::Reply {
    let headers = [
        ("mcp-session-id", session),
        ("mcp-protocol-version", "2025-03-26"),
    ];
    post_raw(url, &headers, body.to_owned()).await
}

/// 2025-03-26 has JSON-RPC batches (its servers MUST take them): the
/// requests of one run concurrently and their answers come back as one JSON
/// array; notifications alone get 202; a broken, empty or over-long batch
/// one error; `initialize` is refused inside one. Later revisions' sessions
/// refuse any batch.
#[tokio::test]
async fn a_2025_03_26_session_takes_batches() {
    let serving = Serving::start(HttpOptions::default()).await;
    let session = open_session_on(&serving.url, "2025-03-26").await;
    let batch = json!([
        {"jsonrpc": "2.0", "id": "slow", "method": "tools/call",
         "params": {"name": "sleep", "arguments": {"ms": 300}}},
        {"jsonrpc": "2.0", "id": "fast", "method": "tools/call",
         "params": {"name": "sleep", "arguments": {"ms": 300}}},
        {"jsonrpc": "2.0", "id": "sum", "method": "tools/call",
         "params": {"name": "add", "arguments": {"a": 2, "b": 3}}},
        {"jsonrpc": "2.0", "method": "notifications/cancelled",
         "params": {"requestId": "nothing"}},
        {"jsonrpc": "2.0", "id": "again", "method": "initialize",
         "params": {"protocolVersion": "2025-03-26", "capabilities": {},
                    "clientInfo": {"name": "x", "version": "0"}}},
        {"jsonrpc": "2.0", "id": "unknown", "method": "no/such"},
    ]);
    let reply = post_in_2025_03_26(&serving.url, &session, &batch.to_string()).await;
    assert_eq!(reply.status, StatusCode::OK, "{reply:?}");
    // The two sleeps ran at once.
    assert_eq!(serving.probe.max_running(), 2, "the sleeps ran at once");
    let answers = reply.json();
    let answers = answers.as_array().unwrap();
    assert_eq!(answers.len(), 5, "{answers:?}");
    let by_id = |id: &str| {
        answers
            .iter()
            .find(|answer| answer["id"] == id)
            .unwrap_or_else(|| panic!("no answer to {id}: {answers:?}"))
    };
    assert!(by_id("slow")["result"].is_object());
    assert!(by_id("fast")["result"].is_object());
    // 2025-03-26 has no structuredContent: the sum is its text.
    assert_eq!(by_id("sum")["result"]["content"][0]["text"], "5");
    assert_eq!(by_id("again")["error"]["code"], -32600);
    assert_eq!(by_id("unknown")["error"]["code"], -32601);

    // A batch whose one request is cancelled: a request's POST still gets
    // an event stream (ending empty), not 202.
    let slow = json!([{"jsonrpc": "2.0", "id": "slow", "method": "tools/call",
                       "params": {"name": "sleep", "arguments": {"ms": 10_000}}}]);
    let url = serving.url.clone();
    let (session_id, slow_body) = (session.clone(), slow.to_string());
    let posted =
        tokio::spawn(async move { post_in_2025_03_26(&url, &session_id, &slow_body).await });
    serving
        .probe
        .wait_for("the batch's call to start", |p| p.started() == 3)
        .await;
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                        "params": {"requestId": "slow"}});
    let reply = post_in_2025_03_26(&serving.url, &session, &cancel.to_string()).await;
    assert_eq!(reply.status, StatusCode::ACCEPTED, "{reply:?}");
    let reply = tokio::time::timeout(TIMEOUT, posted)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(reply.status, StatusCode::OK, "{reply:?}");
    assert_eq!(reply.headers["content-type"], "text/event-stream");
    assert!(!reply.text.contains("result"), "{reply:?}");

    let notifications = json!([{"jsonrpc": "2.0", "method": "notifications/cancelled",
                                "params": {"requestId": "nothing"}}]);
    let reply = post_in_2025_03_26(&serving.url, &session, &notifications.to_string()).await;
    assert_eq!(reply.status, StatusCode::ACCEPTED, "{reply:?}");

    let over_long = serde_json::Value::Array(
        (0..65)
            .map(|n| json!({"jsonrpc": "2.0", "id": n, "method": "ping"}))
            .collect(),
    )
    .to_string();
    for (body, code) in [
        ("[]", -32600),
        ("[{}, ", -32700),
        (over_long.as_str(), -32600),
    ] {
        let reply = post_in_2025_03_26(&serving.url, &session, body).await;
        assert_eq!(reply.status, StatusCode::BAD_REQUEST, "{reply:?}");
        assert_eq!(reply.json()["error"]["code"], code, "{reply:?}");
    }

    // A batch naming a revision without a handshake: that revision is not
    // served in a session (-32022, listing the handshake revisions).
    let headers = [
        ("mcp-session-id", session.as_str()),
        ("mcp-protocol-version", "2026-07-28"),
    ];
    let ping = json!([{"jsonrpc": "2.0", "id": 1, "method": "ping"}]);
    let reply = post_raw(&serving.url, &headers, ping.to_string()).await;
    assert_eq!(reply.status, StatusCode::BAD_REQUEST, "{reply:?}");
    let error = &reply.json()["error"];
    assert_eq!(error["code"], -32022, "{reply:?}");
    assert_eq!(error["data"]["requested"], "2026-07-28", "{reply:?}");
    let listed = error["data"]["supported"].as_array().unwrap();
    assert!(listed.contains(&json!("2025-03-26")), "{reply:?}");
    assert!(!listed.contains(&json!("2026-07-28")), "{reply:?}");

    // A 2025-11-25 session: no batches.
    let later = open_session(&serving.url).await;
    let ping = json!([{"jsonrpc": "2.0", "id": 1, "method": "ping"}]);
    let reply = session_post(&serving.url, &later, &ping).await;
    assert_eq!(reply.status, StatusCode::BAD_REQUEST, "{reply:?}");
    assert_eq!(reply.json()["error"]["code"], -32600);
}
