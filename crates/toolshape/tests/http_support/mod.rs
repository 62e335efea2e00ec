//! Shared by the `http_*` integration tests: an in-process server on a real
//! loopback listener (port 0), purpose-made tools that record how they ended,
//! and raw-HTTP helpers that build 2026-07-28 and handshake requests by hand.

#![allow(dead_code, unreachable_pub)]

use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use reqwest::StatusCode;
use reqwest::header::HeaderMap;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::sync::{Notify, oneshot};
use tokio::task::JoinHandle;
use toolshape::{HttpOptions, Server, ServerOptions, Tool, ToolContext, ToolError};

pub mod recorder;

/// The longest any one wait in these tests may take.
pub const TIMEOUT: Duration = Duration::from_secs(5);
/// The stateless revision.
pub const MODERN: &str = "2026-07-28";
/// The newest handshake revision.
pub const LEGACY: &str = "2025-11-25";

/// How the `sleep` tool's calls ended.
#[derive(Debug, Default)]
pub struct Probe {
    /// Calls that began.
    pub started: AtomicUsize,
    /// Calls that ran to the end.
    pub finished: AtomicUsize,
    /// Calls stopped before their end (aborted, cancelled, dropped).
    pub aborted: AtomicUsize,
    /// Calls running now, and the most ever running at once.
    pub running: AtomicUsize,
    pub max_running: AtomicUsize,
    /// Wakes waiters on every change.
    pub changed: Notify,
}

impl Probe {
    pub fn started(&self) -> usize {
        self.started.load(Ordering::SeqCst)
    }
    pub fn finished(&self) -> usize {
        self.finished.load(Ordering::SeqCst)
    }
    pub fn aborted(&self) -> usize {
        self.aborted.load(Ordering::SeqCst)
    }
    pub fn max_running(&self) -> usize {
        self.max_running.load(Ordering::SeqCst)
    }

    /// Waits until `check` holds, failing the test after [`TIMEOUT`].
    pub async fn wait_for(&self, what: &str, check: impl Fn(&Probe) -> bool) {
        let deadline = tokio::time::Instant::now() + TIMEOUT;
        loop {
            let notified = self.changed.notified();
            if check(self) {
                return;
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                assert!(check(self), "timed out waiting for: {what} ({self:?})");
                return;
            }
        }
    }
}

/// Counts a call as aborted unless it was marked finished before being dropped.
struct Running {
    probe: Arc<Probe>,
    finished: bool,
}

impl Running {
    fn begin(probe: &Arc<Probe>) -> Running {
        probe.started.fetch_add(1, Ordering::SeqCst);
        let now = probe.running.fetch_add(1, Ordering::SeqCst) + 1;
        probe.max_running.fetch_max(now, Ordering::SeqCst);
        probe.changed.notify_waiters();
        Running {
            probe: Arc::clone(probe),
            finished: false,
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.probe.running.fetch_sub(1, Ordering::SeqCst);
        if self.finished {
            self.probe.finished.fetch_add(1, Ordering::SeqCst);
        } else {
            self.probe.aborted.fetch_add(1, Ordering::SeqCst);
        }
        self.probe.changed.notify_waiters();
    }
}

#[derive(Deserialize, JsonSchema)]
pub struct EchoIn {
    pub text: String,
}

#[derive(Serialize, Deserialize, JsonSchema, Debug, PartialEq)]
pub struct EchoOut {
    pub text: String,
    pub length: usize,
}

#[derive(Deserialize, JsonSchema)]
pub struct AddIn {
    pub a: i64,
    pub b: i64,
}

#[derive(Deserialize, JsonSchema)]
pub struct SleepIn {
    /// How long to sleep.
    pub ms: u64,
    /// Progress reports to send while sleeping, evenly spaced.
    #[serde(default)]
    pub steps: u32,
}

#[derive(Serialize, Deserialize, JsonSchema, Debug, PartialEq)]
pub struct SleepOut {
    pub slept_ms: u64,
}

/// The test toolset: `add`, `echo`, `fail` (a tool error, retryable after
/// 250 ms), `shout` (text
/// only, no outputSchema) and `sleep` (recorded in `probe`, with progress).
pub fn tools(probe: &Arc<Probe>) -> Vec<Tool> {
    let sleeper = Arc::clone(probe);
    vec![
        Tool::typed("add", |input: AddIn| async move {
            Ok::<_, ToolError>(input.a + input.b)
        })
        .description("Adds two integers."),
        Tool::typed("echo", |input: EchoIn| async move {
            let length = input.text.chars().count();
            Ok::<_, ToolError>(EchoOut {
                text: input.text,
                length,
            })
        }),
        Tool::text("shout", |input: EchoIn| async move {
            Ok::<_, ToolError>(input.text.to_uppercase())
        }),
        Tool::typed("fail", |_: EchoIn| async move {
            Err::<i64, _>(
                ToolError::new("it failed on purpose")
                    .retryable(true)
                    .retry_after(Duration::from_millis(250)),
            )
        }),
        Tool::typed_with_context("sleep", move |context: ToolContext, input: SleepIn| {
            let probe = Arc::clone(&sleeper);
            async move {
                let mut running = Running::begin(&probe);
                let steps = input.steps.max(1);
                let slice = Duration::from_millis(input.ms) / steps;
                for step in 0..steps {
                    tokio::time::sleep(slice).await;
                    if input.steps > 0 {
                        context.report_progress(
                            f64::from(step + 1),
                            Some(f64::from(input.steps)),
                            Some(format!("step {}", step + 1)),
                        );
                    }
                }
                running.finished = true;
                Ok::<_, ToolError>(SleepOut { slept_ms: input.ms })
            }
        }),
    ]
}

/// A server with the test toolset, `page_size` tools a page.
pub fn server(probe: &Arc<Probe>, page_size: usize) -> Server {
    let mut options = ServerOptions::default();
    options.page_size = page_size;
    options.call_timeout = Some(Duration::from_secs(20));
    Server::builder("http-test", "1.2.3")
        .options(options)
        .tools(tools(probe))
        .build()
        .unwrap()
}

/// A server serving on a loopback port until [`Serving::begin_shutdown`] or drop.
pub struct Serving {
    pub url: String,
    pub address: std::net::SocketAddr,
    pub server: Server,
    pub probe: Arc<Probe>,
    shutdown: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<io::Result<()>>>,
}

impl Serving {
    /// Serves the test toolset with `options`.
    pub async fn start(options: HttpOptions) -> Serving {
        let probe = Arc::new(Probe::default());
        Serving::start_server(server(&probe, 100), probe, options).await
    }

