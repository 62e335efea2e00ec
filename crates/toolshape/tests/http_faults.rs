#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Slow and malicious HTTP clients against the endpoint, over real sockets:
//! a foreign `Host` (DNS rebinding), slowloris clients that send their
//! headers a byte at a time or their body slowly (or never), idle keep-alive
//! connections, more
//! connections than the server holds, and more notification streams than it
//! keeps open. Legitimate requests must still get
//! through, in a bounded time.

mod http_support;

use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use toolshape::{HttpOptions, Tool, ToolError};

use http_support::{
    EventStream, Serving, TIMEOUT, http, modern, modern_headers, modern_params, open_session,
    post_raw, request, result_of,
};

/// A short header timeout, so that the tests wait seconds, not minutes.
const HEADER_TIMEOUT: Duration = Duration::from_millis(800);

/// A short body timeout, for the same reason.
const BODY_TIMEOUT: Duration = Duration::from_millis(800);

fn options(max_connections: usize) -> HttpOptions {
    let mut options = HttpOptions::default();
    options.header_read_timeout = HEADER_TIMEOUT;
    options.body_read_timeout = BODY_TIMEOUT;
    options.max_connections = max_connections;
    options
}

async fn list_with_host(url: &str, host: &str) -> http_support::Reply {
    let mut headers = modern_headers("tools/list", None);
    headers.push(("host", host));
    let body = request(1, "tools/list", modern_params(json!({})));
    post_raw(url, &headers, body.to_string()).await
}

#[tokio::test]
async fn a_foreign_host_is_refused_and_loopback_and_listed_ones_served() {
    let mut options = HttpOptions::default();
    options.allowed_hosts = vec!["mcp.example.com".into()];
    let serving = Serving::start(options).await;
    let port = serving.address.port().to_string();
    for host in [
        format!("127.0.0.1:{port}"),
        format!("localhost:{port}"),
        "mcp.example.com".to_owned(),
        format!("mcp.example.com:{port}"),
    ] {
        let reply = list_with_host(&serving.url, &host).await;
        assert_eq!(reply.status, StatusCode::OK, "{host}: {reply:?}");
    }
    for host in ["evil.example", "attacker.example:80", "127.0.0.1.nip.io"] {
        let reply = list_with_host(&serving.url, host).await;
        assert_eq!(reply.status, StatusCode::FORBIDDEN, "{host}: {reply:?}");
        assert!(reply.text.contains("Host"), "{}", reply.text);
    }
}

/// A client that sends the start of a request, one byte at a time, and never finishes.
async fn slowloris(address: std::net::SocketAddr) -> Option<Duration> {
    let started = Instant::now();
    let mut stream = TcpStream::connect(address).await.ok()?;
    let head = b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ";
    for byte in head.iter().chain(std::iter::repeat(&b'a')) {
        if stream.write_all(&[*byte]).await.is_err() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        if started.elapsed() > Duration::from_secs(20) {
            return None;
        }
    }
    // The server closed the connection: how long it held on.
    Some(started.elapsed())
}

/// Starts 16 `attack`s on a server holding 8 connections, then checks that
/// a legitimate request is answered within 4 x `timeout` meanwhile; what
/// each attack gave (`None`: the server held it for 20 s).
async fn attacked_yet_serving<T, F, Fut>(attack: F, timeout: Duration) -> Vec<Option<T>>
where
    T: Send + 'static,
    F: Fn(std::net::SocketAddr) -> Fut,
    Fut: std::future::Future<Output = Option<T>> + Send + 'static,
{
    let serving = Serving::start(options(8)).await;
    // Twice as many slow clients as the server holds connections.
    let attackers: Vec<_> = (0..16)
        .map(|_| tokio::spawn(attack(serving.address)))
        .collect();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let started = Instant::now();
    let reply = modern(&serving.url, 1, "tools/list", json!({})).await;
    result_of(&reply);
    let waited = started.elapsed();
    assert!(
        waited < timeout * 4,
        "a legitimate request waited {waited:?} behind slow clients"
    );
    let mut outcomes = Vec::new();
    for attacker in attackers {
        outcomes.push(attacker.await.unwrap());
    }
    outcomes
}

