//! A raw stdio JSON-RPC server whose tools misbehave, for testing the client
//! (`tests/client_hostile.rs`). It does not use `toolshape::Server`: it must
//! be free to send what a well-behaved server never would.
//!
//! ```text
//! cargo run -p toolshape --example hostile_server -- \
//!     [--legacy-only] [--page-size N] [--canary-port PORT] [--unknown-tool result|error] \
//!     [--duplicate]
//! ```
//!
//! - `server/discover` is answered with a 2026-07-28 result, or `-32601` with
//!   `--legacy-only` or `--offer`, or never answered with
//!   `--silent-discover`; `initialize` agrees to the requested revision when
//!   it knows it (2025-11-25 otherwise), or to `--offer REVISION` whatever
//!   was asked.
//! - `tools/list` is paginated, `--page-size` tools a page (default 3).
//! - An unknown tool is answered as the official SDK servers do (an
//!   `isError: true` result, `--unknown-tool result`, the default) or with a
//!   `-32602` error (`--unknown-tool error`).
//! - `--foreign-names` lists, after the tools below, tools named outside
//!   MCP's naming guidance (`github/create_issue`, ...) and `too_deep`, whose
//!   inputSchema nests past what a JSON parser reads (see `hostile/tools.rs`).
//! - `--duplicate` lists `ok` a second time, last, with an outputSchema its
//!   output breaks (`value` an integer).
//! - Every message received is recorded; the `received` tool returns the
//!   notifications among them.
//! - `--check-defects` lists, after the tools below, one tool per rule of
//!   `toolshape check` they do not break (see `hostile/defects.rs`).
//! - `--no-tools-capability` declares no `tools` capability;
//! - `--unnamed` leaves its name out of its 2026-07-28 listings' `_meta`
//!   (`io.modelcontextprotocol/serverInfo`, which they carry otherwise);
//!   `--cursor-loop` makes every page's `nextCursor` `"0"`; `--endless BYTES`
//!   lists pages of new tools (`more_<n>`, descriptions `BYTES` long) without
//!   end, each with a new cursor; `--slow-pages MS` answers each page MS ms
//!   late; `--list-changed-every MS` announces a
//!   changed tool list every MS ms for good, and `--count-lists FILE` counts
//!   the `tools/list` requests in FILE (see `hostile/storm.rs`); `--unstable FILE`
//!   lists the tools in reverse order on every other start (counted in FILE);
//!   `--slow-restarts FILE` answers each page 1 s late from its third start
//!   on (counted in FILE; a check starts a server twice before calling);
//!   `--surface` lists resources and prompts too, a prompt and a template
//!   twice each (see `hostile/surface.rs`); `--batches` sends each answer
//!   after a 2025-03-26 handshake in a JSON-RPC batch, behind a log message;
//!   `--die-on-initialize REVISION` exits when `initialize` asks for it.
//!
//! The tools (see [`TOOLS`]): `ok`, `pair` (the first call is held until a
//! second arrives; they are answered in reverse), `mismatch`, `no_structured`,
//! `tuple`, `tuple_bad`, `unevaluated`, `draft07` (a draft-07 schema with
//! `additionalProperties: false`, broken when called with `{"extra": true}`),
//! `remote_ref` (an outputSchema whose
//! `$ref` points at `http://127.0.0.1:<canary-port>/`), `exponential`, `deep`
//! (a 10,000-deep structuredContent), `huge` (one response line of `bytes`
//! bytes, default 100 MB, id first; with `"unended": true` the line stops
//! short of its end, which comes only before the server's next message;
//! with `"as_request": true` the line is a request of the server's, with the
//! call's own id, and the call is answered, with `{"value": "refused N"}`,
//! once the client answers that request with error code N),
//! `huge_id_last` (the same with the id
//! last, as the TypeScript SDK orders members), `malformed_error` (an error
//! response whose error object is malformed), `bad_result` (a result that is
//! not a CallToolResult), `tool_error` (`isError: true`), `echo`, `hang` (never
//! answered) and `received`. `ok` called with `{"verbatim": TEXT}` answers
//! with `structuredContent` and a text block that are both TEXT as written
//! (and `"then": MEMBERS`, raw JSON such as `,"x":1`, after the result);
//! with `{"note": TEXT}` it answers `{"value": "ok"}` (or the verbatim text)
//! with its text block and a second text block, TEXT; with `{"bare": true}`
//! it answers `{"value": "ok"}` with no content block at all; with
//! `{"stale": true}`, beside a text block of other JSON, `{"value": "stale"}`;
//! with `{"unreadable": true}` its answer, id first, holds a byte that is not
//! UTF-8.
//!
//! Faults of the server as a whole: `twice` answers, then answers again (with
//! `{"value":"duplicate"}`) just before its next answer to anything, while
//! the next request waits; `unknown_id` first sends answers to ids the
//! client never sent (the client's next id among them) then its own; `flood`
//! sends `n` notifications (progress for its token and for unknown ones, log
//! messages, `tools/list_changed`, unknown methods, unparsable lines, pings)
//! before answering, and with `"then_deaf": true` then reads nothing more;
//! `die` exits at once without answering; `deaf` stops
//! reading its input for good (the process stays).

