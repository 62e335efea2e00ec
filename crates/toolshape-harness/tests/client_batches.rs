#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The client against a 2025-03-26 server that answers in JSON-RPC batches
//! (the hostile server's `--batches`), which that revision's clients MUST
//! take.

mod client_common;

use std::time::Duration;

use serde_json::json;
use toolshape::client::{ClientOptions, Negotiation, ServerCommand, StderrMode};
use toolshape::protocol::ProtocolVersion;

use client_common::{connect, hostile_server_bin};

/// A 2025-03-26 server may send JSON-RPC batches, which that revision's
/// clients MUST take: every answer of `--batches` comes in one, behind a log
/// message, and each call still gets its answer.
#[tokio::test]
async fn a_2025_03_26_server_may_answer_in_batches() {
    let mut options = ClientOptions::default();
    options.request_timeout = Duration::from_secs(20);
    let command = ServerCommand::new(hostile_server_bin())
        .arg("--batches")
        .stderr(StderrMode::Capture);
    let client = connect(
        command,
        Negotiation::Pinned(ProtocolVersion::V2025_03_26),
        options,
    )
    .await;
    assert_eq!(client.protocol_version(), ProtocolVersion::V2025_03_26);
    let tools = client.list_tools().await.unwrap();
    assert!(tools.iter().any(|tool| tool.name == "echo"), "{tools:?}");
    // A typed call: the answer in its batch is read and decoded.
    let ok: serde_json::Value = client.call("ok", json!({})).await.unwrap();
    assert_eq!(ok["value"], "ok", "{ok}");
    let echoed = client
        .call_tool(
            "echo",
            Some(json!({"text": "in a batch"}).as_object().unwrap().clone()),
        )
        .await
        .unwrap();
    assert!(!echoed.is_error, "{echoed:?}");
}
