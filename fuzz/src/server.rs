//! One `toolshape::Server` with a small toolset, served over in-memory
//! streams: the input is what a peer wrote, the output what it would read.

use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::AsyncWrite;
use toolshape::{Server, ServerOptions, Tool, ToolContext, ToolError, ToolOutput};
use toolshape_protocol::{Incoming, Response, classify};

/// Longest line the fuzzed server accepts (small, so that the fuzzer meets it).
pub const MAX_MESSAGE_BYTES: usize = 2048;

/// The toolset:
/// - `echo`: any object in, the same object out (object root);
/// - `double`: `{n}` (0..=1000) in, `2n` out (integer root: wrapped for
///   2025-06-18 and 2025-11-25);
/// - `header`: arguments mirrored in `Mcp-Param-*` headers, text out;
/// - `fail`: a tool error; `bad`: output that breaks its schema;
/// - `slow`: yields once before answering (runs as its own task, so that
///   it can be cancelled and can overlap other calls).
pub fn tools() -> Vec<Tool> {
    vec![
        Tool::dynamic(
            "echo",
            json!({"type": "object"}),
            Some(json!({"type": "object"})),
            |_: ToolContext, arguments: Value| async move { Ok(ToolOutput::structured(arguments)) },
        ),
        Tool::dynamic(
            "double",
            json!({"type": "object", "properties": {"n": {"type": "integer", "minimum": 0, "maximum": 1000}}, "required": ["n"]}),
            Some(json!({"type": "integer"})),
            |_: ToolContext, arguments: Value| async move {
                // An integer by JSON Schema, whatever its spelling (`10`,
                // `10.0`, `1e1`); validated to 0..=1000, so the cast is exact.
                let n = arguments.get("n").and_then(Value::as_f64).unwrap_or(0.0) as u64;
                Ok(ToolOutput::structured(json!(n * 2)))
            },
        ),
        Tool::dynamic(
            "header",
            json!({"type": "object", "properties": {
                "region": {"type": "string", "x-mcp-header": "Region"},
                "count": {"type": "integer", "x-mcp-header": "Count"},
                "flag": {"type": "boolean", "x-mcp-header": "Flag"}
            }}),
            None,
            |_: ToolContext, _: Value| async move { Ok(ToolOutput::text("headers matched")) },
        ),
        Tool::dynamic(
            "fail",
            json!({"type": "object"}),
            None,
            |_: ToolContext, _: Value| async move {
                Err::<ToolOutput, _>(ToolError::new("failed on purpose"))
            },
        ),
        Tool::dynamic(
            "bad",
            json!({"type": "object"}),
            Some(json!({"type": "string"})),
            |_: ToolContext, _: Value| async move { Ok(ToolOutput::structured(json!(42))) },
        ),
        Tool::dynamic(
            "slow",
            json!({"type": "object"}),
            Some(json!({"type": "array"})),
            |_: ToolContext, _: Value| async move {
                tokio::task::yield_now().await;
                Ok(ToolOutput::structured(json!([1, 2, 3])))
            },
        ),
    ]
}

/// The server every target shares.
pub fn server() -> &'static Server {
    static SERVER: OnceLock<Server> = OnceLock::new();
    SERVER.get_or_init(|| {
        let mut options = ServerOptions::default();
        options.page_size = 2;
        options.max_message_bytes = MAX_MESSAGE_BYTES;
        options.call_timeout = Some(Duration::from_secs(5));
        options.max_in_flight = 4;
        match Server::builder("fuzz", "0.0.0")
            .options(options)
            .tools(tools())
            .build()
        {
            Ok(server) => server,
            Err(error) => panic!("the fuzz server does not build: {error}"),
        }
    })
}

/// A writer that keeps everything.
#[derive(Clone, Default)]
struct Sink(Arc<Mutex<Vec<u8>>>);

impl AsyncWrite for Sink {
    fn poll_write(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .extend_from_slice(buf);
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

/// Serves one connection whose input is `input`, to its end; returns the
/// output. Serving must end without error: the input ends, every call finishes.
pub fn serve(input: &[u8]) -> Vec<u8> {
    let sink = Sink::default();
    let writer = sink.clone();
    let served = crate::runtime().block_on(server().serve(input, writer));
    if let Err(error) = served {
        panic!("serving an in-memory connection failed: {error}");
    }
    std::mem::take(&mut *sink.0.lock().unwrap_or_else(PoisonError::into_inner))
}

/// What the server wrote: every line must be one JSON-RPC response (or, in
/// a 2025-03-26 session, an array of them answering a batch), or the
/// acknowledgement of a `subscriptions/listen` stream (this toolset sends
/// no other notification unless asked for progress, which it never
/// reports; its tools do not change while it serves).
pub fn responses(output: &[u8]) -> Vec<Response> {
    let mut responses = Vec::new();
    if output.is_empty() {
        return responses;
    }
    assert!(
        output.ends_with(b"\n"),
        "the output does not end with a newline"
    );
    for line in output[..output.len() - 1].split(|&b| b == b'\n') {
        // A 2025-03-26 session answers a batch with an array of responses.
        if toolshape_protocol::is_batch(line) {
            let messages =
                toolshape_protocol::split_batch(line, toolshape_protocol::MAX_BATCH_MESSAGES)
                    .unwrap_or_else(|error| {
                        panic!("the server wrote a broken batch ({error:?}): {line:?}")
                    });
            for message in messages {
                match classify(message.get().as_bytes()) {
                    Incoming::Response(response) => responses.push(response),
                    other => panic!("a batch the server wrote holds {other:?}"),
                }
            }
            continue;
        }
        match classify(line) {
            Incoming::Response(response) => responses.push(response),
            Incoming::Notification(notification)
                if notification.method
                    == toolshape_protocol::methods::SUBSCRIPTIONS_ACKNOWLEDGED => {}
            other => panic!(
                "the server wrote something other than a response: {other:?} ({})",
                String::from_utf8_lossy(line)
            ),
        }
    }
    responses
}