    /// Serves `server` with `options`.
    pub async fn start_server(server: Server, probe: Arc<Probe>, options: HttpOptions) -> Serving {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let url = format!("http://{address}{}", options.path);
        let (shutdown, signal) = oneshot::channel::<()>();
        let serving = server.clone();
        let task = tokio::spawn(async move {
            serving
                .serve_http(listener, options, async move {
                    let _ = signal.await;
                })
                .await
        });
        Serving {
            url,
            address,
            server,
            probe,
            shutdown: Some(shutdown),
            task: Some(task),
        }
    }

    /// Asks the server to shut down; returns the task that ends when it has.
    pub fn begin_shutdown(&mut self) -> JoinHandle<io::Result<()>> {
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
        self.task.take().expect("the server is running")
    }
}

impl Drop for Serving {
    fn drop(&mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }
}

/// A plain HTTP client (no proxy).
pub fn http() -> reqwest::Client {
    reqwest::Client::builder().no_proxy().build().unwrap()
}

/// The `_meta` of a 2026-07-28 request.
pub fn modern_meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientInfo": {"name": "raw-test", "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": {},
    })
}

/// `params` with the 2026-07-28 `_meta` merged in.
pub fn modern_params(mut params: Value) -> Value {
    let meta = params
        .as_object_mut()
        .unwrap()
        .entry("_meta")
        .or_insert_with(|| json!({}));
    for (key, value) in modern_meta().as_object().unwrap() {
        meta.as_object_mut()
            .unwrap()
            .entry(key.clone())
            .or_insert(value.clone());
    }
    params
}

/// A JSON-RPC request body.
pub fn request(id: i64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// An HTTP response, read whole.
#[derive(Debug)]
pub struct Reply {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub text: String,
}

impl Reply {
    /// The body as JSON (fails the test if it is not).
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.text)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {:?} {}", self.status, self.text))
    }

    pub fn content_type(&self) -> &str {
        self.headers
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
    }

    /// The JSON-RPC error code of the body.
    pub fn error_code(&self) -> i64 {
        let body = self.json();
        body["error"]["code"]
            .as_i64()
            .unwrap_or_else(|| panic!("no error code: {body}"))
    }

    /// The JSON-RPC messages of an event-stream body, in order.
    pub fn events(&self) -> Vec<Value> {
        sse_messages(&self.text)
    }
}

/// The `data:` of each SSE event, parsed as JSON.
pub fn sse_messages(text: &str) -> Vec<Value> {
    text.split("\n\n")
        .filter_map(|event| {
            let data: Vec<&str> = event
                .lines()
                .filter_map(|line| line.strip_prefix("data:"))
                .map(|d| d.strip_prefix(' ').unwrap_or(d))
                .collect();
            (!data.is_empty()).then(|| serde_json::from_str(&data.join("\n")).unwrap())
        })
        .collect()
}