#[tokio::test]
async fn slowloris_clients_are_cut_off_and_cannot_lock_others_out() {
    for held in attacked_yet_serving(slowloris, HEADER_TIMEOUT).await {
        let held = held.expect("the server cut the slow client off");
        assert!(
            held < HEADER_TIMEOUT * 4 + Duration::from_secs(2),
            "a slow client held a connection for {held:?}"
        );
    }
}

/// A client that sends a request's headers promising a body, then a few
/// bytes of it, and no more: what the server answered, and how long the
/// connection lasted (`None`: the server held it for 20 s).
async fn slow_body(address: std::net::SocketAddr) -> Option<(String, Duration)> {
    let started = Instant::now();
    let mut stream = TcpStream::connect(address).await.ok()?;
    let head = "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n\
         Mcp-Method: tools/list\r\nContent-Length: 100000\r\n\r\n{\"jsonrpc\":";
    stream.write_all(head.as_bytes()).await.ok()?;
    let mut seen = Vec::new();
    let mut buffer = [0u8; 8192];
    loop {
        let read = tokio::time::timeout(Duration::from_secs(20), stream.read(&mut buffer))
            .await
            .ok()?;
        match read {
            Ok(0) | Err(_) => break,
            Ok(n) => seen.extend_from_slice(&buffer[..n]),
        }
    }
    Some((
        String::from_utf8_lossy(&seen).into_owned(),
        started.elapsed(),
    ))
}

#[tokio::test]
async fn clients_that_never_finish_their_body_are_cut_off_and_cannot_lock_others_out() {
    for attack in attacked_yet_serving(slow_body, BODY_TIMEOUT).await {
        let (answer, held) = attack.expect("the server held a client's unfinished body for 20 s");
        assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
        assert!(
            held < BODY_TIMEOUT * 4 + Duration::from_secs(2),
            "a slow client held a connection for {held:?}"
        );
    }
}

