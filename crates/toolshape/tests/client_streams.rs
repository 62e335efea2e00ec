#![allow(clippy::unwrap_used, clippy::expect_used)]
//! A client and a server in one process over a pipe of bytes
//! (`tokio::io::duplex`): `Client::connect` over the caller's own streams,
//! `Server::serve` at the other end, on each era; the server's end finishes
//! when the client closes.

use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use toolshape::client::{Client, Negotiation};
use toolshape::protocol::ProtocolVersion;
use toolshape::{Server, Tool, ToolError};

#[derive(Deserialize, JsonSchema)]
struct AddIn {
    a: i64,
    b: i64,
}

#[tokio::test]
async fn a_client_and_a_server_in_one_process_over_a_pipe() {
    for negotiation in [
        Negotiation::Auto,
        Negotiation::Pinned(ProtocolVersion::V2025_06_18),
    ] {
        let server = Server::builder("in-process", "1.0.0")
            .tool(Tool::typed("add", |input: AddIn| async move {
                Ok::<_, ToolError>(input.a + input.b)
            }))
            .build()
            .unwrap();
        let (client_end, server_end) = tokio::io::duplex(64 * 1024);
        let serving = tokio::spawn(async move {
            let (reader, writer) = tokio::io::split(server_end);
            server.serve(reader, writer).await
        });
        let (reader, writer) = tokio::io::split(client_end);
        let client = Client::builder()
            .negotiation(negotiation)
            .connect(reader, writer)
            .await
            .unwrap();
        let expected = match negotiation {
            Negotiation::Pinned(version) => version,
            _ => ProtocolVersion::V2026_07_28,
        };
        assert_eq!(client.protocol_version(), expected);
        assert_eq!(client.server_info().unwrap().name, "in-process");
        let sum: i64 = client.call("add", json!({"a": 2, "b": 40})).await.unwrap();
        assert_eq!(sum, 42);
        let refused = client
            .call_tool("add", json!({"a": "two"}).as_object().cloned())
            .await
            .unwrap();
        assert!(refused.is_error, "{}", refused.text());

        client.close(Duration::from_secs(1)).await;
        let ended = tokio::time::timeout(Duration::from_secs(5), serving)
            .await
            .expect("the server's end finishes once the client closes");
        ended.unwrap().unwrap();
    }
}
