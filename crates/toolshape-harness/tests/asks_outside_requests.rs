#![allow(clippy::unwrap_used, clippy::expect_used)]
//! A server asking its client outside any request (`ConnectedClient`):
//! `test_server --roots-at-start` (a real child process over stdio) asks
//! for the roots as soon as its client has finished the handshake, and its
//! `roots_at_start` tool says what it learnt. A handshake client with roots
//! is asked (once); one without the capability gets the refusal; a
//! 2026-07-28 client, which takes no such request, gets an error at once.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::json;
use toolshape::client::{Client, Negotiation, ServerCommand, StderrMode};
use toolshape::protocol::ProtocolVersion;
use toolshape::protocol::asks::Root;

fn server() -> ServerCommand {
    ServerCommand::new(common::test_server_path())
        .arg("--roots-at-start")
        .stderr(StderrMode::Discard)
}

#[tokio::test]
async fn a_handshake_client_is_asked_for_its_roots_outside_any_request() {
    for version in [ProtocolVersion::V2025_06_18, ProtocolVersion::V2025_11_25] {
        let asked = Arc::new(AtomicUsize::new(0));
        let counted = Arc::clone(&asked);
        let client = Client::builder()
            .negotiation(Negotiation::Pinned(version))
            .on_roots(move || {
                counted.fetch_add(1, Ordering::SeqCst);
                async { Ok(vec![Root::new("file:///work/early", None)]) }
            })
            .connect_stdio(server())
            .await
            .unwrap();
        let result = client.call_tool("roots_at_start", None).await.unwrap();
        assert!(!result.is_error, "{version:?}: {}", result.text());
        assert_eq!(
            result.structured,
            Some(json!({"roots": ["file:///work/early"]})),
            "{version:?}"
        );
        assert_eq!(asked.load(Ordering::SeqCst), 1, "{version:?}");
        client.close(Duration::from_secs(2)).await;
    }
}

#[tokio::test]
async fn a_client_that_cannot_be_asked_gets_an_error_at_once() {
    // Without the roots capability: the server's ask is refused by the
    // library before anything is sent.
    let client = Client::builder()
        .negotiation(Negotiation::Pinned(ProtocolVersion::V2025_11_25))
        .connect_stdio(server())
        .await
        .unwrap();
    let result = client.call_tool("roots_at_start", None).await.unwrap();
    assert!(result.is_error);
    assert!(result.text().contains("roots"), "{}", result.text());
    client.close(Duration::from_secs(2)).await;
    // 2026-07-28: its first request says so; no wait for a handshake.
    let started = Instant::now();
    let client = Client::builder()
        .negotiation(Negotiation::Pinned(ProtocolVersion::V2026_07_28))
        .roots(vec![Root::new("file:///work/early", None)])
        .connect_stdio(server())
        .await
        .unwrap();
    let result = client.call_tool("roots_at_start", None).await.unwrap();
    assert!(result.is_error);
    assert!(
        result.text().contains("outside its requests"),
        "{}",
        result.text()
    );
    assert!(started.elapsed() < Duration::from_secs(10));
    client.close(Duration::from_secs(2)).await;
}
