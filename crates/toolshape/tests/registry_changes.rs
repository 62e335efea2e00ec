#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The registry's promise: a change never disturbs a call in progress. A call
//! holds the tool that validated its arguments; removing or replacing the
//! tool while it runs changes neither whether it is answered nor how its
//! output is shaped.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream};
use tokio::sync::Notify;
use toolshape::{Server, Tool, ToolOutput};

/// A tool that waits for `gate`, then answers `{"a": 1}`; its output schema
/// is object-rooted, so a 2025-06-18 peer gets that object as is.
fn gated(gate: Arc<Notify>) -> Tool {
    Tool::dynamic(
        "gated",
        json!({"type": "object"}),
        Some(json!({"type": "object", "properties": {"a": {"type": "integer"}}})),
        move |_context, _arguments| {
            let gate = Arc::clone(&gate);
            async move {
                gate.notified().await;
                Ok(ToolOutput::structured(json!({"a": 1})))
            }
        },
    )
}

/// A tool of the same name whose output schema is not object-rooted: a
/// 2025-06-18 peer would get its output wrapped as `{"result": …}`.
fn replacement() -> Tool {
    Tool::dynamic(
        "gated",
        json!({"type": "object"}),
        Some(json!({"anyOf": [{"type": "object"}, {"type": "integer"}]})),
        |_context, _arguments| async { Ok(ToolOutput::structured(json!(2))) },
    )
}

struct Connection {
    to_server: DuplexStream,
    from_server: tokio::io::Lines<BufReader<DuplexStream>>,
}

impl Connection {
    async fn send(&mut self, message: Value) {
        let mut line = message.to_string();
        line.push('\n');
        self.to_server.write_all(line.as_bytes()).await.unwrap();
    }

    async fn next(&mut self) -> Value {
        let line = tokio::time::timeout(Duration::from_secs(10), self.from_server.next_line())
            .await
            .expect("an answer within 10 s")
            .unwrap()
            .expect("the server is still serving");
        serde_json::from_str(&line).unwrap()
    }

    /// The next response (skipping notifications such as `tools/list_changed`).
    async fn next_response(&mut self) -> Value {
        loop {
            let message = self.next().await;
            if message.get("id").is_some() {
                return message;
            }
        }
    }
}

async fn connect(server: &Server) -> Connection {
    // One pipe each way, as a stdio connection has.
    let (to_server, server_input) = tokio::io::duplex(64 * 1024);
    let (server_output, from_server) = tokio::io::duplex(64 * 1024);
    let server = server.clone();
    tokio::spawn(async move { server.serve(server_input, server_output).await });
    let mut connection = Connection {
        to_server,
        from_server: BufReader::new(from_server).lines(),
    };
    connection
        .send(
            json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"}}}),
        )
        .await;
    connection.next_response().await;
    connection
        .send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;
    connection
}

fn call(id: u64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": "gated", "arguments": {}}})
}

/// A server with the gated tool, a connection, and one call of it running
/// (holding its tool) until the gate opens.
async fn one_call_running() -> (Server, Arc<Notify>, Connection) {
    let gate = Arc::new(Notify::new());
    let server = Server::builder("t", "1")
        .tool(gated(Arc::clone(&gate)))
        .build()
        .unwrap();
    let mut connection = connect(&server).await;
    connection.send(call(1)).await;
    // Lets the call start, so that it holds its tool before the registry changes.
    tokio::time::sleep(Duration::from_millis(100)).await;
    (server, gate, connection)
}

#[tokio::test]
async fn a_tool_removed_while_its_call_runs_still_answers_that_call() {
    let (server, gate, mut connection) = one_call_running().await;
    assert!(server.registry().remove("gated"));
    gate.notify_one();
    let answer = connection.next_response().await;
    assert_eq!(answer["id"], 1, "{answer}");
    assert_eq!(
        answer["result"]["structuredContent"],
        json!({"a": 1}),
        "{answer}"
    );
    // Later calls see the change.
    connection.send(call(2)).await;
    let later = connection.next_response().await;
    assert!(
        later.get("error").is_some() || later["result"]["isError"] == true,
        "the removed tool is unknown now: {later}"
    );
}

#[tokio::test]
async fn a_call_is_shaped_by_the_tool_that_ran_it_not_its_replacement() {
    let (server, gate, mut connection) = one_call_running().await;
    assert!(server.registry().remove("gated"));
    server.registry().register(replacement()).unwrap();
    gate.notify_one();
    let answer = connection.next_response().await;
    assert_eq!(answer["id"], 1, "{answer}");
    assert_eq!(
        answer["result"]["structuredContent"],
        json!({"a": 1}),
        "shaped as the original tool declared (object root, not wrapped): {answer}"
    );
    assert!(answer["result"].get("_meta").is_none(), "{answer}");
    // The replacement serves the next call, wrapped for this revision.
    connection.send(call(2)).await;
    let next = connection.next_response().await;
    assert_eq!(
        next["result"]["structuredContent"],
        json!({"result": 2}),
        "{next}"
    );
}

/// A build that fails (here on a prompt listed twice) registers none of its
/// tools in the registry it was given, so the same tools build again once
/// the mistake is mended.
#[test]
fn a_failed_build_leaves_a_shared_registry_as_it_was() {
    let registry = toolshape::ToolRegistry::new();
    let prompt = || {
        toolshape::prompt::Prompt::new("twice", |_, _| async {
            Ok::<_, toolshape::ToolError>(toolshape::protocol::prompts::GetPromptResult::new(
                Vec::new(),
            ))
        })
    };
    let failed = Server::builder("s", "1")
        .registry(registry.clone())
        .tool(gated(Arc::new(Notify::new())))
        .prompt(prompt())
        .prompt(prompt())
        .build()
        .unwrap_err();
    assert_eq!(failed.errors().len(), 1, "{failed}");
    assert!(registry.is_empty(), "{:?}", registry.names());
    Server::builder("s", "1")
        .registry(registry.clone())
        .tool(gated(Arc::new(Notify::new())))
        .prompt(prompt())
        .build()
        .unwrap();
    assert_eq!(registry.names(), ["gated"]);
}
