#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The endpoint's defences over real HTTP: Origin checks (DNS rebinding) and
//! CORS for the origins it serves,
//! the body limit, malformed input, stray responses, the concurrency limit,
//! and a graceful shutdown that still answers the calls in flight.

mod http_support;

use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::json;
use toolshape::HttpOptions;

use http_support::{
    EventStream, MODERN, Serving, TIMEOUT, http, modern, modern_headers, modern_params,
    open_session, post_raw, request, result_of,
};

async fn list_with_origin(url: &str, origin: &str) -> http_support::Reply {
    let mut headers = modern_headers("tools/list", None);
    headers.push(("origin", origin));
    let body = request(1, "tools/list", modern_params(json!({})));
    post_raw(url, &headers, body.to_string()).await
}

#[tokio::test]
async fn foreign_origins_are_refused_and_loopback_ones_served() {
    let mut options = HttpOptions::default();
    options.allowed_origins = vec!["https://app.example.com".into()];
    let serving = Serving::start(options).await;

    for origin in [
        "http://localhost:3000",
        "http://127.0.0.1:9",
        "http://[::1]:8080",
        "https://localhost",
        "https://app.example.com",
    ] {
        let reply = list_with_origin(&serving.url, origin).await;
        assert_eq!(reply.status, StatusCode::OK, "{origin}: {reply:?}");
    }
    for origin in [
        "http://evil.example",
        "https://other.example.com",
        "http://localhost.evil.example",
        "null",
    ] {
        let reply = list_with_origin(&serving.url, origin).await;
        assert_eq!(reply.status, StatusCode::FORBIDDEN, "{origin}: {reply:?}");
        let body = reply.json();
        assert!(body["error"].is_object(), "{body}");
        assert!(body.get("id").is_none(), "{body}");
    }

    // GET and DELETE check it first, too.
    let session = open_session(&serving.url).await;
    let client = http();
    let got = client
        .get(&serving.url)
        .header("mcp-session-id", &session)
        .header("origin", "http://evil.example")
        .send()
        .await
        .unwrap();
    assert_eq!(got.status(), StatusCode::FORBIDDEN);
    let deleted = client
        .delete(&serving.url)
        .header("mcp-session-id", &session)
        .header("origin", "http://evil.example")
        .send()
        .await
        .unwrap();
    assert_eq!(deleted.status(), StatusCode::FORBIDDEN);
    // ...so the session survived.
    let deleted = client
        .delete(&serving.url)
        .header("mcp-session-id", &session)
        .send()
        .await
        .unwrap();
    assert_eq!(deleted.status(), StatusCode::OK);
}

/// A CORS header of a reply, as text ("" when absent).
fn cors_header(headers: &reqwest::header::HeaderMap, name: &str) -> String {
    headers
        .get(name)
        .and_then(|value| value.to_str().ok())
        .unwrap_or_default()
        .to_ascii_lowercase()
}

/// The request headers the preflights below ask for.
const ASKED: &str = "content-type, mcp-protocol-version, mcp-method, mcp-name, mcp-param-region";

/// A browser's preflight for a POST from `origin` to `url`.
async fn send_preflight(url: &str, origin: &str, headers: &str) -> reqwest::Response {
    http()
        .request(reqwest::Method::OPTIONS, url)
        .header("origin", origin)
        .header("access-control-request-method", "POST")
        .header("access-control-request-headers", headers)
        .header("access-control-request-private-network", "true")
        .send()
        .await
        .unwrap()
}

