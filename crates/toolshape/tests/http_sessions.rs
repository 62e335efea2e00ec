#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Handshake sessions (2025-11-25 and older) over real HTTP: `initialize`
//! mints an `Mcp-Session-Id`; requests need it (400 without, 404 for an
//! unknown or expired one); DELETE ends it; sessions are bounded (503);
//! notifications are 202 and `notifications/cancelled` stops a running
//! call; GET streams `notifications/tools/list_changed`; the
//! `MCP-Protocol-Version` header is checked (a 2025-03-26 session's
//! JSON-RPC batches: `http_batches.rs`).

mod http_support;

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};
use toolshape::{HttpOptions, Tool, ToolError};

use http_support::{
    EventStream, LEGACY, Serving, TIMEOUT, http, open_session, post_raw, request, result_of,
    session_post,
};

fn initialize_body() -> Value {
    request(
        1,
        "initialize",
        json!({
            "protocolVersion": LEGACY,
            "capabilities": {},
            "clientInfo": {"name": "raw-test", "version": "0"},
        }),
    )
}

async fn delete(url: &str, session: &str) -> StatusCode {
    http()
        .delete(url)
        .header("mcp-session-id", session)
        .header("mcp-protocol-version", LEGACY)
        .send()
        .await
        .unwrap()
        .status()
}

async fn open_stream(url: &str, session: &str) -> EventStream {
    let response = http()
        .get(url)
        .header("accept", "text/event-stream")
        .header("mcp-session-id", session)
        .header("mcp-protocol-version", LEGACY)
        .send();
    let response = tokio::time::timeout(TIMEOUT, response)
        .await
        .expect("the GET stream's headers did not arrive")
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let content_type = response.headers()["content-type"].to_str().unwrap();
    assert!(
        content_type.starts_with("text/event-stream"),
        "{content_type}"
    );
    EventStream::new(response)
}

#[tokio::test]
async fn a_session_is_minted_required_and_ended() {
    let serving = Serving::start(HttpOptions::default()).await;
    let url = serving.url.as_str();

    let session = open_session(url).await;
    assert_eq!(session.len(), 32, "{session}");
    assert!(session.bytes().all(|b| b.is_ascii_hexdigit()), "{session}");
    let other = open_session(url).await;
    assert_ne!(session, other, "each initialize gets its own session");

    let listed =
        result_of(&session_post(url, &session, &request(2, "tools/list", json!({}))).await);
    assert_eq!(listed["tools"].as_array().unwrap().len(), 5, "{listed}");
    assert!(
        listed.get("resultType").is_none(),
        "shaped for 2025-11-25: {listed}"
    );

    let call = request(
        3,
        "tools/call",
        json!({"name": "add", "arguments": {"a": 1, "b": 2}}),
    );
    let result = result_of(&session_post(url, &session, &call).await);
    // 2025-11-25 wraps a non-object output as {"result": v}.
    assert_eq!(
        result["structuredContent"],
        json!({"result": 3}),
        "{result}"
    );

    // Without the session id: 400; with an unknown one: 404.
    let reply = post_raw(url, &[("mcp-protocol-version", LEGACY)], call.to_string()).await;
    assert_eq!(reply.status, StatusCode::BAD_REQUEST, "{reply:?}");
    let reply = session_post(url, "0123456789abcdef0123456789abcdef", &call).await;
    assert_eq!(reply.status, StatusCode::NOT_FOUND, "{reply:?}");

    // DELETE ends it; afterwards it is unknown (404), for POST and DELETE alike.
    assert_eq!(delete(url, &session).await, StatusCode::OK);
    let reply = session_post(url, &session, &call).await;
    assert_eq!(reply.status, StatusCode::NOT_FOUND, "{reply:?}");
    assert_eq!(delete(url, &session).await, StatusCode::NOT_FOUND);
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let reply = session_post(url, &session, &initialized).await;
    assert_eq!(reply.status, StatusCode::NOT_FOUND, "{reply:?}");

    // The other session is untouched.
    let result = result_of(&session_post(url, &other, &call).await);
    assert_eq!(result["structuredContent"], json!({"result": 3}));
}

#[tokio::test]
async fn a_failed_handshake_opens_no_session() {
    let serving = Serving::start(HttpOptions::default()).await;
    let body = request(1, "initialize", json!({"protocolVersion": LEGACY}));
    let reply = post_raw(&serving.url, &[], body.to_string()).await;
    assert_eq!(reply.status, StatusCode::OK, "{reply:?}");
    assert_eq!(reply.error_code(), -32602);
    assert!(reply.headers.get("mcp-session-id").is_none(), "{reply:?}");
}