use std::io::{self, BufRead, BufWriter, Write};
use std::process::ExitCode;

use serde_json::{Value, json};

#[path = "hostile/config.rs"]
mod config;
#[path = "hostile/defects.rs"]
mod defects;
#[path = "hostile/huge.rs"]
mod huge;
#[path = "hostile/ok.rs"]
mod ok;
#[path = "hostile/storm.rs"]
mod storm;
#[path = "hostile/surface.rs"]
mod surface;
#[path = "hostile/tools.rs"]
mod tools;

use config::{Config, Unknown, parse_args};
use tools::{TOOLS, object_schema, tool_definition};

/// Nesting of the `deep` structuredContent.
const DEEP_NESTING: usize = 10_000;

/// Notifications `flood` sends unless its `n` argument says otherwise.
const DEFAULT_FLOOD: u64 = 10_000;

struct Server {
    config: Config,
    out: BufWriter<io::Stdout>,
    /// Whether the peer speaks 2026-07-28 (results carry `resultType`).
    modern: bool,
    /// Every notification received, in order.
    notifications: Vec<Value>,
    /// A `pair` call waiting for its partner: its id and `n`.
    held_pair: Option<(Value, Value)>,
    /// The id `twice` answers again, before the next answer.
    duplicate: Option<Value>,
    /// Set by `deaf`: read nothing more.
    deaf: bool,
    /// Set by an unended `huge`: the line is ended before the next message.
    line_open: bool,
    /// Set by a `huge` sent as a request: the id of the call answered once
    /// the client answers that request.
    refusal_awaited: Option<Value>,
    /// The progress token of the call being handled, if it asked for progress.
    progress_token: Option<Value>,
    /// Set by `--batches` once a 2025-03-26 handshake is answered.
    batching: bool,
}

impl Server {
    fn write_line(&mut self, line: &str) -> io::Result<()> {
        self.out.write_all(line.as_bytes())?;
        self.out.write_all(b"\n")?;
        self.out.flush()
    }

    fn result(&mut self, id: &Value, mut result: Value) -> io::Result<()> {
        if let Some(first) = self.duplicate.take() {
            self.structured(&first, json!({"value": "duplicate"}))?;
        }
        if self.modern
            && let Some(object) = result.as_object_mut()
        {
            object.insert("resultType".into(), json!("complete"));
        }
        let line = json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string();
        self.write_answer(&line)
    }

    fn error(&mut self, id: &Value, code: i64, message: &str) -> io::Result<()> {
        let line = json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
            .to_string();
        self.write_answer(&line)
    }

    /// An answer's line; with `--batches` on 2025-03-26, in a batch behind a
    /// log message.
    fn write_answer(&mut self, line: &str) -> io::Result<()> {
        if !self.batching {
            return self.write_line(line);
        }
        let log = json!({"jsonrpc": "2.0", "method": "notifications/message",
                         "params": {"level": "info", "data": "batched"}});
        self.write_line(&format!("[{log},{line}]"))
    }

    /// A successful call result with `structured` and its text.
    fn structured(&mut self, id: &Value, structured: Value) -> io::Result<()> {
        let text = structured.to_string();
        self.result(
            id,
            json!({"content": [{"type": "text", "text": text}], "structuredContent": structured}),
        )
    }

    fn capabilities(&self) -> Value {
        let mut capabilities = if self.config.no_tools_capability {
            json!({})
        } else {
            json!({"tools": {}})
        };
        if self.config.surface {
            capabilities["resources"] = json!({});
            capabilities["prompts"] = json!({});
        }
        capabilities
    }

