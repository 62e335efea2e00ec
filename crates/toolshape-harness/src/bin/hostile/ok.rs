//! The hostile server's `ok` tool: `{"value": "ok"}`, or as its arguments
//! ask, written verbatim, without a text block, with a stale one, with a
//! note beside it, or not readable (see `hostile_server.rs`).

use std::io::{self, Write};

use serde_json::{Value, json};

use super::Server;

impl Server {
    /// Answers a call of `ok` with `arguments`.
    pub(super) fn ok(&mut self, id: &Value, arguments: &Value) -> io::Result<()> {
        match arguments.get("verbatim").and_then(Value::as_str) {
            Some(text) => {
                let tail = arguments.get("then").and_then(Value::as_str);
                let note = arguments.get("note").and_then(Value::as_str);
                self.verbatim(id, text, tail.unwrap_or_default(), note)
            }
            None if arguments.get("bare") == Some(&Value::Bool(true)) => {
                let value = json!({"value": "ok"});
                self.result(id, json!({"content": [], "structuredContent": value}))
            }
            None if arguments.get("unreadable") == Some(&Value::Bool(true)) => {
                // The id first, then a byte that is not UTF-8 in a string.
                let mut line = format!(
                    r#"{{"jsonrpc":"2.0","id":{id},"result":{{"structuredContent":{{"value":"o"#
                )
                .into_bytes();
                line.extend_from_slice(b"\xff\"}}}\n");
                self.out.write_all(&line)?;
                self.out.flush()
            }
            None if arguments.get("stale") == Some(&Value::Bool(true)) => {
                let value = json!({"value": "ok"});
                let stale = json!({"type": "text", "text": r#"{"value": "stale"}"#});
                self.result(id, json!({"content": [stale], "structuredContent": value}))
            }
            None => match arguments.get("note").and_then(Value::as_str) {
                Some(note) => {
                    let value = json!({"value": "ok"});
                    let content = [
                        json!({"type": "text", "text": value.to_string()}),
                        json!({"type": "text", "text": note}),
                    ];
                    self.result(id, json!({"content": content, "structuredContent": value}))
                }
                None => self.structured(id, json!({"value": "ok"})),
            },
        }
    }

    /// A successful call result whose `structuredContent` and text block
    /// are both `text`, written as given (spacing, repeated names), with
    /// `then` (raw members, e.g. `,"x":1`) after the result.
    fn verbatim(
        &mut self,
        id: &Value,
        text: &str,
        then: &str,
        note: Option<&str>,
    ) -> io::Result<()> {
        let result_type = if self.modern {
            r#","resultType":"complete""#
        } else {
            ""
        };
        let note = note.map_or_else(String::new, |note| {
            format!(
                r#",{{"type":"text","text":{}}}"#,
                Value::String(note.to_owned())
            )
        });
        let line = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":{}}}{note}],"structuredContent":{text}{result_type}}}{then}}}"#,
            Value::String(text.to_owned())
        );
        self.write_line(&line)
    }
}