#[tokio::test]
async fn an_idle_session_expires() {
    let mut options = HttpOptions::default();
    options.session_idle_timeout = Duration::from_millis(150);
    let serving = Serving::start(options).await;
    let session = open_session(&serving.url).await;
    let list = request(2, "tools/list", json!({}));
    // Used within the timeout, it lives on.
    for _ in 0..3 {
        tokio::time::sleep(Duration::from_millis(60)).await;
        result_of(&session_post(&serving.url, &session, &list).await);
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let reply = session_post(&serving.url, &session, &list).await;
    assert_eq!(reply.status, StatusCode::NOT_FOUND, "{reply:?}");
}

/// A session whose client listens on its GET stream is in use: it outlives
/// the idle time. Once its client closes the stream, it expires as any.
#[tokio::test]
async fn a_listening_session_outlives_the_idle_time() {
    let mut options = HttpOptions::default();
    options.session_idle_timeout = Duration::from_millis(150);
    let serving = Serving::start(options).await;
    let session = open_session(&serving.url).await;
    let list = request(2, "tools/list", json!({}));
    let stream = open_stream(&serving.url, &session).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    result_of(&session_post(&serving.url, &session, &list).await);
    drop(stream);
    // The server finds the stream closed at its next keep-alive (every
    // second at the least), then the session is idle.
    tokio::time::sleep(Duration::from_millis(3000)).await;
    let reply = session_post(&serving.url, &session, &list).await;
    assert_eq!(reply.status, StatusCode::NOT_FOUND, "{reply:?}");
}

#[tokio::test]
async fn a_full_table_makes_room_by_ending_the_least_recently_used_idle_session() {
    let mut options = HttpOptions::default();
    options.max_sessions = 2;
    let serving = Serving::start(options).await;
    let list = request(2, "tools/list", json!({}));
    let oldest = open_session(&serving.url).await;
    let recent = open_session(&serving.url).await;
    // `oldest` is used after `recent`: `recent` is now the least recently used.
    result_of(&session_post(&serving.url, &oldest, &list).await);
    let third = open_session(&serving.url).await;
    let gone = session_post(&serving.url, &recent, &list).await;
    assert_eq!(gone.status, StatusCode::NOT_FOUND, "{gone:?}");
    result_of(&session_post(&serving.url, &oldest, &list).await);
    result_of(&session_post(&serving.url, &third, &list).await);
}

#[tokio::test]
async fn sessions_in_use_are_never_evicted_and_a_full_table_of_them_refuses() {
    let mut options = HttpOptions::default();
    options.max_sessions = 2;
    let serving = Serving::start(options).await;
    let first = open_session(&serving.url).await;
    let second = open_session(&serving.url).await;
    // An open stream keeps a session in use.
    let _first_stream = open_stream(&serving.url, &first).await;
    let _second_stream = open_stream(&serving.url, &second).await;
    let reply = post_raw(&serving.url, &[], initialize_body().to_string()).await;
    assert_eq!(reply.status, StatusCode::SERVICE_UNAVAILABLE, "{reply:?}");
    assert_eq!(reply.json()["id"], 1, "{}", reply.text);
    assert!(reply.headers.get("mcp-session-id").is_none());
    // Ending one makes room.
    assert_eq!(delete(&serving.url, &first).await, StatusCode::OK);
    let _third = open_session(&serving.url).await;
}

#[tokio::test]
async fn a_second_get_stream_replaces_the_first() {
    let serving = Serving::start(HttpOptions::default()).await;
    let session = open_session(&serving.url).await;
    let mut first = open_stream(&serving.url, &session).await;
    let _second = open_stream(&serving.url, &session).await;
    assert_eq!(
        first.next(Duration::from_secs(3)).await,
        None,
        "the older stream ends when a newer one opens"
    );
}

#[tokio::test]
async fn the_protocol_version_header_must_name_a_handshake_revision() {
    let serving = Serving::start(HttpOptions::default()).await;
    let session = open_session(&serving.url).await;
    let list = request(2, "tools/list", json!({})).to_string();
    for wrong in ["2099-01-01", "not-a-version"] {
        let reply = post_raw(
            &serving.url,
            &[
                ("mcp-session-id", &session),
                ("mcp-protocol-version", wrong),
            ],
            list.clone(),
        )
        .await;
        assert_eq!(reply.status, StatusCode::BAD_REQUEST, "{wrong}: {reply:?}");
    }
    // Without the header (clients before 2025-06-18), the session decides.
    let reply = post_raw(&serving.url, &[("mcp-session-id", &session)], list).await;
    assert_eq!(result_of(&reply)["tools"].as_array().unwrap().len(), 5);
}

/// Starts a 10 s `sleep` call with request id `id` in `session`; returns its POST.
fn start_sleep(
    serving: &Serving,
    session: &str,
    id: i64,
    progress: bool,
) -> tokio::task::JoinHandle<http_support::Reply> {
    let mut params = json!({"name": "sleep", "arguments": {"ms": 10_000}});
    if progress {
        params["_meta"] = json!({"progressToken": id});
    }
    let body = request(id, "tools/call", params);
    let url = serving.url.clone();
    let session = session.to_owned();
    tokio::spawn(async move {
        let response = http()
            .post(&url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-session-id", session)
            .header("mcp-protocol-version", LEGACY)
            .body(body.to_string())
            .send()
            .await
            .unwrap();
        http_support::read(response).await
    })
}

async fn cancel(serving: &Serving, session: &str, id: i64) {
    let cancelled = json!({
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": {"requestId": id, "reason": "test"},
    });
    let reply = tokio::time::timeout(
        Duration::from_secs(2),
        session_post(&serving.url, session, &cancelled),
    )
    .await
    .expect("the cancellation was not accepted in time");
    assert_eq!(reply.status, StatusCode::ACCEPTED, "{reply:?}");
    assert!(reply.text.is_empty(), "{reply:?}");
}

#[tokio::test]
async fn notifications_cancelled_stops_a_running_call() {
    let serving = Serving::start(HttpOptions::default()).await;
    let session = open_session(&serving.url).await;

    // A JSON call: its POST ends, with no result, once cancelled.
    let call = start_sleep(&serving, &session, 42, false);
    serving
        .probe
        .wait_for("the call to start", |p| p.started() == 1)
        .await;
    cancel(&serving, &session, 42).await;
    serving
        .probe
        .wait_for("the call to stop", |p| p.aborted() == 1)
        .await;
    let reply = tokio::time::timeout(TIMEOUT, call).await.unwrap().unwrap();
    // A request's POST gets JSON or an event stream, never an empty 204:
    // here a stream that ends with nothing in it.
    assert_eq!(reply.status, StatusCode::OK, "{reply:?}");
    assert_eq!(
        reply.headers["content-type"], "text/event-stream",
        "{reply:?}"
    );
    assert!(!reply.text.contains("\"result\""), "{reply:?}");

    // A streamed call (with a progress token) likewise.
    let call = start_sleep(&serving, &session, 43, true);
    serving
        .probe
        .wait_for("the call to start", |p| p.started() == 2)
        .await;
    cancel(&serving, &session, 43).await;
    serving
        .probe
        .wait_for("the call to stop", |p| p.aborted() == 2)
        .await;
    let reply = tokio::time::timeout(TIMEOUT, call).await.unwrap().unwrap();
    assert!(!reply.text.contains("\"result\""), "{reply:?}");

    // The id is free again.
    let again = request(
        42,
        "tools/call",
        json!({"name": "add", "arguments": {"a": 1, "b": 1}}),
    );
    result_of(&session_post(&serving.url, &session, &again).await);
    assert_eq!(serving.probe.finished(), 0);
}

#[tokio::test]
async fn a_cancellation_gets_through_at_the_concurrency_limit() {
    let mut options = HttpOptions::default();
    options.max_concurrent_requests = 1;
    let serving = Serving::start(options).await;
    let session = open_session(&serving.url).await;
    let call = start_sleep(&serving, &session, 7, false);
    serving
        .probe
        .wait_for("the call to start", |p| p.started() == 1)
        .await;
    // The one permit is the running call's; the notification must not wait for it.
    cancel(&serving, &session, 7).await;
    serving
        .probe
        .wait_for("the call to stop", |p| p.aborted() == 1)
        .await;
    tokio::time::timeout(TIMEOUT, call).await.unwrap().unwrap();
}

#[tokio::test]
async fn a_request_id_cannot_be_reused_while_in_flight() {
    let serving = Serving::start(HttpOptions::default()).await;
    let session = open_session(&serving.url).await;
    let call = start_sleep(&serving, &session, 5, false);
    serving
        .probe
        .wait_for("the call to start", |p| p.started() == 1)
        .await;
    let same_id = request(
        5,
        "tools/call",
        json!({"name": "add", "arguments": {"a": 1, "b": 1}}),
    );
    let reply = session_post(&serving.url, &session, &same_id).await;
    assert_eq!(reply.error_code(), -32600, "{reply:?}");
    cancel(&serving, &session, 5).await;
    tokio::time::timeout(TIMEOUT, call).await.unwrap().unwrap();
}

#[tokio::test]
async fn in_a_session_progress_streams_and_a_dropped_stream_is_not_a_cancellation() {
    let serving = Serving::start(HttpOptions::default()).await;
    let session = open_session(&serving.url).await;
    let call = request(
        9,
        "tools/call",
        json!({
            "name": "sleep",
            "arguments": {"ms": 40, "steps": 2},
            "_meta": {"progressToken": "p"},
        }),
    );
    let reply = session_post(&serving.url, &session, &call).await;
    assert!(
        reply.content_type().starts_with("text/event-stream"),
        "{reply:?}"
    );
    let events = reply.events();
    assert_eq!(events.len(), 3, "{events:#?}");
    assert_eq!(events[0]["method"], "notifications/progress");
    assert_eq!(events[2]["id"], 9);
    assert_eq!(
        events[2]["result"]["structuredContent"],
        json!({"slept_ms": 40})
    );

    // A call that could have streamed but sent nothing before its answer is
    // answered with plain JSON: no event stream a client could wait to resume.
    let quiet = request(
        10,
        "tools/call",
        json!({
            "name": "sleep",
            "arguments": {"ms": 1, "steps": 0},
            "_meta": {"progressToken": "quiet"},
        }),
    );
    let reply = session_post(&serving.url, &session, &quiet).await;
    assert!(
        reply.content_type().starts_with("application/json"),
        "{reply:?}"
    );

    // 2025-11-25: a disconnection is not a cancellation; the call runs on.
    let call = request(
        10,
        "tools/call",
        json!({
            "name": "sleep",
            "arguments": {"ms": 300, "steps": 3},
            "_meta": {"progressToken": "q"},
        }),
    );
    let response = http()
        .post(&serving.url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-session-id", &session)
        .header("mcp-protocol-version", LEGACY)
        .body(call.to_string())
        .send()
        .await
        .unwrap();
    let mut stream = EventStream::new(response);
    let first = stream.next(TIMEOUT).await.unwrap();
    assert_eq!(first["method"], "notifications/progress");
    drop(stream);
    serving
        .probe
        .wait_for("the call to finish", |p| p.finished() == 2)
        .await;
    assert_eq!(serving.probe.aborted(), 0);
}

fn extra_tool(name: &str) -> Tool {
    Tool::typed(name, |input: http_support::EchoIn| async move {
        Ok::<_, ToolError>(input.text)
    })
}

#[tokio::test]
async fn the_get_stream_announces_tool_list_changes() {
    let serving = Serving::start(HttpOptions::default()).await;
    let session = open_session(&serving.url).await;
    let mut stream = open_stream(&serving.url, &session).await;
    // Let the stream subscribe before the registry changes.
    tokio::time::sleep(Duration::from_millis(50)).await;

    serving
        .server
        .registry()
        .register(extra_tool("late"))
        .unwrap();
    let message = stream.next(TIMEOUT).await.expect("the stream ended");
    assert_eq!(
        message["method"], "notifications/tools/list_changed",
        "{message}"
    );
    assert!(message.get("id").is_none());
    let listed = result_of(
        &session_post(&serving.url, &session, &request(2, "tools/list", json!({}))).await,
    );
    assert!(
        listed["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"] == "late"),
        "{listed}"
    );

    assert!(serving.server.registry().remove("late"));
    let message = stream.next(TIMEOUT).await.expect("the stream ended");
    assert_eq!(
        message["method"], "notifications/tools/list_changed",
        "{message}"
    );
}

#[tokio::test]
async fn the_get_stream_needs_a_live_session_and_ends_with_it() {
    let serving = Serving::start(HttpOptions::default()).await;
    let response = http()
        .get(&serving.url)
        .header("accept", "text/event-stream")
        .header("mcp-session-id", "0123456789abcdef0123456789abcdef")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::NOT_FOUND);

    let session = open_session(&serving.url).await;
    let mut stream = open_stream(&serving.url, &session).await;
    assert_eq!(delete(&serving.url, &session).await, StatusCode::OK);
    assert_eq!(
        stream.next(Duration::from_secs(2)).await,
        None,
        "the stream of an ended session ends"
    );
}

#[tokio::test]
async fn an_abandoned_call_frees_its_request_id() {
    let serving = Serving::start(HttpOptions::default()).await;
    let session = open_session(&serving.url).await;
    let call = start_sleep(&serving, &session, 77, false);
    serving
        .probe
        .wait_for("the call to start", |p| p.started() == 1)
        .await;
    // The client goes away before the answer: nothing can carry it any more.
    call.abort();
    serving
        .probe
        .wait_for("the call to stop", |p| p.aborted() == 1)
        .await;
    let same_id = request(
        77,
        "tools/call",
        json!({"name": "add", "arguments": {"a": 1, "b": 1}}),
    );
    let result = result_of(&session_post(&serving.url, &session, &same_id).await);
    assert_eq!(result["structuredContent"], json!({"result": 2}));
}
