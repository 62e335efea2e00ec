#![allow(clippy::unwrap_used, clippy::expect_used)]
//! `ClientBuilder::on_message`: the observer is shown every message the
//! server sends, as received, from the handshake on (what `toolshape check`
//! validates against each revision's schema.json).

mod client_common;

use std::sync::{Arc, Mutex};

use serde_json::Value;
use toolshape::client::{Client, Negotiation, ServerCommand, StderrMode};

use client_common::{hostile_server_bin, options};

/// Connects to the hostile server with `args`, recording every message.
async fn observed(args: &[&str], negotiation: Negotiation) -> (Client, Arc<Mutex<Vec<Vec<u8>>>>) {
    let seen: Arc<Mutex<Vec<Vec<u8>>>> = Arc::default();
    let sink = Arc::clone(&seen);
    let command = ServerCommand::new(hostile_server_bin())
        .args(args)
        .stderr(StderrMode::Discard);
    let client = Client::builder()
        .negotiation(negotiation)
        .options(options())
        .on_message(move |bytes| sink.lock().unwrap().push(bytes.to_vec()))
        .connect_stdio(command)
        .await
        .unwrap();
    (client, seen)
}

fn parsed(seen: &Mutex<Vec<Vec<u8>>>) -> Vec<Value> {
    seen.lock()
        .unwrap()
        .iter()
        .map(|bytes| serde_json::from_slice(bytes).unwrap())
        .collect()
}

#[tokio::test]
async fn the_observer_sees_the_handshake_and_every_page() {
    let (client, seen) = observed(&["--page-size", "5"], Negotiation::Auto).await;
    let handshake = parsed(&seen);
    assert_eq!(handshake.len(), 1, "{handshake:?}");
    assert!(handshake[0]["result"]["supportedVersions"].is_array());

    let tools = client.list_tools().await.unwrap();
    let messages = parsed(&seen);
    // 5 tools a page, every page after the discover result.
    assert_eq!(messages.len(), 1 + tools.len().div_ceil(5), "{messages:?}");
    let listed: Vec<Value> = messages[1..]
        .iter()
        .flat_map(|page| page["result"]["tools"].as_array().unwrap().clone())
        .map(|tool| tool["name"].clone())
        .collect();
    let names: Vec<Value> = tools.iter().map(|t| Value::from(t.name.clone())).collect();
    assert_eq!(listed, names);
}

#[tokio::test]
async fn the_observer_sees_a_response_the_client_refuses() {
    let (client, seen) = observed(&[], Negotiation::Auto).await;
    let error = client.call_tool("malformed_error", None).await.unwrap_err();
    assert!(error.to_string().contains("invalid"), "{error}");
    let last = parsed(&seen).pop().unwrap();
    assert_eq!(last["error"]["code"], "not a number");
}