/// Sends a POST with `headers` and reads the whole reply.
pub async fn post_raw(
    url: &str,
    headers: &[(&str, &str)],
    body: impl Into<reqwest::Body>,
) -> Reply {
    let mut builder = http()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream");
    for (name, value) in headers {
        builder = builder.header(*name, *value);
    }
    let response = tokio::time::timeout(TIMEOUT, builder.body(body).send())
        .await
        .expect("the POST timed out")
        .expect("the POST failed");
    read(response).await
}

/// Reads a response to its end.
pub async fn read(response: reqwest::Response) -> Reply {
    let status = response.status();
    let headers = response.headers().clone();
    let text = tokio::time::timeout(TIMEOUT, response.text())
        .await
        .expect("reading the body timed out")
        .expect("reading the body failed");
    Reply {
        status,
        headers,
        text,
    }
}

/// The request-metadata headers a 2026-07-28 request needs.
pub fn modern_headers<'a>(method: &'a str, name: Option<&'a str>) -> Vec<(&'a str, &'a str)> {
    let mut headers = vec![("mcp-protocol-version", MODERN), ("mcp-method", method)];
    if let Some(name) = name {
        headers.push(("mcp-name", name));
    }
    headers
}

/// A 2026-07-28 request with correct headers.
pub async fn modern(url: &str, id: i64, method: &str, params: Value) -> Reply {
    // What `Mcp-Name` names: a tool or prompt, or a resource's URI.
    let name = params
        .get("name")
        .or_else(|| params.get("uri"))
        .and_then(Value::as_str)
        .map(str::to_owned);
    let body = request(id, method, modern_params(params)).to_string();
    post_raw(url, &modern_headers(method, name.as_deref()), body).await
}

/// The `result` of a 200 JSON reply, failing the test otherwise.
pub fn result_of(reply: &Reply) -> Value {
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
    assert!(
        reply.content_type().starts_with("application/json"),
        "{reply:?}"
    );
    let body = reply.json();
    assert!(body.get("error").is_none(), "{body}");
    body["result"].clone()
}

/// Sends a POST in a handshake session, with that session's headers.
pub async fn session_post(url: &str, session: &str, body: &Value) -> Reply {
    post_raw(
        url,
        &[
            ("mcp-session-id", session),
            ("mcp-protocol-version", LEGACY),
        ],
        body.to_string(),
    )
    .await
}

/// Opens a handshake session: `initialize` and `notifications/initialized`.
/// Returns the session id.
pub async fn open_session(url: &str) -> String {
    open_session_on(url, LEGACY).await
}

/// [`open_session`] on `version`.
pub async fn open_session_on(url: &str, version: &str) -> String {
    let init = request(
        1,
        "initialize",
        json!({
            "protocolVersion": version,
            "capabilities": {},
            "clientInfo": {"name": "raw-test", "version": "0"},
        }),
    );
    let reply = post_raw(url, &[], init.to_string()).await;
    let result = result_of(&reply);
    assert_eq!(result["protocolVersion"], version, "{result}");
    let session = reply
        .headers
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_else(|| panic!("no Mcp-Session-Id: {reply:?}"))
        .to_owned();
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let reply = session_post(url, &session, &initialized).await;
    assert_eq!(reply.status, StatusCode::ACCEPTED, "{reply:?}");
    session
}

/// An open event stream, read event by event.
pub struct EventStream {
    pub response: reqwest::Response,
    buffer: String,
}

impl EventStream {
    pub fn new(response: reqwest::Response) -> EventStream {
        EventStream {
            response,
            buffer: String::new(),
        }
    }

    /// The next JSON-RPC message on the stream (skipping comments), or
    /// `None` when the stream ended; fails the test after `wait`.
    pub async fn next(&mut self, wait: Duration) -> Option<Value> {
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            while let Some(end) = self.buffer.find("\n\n") {
                let event: String = self.buffer.drain(..end + 2).collect();
                if let Some(message) = sse_messages(&event).into_iter().next() {
                    return Some(message);
                }
            }
            let chunk = tokio::time::timeout_at(deadline, self.response.chunk())
                .await
                .expect("no event in time")
                .expect("the stream broke");
            match chunk {
                Some(bytes) => self.buffer.push_str(&String::from_utf8_lossy(&bytes)),
                None => return None,
            }
        }
    }
}

/// A client of `url` negotiating so, within [`TIMEOUT`].
pub async fn connect(
    url: &str,
    negotiation: toolshape::client::Negotiation,
) -> toolshape::client::Client {
    tokio::time::timeout(
        TIMEOUT,
        toolshape::client::Client::builder()
            .negotiation(negotiation)
            .request_timeout(TIMEOUT)
            .connect_http(url),
    )
    .await
    .expect("connecting timed out")
    .unwrap_or_else(|e| panic!("cannot connect to {url}: {e}"))
}