#[tokio::test]
async fn listed_origins_get_cors_and_their_preflights_answered() {
    let mut options = HttpOptions::default();
    options.allowed_origins = vec![
        "https://app.example.com".into(),
        "http://localhost:6274".into(),
    ];
    let serving = Serving::start(options).await;

    for origin in ["https://app.example.com", "http://localhost:6274"] {
        let preflight = send_preflight(&serving.url, origin, ASKED).await;
        assert!(preflight.status().is_success(), "{origin}: {preflight:?}");
        let headers = preflight.headers();
        assert_eq!(
            cors_header(headers, "access-control-allow-origin"),
            origin,
            "{headers:?}"
        );
        let methods = cors_header(headers, "access-control-allow-methods");
        for method in ["get", "post", "delete"] {
            assert!(methods.contains(method), "{methods}");
        }
        let allowed = cors_header(headers, "access-control-allow-headers");
        assert!(allowed.contains("mcp-param-region"), "{allowed}");
        assert_eq!(
            cors_header(headers, "access-control-allow-private-network"),
            "true"
        );
        assert!(!cors_header(headers, "access-control-max-age").is_empty());

        // The request itself: served, and the page may read the MCP headers.
        let reply = list_with_origin(&serving.url, origin).await;
        assert_eq!(reply.status, StatusCode::OK, "{reply:?}");
        assert_eq!(
            cors_header(&reply.headers, "access-control-allow-origin"),
            origin
        );
        let exposed = cors_header(&reply.headers, "access-control-expose-headers");
        for name in ["mcp-session-id", "mcp-protocol-version", "www-authenticate"] {
            assert!(exposed.contains(name), "{exposed}");
        }
    }

    // A loopback origin not listed passes the Origin check (DNS rebinding is
    // about foreign sites) but gets no CORS: another local web app's page
    // cannot read the answers.
    let unlisted = "http://localhost:5173";
    let preflight = send_preflight(&serving.url, unlisted, ASKED).await;
    assert!(preflight.status().is_success(), "{preflight:?}");
    assert!(
        preflight
            .headers()
            .get("access-control-allow-origin")
            .is_none(),
        "{preflight:?}"
    );
    let reply = list_with_origin(&serving.url, unlisted).await;
    assert_eq!(reply.status, StatusCode::OK, "{reply:?}");
    assert!(reply.headers.get("access-control-allow-origin").is_none());

    // A foreign origin's preflight is refused (403), as its request is.
    let preflight = send_preflight(&serving.url, "http://evil.example", ASKED).await;
    assert_eq!(preflight.status(), StatusCode::FORBIDDEN, "{preflight:?}");
    let headers = preflight.headers();
    assert!(
        headers.get("access-control-allow-origin").is_none(),
        "{headers:?}"
    );
    let reply = list_with_origin(&serving.url, "http://evil.example").await;
    assert_eq!(reply.status, StatusCode::FORBIDDEN);
    assert!(reply.headers.get("access-control-allow-origin").is_none());

    // An OPTIONS request that is no preflight is the endpoint's: 405.
    let options = http()
        .request(reqwest::Method::OPTIONS, &serving.url)
        .header("origin", "https://app.example.com")
        .send()
        .await
        .unwrap();
    assert_eq!(options.status(), StatusCode::METHOD_NOT_ALLOWED);
}

/// The status line of a raw HTTP/1.1 `POST` of a 2026-07-28 `tools/list`
/// to `target`, its `Host` header the server's own address.
async fn post_to_target(serving: &Serving, target: &str) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let body = request(1, "tools/list", modern_params(json!({}))).to_string();
    let head = format!(
        "POST {target} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: {MODERN}\r\n\
         Mcp-Method: tools/list\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        serving.address,
        body.len()
    );
    let mut stream = tokio::net::TcpStream::connect(serving.address)
        .await
        .unwrap();
    stream.write_all(head.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    tokio::time::timeout(TIMEOUT, stream.read_to_end(&mut answer))
        .await
        .unwrap()
        .unwrap();
    let answer = String::from_utf8_lossy(&answer);
    answer.lines().next().unwrap_or_default().to_owned()
}

/// A request target in absolute form names the host the request is for
/// (its `Host` header is then to be ignored): a host the endpoint does not
/// serve is refused as a `Host` header naming it would be.
#[tokio::test]
async fn an_absolute_form_target_is_checked_by_the_host_it_names() {
    let serving = Serving::start(HttpOptions::default()).await;
    let status = post_to_target(&serving, "http://evil.example/mcp").await;
    assert!(status.starts_with("HTTP/1.1 403"), "{status}");
    let own = format!("http://{}/mcp", serving.address);
    let status = post_to_target(&serving, &own).await;
    assert!(status.starts_with("HTTP/1.1 200"), "{status}");
    let status = post_to_target(&serving, "/mcp").await;
    assert!(status.starts_with("HTTP/1.1 200"), "{status}");
}

