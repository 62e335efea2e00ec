#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Faults over real pipes against the test server: a handler that blocks
//! its thread past the time limit on a current-thread runtime (as `toolshape
//! serve` runs), and a client that keeps sending but stops reading.

mod common;

use std::process::Stdio;
use std::time::{Duration, Instant};

use common::{MODERN, Peer, is_error, text_of};
use serde_json::json;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

/// A blocking tool (`Tool::typed_blocking`) past its limit ends in a timeout
/// at the limit, and calls sent after it are answered while its thread
/// still blocks, even on a single-threaded runtime.
#[tokio::test]
async fn a_blocking_tool_times_out_and_others_are_served_meanwhile() {
    let mut peer = Peer::test_server(["--current-thread", "--call-timeout-ms", "500"]);
    peer.initialize("2025-11-25").await;
    let started = Instant::now();
    let blocked = peer
        .send_request(
            "tools/call",
            json!({"name": "block", "arguments": {"ms": 4000}}),
        )
        .await;
    for n in 1..=5u64 {
        let result = peer
            .call_result("2025-11-25", "numbers", json!({"n": n}))
            .await;
        assert_eq!(
            result["structuredContent"]["result"]
                .as_array()
                .unwrap()
                .len() as u64,
            n
        );
    }
    assert!(
        started.elapsed() < Duration::from_millis(1500),
        "the other calls waited {:?} behind the blocked thread",
        started.elapsed()
    );
    let response = peer.response(blocked).await;
    let took = started.elapsed();
    let result = &response["result"];
    assert!(is_error(result), "{response}");
    assert!(
        text_of(result).contains("timed out after 500 ms"),
        "{response}"
    );
    assert!(
        took < Duration::from_secs(2),
        "the timeout came after {took:?}"
    );
    // And the server goes on serving.
    let result = peer.call_result(MODERN, "numbers", json!({"n": 2})).await;
    assert_eq!(result["structuredContent"], json!([0, 1]));
}

/// A blocking tool that finishes in time answers as any tool.
#[tokio::test]
async fn a_blocking_tool_that_finishes_answers_normally() {
    let mut peer = Peer::test_server(["--current-thread"]);
    peer.initialize("2025-11-25").await;
    let result = peer.call_result(MODERN, "block", json!({"ms": 20})).await;
    assert_eq!(result["structuredContent"], json!({"slept": 20}));
}

/// The resident set of a process, in KiB (Linux).
fn rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|line| line.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// A client that sends thousands of calls with 10 KB answers and reads
/// none: the server stops reading once its bounded queue is full, its
/// memory stays bounded, and after the write stall limit the session ends
/// with an error exit instead of waiting forever.
#[tokio::test]
async fn a_client_that_stops_reading_is_dropped_with_bounded_memory() {
    let mut child = tokio::process::Command::new(common::test_server_path())
        .args(["--write-stall-timeout-ms", "1500"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let pid = child.id().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    stdin
        .write_all(format!("{initialize}\n").as_bytes())
        .await
        .unwrap();
    let mut line = String::new();
    stdout.read_line(&mut line).await.unwrap();
    assert!(line.contains("\"protocolVersion\""), "{line}");
    let baseline = rss_kib(pid).unwrap();

    // 20,000 calls, each answered with about 10 KB: 200 MB if all were kept.
    let writer = tokio::spawn(async move {
        let mut sent = 0u64;
        for id in 1..=20_000u64 {
            let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                "params": {"name": "numbers", "arguments": {"n": 1000}}});
            let written = tokio::time::timeout(
                Duration::from_secs(20),
                stdin.write_all(format!("{call}\n").as_bytes()),
            )
            .await;
            match written {
                Ok(Ok(())) => sent = id,
                // The server stopped reading, then went away.
                Ok(Err(_)) | Err(_) => break,
            }
        }
        (sent, stdin)
    });
    let started = Instant::now();
    let mut peak = baseline;
    let status = loop {
        if let Some(rss) = rss_kib(pid) {
            peak = peak.max(rss);
        }
        if let Ok(Some(status)) = child.try_wait() {
            break status;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the server never dropped the session (peak RSS {peak} KiB)"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let (sent, _stdin) = writer.await.unwrap();
    assert!(
        !status.success(),
        "a dropped session is a failure: {status}"
    );
    assert!(sent < 20_000, "the server read every call: {sent}");
    let grown_mib = (peak - baseline) / 1024;
    assert!(
        grown_mib < 128,
        "the server's RSS grew by {grown_mib} MiB for a client that reads nothing"
    );
    eprintln!(
        "stalled stdio reader: the server took {sent} calls, RSS {baseline} KiB -> peak {peak} KiB, \
         ended after {:?} ({status})",
        started.elapsed()
    );
    drop(stdout);
}
