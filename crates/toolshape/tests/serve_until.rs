#![allow(clippy::unwrap_used, clippy::expect_used)]
//! `Server::serve_until`: when its stop future resolves, the server reads
//! no more, answers each call it had started with an error saying it stops
//! (the handler dropped), ends each open `subscriptions/listen` stream with
//! the result that says so, and returns `Ok`, every request answered once.
//! Over an in-process pipe, as a server embedded in an application meets
//! its peer.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::{Notify, oneshot};
use toolshape::tool::ToolOutput;
use toolshape::{Server, Tool, ToolError};

const WAIT: Duration = Duration::from_secs(10);

/// Sets its flag when dropped: the handler was ended.
struct Dropped(Arc<AtomicBool>);

impl Drop for Dropped {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// A server whose `slow` tool never finishes; `started` is told when it
/// runs, `ended` set when its handler is dropped.
fn server(started: &Arc<Notify>, ended: &Arc<AtomicBool>) -> Server {
    let (started, ended) = (Arc::clone(started), Arc::clone(ended));
    let slow = Tool::dynamic("slow", json!({"type": "object"}), None, move |_, _| {
        let (started, guard) = (Arc::clone(&started), Dropped(Arc::clone(&ended)));
        async move {
            let _guard = guard;
            started.notify_one();
            tokio::time::sleep(Duration::from_secs(3600)).await;
            Ok::<_, ToolError>(ToolOutput::text("late"))
        }
    });
    Server::builder("stopping", "1").tool(slow).build().unwrap()
}

fn modern_meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {}
    })
}

/// A server on a pipe each way (closing the input is an end of input),
/// until `stop` is sent.
struct Piped {
    to_server: tokio::io::DuplexStream,
    lines: tokio::io::Lines<BufReader<tokio::io::DuplexStream>>,
    stop: Option<oneshot::Sender<()>>,
    serving: tokio::task::JoinHandle<std::io::Result<()>>,
}

impl Piped {
    fn start(server: Server) -> Piped {
        let (to_server, read) = tokio::io::duplex(1 << 20);
        let (write, from_server) = tokio::io::duplex(1 << 20);
        let (stop, stopped) = oneshot::channel::<()>();
        let serving = tokio::spawn(async move {
            server
                .serve_until(read, write, async {
                    let _ = stopped.await;
                })
                .await
        });
        let lines = BufReader::new(from_server).lines();
        Piped {
            to_server,
            lines,
            stop: Some(stop),
            serving,
        }
    }

    /// Writes each message as a line.
    async fn send(&mut self, messages: &[Value]) {
        let mut text = String::new();
        for message in messages {
            text.push_str(&format!("{message}\n"));
        }
        self.to_server.write_all(text.as_bytes()).await.unwrap();
    }

    /// The next line the server wrote, if any, as JSON.
    async fn next(&mut self) -> Option<Value> {
        let line = tokio::time::timeout(WAIT, self.lines.next_line())
            .await
            .expect("a line in time")
            .unwrap()?;
        Some(serde_json::from_str(&line).unwrap())
    }

    /// Stops the server (`stop`) or closes its input, waits for it to
    /// return `Ok`, and gives every line it wrote that was not read yet.
    async fn end(mut self, stop: bool) -> Vec<Value> {
        if stop {
            self.stop.take().unwrap().send(()).unwrap();
        } else {
            self.to_server.shutdown().await.unwrap();
        }
        let served = tokio::time::timeout(WAIT, &mut self.serving)
            .await
            .expect("the server returned in time")
            .unwrap();
        assert!(served.is_ok(), "{served:?}");
        let mut rest = Vec::new();
        while let Some(line) = self.next().await {
            rest.push(line);
        }
        rest
    }
}

/// Sends `requests`, waits for the slow call to start (and for `before`
/// lines), stops the server, and returns every line it wrote after that.
async fn stop_with(requests: &[Value], before: usize) -> (Vec<Value>, bool) {
    let (started, ended) = (Arc::new(Notify::new()), Arc::new(AtomicBool::new(false)));
    let mut piped = Piped::start(server(&started, &ended));
    piped.send(requests).await;
    for _ in 0..before {
        piped.next().await.unwrap();
    }
    tokio::time::timeout(WAIT, started.notified())
        .await
        .unwrap();
    let after = piped.end(true).await;
    (after, ended.load(Ordering::SeqCst))
}

fn assert_stopping(answer: &Value, id: &str) {
    assert_eq!(answer["id"], id, "{answer}");
    assert_eq!(answer["error"]["code"], -32603, "{answer}");
    let message = answer["error"]["message"].as_str().unwrap();
    assert!(message.contains("stopping"), "{message}");
}

