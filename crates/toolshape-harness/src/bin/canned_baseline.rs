//! The physical limit of the side-by-side benchmark over stdio: a process
//! that reads a line, finds the request's id and method by scanning its
//! bytes (no JSON parsing), and writes a response prepared once at start,
//! with that id spliced in. Whatever a server does, it cannot answer faster
//! than this through the same pipes and the same client.
//!
//! It offers one tool, named by its first argument, whose result is the
//! JSON of its second argument as `structuredContent` plus the same text as
//! a text block: the benchmark gives it the payload the real servers return.
//!
//! Run: `canned_baseline get_weather_data '{"current":...}'`.

use std::io::{self, BufRead, BufReader, BufWriter, Write};
use std::process::ExitCode;

use serde_json::{Value, json};

/// The value of the first top-level-looking `"key":` member: the bytes up
/// to the next `,` or `}` (ids and methods are short scalars).
fn member<'a>(line: &'a [u8], key: &[u8]) -> Option<&'a [u8]> {
    let start = line.windows(key.len()).position(|window| window == key)? + key.len();
    let rest = &line[start..];
    let rest = &rest[rest.iter().position(|b| !b.is_ascii_whitespace())?..];
    let end = rest.iter().position(|b| *b == b',' || *b == b'}')?;
    Some(rest[..end].trim_ascii_end())
}

/// The serialized `result` of each method this baseline answers.
struct Canned {
    discover: Vec<u8>,
    initialize: Vec<u8>,
    list: Vec<u8>,
    call: Vec<u8>,
    empty: Vec<u8>,
}

impl Canned {
    fn new(tool: &str, structured: Value) -> Canned {
        let text = structured.to_string();
        let bytes = |value: Value| value.to_string().into_bytes();
        Canned {
            discover: bytes(json!({
                "resultType": "complete", "supportedVersions": ["2025-11-25", "2026-07-28"],
                "capabilities": {"tools": {}}, "ttlMs": 0, "cacheScope": "public",
                "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "canned", "version": "1"}}
            })),
            initialize: bytes(json!({
                "protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                "serverInfo": {"name": "canned", "version": "1"}
            })),
            list: bytes(json!({
                "resultType": "complete", "ttlMs": 0, "cacheScope": "public",
                "tools": [{"name": tool, "inputSchema": {"type": "object"}, "outputSchema": {"type": "object"}}]
            })),
            call: bytes(json!({
                "resultType": "complete",
                "content": [{"type": "text", "text": text}],
                "structuredContent": structured
            })),
            empty: b"{}".to_vec(),
        }
    }

    fn result_for(&self, method: &[u8]) -> &[u8] {
        match method {
            b"\"tools/call\"" => &self.call,
            b"\"tools/list\"" => &self.list,
            b"\"server/discover\"" => &self.discover,
            b"\"initialize\"" => &self.initialize,
            _ => &self.empty,
        }
    }
}

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let (Some(tool), Some(payload)) = (args.next(), args.next()) else {
        eprintln!("usage: canned_baseline TOOL STRUCTURED_JSON");
        return ExitCode::from(2);
    };
    let structured: Value = match serde_json::from_str(&payload) {
        Ok(value) => value,
        Err(error) => {
            eprintln!("canned_baseline: the payload is not JSON: {error}");
            return ExitCode::from(2);
        }
    };
    let canned = Canned::new(&tool, structured);
    let stdin = io::stdin();
    let mut input = BufReader::with_capacity(64 * 1024, stdin.lock());
    let mut output = BufWriter::with_capacity(64 * 1024, io::stdout().lock());
    let mut line = Vec::with_capacity(4096);
    loop {
        line.clear();
        match input.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        // Notifications (no id) get no answer.
        let (Some(id), Some(method)) = (member(&line, b"\"id\":"), member(&line, b"\"method\":"))
        else {
            continue;
        };
        let written = output
            .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":")
            .and_then(|()| output.write_all(id))
            .and_then(|()| output.write_all(b",\"result\":"))
            .and_then(|()| output.write_all(canned.result_for(method)))
            .and_then(|()| output.write_all(b"}\n"));
        if written.is_err() {
            break;
        }
        // Flush when no more input is waiting, as a server's writer does.
        if input.buffer().is_empty() && output.flush().is_err() {
            break;
        }
    }
    let _ = output.flush();
    ExitCode::SUCCESS
}

#[cfg(test)]
mod tests {
    use super::member;

    #[test]
    fn finds_the_id_and_method_by_scanning() {
        let line = br#"{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{}}"#;
        assert_eq!(member(line, b"\"id\":"), Some(&b"42"[..]));
        assert_eq!(member(line, b"\"method\":"), Some(&b"\"tools/call\""[..]));
        assert_eq!(member(br#"{"method":"x"}"#, b"\"id\":"), None);
    }
}