    fn handle(&mut self, message: Value) -> io::Result<()> {
        let method = message.get("method").and_then(Value::as_str);
        let id = message.get("id").cloned();
        let (Some(method), Some(id)) = (method, id) else {
            if method.is_some() {
                self.notifications.push(message);
            } else if let Some(call) = self.refusal_awaited.take() {
                if message.get("id") != Some(&call) {
                    self.refusal_awaited = Some(call);
                    return Ok(());
                }
                let code = &message["error"]["code"];
                return self.structured(&call, json!({"value": format!("refused {code}")}));
            }
            return Ok(());
        };
        let params = message.get("params").cloned().unwrap_or(json!({}));
        match method {
            "server/discover" if self.config.silent_discover => Ok(()),
            "server/discover" if self.config.legacy_only || self.config.offer.is_some() => {
                self.error(&id, -32601, "Method not found")
            }
            "server/discover" => {
                self.modern = true;
                let result = json!({
                    "resultType": "complete",
                    "supportedVersions": ["2026-07-28"],
                    "capabilities": self.capabilities(),
                    "ttlMs": 0,
                    "cacheScope": "private",
                    "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "hostile", "version": "1.0.0"}}
                });
                self.result(&id, result)
            }
            "initialize" => {
                let requested = params
                    .get("protocolVersion")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                if self.config.die_on_initialize.as_deref() == Some(requested) {
                    std::process::exit(3);
                }
                let version = match (self.config.offer.as_deref(), requested) {
                    (Some(offered), _) => offered,
                    (None, "2024-11-05" | "2025-03-26" | "2025-06-18" | "2025-11-25") => requested,
                    (None, _) => "2025-11-25",
                }
                .to_owned();
                self.modern = false;
                self.result(
                    &id,
                    json!({
                        "protocolVersion": version,
                        "capabilities": self.capabilities(),
                        "serverInfo": {"name": "hostile", "version": "1.0.0"}
                    }),
                )?;
                self.batching = self.config.batches && version == "2025-03-26";
                Ok(())
            }
            "ping" => self.result(&id, json!({})),
            "tools/list" => {
                let start = params
                    .get("cursor")
                    .and_then(Value::as_str)
                    .map_or(Ok(0), str::parse::<usize>);
                let Ok(start) = start else {
                    return self.error(&id, -32602, "Invalid cursor");
                };
                if let Some(path) = &self.config.count_lists {
                    storm::count_listing(path);
                }
                if let Some(ms) = self.config.slow_pages {
                    std::thread::sleep(std::time::Duration::from_millis(ms));
                }
                if let Some(padding) = self.config.endless {
                    return self.endless_page(&id, start, padding);
                }
                let mut all: Vec<Value> = TOOLS
                    .iter()
                    .map(|tool| tool_definition(tool, &self.config))
                    .collect();
                if self.config.check_defects {
                    all.extend(
                        defects::DEFECT_TOOLS
                            .iter()
                            .filter_map(|tool| defects::definition(tool, self.modern)),
                    );
                }
                if self.config.foreign_names {
                    all.extend(tools::foreign_definitions());
                }
                if self.config.reversed {
                    all.reverse();
                }
                if self.config.duplicate {
                    all.push(json!({
                        "name": "ok",
                        "description": "hostile: ok, listed again with another schema",
                        "inputSchema": {"type": "object"},
                        "outputSchema": object_schema(json!({"value": {"type": "integer"}}), &["value"])
                    }));
                }
                let end = (start + self.config.page_size).min(all.len());
                let tools = all.get(start..end).unwrap_or_default();
                let mut result = json!({"tools": tools});
                if self.modern {
                    result["ttlMs"] = json!(0);
                    result["cacheScope"] = json!("private");
                    if !self.config.unnamed {
                        result["_meta"] = json!({
                            "io.modelcontextprotocol/serverInfo": {"name": "hostile", "version": "1.0.0"}
                        });
                    }
                }
                if self.config.cursor_loop {
                    result["nextCursor"] = json!("0");
                } else if end < all.len() {
                    result["nextCursor"] = json!(end.to_string());
                }
                self.result(&id, result)
            }
            "tools/call" => {
                let name = params
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned();
                let arguments = params.get("arguments").cloned().unwrap_or(json!({}));
                self.progress_token = params.pointer("/_meta/progressToken").cloned();
                self.call(&id, &name, arguments)
            }
            other => match self
                .config
                .surface
                .then(|| surface::answer(other, &params))
                .flatten()
            {
                Some(Ok(mut result)) => {
                    if self.modern {
                        result["resultType"] = json!("complete");
                    }
                    self.result(&id, result)
                }
                Some(Err((code, message))) => self.error(&id, code, &message),
                None => self.error(&id, -32601, "Method not found"),
            },
        }
    }