#[tokio::test]
async fn a_call_in_flight_is_answered_that_the_server_stops() {
    let requests = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": "slow-1", "method": "tools/call",
               "params": {"name": "slow", "arguments": {}}}),
    ];
    let (after, ended) = stop_with(&requests, 1).await;
    assert_eq!(after.len(), 1, "one answer, no more: {after:?}");
    assert_stopping(&after[0], "slow-1");
    assert!(ended, "the handler still runs");
}

#[tokio::test]
async fn a_listen_stream_is_ended_with_its_result_and_a_modern_call_answered() {
    let requests = [
        json!({"jsonrpc": "2.0", "id": "listen-1", "method": "subscriptions/listen",
               "params": {"_meta": modern_meta(), "notifications": {"toolsListChanged": true}}}),
        json!({"jsonrpc": "2.0", "id": "slow-2", "method": "tools/call",
               "params": {"_meta": modern_meta(), "name": "slow", "arguments": {}}}),
    ];
    // The acknowledgement comes first.
    let (after, ended) = stop_with(&requests, 1).await;
    assert_eq!(after.len(), 2, "{after:?}");
    let listen = after.iter().find(|a| a["id"] == "listen-1").unwrap();
    // The spec's own example of that answer, but for the server's name.
    let mut unnamed = listen.clone();
    let named = unnamed["result"]["_meta"]
        .as_object_mut()
        .and_then(|meta| meta.remove("io.modelcontextprotocol/serverInfo"));
    assert!(named.is_some(), "{listen}");
    let example = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../testdata/mcp/2026-07-28/examples/",
        "SubscriptionsListenResultResponse/listen-closed-response.json"
    );
    let example: Value = serde_json::from_slice(&std::fs::read(example).unwrap()).unwrap();
    assert_eq!(unnamed, example);
    assert_stopping(
        after.iter().find(|a| a["id"] == "slow-2").unwrap(),
        "slow-2",
    );
    assert!(ended);
}

/// Calls read but waiting behind the in-flight limit when the server stops
/// are answered as the calls in flight are: none is left without an answer.
#[tokio::test]
async fn calls_waiting_behind_the_in_flight_limit_are_answered_too() {
    let (started, ended) = (Arc::new(Notify::new()), Arc::new(AtomicBool::new(false)));
    let mut options = toolshape::ServerOptions::default();
    options.max_in_flight = 2;
    let slow = server(&started, &ended);
    let server = Server::builder("stopping", "1")
        .registry(slow.registry().clone())
        .options(options)
        .build()
        .unwrap();
    let mut piped = Piped::start(server);
    let calls: Vec<Value> = (0..5)
        .map(|id| {
            json!({"jsonrpc": "2.0", "id": format!("slow-{id}"), "method": "tools/call",
                   "params": {"_meta": modern_meta(), "name": "slow", "arguments": {}}})
        })
        .collect();
    piped.send(&calls).await;
    // One runtime thread: the server reads all five, starts two and waits
    // at the limit before this runs again.
    tokio::time::timeout(WAIT, started.notified())
        .await
        .unwrap();
    let after = piped.end(true).await;
    assert_eq!(after.len(), 5, "{after:?}");
    for id in 0..5 {
        let id = format!("slow-{id}");
        assert_stopping(after.iter().find(|a| a["id"] == id.as_str()).unwrap(), &id);
    }
}

/// A task a handler left behind, holding its context (and with it a way
/// to the client), does not keep the session open once its input ends:
/// the answers queued are written, and `serve` returns.
#[tokio::test]
async fn a_task_a_handler_left_behind_does_not_hold_the_end() {
    let linger = Tool::dynamic(
        "linger",
        json!({"type": "object"}),
        None,
        |context: toolshape::ToolContext, _| async move {
            tokio::spawn(async move {
                let _kept = context;
                tokio::time::sleep(Duration::from_secs(3600)).await;
            });
            Ok::<_, ToolError>(ToolOutput::text("done"))
        },
    );
    let server = Server::builder("lingering", "1")
        .tool(linger)
        .build()
        .unwrap();
    let mut piped = Piped::start(server);
    piped
        .send(&[
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": {"elicitation": {}},
                "clientInfo": {"name": "test", "version": "1"}}}),
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                   "params": {"name": "linger", "arguments": {}}}),
        ])
        .await;
    let called = [piped.next().await, piped.next().await];
    assert_eq!(called[1].as_ref().unwrap()["id"], 2, "{called:?}");
    // The end of input: the session ends though the task still runs.
    assert_eq!(piped.end(false).await, Vec::<Value>::new());
}

