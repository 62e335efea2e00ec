//! A harness for talking to a real MCP server process over its stdin and
//! stdout, one JSON-RPC message per line.
//!
//! - [`Peer`] spawns the process with piped stdio, sends lines, and reads
//!   lines with a deadline: a test fails rather than hangs. Every line the
//!   server writes to stdout must parse as a JSON-RPC 2.0 message (logs go to
//!   stderr, which is collected for failure messages).
//! - Responses may arrive out of order: [`Peer::response`] matches by id and
//!   keeps what it skips for later; [`Peer::log`] has everything in arrival
//!   order.
//! - [`Peer::initialize`] does a legacy handshake; [`modern_meta`] builds the
//!   `_meta` of a 2026-07-28 request; [`params_for`] shapes params for either.
//! - [`OutputSchemas`] checks that each `structuredContent` validates against
//!   the `outputSchema` the same connection listed.
//!
//! Shared by the harness's and `toolshape-cli`'s integration tests.

#![allow(dead_code, unreachable_pub)]

use std::collections::{HashMap, VecDeque};
use std::ffi::OsStr;
use std::path::PathBuf;
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};
use tokio::time::Instant;
use toolshape::schema::{CompiledSchema, SchemaEngine};

/// The longest any single wait may take before the test fails.
pub const TIMEOUT: Duration = Duration::from_secs(10);

/// The newest (stateless) revision.
pub const MODERN: &str = "2026-07-28";
/// Revisions with an `initialize` handshake, oldest first.
pub const LEGACY: [&str; 4] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];
/// Every revision, oldest first.
pub const ALL: [&str; 5] = [
    "2024-11-05",
    "2025-03-26",
    "2025-06-18",
    "2025-11-25",
    "2026-07-28",
];

/// The `_meta` key marking an output wrapped as `{"result": value}`.
pub const WRAPPED_KEY: &str = "dev.toolshape/wrappedOutput";

/// The `test_server` binary of this harness (its tests are the only ones
/// that start it).
pub fn test_server_path() -> PathBuf {
    match option_env!("CARGO_BIN_EXE_test_server") {
        Some(path) => PathBuf::from(path),
        None => panic!(
            "test_server is a binary of toolshape-harness: run these tests from that package"
        ),
    }
}

/// Why a read ended without a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadEnd {
    /// Nothing arrived before the deadline.
    Timeout,
    /// The server closed its stdout.
    Eof,
}

/// A server process and the client side of its stdio.
pub struct Peer {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: Lines<BufReader<ChildStdout>>,
    stderr: Arc<Mutex<Vec<u8>>>,
    /// Copies stderr into `stderr` until the process closes it.
    stderr_task: Option<tokio::task::JoinHandle<()>>,
    /// Messages read but not claimed yet, in arrival order.
    stash: VecDeque<Value>,
    /// Every message received, in arrival order.
    log: Vec<Value>,
    next_id: i64,
    eof: bool,
    /// Whether a JSON-RPC batch (an array of messages) is a message too
    /// (2025-03-26); otherwise a line holding one fails the test.
    batches: bool,
}

