#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The client against a server that misbehaves as a whole (the hostile
//! server's `twice`, `unknown_id`, `flood`, `die` and `deaf` tools), over
//! real pipes: answers sent twice or to ids never sent reach nobody, a flood
//! of notifications neither stalls nor swamps the client, a server that dies
//! mid-call fails that call and every later one at once, and a server that
//! stops reading cannot make calls wait past their time limit. Where the
//! server is still alive, the connection stays usable.

mod client_common;

use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::json;
use toolshape::CallOptions;
use toolshape::client::{
    Client, ClientErrorKind, ClientOptions, Negotiation, ServerCommand, StderrMode, TransportError,
};

use client_common::{connect, hostile_server_bin};

#[derive(Debug, Deserialize, PartialEq)]
struct Value {
    value: String,
}

fn options(request_timeout: Duration) -> ClientOptions {
    let mut options = ClientOptions::default();
    options.request_timeout = request_timeout;
    options.probe_timeout = Duration::from_secs(5);
    options
}

async fn hostile(negotiation: Negotiation, request_timeout: Duration) -> Client {
    let command = ServerCommand::new(hostile_server_bin()).stderr(StderrMode::Capture);
    connect(command, negotiation, options(request_timeout)).await
}

/// Both eras: 2026-07-28 (probed) and a 2025-11-25 handshake.
fn negotiations() -> [Negotiation; 2] {
    [
        Negotiation::Auto,
        Negotiation::Pinned(toolshape::protocol::ProtocolVersion::V2025_11_25),
    ]
}

async fn call_value(client: &Client, tool: &str) -> Value {
    client
        .call(tool, json!({}))
        .await
        .unwrap_or_else(|e| panic!("{tool}: {e}"))
}

#[tokio::test]
async fn an_answer_sent_twice_reaches_nobody_and_the_next_call_gets_its_own() {
    for negotiation in negotiations() {
        let client = hostile(negotiation, Duration::from_secs(20)).await;
        assert_eq!(call_value(&client, "twice").await.value, "first");
        // The duplicate comes while this call waits, just before its answer.
        assert_eq!(call_value(&client, "ok").await.value, "ok");
        assert_eq!(call_value(&client, "ok").await.value, "ok");
    }
}

#[tokio::test]
async fn answers_to_ids_never_sent_are_ignored() {
    for negotiation in negotiations() {
        let client = hostile(negotiation, Duration::from_secs(20)).await;
        // Forged answers (one to the id the client will send next) come first.
        assert_eq!(call_value(&client, "unknown_id").await.value, "ok");
        assert_eq!(call_value(&client, "ok").await.value, "ok");
    }
}

#[tokio::test]
async fn a_flood_of_notifications_neither_stalls_nor_swamps_the_client() {
    const FLOOD: u64 = 200_000;
    for negotiation in negotiations() {
        let client = hostile(negotiation, Duration::from_secs(60)).await;
        let (progress, mut reports) = tokio::sync::mpsc::channel(1024);
        let counter = tokio::spawn(async move {
            let mut count = 0u64;
            while reports.recv().await.is_some() {
                count += 1;
            }
            count
        });
        let started = Instant::now();
        flood(&client, FLOOD, progress).await;
        let took = started.elapsed();
        // One notification in 8 is progress for this call's token; those
        // that found the channel full were dropped, never buffered.
        let counted = counter.await.unwrap();
        assert!((1..=FLOOD / 8).contains(&counted), "{counted} reports");
        assert!(
            took < Duration::from_secs(30),
            "{FLOOD} notifications took {took:?}"
        );
        // A caller that reads no reports while the call runs holds at most
        // its channel's capacity of them, and the call is not held back.
        let (progress, mut reports) = tokio::sync::mpsc::channel(16);
        flood(&client, FLOOD, progress).await;
        let mut held = 0;
        while reports.try_recv().is_ok() {
            held += 1;
        }
        assert_eq!(held, 16);
        assert_eq!(call_value(&client, "ok").await.value, "ok");
    }
}

/// A server that sends 25,000 pings (in a flood of 200,000 messages) and
/// then reads nothing more: the answers cannot go, and the client holds a
/// bounded number of them waiting (before, a task per ping, each waiting
/// 10 s for room in the queue).
#[tokio::test]
async fn pings_from_a_server_that_stops_reading_hold_a_bounded_number_of_tasks() {
    for negotiation in negotiations() {
        let client = hostile(negotiation, Duration::from_secs(60)).await;
        let before = tokio::runtime::Handle::current()
            .metrics()
            .num_alive_tasks();
        let result = client
            .call_tool(
                "flood",
                json!({"n": 200_000, "then_deaf": true})
                    .as_object()
                    .cloned(),
            )
            .await
            .unwrap();
        assert_eq!(result.structured, Some(json!({"value": "ok"})));
        let alive = tokio::runtime::Handle::current()
            .metrics()
            .num_alive_tasks();
        assert!(alive < before + 100, "{alive} tasks alive, {before} before");
    }
}