/// Calls ending as the stop comes: whichever way each ends (its own
/// answer, or the stopping error), no request is answered twice.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_call_is_answered_twice_however_the_stop_falls() {
    let quick = Tool::dynamic("quick", json!({"type": "object"}), None, |_, _| async {
        for _ in 0..3 {
            tokio::task::yield_now().await;
        }
        Ok::<_, ToolError>(ToolOutput::text("done"))
    });
    for round in 0..20u64 {
        let server = Server::builder("quick", "1")
            .tool(quick.clone())
            .build()
            .unwrap();
        let mut piped = Piped::start(server);
        let calls: Vec<Value> = (0..300)
            .map(|id| {
                json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                    "params": {"_meta": modern_meta(), "name": "quick", "arguments": {}}})
            })
            .collect();
        piped.send(&calls).await;
        tokio::time::sleep(Duration::from_micros(200 * round)).await;
        let mut answered = std::collections::HashMap::<i64, usize>::new();
        for answer in piped.end(true).await {
            *answered.entry(answer["id"].as_i64().unwrap()).or_default() += 1;
        }
        let twice: Vec<_> = answered.iter().filter(|(_, n)| **n > 1).collect();
        assert!(twice.is_empty(), "round {round}: answered twice: {twice:?}");
        // Every call was sent before the stop: each has its answer, a
        // result or the error that says the server stops.
        let unanswered: Vec<_> = (0..300).filter(|id| !answered.contains_key(id)).collect();
        assert!(
            unanswered.is_empty(),
            "round {round}: no answer to {unanswered:?}"
        );
    }
}

/// An id sent again once the call that had it was cancelled is a call of
/// its own: the first call, winding down, does not take the second's place
/// (it did: the second then ended as cancelled, never answered).
#[tokio::test]
async fn an_id_sent_again_after_its_cancellation_is_answered() {
    let nap = Tool::dynamic("nap", json!({"type": "object"}), None, |_, _| async {
        tokio::time::sleep(Duration::from_millis(50)).await;
        Ok::<_, ToolError>(ToolOutput::text("rested"))
    });
    let server = Server::builder("napping", "1").tool(nap).build().unwrap();
    let mut piped = Piped::start(server);
    let call = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                      "params": {"_meta": modern_meta(), "name": "nap", "arguments": {}}});
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                        "params": {"requestId": 7}});
    // In one write: the second call is read before the first winds down.
    piped.send(&[call.clone(), cancel, call]).await;
    let answer = piped.next().await.expect("the second call was answered");
    assert_eq!(answer["id"], 7, "{answer}");
    assert_eq!(answer["result"]["content"][0]["text"], "rested", "{answer}");
    assert_eq!(piped.end(false).await, Vec::<Value>::new());
}

/// Over a pipe as over HTTP: a 2026-07-28 request must declare the client's
/// capabilities in `_meta`; one that does not is malformed (-32602), and
/// the server goes on serving.
#[tokio::test]
async fn a_modern_request_without_client_capabilities_is_invalid_params() {
    let (started, ended) = (Arc::new(Notify::new()), Arc::new(AtomicBool::new(false)));
    let mut piped = Piped::start(server(&started, &ended));
    let without = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28"});
    piped
        .send(&[
            json!({"jsonrpc": "2.0", "id": "bare", "method": "tools/list", "params": {"_meta": without}}),
            json!({"jsonrpc": "2.0", "id": "bare-listen", "method": "subscriptions/listen",
                   "params": {"_meta": without, "notifications": {"toolsListChanged": true}}}),
            json!({"jsonrpc": "2.0", "id": "full", "method": "tools/list", "params": {"_meta": modern_meta()}}),
        ])
        .await;
    let mut answers = [
        piped.next().await.unwrap(),
        piped.next().await.unwrap(),
        piped.next().await.unwrap(),
    ];
    answers.sort_by_key(|answer| answer["id"].to_string());
    for refused in &answers[..2] {
        assert_eq!(refused["error"]["code"], -32602, "{refused}");
        assert!(
            refused["error"]["message"]
                .as_str()
                .unwrap()
                .contains("clientCapabilities"),
            "{refused}"
        );
    }
    assert_eq!(answers[0]["id"], "bare");
    assert_eq!(answers[1]["id"], "bare-listen");
    assert_eq!(answers[2]["id"], "full");
    assert!(answers[2]["result"]["tools"].is_array(), "{}", answers[2]);
    piped.end(true).await;
}