impl Peer {
    /// Spawns `program` with `args`, stdio piped. The process is killed when
    /// the peer is dropped.
    pub fn spawn<I, S>(program: impl AsRef<OsStr>, args: I) -> Peer
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        Peer::spawn_with_env(program, args, std::iter::empty::<(&str, &str)>())
    }

    /// As [`Peer::spawn`], with extra environment variables.
    pub fn spawn_with_env<I, S, E, K, V>(program: impl AsRef<OsStr>, args: I, env: E) -> Peer
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
        E: IntoIterator<Item = (K, V)>,
        K: AsRef<OsStr>,
        V: AsRef<OsStr>,
    {
        let mut command = Command::new(program.as_ref());
        command
            .args(args)
            .envs(env)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let mut child = command
            .spawn()
            .unwrap_or_else(|e| panic!("cannot spawn {:?}: {e}", program.as_ref()));
        let stdin = child.stdin.take().expect("piped stdin");
        let stdout = child.stdout.take().expect("piped stdout");
        let mut stderr_pipe = child.stderr.take().expect("piped stderr");
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&stderr);
        let stderr_task = tokio::spawn(async move {
            let mut buffer = [0u8; 8192];
            while let Ok(n) = stderr_pipe.read(&mut buffer).await {
                if n == 0 {
                    break;
                }
                sink.lock().unwrap().extend_from_slice(&buffer[..n]);
            }
        });
        Peer {
            child,
            stdin: Some(stdin),
            stdout: BufReader::new(stdout).lines(),
            stderr,
            stderr_task: Some(stderr_task),
            stash: VecDeque::new(),
            log: Vec::new(),
            next_id: 1,
            eof: false,
            batches: false,
        }
    }

    /// The test server example with `args`.
    pub fn test_server<I, S>(args: I) -> Peer
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        Peer::spawn(test_server_path(), args)
    }

    /// What the process wrote to stderr so far (all of it once
    /// [`Peer::wait_exit`] returned).
    pub fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.stderr.lock().unwrap()).into_owned()
    }

    /// Every message received so far, in arrival order.
    pub fn log(&self) -> &[Value] {
        &self.log
    }

    /// Fails the test, showing the server's stderr.
    #[track_caller]
    pub fn fail(&self, message: impl std::fmt::Display) -> ! {
        let stderr = self.stderr();
        let tail: String = {
            let chars: Vec<char> = stderr.chars().collect();
            chars[chars.len().saturating_sub(4000)..].iter().collect()
        };
        panic!("{message}\n--- server stderr (tail) ---\n{tail}");
    }

    /// A fresh request id.
    pub fn id(&mut self) -> i64 {
        let id = self.next_id;
        self.next_id += 1;
        id
    }

    /// Writes `line` and a newline to the server's stdin.
    pub async fn send_line(&mut self, line: &[u8]) {
        let mut message = Vec::with_capacity(line.len() + 1);
        message.extend_from_slice(line);
        message.push(b'\n');
        self.send_raw(&message).await;
    }

    /// Writes `bytes` as they are to the server's stdin.
    pub async fn send_raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        let written = tokio::time::timeout(TIMEOUT, async {
            stdin.write_all(bytes).await?;
            stdin.flush().await
        })
        .await;
        match written {
            Ok(Ok(())) => {}
            Ok(Err(e)) => self.fail(format!("writing to the server failed: {e}")),
            Err(_) => self.fail("writing to the server timed out"),
        }
    }

    /// Sends one JSON message.
    pub async fn send(&mut self, message: &Value) {
        self.send_line(message.to_string().as_bytes()).await;
    }

    /// Sends a request without waiting for its response; returns its id.
    /// `params` of `null` leaves params out.
    pub async fn send_request(&mut self, method: &str, params: Value) -> i64 {
        let id = self.id();
        let mut message = json!({"jsonrpc": "2.0", "id": id, "method": method});
        if !params.is_null() {
            message["params"] = params;
        }
        self.send(&message).await;
        id
    }

    /// Sends a notification.
    pub async fn notify(&mut self, method: &str, params: Value) {
        let mut message = json!({"jsonrpc": "2.0", "method": method});
        if !params.is_null() {
            message["params"] = params;
        }
        self.send(&message).await;
    }

    /// Sends a request and waits for its response (the whole message).
    pub async fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.send_request(method, params).await;
        self.response(id).await
    }

    /// Sends a request and returns its `result`, failing on an error response.
    pub async fn result(&mut self, method: &str, params: Value) -> Value {
        let response = self.request(method, params).await;
        match response.get("result") {
            Some(result) => result.clone(),
            None => self.fail(format!("{method} failed: {response}")),
        }
    }

    /// Sends a request and returns its `error`, failing on a result.
    pub async fn error(&mut self, method: &str, params: Value) -> Value {
        let response = self.request(method, params).await;
        match response.get("error") {
            Some(error) => error.clone(),
            None => self.fail(format!("{method} was expected to fail: {response}")),
        }
    }

    /// Takes a JSON-RPC batch from the server as a message (2025-03-26).
    pub fn accept_batches(&mut self) {
        self.batches = true;
    }

    /// The next batch (an array of messages) in arrival order; other
    /// messages read on the way stay stashed.
    pub async fn next_batch(&mut self) -> Vec<Value> {
        if let Some(index) = self.stash.iter().position(Value::is_array)
            && let Some(Value::Array(messages)) = self.stash.remove(index)
        {
            return messages;
        }
        let deadline = Instant::now() + TIMEOUT;
        loop {
            match self.read(deadline).await {
                Ok(Value::Array(messages)) => return messages,
                Ok(message) => self.stash.push_back(message),
                Err(end) => self.fail(format!("no batch arrived ({end:?})")),
            }
        }
    }

    /// Closes the server's stdin (end of input).
    pub fn close_stdin(&mut self) {
        self.stdin = None;
    }

    /// Reads the next line from the server's stdout, by `deadline`. Fails
    /// the test when the line is not a JSON-RPC 2.0 message.
    async fn read(&mut self, deadline: Instant) -> Result<Value, ReadEnd> {
        if self.eof {
            return Err(ReadEnd::Eof);
        }
        let line = match tokio::time::timeout_at(deadline, self.stdout.next_line()).await {
            Err(_) => return Err(ReadEnd::Timeout),
            Ok(Err(e)) => self.fail(format!("reading the server's stdout failed: {e}")),
            Ok(Ok(None)) => {
                self.eof = true;
                return Err(ReadEnd::Eof);
            }
            Ok(Ok(Some(line))) => line,
        };
        let message: Value = match serde_json::from_str(&line) {
            Ok(message) => message,
            Err(e) => self.fail(format!(
                "stdout carried a line that is not JSON ({e}): {}",
                excerpt(&line, 500)
            )),
        };
        let batch = self.batches
            && message
                .as_array()
                .is_some_and(|messages| !messages.is_empty() && messages.iter().all(is_json_rpc));
        if !is_json_rpc(&message) && !batch {
            self.fail(format!(
                "stdout carried JSON that is not a JSON-RPC message: {}",
                excerpt(&line, 500)
            ));
        }
        self.log.push(message.clone());
        Ok(message)
    }

    /// The next message in arrival order (stashed ones first), by `timeout`.
    pub async fn next_message(&mut self, timeout: Duration) -> Result<Value, ReadEnd> {
        if let Some(message) = self.stash.pop_front() {
            return Ok(message);
        }
        self.read(Instant::now() + timeout).await
    }

    /// The next response in arrival order, whatever its id; notifications
    /// read on the way stay stashed.
    pub async fn next_response(&mut self) -> Value {
        if let Some(index) = self.stash.iter().position(is_response) {
            return self.stash.remove(index).unwrap();
        }
        let deadline = Instant::now() + TIMEOUT;
        loop {
            match self.read(deadline).await {
                Ok(message) if is_response(&message) => return message,
                Ok(message) => self.stash.push_back(message),
                Err(end) => self.fail(format!("no response arrived ({end:?})")),
            }
        }
    }

    /// Waits for the response with `id`, keeping any other message for later.
    pub async fn response(&mut self, id: impl Into<Value>) -> Value {
        let id = id.into();
        match self.try_response(&id, TIMEOUT).await {
            Ok(response) => response,
            Err(end) => self.fail(format!("no response with id {id} arrived ({end:?})")),
        }
    }

    /// The response with `id`, if it arrives within `wait`.
    pub async fn try_response(&mut self, id: &Value, wait: Duration) -> Result<Value, ReadEnd> {
        let matches = |message: &Value| is_response(message) && message.get("id") == Some(id);
        if let Some(index) = self.stash.iter().position(matches) {
            return Ok(self.stash.remove(index).unwrap());
        }
        let deadline = Instant::now() + wait;
        loop {
            let message = self.read(deadline).await?;
            if matches(&message) {
                return Ok(message);
            }
            self.stash.push_back(message);
        }
    }

    /// Fails if a response with `id` arrives within `wait` (everything else
    /// read meanwhile is kept).
    pub async fn assert_no_response(&mut self, id: impl Into<Value>, wait: Duration) {
        let id = id.into();
        match self.try_response(&id, wait).await {
            Ok(response) => self.fail(format!("unexpected response with id {id}: {response}")),
            Err(ReadEnd::Timeout | ReadEnd::Eof) => {}
        }
    }

    /// The stashed notifications with `method`, removed from the stash.
    pub fn take_notifications(&mut self, method: &str) -> Vec<Value> {
        let (taken, kept): (Vec<Value>, Vec<Value>) = std::mem::take(&mut self.stash)
            .into_iter()
            .partition(|message| !is_response(message) && message["method"] == method);
        self.stash = kept.into();
        taken
    }

    /// Does a legacy handshake at `version`: `initialize`, then
    /// `notifications/initialized`. Returns the `initialize` result.
    pub async fn initialize(&mut self, version: &str) -> Value {
        let result = self
            .result(
                "initialize",
                json!({
                    "protocolVersion": version,
                    "capabilities": {},
                    "clientInfo": {"name": "toolshape-tests", "version": "0.0.0"},
                }),
            )
            .await;
        self.notify("notifications/initialized", Value::Null).await;
        result
    }

    /// Gets ready to send requests at `version`: a handshake for a legacy
    /// revision, nothing for 2026-07-28 (each request carries `_meta`).
    pub async fn open(&mut self, version: &str) {
        if version != MODERN {
            let result = self.initialize(version).await;
            assert_eq!(result["protocolVersion"], version, "{result}");
        }
    }

    /// Every tool, following `nextCursor` to the end, at `version`.
    pub async fn list_all_tools(&mut self, version: &str) -> Vec<Value> {
        let mut tools = Vec::new();
        let mut cursor: Option<String> = None;
        for _ in 0..1000 {
            let mut params = json!({});
            if let Some(cursor) = &cursor {
                params["cursor"] = json!(cursor);
            }
            let page = self.result("tools/list", params_for(version, params)).await;
            tools.extend(page["tools"].as_array().cloned().unwrap_or_default());
            match page.get("nextCursor").and_then(Value::as_str) {
                Some(next) => cursor = Some(next.to_owned()),
                None => return tools,
            }
        }
        self.fail("tools/list kept returning a nextCursor")
    }

    /// Calls `name` with `arguments` at `version`; returns the whole response.
    pub async fn call(&mut self, version: &str, name: &str, arguments: Value) -> Value {
        self.request(
            "tools/call",
            params_for(version, json!({"name": name, "arguments": arguments})),
        )
        .await
    }

    /// Calls `name` and returns the `CallToolResult`, failing on a JSON-RPC error.
    pub async fn call_result(&mut self, version: &str, name: &str, arguments: Value) -> Value {
        let response = self.call(version, name, arguments).await;
        match response.get("result") {
            Some(result) => result.clone(),
            None => self.fail(format!("tools/call {name} answered an error: {response}")),
        }
    }

    /// Waits for the process to exit and for its stderr to be read to the
    /// end, by `TIMEOUT`.
    pub async fn wait_exit(&mut self) -> ExitStatus {
        let status = match tokio::time::timeout(TIMEOUT, self.child.wait()).await {
            Ok(Ok(status)) => status,
            Ok(Err(e)) => self.fail(format!("waiting for the server failed: {e}")),
            Err(_) => self.fail("the server did not exit"),
        };
        if let Some(task) = self.stderr_task.take()
            && tokio::time::timeout(TIMEOUT, task).await.is_err()
        {
            self.fail("the server's stderr stayed open after it exited");
        }
        status
    }

    /// Reads every remaining stdout line until the server closes it.
    pub async fn drain_to_eof(&mut self) -> Vec<Value> {
        let deadline = Instant::now() + TIMEOUT;
        let mut rest: Vec<Value> = self.stash.drain(..).collect();
        loop {
            match self.read(deadline).await {
                Ok(message) => rest.push(message),
                Err(ReadEnd::Eof) => return rest,
                Err(ReadEnd::Timeout) => self.fail("the server did not close its stdout"),
            }
        }
    }
}

