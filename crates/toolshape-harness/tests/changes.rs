#![allow(clippy::unwrap_used, clippy::expect_used)]
//! A server's changes reach its clients on every revision and transport:
//! the harness's changing server (`toolshape_harness::changing`) over stdio
//! (`test_server --changing`, a child process) and Streamable HTTP (on
//! loopback), with 2025-11-25 clients (`resources/subscribe`, list changes
//! unasked) and 2026-07-28 clients (`subscriptions/listen`).

mod client_common;
mod following;

use std::time::Duration;

use following::{builder, everything, exercise};
use toolshape::client::ServerCommand;
use toolshape::protocol::ProtocolVersion;
use toolshape_harness::changing::serve_changes;

const VERSIONS: [ProtocolVersion; 2] = [ProtocolVersion::V2025_11_25, ProtocolVersion::V2026_07_28];

#[tokio::test]
async fn changes_reach_clients_over_stdio() {
    for version in VERSIONS {
        let command = ServerCommand::new(env!("CARGO_BIN_EXE_test_server")).args(["--changing"]);
        let client = builder(version).connect_stdio(command).await.unwrap();
        exercise(&client, &format!("stdio {version}")).await;
        client.close(Duration::from_secs(2)).await;
    }
}

#[tokio::test]
async fn changes_reach_clients_over_http() {
    for version in VERSIONS {
        // A fresh server each time: `add_tool` registers "fresh" once.
        let server = serve_changes(toolshape::Server::builder("changing", "1"))
            .build()
            .unwrap();
        let url = client_common::serve_over_http(server).await;
        let client = builder(version).connect_http(&url).await.unwrap();
        exercise(&client, &format!("http {version}")).await;
        client.close(Duration::from_secs(2)).await;
    }
}

/// A handshake client cannot listen (the method is 2026-07-28's), and a
/// handshake server answers it "method not found".
#[tokio::test]
async fn listening_needs_2026_07_28() {
    let command = ServerCommand::new(env!("CARGO_BIN_EXE_test_server")).args(["--changing"]);
    let client = builder(ProtocolVersion::V2025_11_25)
        .connect_stdio(command)
        .await
        .unwrap();
    let refused = client.listen(everything()).await.unwrap_err();
    assert!(
        refused.to_string().contains("subscriptions/listen"),
        "{refused}"
    );
    client.close(Duration::from_secs(2)).await;
}

/// Over stdio a peer may hold 16 streams open: the 17th is refused with an
/// error, while the others go on (their acknowledgements came first);
/// cancelling one makes room.
#[tokio::test]
async fn a_stdio_peer_may_hold_sixteen_streams() {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_test_server"))
        .arg("--changing")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    let mut output = BufReader::new(child.stdout.take().unwrap()).lines();
    let meta = serde_json::json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {}
    });
    let listen = |id: u32| {
        let request = serde_json::json!({
            "jsonrpc": "2.0", "id": id, "method": "subscriptions/listen",
            "params": {"_meta": meta, "notifications": {"toolsListChanged": true}}
        });
        format!("{request}\n")
    };
    for id in 1..=17 {
        input.write_all(listen(id).as_bytes()).await.unwrap();
        let message = next(&mut output).await;
        if id <= 16 {
            assert_eq!(
                message["method"],
                "notifications/subscriptions/acknowledged"
            );
            assert_eq!(
                message["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
                id
            );
        } else {
            assert_eq!(message["id"], 17, "{message}");
            let text = message["error"]["message"].as_str().unwrap();
            assert!(text.contains("at most 16"), "{message}");
        }
    }
    let cancel = serde_json::json!({
        "jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 3}
    });
    input
        .write_all(format!("{cancel}\n").as_bytes())
        .await
        .unwrap();
    input.write_all(listen(18).as_bytes()).await.unwrap();
    let message = next(&mut output).await;
    assert_eq!(
        message["method"], "notifications/subscriptions/acknowledged",
        "{message}"
    );
}

async fn next(
    output: &mut tokio::io::Lines<tokio::io::BufReader<tokio::process::ChildStdout>>,
) -> serde_json::Value {
    let line = tokio::time::timeout(Duration::from_secs(5), output.next_line())
        .await
        .expect("an answer")
        .unwrap()
        .expect("a line");
    serde_json::from_str(&line).unwrap()
}

/// The subscribe and unsubscribe hooks are called in pairs: for a
/// session's `resources/subscribe` and `resources/unsubscribe`, for the
/// subscriptions a session still held when it ended, and for each URI of a
/// `subscriptions/listen` stream when it is opened and when the client
/// drops it (over HTTP).
#[tokio::test]
async fn subscriptions_are_told_as_they_begin_and_end() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicI64, Ordering};
    let following = Arc::new(AtomicI64::new(0));
    let (up, down) = (Arc::clone(&following), Arc::clone(&following));
    let events = toolshape::resource::ResourceEvents::new()
        .on_subscribe(move |_| {
            up.fetch_add(1, Ordering::SeqCst);
        })
        .on_unsubscribe(move |_| {
            down.fetch_sub(1, Ordering::SeqCst);
        });
    let server = toolshape::Server::builder("counting", "1")
        .resources([
            toolshape::Resource::text("test://a", "a", "text/plain", "a"),
            toolshape::Resource::text("test://b", "b", "text/plain", "b"),
        ])
        .resource_events(events)
        .build()
        .unwrap();
    let url = client_common::serve_over_http(server).await;
    let settles_at = |want: i64| {
        let following = Arc::clone(&following);
        async move {
            let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
            while following.load(Ordering::SeqCst) != want && tokio::time::Instant::now() < deadline
            {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            assert_eq!(following.load(Ordering::SeqCst), want);
        }
    };

    let session = builder(ProtocolVersion::V2025_11_25)
        .connect_http(&url)
        .await
        .unwrap();
    session.subscribe("test://a").await.unwrap();
    session.subscribe("test://a").await.unwrap();
    session.subscribe("test://b").await.unwrap();
    settles_at(2).await;
    session.unsubscribe("test://a").await.unwrap();
    settles_at(1).await;
    session.close(Duration::from_secs(2)).await;
    settles_at(0).await;

    let stateless = builder(ProtocolVersion::V2026_07_28)
        .connect_http(&url)
        .await
        .unwrap();
    let mut filter = everything();
    filter.resource_subscriptions = vec!["test://a".into(), "test://b".into()];
    let listening = stateless.listen(filter).await.unwrap();
    settles_at(2).await;
    drop(listening);
    settles_at(0).await;
}
