#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The HTTP client against a server that answers in a costly way, over real
//! loopback HTTP: the test toolset behind a layer that answers `shout`
//! itself.
//!
//! - One large event, sent in small chunks: every byte of an event is read
//!   once, however many chunks it comes in (before, each chunk searched the
//!   whole event so far for its end: a 32 MiB event in 16 KiB chunks took
//!   37 s of CPU in a release build).
//! - An answer over the client's limit that never ends, its `id` last (as
//!   the TypeScript SDK writes it): the call fails as soon as the limit is
//!   passed (before, it waited for its time limit).
//! - An event stream that never answers nor ends, in a session: the call
//!   ends at its time limit and the client closes the stream (before, it
//!   kept reading it for good, a connection and a task per such call), and
//!   so does closing the client while a call waits.
//! - Answers to the server's pings that it holds open: at most 64 at once,
//!   all ended when the client closes; a notification the client sent just
//!   before closing is still posted, to a server slow to take it in.

mod http_support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::middleware::Next;
use axum::response::Response;
use serde_json::{Value, json};
use tokio_stream::StreamExt;
use toolshape::CallOptions;
use toolshape::HttpOptions;
use toolshape::client::{Client, ClientError, Negotiation, ToolResult};
use toolshape::protocol::ProtocolVersion;

use http_support::{Probe, server};

/// The text the layer answers `shout` with.
const TEXT_BYTES: usize = 32 << 20;
/// The size of each chunk of the answer.
const CHUNK_BYTES: usize = 16 << 10;

/// Starts the test toolset behind `layer`; its URL.
async fn serve_behind<F, Fut>(layer: F) -> String
where
    F: Fn(Request, Next) -> Fut + Clone + Send + Sync + 'static,
    Fut: std::future::Future<Output = Response> + Send + 'static,
{
    let probe = Arc::new(Probe::default());
    let app = server(&probe, 100)
        .router(HttpOptions::default())
        .layer(axum::middleware::from_fn(layer));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!(
        "http://{}{}",
        listener.local_addr().unwrap(),
        HttpOptions::default().path
    );
    tokio::spawn(async move { axum::serve(listener, app).await });
    url
}

/// The request's JSON-RPC message, and the request to pass on.
async fn read_message(request: Request) -> (Value, Request) {
    let (parts, body) = request.into_parts();
    let bytes = axum::body::to_bytes(body, 1 << 20).await.unwrap();
    let message: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    (message, Request::from_parts(parts, Body::from(bytes)))
}

/// A response carrying `body` as an event stream.
fn event_stream<S>(body: S) -> Response
where
    S: tokio_stream::Stream<Item = Result<Bytes, std::io::Error>> + Send + 'static,
{
    Response::builder()
        .header("content-type", "text/event-stream")
        .body(Body::from_stream(body))
        .unwrap()
}

/// Calls `shout` with a time limit of `wait` seconds.
async fn shout(client: &Client, wait: u64) -> Result<ToolResult, ClientError> {
    client
        .call_tool_with(
            "shout",
            json!({"text": "hi"}).as_object().cloned(),
            CallOptions::new().timeout(Duration::from_secs(wait)),
        )
        .await
}

fn calls_shout(message: &Value) -> bool {
    message["method"] == "tools/call" && message["params"]["name"] == "shout"
}

/// Answers a `tools/call` of `shout` with one event of [`TEXT_BYTES`] of
/// text, in chunks of [`CHUNK_BYTES`]; passes everything else on.
async fn large_answer(request: Request, next: Next) -> Response {
    let (parts, body) = request.into_parts();
    let bytes = axum::body::to_bytes(body, 1 << 20).await.unwrap();
    let message: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    if message["method"] != "tools/call" || message["params"]["name"] != "shout" {
        return next
            .run(Request::from_parts(parts, Body::from(bytes)))
            .await;
    }
    let head = format!(
        "event: message\ndata: {{\"jsonrpc\":\"2.0\",\"id\":{},\"result\":{{\"resultType\":\"complete\",\"content\":[{{\"type\":\"text\",\"text\":\"",
        message["id"]
    );
    let mut chunks = vec![Bytes::from(head)];
    let chunk = Bytes::from(vec![b'x'; CHUNK_BYTES]);
    chunks.extend(std::iter::repeat_n(chunk, TEXT_BYTES / CHUNK_BYTES));
    chunks.push(Bytes::from_static(b"\"}]}}\n\n"));
    let stream = tokio_stream::iter(chunks.into_iter().map(Ok::<_, std::io::Error>));
    event_stream(stream)
}