#[tokio::test]
async fn an_oversized_body_is_413_and_the_server_keeps_serving() {
    let mut options = HttpOptions::default();
    options.max_body_bytes = 1024;
    let serving = Serving::start(options).await;
    let big = "x".repeat(4096);
    let body = request(
        1,
        "tools/call",
        modern_params(json!({"name": "echo", "arguments": {"text": big}})),
    );
    let reply = post_raw(
        &serving.url,
        &modern_headers("tools/call", Some("echo")),
        body.to_string(),
    )
    .await;
    assert_eq!(reply.status, StatusCode::PAYLOAD_TOO_LARGE, "{reply:?}");
    // A JSON-RPC error with the request's id, read from the body's start.
    let refusal = reply.json();
    assert_eq!(refusal["id"], 1, "{refusal}");
    assert_eq!(refusal["error"]["code"], -32600, "{refusal}");
    assert_eq!(serving.probe.started(), 0);

    let reply = modern(
        &serving.url,
        2,
        "tools/call",
        json!({"name": "echo", "arguments": {"text": "small"}}),
    )
    .await;
    assert_eq!(result_of(&reply)["structuredContent"]["text"], "small");
}

#[tokio::test]
async fn malformed_input_is_400_and_responses_are_taken_in_sessions_only() {
    let serving = Serving::start(HttpOptions::default()).await;
    let headers = modern_headers("tools/list", None);

    let reply = post_raw(&serving.url, &headers, "{not json").await;
    assert_eq!(reply.status, StatusCode::BAD_REQUEST, "{reply:?}");
    assert_eq!(reply.error_code(), -32700);
    assert!(reply.json()["id"].is_null());

    let reply = post_raw(&serving.url, &headers, r#"{"hello": "world"}"#).await;
    assert_eq!(reply.status, StatusCode::BAD_REQUEST, "{reply:?}");
    assert_eq!(reply.error_code(), -32600);

    let reply = post_raw(&serving.url, &headers, "").await;
    assert_eq!(reply.status, StatusCode::BAD_REQUEST, "{reply:?}");

    // A JSON-RPC response outside any session: 2026-07-28 clients send
    // none, so it is refused (400, an error without an id).
    let response = json!({"jsonrpc": "2.0", "id": 99, "result": {}});
    let reply = post_raw(&serving.url, &headers, response.to_string()).await;
    assert_eq!(reply.status, StatusCode::BAD_REQUEST, "{reply:?}");
    assert_eq!(reply.error_code(), -32600);
    assert!(reply.json().get("id").is_none(), "{reply:?}");
    // In a session, one (to a request the server never sent) is accepted.
    let session = http_support::open_session(&serving.url).await;
    let reply = http_support::session_post(&serving.url, &session, &response).await;
    assert_eq!(reply.status, StatusCode::ACCEPTED, "{reply:?}");
    assert!(reply.text.is_empty(), "{reply:?}");

    // A stateless notification: accepted, no body.
    let notification = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let reply = post_raw(&serving.url, &[], notification.to_string()).await;
    assert_eq!(reply.status, StatusCode::ACCEPTED, "{reply:?}");
    assert!(reply.text.is_empty(), "{reply:?}");

    // Still serving.
    result_of(&modern(&serving.url, 3, "tools/list", json!({})).await);
}

/// Two slow calls on a server that serves one request at a time.
async fn two_slow_calls(progress: bool) {
    let mut options = HttpOptions::default();
    options.max_concurrent_requests = 1;
    let serving = Serving::start(options).await;
    let started = Instant::now();
    let calls: Vec<_> = (0..2)
        .map(|i| {
            let url = serving.url.clone();
            tokio::spawn(async move {
                let mut params = json!({"name": "sleep", "arguments": {"ms": 200, "steps": 2}});
                if progress {
                    params["_meta"] = json!({"progressToken": i});
                }
                modern(&url, i, "tools/call", params).await
            })
        })
        .collect();
    for call in calls {
        let reply = tokio::time::timeout(TIMEOUT, call).await.unwrap().unwrap();
        assert_eq!(reply.status, StatusCode::OK, "{reply:?}");
        let answer = if progress {
            reply.events().pop().unwrap()
        } else {
            reply.json()
        };
        assert_eq!(
            answer["result"]["structuredContent"],
            json!({"slept_ms": 200}),
            "{answer}"
        );
    }
    assert_eq!(serving.probe.finished(), 2);
    assert_eq!(serving.probe.max_running(), 1, "the second call waited");
    assert!(started.elapsed() >= Duration::from_millis(390));
}

#[tokio::test]
async fn past_the_concurrency_limit_requests_wait_their_turn() {
    two_slow_calls(false).await;
}

#[tokio::test]
async fn streamed_calls_count_against_the_concurrency_limit() {
    two_slow_calls(true).await;
}

#[tokio::test]
async fn shutdown_lets_the_calls_in_flight_answer() {
    let mut serving = Serving::start(HttpOptions::default()).await;
    let url = serving.url.clone();
    let json_call = tokio::spawn({
        let url = url.clone();
        async move {
            modern(
                &url,
                1,
                "tools/call",
                json!({"name": "sleep", "arguments": {"ms": 300}}),
            )
            .await
        }
    });
    let streamed_call = tokio::spawn(async move {
        modern(
            &url,
            2,
            "tools/call",
            json!({
                "name": "sleep",
                "arguments": {"ms": 300, "steps": 3},
                "_meta": {"progressToken": "s"},
            }),
        )
        .await
    });
    serving
        .probe
        .wait_for("both calls to start", |p| p.started() == 2)
        .await;
    let stopped = serving.begin_shutdown();

    let reply = tokio::time::timeout(TIMEOUT, json_call)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        result_of(&reply)["structuredContent"],
        json!({"slept_ms": 300})
    );
    let reply = tokio::time::timeout(TIMEOUT, streamed_call)
        .await
        .unwrap()
        .unwrap();
    let answer = reply.events().pop().unwrap();
    assert_eq!(
        answer["result"]["structuredContent"],
        json!({"slept_ms": 300})
    );

    tokio::time::timeout(TIMEOUT, stopped)
        .await
        .expect("serve_http did not return after the calls ended")
        .unwrap()
        .unwrap();
    assert_eq!(serving.probe.aborted(), 0);
    // Nothing listens any more.
    let refused = http()
        .post(&serving.url)
        .header("mcp-protocol-version", MODERN)
        .body("{}")
        .send()
        .await;
    assert!(refused.is_err(), "{refused:?}");
}