/// Calls the hostile server's `flood` tool, which sends `n` notifications
/// before its answer, with `progress` as the call's report channel.
async fn flood(
    client: &Client,
    n: u64,
    progress: tokio::sync::mpsc::Sender<toolshape::tool::Progress>,
) {
    let mut arguments = serde_json::Map::new();
    arguments.insert("n".into(), json!(n));
    let result = client
        .call_tool_with(
            "flood",
            Some(arguments),
            CallOptions::new().progress(progress),
        )
        .await
        .unwrap();
    assert_eq!(result.structured, Some(json!({"value": "ok"})));
}

#[tokio::test]
async fn a_server_that_dies_mid_call_fails_that_call_and_later_ones_at_once() {
    for negotiation in negotiations() {
        let client = hostile(negotiation, Duration::from_secs(20)).await;
        let started = Instant::now();
        let error = client.call_tool("die", None).await.unwrap_err();
        assert!(
            matches!(
                error.kind(),
                ClientErrorKind::Transport(TransportError::Closed)
            ),
            "{error:?}"
        );
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "the call waited {:?} on a dead server",
            started.elapsed()
        );
        let started = Instant::now();
        let later = client.call_tool("ok", None).await.unwrap_err();
        assert!(
            matches!(
                later.kind(),
                ClientErrorKind::Transport(TransportError::Closed)
            ),
            "{later:?}"
        );
        assert!(started.elapsed() < Duration::from_secs(1));
        let status = client.close(Duration::from_secs(5)).await;
        assert_eq!(status.and_then(|s| s.code()), Some(3), "the server's exit");
    }
}

/// Once the server reads nothing more, its input fills: every call still
/// ends at its time limit, however many wait to be written.
#[tokio::test]
async fn a_server_that_stops_reading_cannot_hold_calls_past_their_limit() {
    let limit = Duration::from_millis(1500);
    let client = hostile(Negotiation::Auto, limit).await;
    let error = client.call_tool("deaf", None).await.unwrap_err();
    assert!(
        matches!(error.kind(), ClientErrorKind::Timeout(_)),
        "{error:?}"
    );
    // Far more than the pipe and the client's queue (1024 messages) hold.
    let padding = "x".repeat(8 * 1024);
    let started = Instant::now();
    let calls: Vec<_> = (0..2500)
        .map(|_| {
            let client = client.clone();
            let mut arguments = serde_json::Map::new();
            arguments.insert("padding".into(), json!(padding));
            tokio::spawn(async move { client.call_tool("echo", Some(arguments)).await })
        })
        .collect();
    for call in calls {
        let error = call.await.unwrap().unwrap_err();
        assert!(
            matches!(error.kind(), ClientErrorKind::Timeout(_)),
            "{error:?}"
        );
    }
    assert!(
        started.elapsed() < limit + Duration::from_secs(20),
        "the calls took {:?}",
        started.elapsed()
    );
}

/// A server that never answers `server/discover` (as some ignore requests
/// they do not know) is reached by `initialize` once the request timeout
/// has passed, not the longer probe timeout.
#[tokio::test]
async fn an_unanswered_probe_waits_no_longer_than_the_request_timeout() {
    let command = ServerCommand::new(hostile_server_bin())
        .arg("--silent-discover")
        .stderr(StderrMode::Capture);
    let mut options = ClientOptions::default();
    options.request_timeout = Duration::from_secs(1);
    assert_eq!(options.probe_timeout, Duration::from_secs(10));
    let started = Instant::now();
    let client = connect(command, Negotiation::Auto, options).await;
    let waited = started.elapsed();
    assert!(
        waited < Duration::from_secs(8),
        "connected after {waited:?}"
    );
    assert_eq!(
        client.protocol_version(),
        toolshape::protocol::ProtocolVersion::V2025_11_25
    );
    assert_eq!(call_value(&client, "ok").await.value, "ok");
}

/// An answer that is not JSON (a byte that is not UTF-8) but says early
/// whose answer it is fails that call at once, not at its timeout; the
/// connection goes on.
#[tokio::test]
async fn an_unreadable_answer_fails_its_call_at_once() {
    for negotiation in negotiations() {
        let client = hostile(negotiation, Duration::from_secs(20)).await;
        let started = Instant::now();
        let error = client
            .call::<Value>("ok", json!({"unreadable": true}))
            .await
            .unwrap_err();
        assert!(
            matches!(error.kind(), ClientErrorKind::InvalidResponse(_)),
            "{negotiation:?}: {error}"
        );
        assert!(error.to_string().contains("unreadable response"), "{error}");
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{negotiation:?}"
        );
        assert_eq!(call_value(&client, "ok").await.value, "ok");
    }
}