#[tokio::test]
async fn a_large_event_in_small_chunks_is_read_in_one_pass() {
    let url = serve_behind(large_answer).await;
    let client = Client::builder()
        .negotiation(Negotiation::Pinned(ProtocolVersion::V2026_07_28))
        .connect_http(&url)
        .await
        .unwrap();
    // Read in one pass this takes well under a second of CPU; searched
    // again with every chunk, minutes in a debug build.
    let result = shout(&client, 60).await.unwrap();
    let text = result.text();
    assert_eq!(text.len(), TEXT_BYTES);
    assert!(text.bytes().all(|b| b == b'x'));
}

/// Answers a `tools/call` of `shout` with an event whose `id` comes after
/// its result, which never ends; passes everything else on.
async fn unended_answer(request: Request, next: Next) -> Response {
    let (message, request) = read_message(request).await;
    if !calls_shout(&message) {
        return next.run(request).await;
    }
    let head = Bytes::from_static(
        b"event: message\ndata: {\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"",
    );
    let chunk = Bytes::from(vec![b'x'; CHUNK_BYTES]);
    let body = tokio_stream::iter([Ok::<_, std::io::Error>(head)])
        .chain(tokio_stream::iter(std::iter::repeat(chunk).map(Ok)))
        .throttle(Duration::from_millis(1));
    event_stream(body)
}

#[tokio::test]
async fn an_unended_answer_over_the_limit_fails_its_call_at_once() {
    let url = serve_behind(unended_answer).await;
    let mut options = toolshape::client::ClientOptions::default();
    options.max_message_bytes = 1 << 20;
    let client = Client::builder()
        .options(options)
        .negotiation(Negotiation::Pinned(ProtocolVersion::V2025_11_25))
        .connect_http(&url)
        .await
        .unwrap();
    let started = std::time::Instant::now();
    let error = shout(&client, 60).await.unwrap_err();
    assert!(
        error.to_string().contains("larger than 1048576 bytes"),
        "{error}"
    );
    // 1 MiB at 16 KiB a millisecond or so: well under the time limit.
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "{:?}",
        started.elapsed()
    );
    // The session goes on.
    let added = client
        .call_tool("add", json!({"a": 2, "b": 3}).as_object().cloned())
        .await
        .unwrap();
    assert_eq!(added.structured, Some(json!(5)));
}

/// Counts the streams open: one more while it lives.
struct Open(Arc<AtomicUsize>);

