#![allow(clippy::unwrap_used, clippy::expect_used)]
//! A server asking its client outside any request (`ConnectedClient`):
//! `test_server --roots-at-start` (a real child process over stdio) asks
//! for the roots as soon as its client has finished the handshake, and its
//! `roots_at_start` tool says what it learnt. A handshake client with roots
//! is asked (once, and again when it says they changed); one without the
//! capability gets the refusal; a
//! 2026-07-28 client, which takes no such request, gets an error at once.

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
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
        let roots = Arc::new(Mutex::new("file:///work/early"));
        let current = Arc::clone(&roots);
        let client = Client::builder()
            .negotiation(Negotiation::Pinned(version))
            .on_roots(move || {
                counted.fetch_add(1, Ordering::SeqCst);
                let uri = *current.lock().unwrap();
                async move { Ok(vec![Root::new(uri, None)]) }
            })
            .connect_stdio(server())
            .await
            .unwrap();
        let result = client.call_tool("roots_at_start", None).await.unwrap();
        assert!(!result.is_error, "{version:?}: {}", result.text());
        assert_eq!(
            result.structured,
            Some(json!({"roots": ["file:///work/early"], "asked": 1})),
            "{version:?}"
        );
        assert_eq!(asked.load(Ordering::SeqCst), 1, "{version:?}");
        // The roots change; told so, the server asks again.
        *roots.lock().unwrap() = "file:///work/later";
        assert!(client.notify_roots_changed().unwrap(), "{version:?}");
        let again = json!({"asked": 2}).as_object().cloned();
        let result = client.call_tool("roots_at_start", again).await.unwrap();
        assert_eq!(
            result.structured,
            Some(json!({"roots": ["file:///work/later"], "asked": 2})),
            "{version:?}: {}",
            result.text()
        );
        assert_eq!(asked.load(Ordering::SeqCst), 2, "{version:?}");
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
    // 2026-07-28 has no roots change notification: nothing is sent.
    assert!(!client.notify_roots_changed().unwrap());
    client.close(Duration::from_secs(2)).await;
}