fn is_json_rpc(message: &Value) -> bool {
    let Some(object) = message.as_object() else {
        return false;
    };
    if object.get("jsonrpc") != Some(&json!("2.0")) {
        return false;
    }
    let answers = object.contains_key("result") || object.contains_key("error");
    // A notification, or a request of the server's own (it asks its client).
    let notification_or_request = object.get("method").is_some_and(Value::is_string) && !answers;
    // An error response to a request whose id could not be read has none
    // (MCP's schema allows no `null` id since 2025-11-25).
    let response = match (object.contains_key("result"), object.contains_key("error")) {
        (true, false) => object.contains_key("id"),
        (false, true) => true,
        _ => false,
    };
    notification_or_request || response
}

/// Whether a message is a response (has `result` or `error`).
pub fn is_response(message: &Value) -> bool {
    message.get("result").is_some() || message.get("error").is_some()
}

/// `text` cut to `max` characters.
pub fn excerpt(text: &str, max: usize) -> String {
    text.chars().take(max).collect()
}

/// The `_meta` of a 2026-07-28 request.
pub fn modern_meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "toolshape-tests", "version": "0.0.0"},
    })
}

/// `params` for a request at `version`: with the 2026-07-28 `_meta` merged
/// in for that revision, as they are otherwise.
pub fn params_for(version: &str, mut params: Value) -> Value {
    if version == MODERN {
        let meta = params
            .as_object_mut()
            .expect("params are an object")
            .entry("_meta")
            .or_insert_with(|| json!({}));
        if let (Some(meta), Value::Object(modern)) = (meta.as_object_mut(), modern_meta()) {
            for (key, value) in modern {
                meta.entry(key).or_insert(value);
            }
        }
    }
    params
}