#[tokio::test]
async fn shutdown_ends_the_long_lived_streams() {
    let mut serving = Serving::start(HttpOptions::default()).await;
    let session = open_session(&serving.url).await;
    let response = http()
        .get(&serving.url)
        .header("accept", "text/event-stream")
        .header("mcp-session-id", &session)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let mut stream = EventStream::new(response);

    // A 2026-07-28 subscription stream, too.
    let listen = request(
        5,
        "subscriptions/listen",
        modern_params(json!({"notifications": {"toolsListChanged": true}})),
    );
    let response = http()
        .post(&serving.url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", MODERN)
        .header("mcp-method", "subscriptions/listen")
        .body(listen.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let mut subscription = EventStream::new(response);
    let acknowledged = subscription.next(TIMEOUT).await.unwrap();
    assert_eq!(
        acknowledged["method"], "notifications/subscriptions/acknowledged",
        "{acknowledged}"
    );

    let stopped = serving.begin_shutdown();
    tokio::time::timeout(Duration::from_secs(3), stopped)
        .await
        .expect("serve_http waited forever on an open stream")
        .unwrap()
        .unwrap();
    assert_eq!(stream.next(TIMEOUT).await, None, "the GET stream ended");
    // The subscription's last event is its result, which says it ended
    // (what the 2026-07-28 schema has a server send as it shuts down).
    let ended = subscription.next(TIMEOUT).await.unwrap();
    assert_eq!(ended["id"], 5, "{ended}");
    assert_eq!(ended["result"]["resultType"], "complete", "{ended}");
    assert_eq!(
        ended["result"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        5
    );
    assert_eq!(
        subscription.next(TIMEOUT).await,
        None,
        "the subscription stream ended"
    );
}