    /// A `tools/list` page of `--endless`: new tools, and a cursor to more.
    fn endless_page(&mut self, id: &Value, start: usize, padding: usize) -> io::Result<()> {
        let end = start.saturating_add(self.config.page_size);
        let tools: Vec<Value> = (start..end)
            .map(|n| {
                json!({
                    "name": format!("more_{n}"),
                    "description": "x".repeat(padding),
                    "inputSchema": {"type": "object"}
                })
            })
            .collect();
        self.result(id, json!({"tools": tools, "nextCursor": end.to_string()}))
    }

    fn call(&mut self, id: &Value, name: &str, arguments: Value) -> io::Result<()> {
        if self.config.check_defects
            && let Some(answer) = defects::call(name, &arguments)
        {
            return match answer {
                defects::Answer::Result(result) => self.result(id, result),
                defects::Answer::Error(code, message) => self.error(id, code, message),
                defects::Answer::NotifyThenResult(notification, result) => {
                    self.write_line(&notification.to_string())?;
                    self.result(id, result)
                }
                defects::Answer::Exit => std::process::exit(1),
                defects::Answer::ResultAndError(result) => {
                    let error = json!({"code": -32603, "message": "and an error"});
                    let line =
                        json!({"jsonrpc": "2.0", "id": id, "result": result, "error": error});
                    self.write_line(&line.to_string())
                }
            };
        }
        match name {
            "ok" => self.ok(id, &arguments),
            "echo" => self.structured(id, json!({"echo": arguments})),
            foreign if tools::FOREIGN_TOOLS.contains(&foreign) => {
                self.structured(id, json!({"value": foreign}))
            }
            "pair" => {
                let n = arguments.get("n").cloned().unwrap_or(Value::Null);
                match self.held_pair.take() {
                    None => {
                        self.held_pair = Some((id.clone(), n));
                        Ok(())
                    }
                    Some((first_id, first_n)) => {
                        // The second call is answered first.
                        self.structured(id, json!({"n": n}))?;
                        self.structured(&first_id, json!({"n": first_n}))
                    }
                }
            }
            "mismatch" => self.structured(id, json!({"count": "three"})),
            "no_structured" => self.result(
                id,
                json!({"content": [{"type": "text", "text": "no structured content here"}]}),
            ),
            "tuple" => self.structured(id, json!({"pair": ["a", 1]})),
            "tuple_bad" => self.structured(id, json!({"pair": ["a", "b"]})),
            "unevaluated" => self.structured(id, json!({"a": 1, "b": 2})),
            "draft07" => {
                // `{"extra": true}` adds a property the schema forbids.
                let mut value = json!({"pair": ["a", 1]});
                if arguments.get("extra") == Some(&Value::Bool(true)) {
                    value["extra"] = json!(true);
                }
                self.structured(id, value)
            }
            "remote_ref" => self.structured(id, json!({"x": 1})),
            "exponential" => self.structured(id, json!({"v": 1})),
            "deep" => {
                // Written as text: serializing a 10,000-deep Value would recurse.
                let structured = format!(
                    "{{\"deep\":{}{}}}",
                    "[".repeat(DEEP_NESTING),
                    "]".repeat(DEEP_NESTING)
                );
                let mut line = format!(
                    "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{{\"content\":[],\"structuredContent\":{structured}"
                );
                if self.modern {
                    line.push_str(",\"resultType\":\"complete\"");
                }
                line.push_str("}}");
                self.write_line(&line)
            }
            "huge" | "huge_id_last" => self.huge(id, name == "huge", &arguments),
            "malformed_error" => {
                let line = json!({"jsonrpc": "2.0", "id": id, "error": {"code": "not a number"}})
                    .to_string();
                self.write_line(&line)
            }
            "bad_result" => self.result(id, json!({"content": "not an array"})),
            "tool_error" => self.result(
                id,
                json!({"content": [{"type": "text", "text": "the tool failed on purpose"}], "isError": true}),
            ),
            "hang" => Ok(()),
            "twice" => {
                self.structured(id, json!({"value": "first"}))?;
                self.duplicate = Some(id.clone());
                Ok(())
            }
            "unknown_id" => {
                // Ids this client never sent: far off, of the wrong type, and
                // the one it will send next.
                let next = id.as_i64().map_or(json!(1), |n| json!(n + 1));
                for forged in [json!(987_654_321), json!("not-an-id"), json!(-1), next] {
                    self.structured(&forged, json!({"value": "forged"}))?;
                }
                self.structured(id, json!({"value": "ok"}))
            }
            "flood" => {
                let n = arguments
                    .get("n")
                    .and_then(Value::as_u64)
                    .unwrap_or(DEFAULT_FLOOD);
                let token = self.progress_token.take().unwrap_or(Value::Null);
                self.flood(n, &token)?;
                self.deaf = arguments.get("then_deaf") == Some(&Value::Bool(true));
                self.structured(id, json!({"value": "ok"}))
            }
            "die" => std::process::exit(3),
            "deaf" => {
                self.deaf = true;
                Ok(())
            }
            "received" => {
                let notifications = self.notifications.clone();
                self.structured(id, json!({"notifications": notifications}))
            }
            unknown => match self.config.unknown {
                Unknown::Result => self.result(
                    id,
                    json!({
                        "content": [{"type": "text", "text": format!("Unknown tool: {unknown}")}],
                        "isError": true
                    }),
                ),
                Unknown::Error => self.error(id, -32602, &format!("Unknown tool: {unknown}")),
            },
        }
    }
}

