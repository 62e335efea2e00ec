//! The hostile server's `huge` tools: one line of `bytes` bytes (default
//! 100 MB), the id first or last, maybe a request of the server's rather
//! than the call's answer, maybe left unended.

use std::io::{self, Write};

use serde_json::Value;

use super::Server;

/// Size of the `huge` response unless its `bytes` argument says otherwise.
const DEFAULT_HUGE_BYTES: usize = 100 * 1000 * 1000;

impl Server {
    /// Answers the call `id` to `huge` (`id_first`) or `huge_id_last`.
    pub(super) fn huge(&mut self, id: &Value, id_first: bool, arguments: &Value) -> io::Result<()> {
        let bytes = arguments
            .get("bytes")
            .and_then(Value::as_u64)
            .and_then(|b| usize::try_from(b).ok())
            .unwrap_or(DEFAULT_HUGE_BYTES);
        let as_request = arguments.get("as_request") == Some(&Value::Bool(true));
        let (head, tail) = if as_request {
            self.refusal_awaited = Some(id.clone());
            (
                format!(
                    "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"sampling/createMessage\",\"params\":{{\"note\":\""
                ),
                "\"}}".to_owned(),
            )
        } else if id_first {
            (
                format!(
                    "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{{\"content\":[{{\"type\":\"text\",\"text\":\""
                ),
                "\"}]}}".to_owned(),
            )
        } else {
            (
                "{\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"".to_owned(),
                format!("\"}}]}},\"jsonrpc\":\"2.0\",\"id\":{id}}}"),
            )
        };
        self.out.write_all(head.as_bytes())?;
        let chunk = vec![b'x'; 1 << 20];
        let mut left = bytes.saturating_sub(head.len() + tail.len());
        while left > 0 {
            let n = left.min(chunk.len());
            self.out.write_all(&chunk[..n])?;
            left -= n;
        }
        if arguments.get("unended") == Some(&Value::Bool(true)) {
            self.line_open = true;
            return self.out.flush();
        }
        self.out.write_all(tail.as_bytes())?;
        self.out.write_all(b"\n")?;
        self.out.flush()
    }
}
