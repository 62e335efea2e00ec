//! The physical limit of the side-by-side benchmark: a process that reads a
//! line, parses it, serializes an answer from it and writes it back, with no
//! MCP logic at all. It answers the handshake and listing with fixed text and
//! each `tools/call` of its one tool, `echo`, with the call's arguments as
//! `structuredContent` plus the same JSON as text, so `toolshape bench` can
//! drive it like any server with a payload of the same size.
//!
//! Run: `cargo run --release -p toolshape --example echo_baseline`.

use std::io::{self, BufRead, BufReader, BufWriter, Write};

use serde_json::{Value, json};

fn answer(request: &Value) -> Option<Value> {
    let id = request.get("id")?.clone();
    let method = request
        .get("method")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let result = match method {
        "server/discover" => json!({
            "resultType": "complete", "supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}},
            "ttlMs": 0, "cacheScope": "public", "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "echo", "version": "1"}}
        }),
        "tools/list" => json!({
            "resultType": "complete", "ttlMs": 0, "cacheScope": "public",
            "tools": [{"name": "echo", "inputSchema": {"type": "object"}, "outputSchema": {"type": "object"}}]
        }),
        "tools/call" => {
            let arguments = request
                .get("params")
                .and_then(|p| p.get("arguments"))
                .cloned()
                .unwrap_or(json!({}));
            json!({
                "resultType": "complete",
                "content": [{"type": "text", "text": arguments.to_string()}],
                "structuredContent": arguments
            })
        }
        _ => json!({}),
    };
    Some(json!({"jsonrpc": "2.0", "id": id, "result": result}))
}

fn main() -> io::Result<()> {
    let mut input = BufReader::with_capacity(64 * 1024, io::stdin().lock());
    let mut output = BufWriter::with_capacity(64 * 1024, io::stdout().lock());
    let mut line = String::new();
    loop {
        line.clear();
        if input.read_line(&mut line)? == 0 {
            return output.flush();
        }
        let Ok(request) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        if let Some(response) = answer(&request) {
            serde_json::to_writer(&mut output, &response)?;
            output.write_all(b"\n")?;
        }
        if input.buffer().is_empty() {
            output.flush()?;
        }
    }
}