impl Drop for Open {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// An event stream that sends `opening`, then nothing, for good; counted
/// in `counter` while it is open.
fn held_open(counter: Arc<AtomicUsize>, opening: &'static [u8]) -> Response {
    counter.fetch_add(1, Ordering::SeqCst);
    let guard = Open(counter);
    let opening = tokio_stream::iter([Ok::<_, std::io::Error>(Bytes::from_static(opening))]);
    let never = opening.chain(tokio_stream::pending()).map(move |chunk| {
        let _held = &guard;
        chunk
    });
    event_stream(never)
}

/// A session (2025-11-25) with the server at `url`.
async fn session(url: &str) -> Client {
    Client::builder()
        .negotiation(Negotiation::Pinned(ProtocolVersion::V2025_11_25))
        .connect_http(url)
        .await
        .unwrap()
}

/// Waits up to 10 s for `open` to be `want`; whether it came to that.
async fn open_comes_to(open: &AtomicUsize, want: usize) -> bool {
    for _ in 0..200 {
        if open.load(Ordering::SeqCst) == want {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
}

#[tokio::test]
async fn a_stream_that_never_answers_is_closed_when_the_call_ends() {
    let open = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&open);
    let url = serve_behind(move |request: Request, next: Next| {
        let counter = Arc::clone(&counter);
        async move {
            let (message, request) = read_message(request).await;
            if !calls_shout(&message) {
                return next.run(request).await;
            }
            held_open(counter, b": the answer is coming\n\n")
        }
    })
    .await;

    let client = session(&url).await;
    let error = shout(&client, 1).await.unwrap_err();
    assert!(error.to_string().contains("no answer within"), "{error}");
    assert!(
        open_comes_to(&open, 0).await,
        "the client still reads the stream"
    );
    // The session goes on.
    let added = client
        .call_tool("add", json!({"a": 2, "b": 3}).as_object().cloned())
        .await
        .unwrap();
    assert_eq!(added.structured, Some(json!(5)));

    // A call still waiting when the client closes: its stream is closed too.
    let waiting = tokio::spawn({
        let client = client.clone();
        async move { shout(&client, 60).await }
    });
    assert!(
        open_comes_to(&open, 1).await,
        "the second call never opened its stream"
    );
    client.close(Duration::from_secs(1)).await;
    assert!(
        open_comes_to(&open, 0).await,
        "the stream outlived the client"
    );
    // And the call fails at once, not at its time limit.
    let ended = tokio::time::timeout(Duration::from_secs(10), waiting).await;
    assert!(
        ended.is_ok_and(|call| call.unwrap().is_err()),
        "the call outlived the client"
    );
}

/// How many pings the server sends on one call's stream.
const PINGS: usize = 200;

#[tokio::test]
async fn answers_the_server_holds_open_are_bounded_in_number() {
    let open = Arc::new(AtomicUsize::new(0));
    let most = Arc::new(AtomicUsize::new(0));
    let (counter, highest) = (Arc::clone(&open), Arc::clone(&most));
    let url = serve_behind(move |request: Request, next: Next| {
        let (counter, highest) = (Arc::clone(&counter), Arc::clone(&highest));
        async move {
            let (message, request) = read_message(request).await;
            // The client's answer to a ping: held open for good.
            if message["id"].as_str().is_some_and(|id| id.starts_with("ping-")) {
                let held = held_open(Arc::clone(&counter), b": held\n\n");
                highest.fetch_max(counter.load(Ordering::SeqCst), Ordering::SeqCst);
                return held;
            }
            if !calls_shout(&message) {
                return next.run(request).await;
            }
            // The call's stream: pings, and never the answer.
            let pings = (0..PINGS).map(|n| {
                Ok::<_, std::io::Error>(Bytes::from(format!(
                    "event: message\ndata: {{\"jsonrpc\":\"2.0\",\"id\":\"ping-{n}\",\"method\":\"ping\"}}\n\n"
                )))
            });
            event_stream(tokio_stream::iter(pings).chain(tokio_stream::pending()))
        }
    })
    .await;

    let client = session(&url).await;
    assert!(shout(&client, 3).await.is_err());
    // The client answered the pings, but held at most 64 of those answers
    // open at once (a connection each); the rest wait their turn.
    let held = most.load(Ordering::SeqCst);
    assert!((1..=64).contains(&held), "{held} answers held open at once");
    // The session goes on.
    let added = client
        .call_tool("add", json!({"a": 2, "b": 3}).as_object().cloned())
        .await
        .unwrap();
    assert_eq!(added.structured, Some(json!(5)));
    // Closing the client closes what it still posts (each would otherwise
    // be held to its 30 s).
    assert!(open.load(Ordering::SeqCst) > 0, "no answer held open");
    client.close(Duration::from_secs(1)).await;
    assert!(
        open_comes_to(&open, 0).await,
        "{} answers outlived the client",
        open.load(Ordering::SeqCst)
    );
}

#[tokio::test]
async fn a_notification_sent_just_before_closing_is_still_posted() {
    let posted = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&posted);
    let url = serve_behind(move |request: Request, next: Next| {
        let counter = Arc::clone(&counter);
        async move {
            let (message, request) = read_message(request).await;
            if message["method"] == "notifications/roots/list_changed" {
                // A server slow to take it in, but taking it.
                tokio::time::sleep(Duration::from_millis(300)).await;
                counter.fetch_add(1, Ordering::SeqCst);
            }
            next.run(request).await
        }
    })
    .await;
    let client = Client::builder()
        .negotiation(Negotiation::Pinned(ProtocolVersion::V2025_11_25))
        .on_roots(|| async { Ok(Vec::new()) })
        .connect_http(&url)
        .await
        .unwrap();
    assert!(client.notify_roots_changed().unwrap());
    client.close(Duration::from_secs(1)).await;
    assert!(
        open_comes_to(&posted, 1).await,
        "the notification was not posted"
    );
}
