#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The end of a connection, and what stdout carries, against the test server
//! over real pipes.

mod common;

use common::{MODERN, Peer, is_error};
use serde_json::{Value, json};

#[tokio::test]
async fn closing_stdin_during_a_call_still_answers_it_then_exits_0() {
    let mut peer = Peer::test_server::<_, &str>([]);
    peer.initialize("2025-11-25").await;
    let slow = peer
        .send_request(
            "tools/call",
            json!({"name": "sleep", "arguments": {"ms": 300}}),
        )
        .await;
    let fast = peer
        .send_request(
            "tools/call",
            json!({"name": "sleep", "arguments": {"ms": 30}}),
        )
        .await;
    peer.close_stdin();
    let rest = peer.drain_to_eof().await;
    let responses: Vec<&Value> = rest.iter().filter(|m| common::is_response(m)).collect();
    assert_eq!(responses.len(), 2, "{rest:?}");
    assert_eq!(responses[0]["id"], fast, "{rest:?}");
    assert_eq!(responses[1]["id"], slow, "{rest:?}");
    assert_eq!(
        responses[1]["result"]["structuredContent"],
        json!({"slept": 300})
    );
    let status = peer.wait_exit().await;
    assert!(status.success(), "exit status {status}");
    assert_eq!(status.code(), Some(0));
}

#[tokio::test]
async fn closing_stdin_when_idle_exits_0() {
    let mut peer = Peer::test_server::<_, &str>([]);
    peer.initialize("2025-06-18").await;
    peer.close_stdin();
    assert!(peer.drain_to_eof().await.is_empty());
    assert_eq!(peer.wait_exit().await.code(), Some(0));

    // Also with no message at all.
    let mut peer = Peer::test_server::<_, &str>([]);
    peer.close_stdin();
    assert!(peer.drain_to_eof().await.is_empty());
    assert_eq!(peer.wait_exit().await.code(), Some(0));
}

#[tokio::test]
async fn a_last_line_without_a_newline_is_still_answered() {
    let mut peer = Peer::test_server::<_, &str>([]);
    peer.send_raw(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}")
        .await;
    peer.close_stdin();
    let rest = peer.drain_to_eof().await;
    assert_eq!(rest, [json!({"jsonrpc": "2.0", "id": 1, "result": {}})]);
    assert_eq!(peer.wait_exit().await.code(), Some(0));
}

/// With every log level on, stdout still carries nothing but JSON-RPC (the
/// harness fails on any other line) and the logs land on stderr.
#[tokio::test]
async fn logs_never_reach_stdout() {
    let mut peer = Peer::spawn_with_env(
        common::test_server_path(),
        ["--call-timeout-ms", "150", "--max-message-bytes", "4096"],
        [("RUST_LOG", "trace")],
    );
    peer.initialize("2025-11-25").await;
    peer.send_line(b"{not json").await;
    peer.send_line("x".repeat(10_000).as_bytes()).await;
    peer.send(&json!({"jsonrpc": "2.0", "id": 99, "result": {}}))
        .await;
    for (name, arguments) in [
        ("panic", json!({})),
        ("bad_output", json!({})),
        ("sleep", json!({"ms": 1000})),
        ("constrained", json!({"count": 0, "name": "A"})),
        ("numbers", json!({"n": 3})),
    ] {
        let result = peer.call_result(MODERN, name, arguments).await;
        assert_eq!(is_error(&result), name != "numbers", "{name}: {result}");
    }
    let id = peer
        .send_request(
            "tools/call",
            json!({"name": "sleep", "arguments": {"ms": 500}, "_meta": {"progressToken": 1}}),
        )
        .await;
    peer.notify("notifications/cancelled", json!({"requestId": id}))
        .await;
    peer.result("ping", Value::Null).await;
    peer.close_stdin();
    let rest = peer.drain_to_eof().await;
    assert!(
        rest.iter().all(|m| m["id"] != id),
        "the cancelled call answered: {rest:?}"
    );
    assert_eq!(peer.wait_exit().await.code(), Some(0));
    let stderr = peer.stderr();
    assert!(
        stderr.contains("timed out") && stderr.contains("panicked"),
        "the logs went to stderr: {stderr}"
    );
}

/// A client that closes its read end while a call is in flight (its stdin
/// still open): the answer cannot be written, and the session ends at once
/// with a non-zero exit, rather than running on until a later write fails.
#[tokio::test]
async fn a_reader_gone_mid_call_ends_the_session_at_once() {
    use std::process::Stdio;
    use std::time::{Duration, Instant};

    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

    let mut child = tokio::process::Command::new(common::test_server_path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    stdin
        .write_all(format!("{initialize}\n").as_bytes())
        .await
        .unwrap();
    let mut line = String::new();
    stdout.read_line(&mut line).await.unwrap();
    assert!(line.contains("\"protocolVersion\""), "{line}");
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "sleep", "arguments": {"ms": 300}}});
    stdin
        .write_all(format!("{call}\n").as_bytes())
        .await
        .unwrap();
    // The reader goes away; the writer stays.
    drop(stdout);
    let started = Instant::now();
    let status = tokio::time::timeout(Duration::from_secs(10), child.wait())
        .await
        .expect("the server ran on with nobody reading its answers")
        .unwrap();
    assert!(!status.success(), "a lost answer is a failure: {status}");
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "it took {:?}",
        started.elapsed()
    );
    drop(stdin);
}
