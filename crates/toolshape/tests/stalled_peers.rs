#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Peers that stop reading: a line-stream connection whose reader never
//! reads, and an HTTP client that stops reading its call's event stream
//! while the tool floods it with progress. What waits for them stays
//! bounded, the connection is dropped after the write stall limit (its call
//! cancelled, its subscription stream ended), and the same server goes on
//! serving everyone else.

mod http_support;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use toolshape::{HttpOptions, Server, ServerOptions, Tool, ToolContext, ToolError};

use http_support::{MODERN, Probe, Serving, modern, modern_params, request, result_of};

const STALL: Duration = Duration::from_millis(600);

/// How many progress reports `flood` has sent, and whether it ran to its end.
#[derive(Debug, Default)]
struct Sent {
    reports: AtomicU64,
    finished: AtomicU64,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct FloodIn {
    /// Progress reports to send.
    n: u64,
}

/// `flood` reports progress `n` times with 1 KB messages; `add` adds.
fn server(sent: &Arc<Sent>) -> Server {
    let mut options = ServerOptions::default();
    options.write_stall_timeout = Some(STALL);
    options.call_timeout = Some(Duration::from_secs(60));
    let counter = Arc::clone(sent);
    Server::builder("stalled", "1.0.0")
        .options(options)
        .tool(Tool::typed_with_context(
            "flood",
            move |context: ToolContext, input: FloodIn| {
                let sent = Arc::clone(&counter);
                async move {
                    let message = "m".repeat(1024);
                    for i in 0..input.n {
                        context.report_progress(i as f64, None, Some(message.clone()));
                        sent.reports.fetch_add(1, Ordering::SeqCst);
                        tokio::task::yield_now().await;
                    }
                    sent.finished.fetch_add(1, Ordering::SeqCst);
                    Ok::<_, ToolError>(input.n)
                }
            },
        ))
        .tool(Tool::typed(
            "add",
            |input: http_support::AddIn| async move { Ok::<_, ToolError>(input.a + input.b) },
        ))
        .build()
        .unwrap()
}

fn line(message: &Value) -> Vec<u8> {
    let mut bytes = serde_json::to_vec(message).unwrap();
    bytes.push(b'\n');
    bytes
}

fn modern_call(id: i64, name: &str, arguments: Value, progress: bool) -> Value {
    let mut params = json!({"name": name, "arguments": arguments});
    if progress {
        params["_meta"] = json!({"progressToken": id});
    }
    request(id, "tools/call", modern_params(params))
}

/// A connection whose reader stops reading: `serve` ends with `TimedOut`
/// after the stall limit, and a second connection to the same server,
/// served at the same time, answers throughout.
#[tokio::test]
async fn a_line_stream_nobody_reads_is_dropped_and_others_are_served() {
    let sent = Arc::new(Sent::default());
    let server = server(&sent);

    // The stalled connection: 64 KB of pipe each way; its output is never read.
    let (mut client_end, server_end) = tokio::io::duplex(64 * 1024);
    let (server_read, server_write) = tokio::io::split(server_end);
    let serving = server.clone();
    let stalled = tokio::spawn(async move { serving.serve(server_read, server_write).await });
    let started = Instant::now();
    client_end
        .write_all(&line(&modern_call(
            1,
            "flood",
            json!({"n": 1_000_000}),
            true,
        )))
        .await
        .unwrap();

    // The healthy connection, served by the same server meanwhile.
    let (healthy_end, server_end) = tokio::io::duplex(64 * 1024);
    let (server_read, server_write) = tokio::io::split(server_end);
    let serving = server.clone();
    let healthy = tokio::spawn(async move { serving.serve(server_read, server_write).await });
    let (healthy_read, mut healthy_write) = tokio::io::split(healthy_end);
    let mut answers = BufReader::new(healthy_read).lines();
    for id in 1..=20 {
        healthy_write
            .write_all(&line(&modern_call(
                id,
                "add",
                json!({"a": id, "b": 1}),
                false,
            )))
            .await
            .unwrap();
        let answer = tokio::time::timeout(Duration::from_secs(5), answers.next_line())
            .await
            .expect("the healthy connection was held up")
            .unwrap()
            .unwrap();
        let answer: Value = serde_json::from_str(&answer).unwrap();
        assert_eq!(answer["id"], id);
        assert_eq!(answer["result"]["structuredContent"], json!(id + 1));
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    let ended = tokio::time::timeout(Duration::from_secs(10), stalled)
        .await
        .expect("the stalled connection was never dropped")
        .unwrap();
    let error = ended.expect_err("a dropped connection is an error");
    assert_eq!(error.kind(), std::io::ErrorKind::TimedOut, "{error}");
    assert!(started.elapsed() >= STALL, "{:?}", started.elapsed());
    // The flood was stopped, far short of its end: what it could send was
    // what the bounded queue and pipe took.
    let reports = sent.reports.load(Ordering::SeqCst);
    assert_eq!(sent.finished.load(Ordering::SeqCst), 0);
    assert!(reports < 5_000, "{reports} reports were produced");
    drop(client_end);

    // The healthy connection ends normally when its input does.
    healthy_write.shutdown().await.unwrap();
    assert!(
        tokio::time::timeout(Duration::from_secs(5), healthy)
            .await
            .unwrap()
            .unwrap()
            .is_ok()
    );
}

/// Reads what the server had written before it gave up, to the end of the
/// connection (within 5 s of each read): how many bytes.
async fn read_until_closed(stream: &mut TcpStream) -> usize {
    let mut buffered = 0usize;
    let mut chunk = vec![0u8; 64 * 1024];
    loop {
        match tokio::time::timeout(Duration::from_secs(5), stream.read(&mut chunk)).await {
            Ok(Ok(0) | Err(_)) => return buffered,
            Ok(Ok(n)) => buffered += n,
            Err(_) => panic!("the connection is still open after {buffered} bytes"),
        }
    }
}

/// Reads a response's head (up to the blank line) and returns it.
async fn read_head(stream: &mut TcpStream) -> String {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        stream.read_exact(&mut byte).await.unwrap();
        head.push(byte[0]);
    }
    String::from_utf8_lossy(&head).into_owned()
}

/// A client that stops reading its event stream while the tool floods it:
/// the server drops the connection after the stall limit and cancels the
/// call; other clients are served meanwhile; at most a bounded amount was
/// ever buffered for it.
#[tokio::test]
async fn an_event_stream_nobody_reads_is_dropped_and_its_call_cancelled() {
    let sent = Arc::new(Sent::default());
    let serving = Serving::start_server(
        server(&sent),
        Arc::new(Probe::default()),
        HttpOptions::default(),
    )
    .await;
    let body = modern_call(7, "flood", json!({"n": 10_000_000}), true).to_string();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: {MODERN}\r\n\
         Mcp-Method: tools/call\r\nMcp-Name: flood\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    let mut stream = TcpStream::connect(serving.address).await.unwrap();
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(body.as_bytes()).await.unwrap();
    let response_head = read_head(&mut stream).await;
    assert!(response_head.starts_with("HTTP/1.1 200"), "{response_head}");
    assert!(
        response_head.contains("text/event-stream"),
        "{response_head}"
    );
    let started = Instant::now();

    // The client reads nothing more. Others are served meanwhile.
    while started.elapsed() < STALL * 3 {
        let reply = modern(
            &serving.url,
            1,
            "tools/call",
            json!({"name": "add", "arguments": {"a": 2, "b": 3}}),
        )
        .await;
        assert_eq!(result_of(&reply)["structuredContent"], json!(5));
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // The call was cancelled, far short of its end.
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut last = sent.reports.load(Ordering::SeqCst);
    loop {
        tokio::time::sleep(Duration::from_millis(300)).await;
        let now = sent.reports.load(Ordering::SeqCst);
        if now == last {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the flood went on: {now} reports"
        );
        last = now;
    }
    assert_eq!(sent.finished.load(Ordering::SeqCst), 0);

    // What the server had written before it gave up, then the end of the connection.
    let buffered = read_until_closed(&mut stream).await;
    let reports = sent.reports.load(Ordering::SeqCst);
    assert!(
        buffered < 32 * 1024 * 1024,
        "{buffered} bytes were waiting for the client"
    );
    assert!(reports < 100_000, "{reports} reports were produced");
    eprintln!(
        "stalled event stream: {reports} progress reports produced, {buffered} bytes were in flight"
    );
}

/// A client that stops reading its `subscriptions/listen` stream while its
/// resource changes without pause: the connection is dropped after the
/// stall limit, which ends the stream (the subscription let go: the
/// unsubscribe hook); what was buffered for it stays bounded.
#[tokio::test]
async fn a_listen_stream_nobody_reads_ends_after_the_stall_limit() {
    let following = Arc::new(AtomicU64::new(0));
    let (up, down) = (Arc::clone(&following), Arc::clone(&following));
    let events = toolshape::resource::ResourceEvents::new()
        .on_subscribe(move |_| {
            up.fetch_add(1, Ordering::SeqCst);
        })
        .on_unsubscribe(move |_| {
            down.fetch_sub(1, Ordering::SeqCst);
        });
    let mut options = ServerOptions::default();
    options.write_stall_timeout = Some(STALL);
    let server = Server::builder("stalled", "1.0.0")
        .options(options)
        .resource(toolshape::Resource::text(
            "mem://hot",
            "hot",
            "text/plain",
            "hot",
        ))
        .resource_events(events.clone())
        .build()
        .unwrap();
    let serving =
        Serving::start_server(server, Arc::new(Probe::default()), HttpOptions::default()).await;
    let body = request(
        9,
        "subscriptions/listen",
        modern_params(json!({"notifications": {"resourceSubscriptions": ["mem://hot"]}})),
    )
    .to_string();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: {MODERN}\r\n\
         Mcp-Method: subscriptions/listen\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    let mut stream = TcpStream::connect(serving.address).await.unwrap();
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(body.as_bytes()).await.unwrap();
    let response_head = read_head(&mut stream).await;
    assert!(response_head.starts_with("HTTP/1.1 200"), "{response_head}");
    assert_eq!(following.load(Ordering::SeqCst), 1);

    // The resource changes without pause; the client reads nothing more.
    let flooding = tokio::spawn(async move {
        loop {
            for _ in 0..64 {
                events.updated("mem://hot");
            }
            tokio::task::yield_now().await;
        }
    });
    let deadline = Instant::now() + STALL * 20;
    while following.load(Ordering::SeqCst) != 0 {
        assert!(
            Instant::now() < deadline,
            "the stream nobody reads still holds its subscription"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    flooding.abort();
    let buffered = read_until_closed(&mut stream).await;
    assert!(
        buffered < 32 * 1024 * 1024,
        "{buffered} bytes were waiting for the client"
    );
}