impl Server {
    /// `n` notifications of every kind a client must survive, in turn.
    fn flood(&mut self, n: u64, token: &Value) -> io::Result<()> {
        for i in 0..n {
            let line = match i % 8 {
                0 => json!({"jsonrpc": "2.0", "method": "notifications/progress",
                    "params": {"progressToken": token, "progress": i, "total": n}})
                .to_string(),
                1 => json!({"jsonrpc": "2.0", "method": "notifications/progress",
                    "params": {"progressToken": format!("unknown-{i}"), "progress": i}})
                .to_string(),
                2 => json!({"jsonrpc": "2.0", "method": "notifications/message",
                    "params": {"level": "debug", "data": format!("flood {i}")}})
                .to_string(),
                3 => json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
                    .to_string(),
                4 => json!({"jsonrpc": "2.0", "method": format!("notifications/unknown_{i}"),
                    "params": {"x": i}})
                .to_string(),
                5 => "{\"jsonrpc\":\"2.0\",\"method\":".to_owned(),
                6 => json!({"jsonrpc": "2.0", "id": format!("server-ping-{i}"), "method": "ping"})
                    .to_string(),
                _ => json!({"jsonrpc": "2.0", "method": "notifications/progress",
                    "params": {"progress": "not a number"}})
                .to_string(),
            };
            self.out.write_all(line.as_bytes())?;
            self.out.write_all(b"\n")?;
        }
        self.out.flush()
    }
}

fn main() -> ExitCode {
    let config = match parse_args() {
        Ok(config) => config,
        Err(error) => {
            eprintln!("hostile_server: {error}");
            return ExitCode::from(2);
        }
    };
    if let Some(ms) = config.list_changed_every {
        storm::announce_changes_every(std::time::Duration::from_millis(ms.max(1)));
    }
    let mut server = Server {
        config,
        out: BufWriter::new(io::stdout()),
        modern: false,
        batching: false,
        notifications: Vec::new(),
        held_pair: None,
        duplicate: None,
        deaf: false,
        line_open: false,
        refusal_awaited: None,
        progress_token: None,
    };
    for line in io::stdin().lock().lines() {
        let Ok(line) = line else { break };
        if line.trim().is_empty() {
            continue;
        }
        let Ok(message) = serde_json::from_str::<Value>(&line) else {
            eprintln!("hostile_server: unparsable line ignored");
            continue;
        };
        if server.line_open {
            server.line_open = false;
            if let Err(error) = server.write_line("") {
                eprintln!("hostile_server: {error}");
                return ExitCode::FAILURE;
            }
        }
        if let Err(error) = server.handle(message) {
            eprintln!("hostile_server: {error}");
            return ExitCode::FAILURE;
        }
        if server.deaf {
            eprintln!("hostile_server: deaf from now on");
            loop {
                std::thread::sleep(std::time::Duration::from_secs(3600));
            }
        }
    }
    ExitCode::SUCCESS
}