/// Whether a `CallToolResult` is `isError: true`.
pub fn is_error(result: &Value) -> bool {
    result.get("isError") == Some(&json!(true))
}

/// The text of a result's text blocks, joined.
pub fn text_of(result: &Value) -> String {
    result["content"]
        .as_array()
        .map(|blocks| {
            blocks
                .iter()
                .filter(|block| block["type"] == "text")
                .filter_map(|block| block["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

/// The `outputSchema`s one connection listed, compiled, to check that every
/// `structuredContent` on that connection validates against them.
pub struct OutputSchemas {
    schemas: HashMap<String, std::sync::Arc<CompiledSchema>>,
    listed: HashMap<String, Value>,
}

impl OutputSchemas {
    /// Compiles the `outputSchema` of each listed tool.
    pub fn new(tools: &[Value]) -> OutputSchemas {
        let engine = SchemaEngine::builder().build();
        let mut schemas = HashMap::new();
        let mut listed = HashMap::new();
        for tool in tools {
            let name = tool["name"].as_str().expect("a tool has a name").to_owned();
            if let Some(schema) = tool.get("outputSchema") {
                let compiled = engine.compile(schema).unwrap_or_else(|e| {
                    panic!("{name}: the listed outputSchema does not compile: {e}")
                });
                schemas.insert(name.clone(), compiled);
            }
            listed.insert(name, tool.clone());
        }
        OutputSchemas { schemas, listed }
    }

    /// The listed definition of `name`.
    pub fn tool(&self, name: &str) -> &Value {
        self.listed
            .get(name)
            .unwrap_or_else(|| panic!("{name} was not listed"))
    }

    /// Checks a successful result of `name`: its `structuredContent`
    /// validates against the listed schema, and its text block is that
    /// content serialized. Returns the structured content.
    pub fn check(&self, name: &str, result: &Value) -> Value {
        assert!(!is_error(result), "{name} failed: {result}");
        let structured = result
            .get("structuredContent")
            .unwrap_or_else(|| panic!("{name}: no structuredContent in {result}"));
        let schema = self.schemas.get(name).unwrap_or_else(|| {
            panic!("{name} returned structuredContent but listed no outputSchema")
        });
        if let Err(error) = schema.validate(structured) {
            panic!(
                "{name}: structuredContent does not match the listed outputSchema: {error}\n{structured}"
            );
        }
        let text = text_of(result);
        assert_eq!(
            text,
            structured.to_string(),
            "{name}: the text block is not the serialized structuredContent"
        );
        structured.clone()
    }
}