#[tokio::test]
async fn an_idle_keep_alive_connection_is_closed() {
    let serving = Serving::start(options(64)).await;
    let mut stream = TcpStream::connect(serving.address).await.unwrap();
    let body = request(1, "tools/list", modern_params(json!({}))).to_string();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n\
         Mcp-Method: tools/list\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(body.as_bytes()).await.unwrap();
    let started = Instant::now();
    let mut seen = Vec::new();
    let mut buffer = [0u8; 8192];
    // Read the answer, then wait: the server ends the idle connection.
    loop {
        let read = tokio::time::timeout(Duration::from_secs(10), stream.read(&mut buffer))
            .await
            .expect("the idle connection was not closed within 10 s");
        match read {
            Ok(0) | Err(_) => break,
            Ok(n) => seen.extend_from_slice(&buffer[..n]),
        }
    }
    let text = String::from_utf8_lossy(&seen);
    assert!(text.starts_with("HTTP/1.1 200"), "{text}");
    assert!(
        started.elapsed() < HEADER_TIMEOUT * 4,
        "the idle connection lived {:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn connections_past_the_limit_wait_and_are_then_served() {
    let serving = Serving::start(options(2)).await;
    // Two idle connections take both places...
    let _first = TcpStream::connect(serving.address).await.unwrap();
    let _second = TcpStream::connect(serving.address).await.unwrap();
    // ...until the header timeout frees them: the third client gets in.
    let started = Instant::now();
    let reply = post_raw(
        &serving.url,
        &modern_headers("tools/list", None),
        request(1, "tools/list", modern_params(json!({}))).to_string(),
    )
    .await;
    assert_eq!(reply.status, StatusCode::OK, "{reply:?}");
    assert!(
        started.elapsed() < HEADER_TIMEOUT * 4,
        "{:?}",
        started.elapsed()
    );
}

/// A session's GET stream.
async fn get_stream(url: &str, session: &str) -> reqwest::Response {
    http()
        .get(url)
        .header("accept", "text/event-stream")
        .header("mcp-session-id", session)
        .send()
        .await
        .unwrap()
}

/// A 2026-07-28 `subscriptions/listen` request for tool changes.
async fn listen(url: &str, id: i64) -> reqwest::Response {
    let body = request(
        id,
        "subscriptions/listen",
        modern_params(json!({"notifications": {"toolsListChanged": true}})),
    );
    let mut post = http().post(url).body(body.to_string());
    for (name, value) in modern_headers("subscriptions/listen", None) {
        post = post.header(name, value);
    }
    post.send().await.unwrap()
}

/// A refusal for the streams' bound: `503` with `-32603` "Server busy",
/// answering `id` if the stream was a request's answer.
async fn assert_busy(response: reqwest::Response, id: Option<i64>) {
    assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
    let body: serde_json::Value = serde_json::from_str(&response.text().await.unwrap()).unwrap();
    assert_eq!(body["error"]["code"], -32603, "{body}");
    let message = body["error"]["message"].as_str().unwrap_or_default();
    assert!(message.starts_with("Server busy"), "{body}");
    assert_eq!(
        body["id"],
        id.map_or(serde_json::Value::Null, |id| json!(id))
    );
}

#[tokio::test]
async fn streams_past_their_bound_are_refused_and_calls_still_served() {
    let mut options = HttpOptions::default();
    options.max_streams = 2;
    let serving = Serving::start(options).await;
    let session = open_session(&serving.url).await;
    let get = get_stream(&serving.url, &session).await;
    assert_eq!(get.status(), StatusCode::OK);
    let mut get = EventStream::new(get);
    let listening = listen(&serving.url, 5).await;
    assert_eq!(listening.status(), StatusCode::OK);
    let mut listening = EventStream::new(listening);
    let acknowledged = listening.next(TIMEOUT).await.unwrap();
    let subscription = &acknowledged["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"];
    assert_eq!(subscription, 5, "{acknowledged}");

    // Both places taken: a third stream of either kind is refused...
    assert_busy(listen(&serving.url, 6).await, Some(6)).await;
    assert_busy(get_stream(&serving.url, &session).await, None).await;
    // ...while calls are served, and the session's own stream, which a new
    // GET would have replaced, is still open.
    let listed = modern(&serving.url, 7, "tools/list", json!({})).await;
    assert!(result_of(&listed)["tools"].is_array());
    tokio::time::sleep(Duration::from_millis(50)).await;
    let late = Tool::typed("late", |input: http_support::EchoIn| async move {
        Ok::<_, ToolError>(input.text)
    });
    serving.server.registry().register(late).unwrap();
    for stream in [&mut get, &mut listening] {
        let told = stream.next(TIMEOUT).await.expect("the stream ended");
        assert_eq!(told["method"], "notifications/tools/list_changed", "{told}");
    }

    // A stream that ends gives its place back.
    drop(listening);
    let started = Instant::now();
    loop {
        let response = listen(&serving.url, 8).await;
        if response.status() == StatusCode::OK {
            break;
        }
        assert!(
            started.elapsed() < TIMEOUT,
            "the ended stream's place was not given back"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn streams_never_take_more_than_half_the_connections() {
    // Four connections, the default 512 streams: two streams at most.
    let serving = Serving::start(options(4)).await;
    let mut open = Vec::new();
    for id in 1..=2 {
        let response = listen(&serving.url, id).await;
        assert_eq!(response.status(), StatusCode::OK, "stream {id}");
        open.push(EventStream::new(response));
    }
    assert_busy(listen(&serving.url, 3).await, Some(3)).await;
    let listed = modern(&serving.url, 4, "tools/list", json!({})).await;
    assert!(result_of(&listed)["tools"].is_array());
}
