//! The MCP tools client: connects to any server, negotiates a revision,
//! lists its tools and validates every structured result before handing it on.
//!
//! ```no_run
//! # async fn run() -> Result<(), toolshape::client::ClientError> {
//! use toolshape::client::{Client, ServerCommand};
//!
//! let client = Client::builder()
//!     .connect_stdio(ServerCommand::new("toolshape").arg("serve"))
//!     .await?;
//! let lines: u64 = client.call("count_lines", serde_json::json!({"path": "Cargo.toml"})).await?;
//! # Ok(()) }
//! ```

mod answer;
mod asked;
mod call;
mod error;
mod handlers;
#[cfg(feature = "client-http")]
mod http;
mod listening;
mod mirror;
mod negotiate;
mod outgoing;
mod pages;
mod peer;
mod received;
mod rounds;
mod stdio;
mod surface;
mod tools;
mod url_visits;

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use serde_json::Value;
use tokio::process::Child;
use toolshape_protocol::asks::{
    CreateMessageParams, CreateMessageResult, ElicitParams, ElicitResult, Root,
};
use toolshape_protocol::{ErrorObject, Implementation, Meta, ProtocolVersion};
use toolshape_schema::SchemaEngine;

pub use call::ToolResult;
pub use error::{ClientError, ClientErrorKind, TransportError};
#[cfg(feature = "client-http")]
pub use http::{AuthChallenge, AuthFuture, AuthRequest, HttpAuth};
pub use listening::Listening;
pub use negotiate::{Negotiated, Negotiation};
pub use pages::ListingBound;
pub use received::ReceivedResult;
/// The types [`ClientBuilder::http_headers`] and [`AuthRequest`] take
/// (reqwest's, re-exported so that a caller needs no reqwest of its own).
#[cfg(feature = "client-http")]
pub use reqwest::{Url, header::HeaderMap};
pub use stdio::{ServerCommand, StderrMode};
pub use tools::unwrapped_output_schema;

use handlers::Handlers;
use outgoing::Route;
use peer::Peer;

/// Asked before each call with the tool's name and arguments; `false` declines it
/// (the human-in-the-loop confirmation the spec asks clients to offer).
pub type BeforeCall =
    Arc<dyn Fn(&str, &Value) -> Pin<Box<dyn Future<Output = bool> + Send>> + Send + Sync>;

/// Shown the bytes of every message the server sends (see [`ClientBuilder::on_message`]).
pub type MessageObserver = Arc<dyn Fn(&[u8]) + Send + Sync>;

#[derive(Clone, Default)]
struct Hooks {
    before_call: Option<BeforeCall>,
    on_message: Option<MessageObserver>,
}

/// Client settings.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ClientOptions {
    /// How long a request waits for its answer.
    pub request_timeout: Duration,
    /// How long the `server/discover` probe waits before falling back to
    /// `initialize`; never longer than `request_timeout`.
    pub probe_timeout: Duration,
    /// Longest message accepted from the server, in bytes.
    pub max_message_bytes: usize,
}

impl Default for ClientOptions {
    fn default() -> Self {
        ClientOptions {
            request_timeout: Duration::from_secs(60),
            probe_timeout: Duration::from_secs(10),
            max_message_bytes: 64 * 1024 * 1024,
        }
    }
}

/// A connection to one MCP server. Cheap to clone; clones share the connection.
#[derive(Clone)]
pub struct Client {
    inner: Arc<Inner>,
}

struct Inner {
    peer: Arc<Peer>,
    negotiated: Negotiated,
    engine: SchemaEngine,
    options: ClientOptions,
    hooks: Hooks,
    tools: tokio::sync::Mutex<Option<Arc<tools::Listing>>>,
    child: Mutex<Option<Child>>,
    stderr: stdio::StderrTail,
    /// What every request's `_meta` starts with (2026-07-28: the revision,
    /// this client and its capabilities), worked out once.
    request_meta: Option<Meta>,
    /// The same for a request whose questions are relayed to another
    /// client: none of the capabilities to answer them declared (that
    /// client's are, per request).
    relay_meta: Option<Meta>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("negotiated", &self.inner.negotiated)
            .finish_non_exhaustive()
    }
}

/// How long a failed connection waits for the server's stderr to end.
const STDERR_DRAIN: Duration = Duration::from_millis(500);

impl Client {
    /// Starts configuring a client.
    pub fn builder() -> ClientBuilder {
        ClientBuilder::default()
    }

    /// What was negotiated with the server.
    pub fn negotiated(&self) -> &Negotiated {
        &self.inner.negotiated
    }

    /// The revision in use.
    pub fn protocol_version(&self) -> ProtocolVersion {
        self.inner.negotiated.version
    }

    /// Who the server says it is.
    pub fn server_info(&self) -> Option<&Implementation> {
        self.inner.negotiated.server_info.as_ref()
    }

    /// The process id of the server, when this client started it.
    pub fn server_pid(&self) -> Option<u32> {
        self.inner
            .child
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_ref()
            .and_then(Child::id)
    }

    /// The last lines the server wrote to stderr, when it is captured.
    pub fn stderr_tail(&self) -> Vec<String> {
        self.inner
            .stderr
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .cloned()
            .collect()
    }

    /// How many request ids this client has handed out: its requests are
    /// numbered 1 to this (each JSON-RPC `id` a number). For auditing a
    /// server's answers (`toolshape check`): the requests made between two
    /// readings have the ids past the first up to the second, and an answer
    /// whose id is past the second answers nothing this client sent.
    pub fn requests_issued(&self) -> i64 {
        self.inner.peer.ids_issued()
    }

    /// Whether the connection is closed (over stdio: the server exited or
    /// closed its output). A closed client fails every call; connect anew.
    pub fn is_closed(&self) -> bool {
        *self.inner.peer.closed_signal.borrow()
    }

    /// Resolves when the connection closes (at once if it is closed).
    pub async fn closed(&self) {
        let mut closed = self.inner.peer.closed_signal.subscribe();
        let _ = closed.wait_for(|closed| *closed).await;
    }

    /// A watch whose value counts the server's
    /// `notifications/tools/list_changed`: `changed().await` resolves at the
    /// next one (then [`Client::list_tools`] lists anew). For mirroring a
    /// server's tools, as `toolshape proxy` does.
    pub fn tool_list_changes(&self) -> tokio::sync::watch::Receiver<u64> {
        self.inner.peer.tool_list_changes.subscribe()
    }

    /// Tells the server that this client's roots changed
    /// (`notifications/roots/list_changed`), so that it asks for them
    /// again. Sent only where the handshake declared roots that may change
    /// (a roots handler, [`ClientBuilder::on_roots`]); 2026-07-28 has no
    /// such notification (a server asks for the roots within a request).
    /// `Ok(true)`: sent; `Ok(false)`: nothing to send.
    pub fn notify_roots_changed(&self) -> Result<bool, ClientError> {
        let declared = self.inner.peer.handlers.announces_roots_changes();
        if self.inner.negotiated.version.is_stateless() || !declared {
            return Ok(false);
        }
        self.inner.peer.notify(
            toolshape_protocol::methods::ROOTS_LIST_CHANGED,
            &Value::Object(serde_json::Map::new()),
            self.route(),
        )?;
        Ok(true)
    }

    /// A watch whose value counts the new sessions this client opened in
    /// place of ones the server ended (Streamable HTTP handshake sessions):
    /// resource subscriptions made on the old session must be made again.
    /// Each also counts as a change of every list.
    pub fn session_renewals(&self) -> tokio::sync::watch::Receiver<u64> {
        self.inner.peer.session_renewals.subscribe()
    }

    /// The same for `notifications/resources/list_changed`.
    pub fn resource_list_changes(&self) -> tokio::sync::watch::Receiver<u64> {
        self.inner.peer.resource_list_changes.subscribe()
    }

    /// The same for `notifications/prompts/list_changed`.
    pub fn prompt_list_changes(&self) -> tokio::sync::watch::Receiver<u64> {
        self.inner.peer.prompt_list_changes.subscribe()
    }

    /// The URIs of the server's `notifications/resources/updated` from now
    /// on (after [`Client::subscribe`], or a [`Client::listen`] naming
    /// them). A watcher more than 256 behind misses the oldest.
    pub fn resource_updates(&self) -> tokio::sync::broadcast::Receiver<String> {
        self.inner.peer.resource_updates.subscribe()
    }

    /// The `elicitationId`s of the server's
    /// `notifications/elicitation/complete` from now on (2025-11-25 only):
    /// the out-of-band interaction of a URL-mode elicitation the server
    /// sent this client (asked, or in a `-32042` error; the last 64 sent
    /// are remembered) is over, and a request it held up may be retried.
    /// Each id comes once; a completion of an id not sent, or already
    /// complete, is ignored. A watcher more than 256 behind misses the
    /// oldest.
    pub fn elicitation_completions(&self) -> tokio::sync::broadcast::Receiver<String> {
        self.inner.peer.url_visits.watch()
    }

    /// Closes the connection: over stdio, closes the server's input and waits
    /// up to `grace` for it to exit, then kills it, returning its exit status;
    /// over HTTP, ends the session.
    pub async fn close(&self, grace: Duration) -> Option<std::process::ExitStatus> {
        self.inner.peer.close_output().await;
        let child = self
            .inner
            .child
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        let mut child = child?;
        match tokio::time::timeout(grace, child.wait()).await {
            Ok(status) => status.ok(),
            Err(_) => {
                let _ = child.kill().await;
                child.wait().await.ok()
            }
        }
    }

    /// How a request goes: under the negotiated revision.
    fn route(&self) -> Route {
        Route::under(Some(self.inner.negotiated.version))
    }

    /// The `_meta` a request carries: 2026-07-28 puts the revision and the
    /// client's capabilities in every request.
    fn request_meta(&self) -> Option<Meta> {
        self.inner.request_meta.clone()
    }
}

/// Configures and connects a [`Client`].
#[derive(Clone)]
pub struct ClientBuilder {
    negotiation: Negotiation,
    client_info: Implementation,
    engine: Option<SchemaEngine>,
    options: ClientOptions,
    hooks: Hooks,
    handlers: Handlers,
    #[cfg(feature = "client-http")]
    http: http::HttpExtras,
}

impl std::fmt::Debug for ClientBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientBuilder")
            .field("negotiation", &self.negotiation)
            .field("client_info", &self.client_info)
            .field("options", &self.options)
            .field("before_call", &self.hooks.before_call.is_some())
            .field("handlers", &self.handlers)
            .field("on_message", &self.hooks.on_message.is_some())
            .finish_non_exhaustive()
    }
}

impl Default for ClientBuilder {
    fn default() -> Self {
        ClientBuilder {
            negotiation: Negotiation::Auto,
            client_info: Implementation::new("toolshape", env!("CARGO_PKG_VERSION")),
            engine: None,
            options: ClientOptions::default(),
            hooks: Hooks::default(),
            handlers: Handlers::default(),
            #[cfg(feature = "client-http")]
            http: http::HttpExtras::default(),
        }
    }
}

impl ClientBuilder {
    /// Sets how the revision is chosen (automatic by default).
    #[must_use]
    pub fn negotiation(mut self, negotiation: Negotiation) -> Self {
        self.negotiation = negotiation;
        self
    }

    /// Sets how the client names itself.
    #[must_use]
    pub fn client_info(mut self, name: impl Into<String>, version: impl Into<String>) -> Self {
        self.client_info = Implementation::new(name, version);
        self
    }

    /// Sets the options, all of them (a `request_timeout` set before is
    /// replaced by theirs: set it after, or in them).
    #[must_use]
    pub fn options(mut self, options: ClientOptions) -> Self {
        self.options = options;
        self
    }

    /// Sets the request timeout (in the options: call it after
    /// [`ClientBuilder::options`]).
    #[must_use]
    pub fn request_timeout(mut self, timeout: Duration) -> Self {
        self.options.request_timeout = timeout;
        self
    }

    /// Sets the schema engine output schemas compile with (by default an
    /// untrusted engine: nothing fetched, bounds on, a time budget).
    #[must_use]
    pub fn engine(mut self, engine: SchemaEngine) -> Self {
        self.engine = Some(engine);
        self
    }

    /// Answers the server's elicitations (questions for the user) with
    /// `handler`, and declares the `elicitation` capability (form mode;
    /// `url_mode` adds URL mode).
    #[must_use]
    pub fn on_elicit<F, Fut>(mut self, url_mode: bool, handler: F) -> Self
    where
        F: Fn(ElicitParams) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ElicitResult, ErrorObject>> + Send + 'static,
    {
        self.handlers.set_elicit(url_mode, handler);
        self
    }

    /// Answers the server's sampling requests (questions for the model) with
    /// `handler`, and declares the `sampling` capability.
    #[must_use]
    pub fn on_sample<F, Fut>(mut self, handler: F) -> Self
    where
        F: Fn(CreateMessageParams) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<CreateMessageResult, ErrorObject>> + Send + 'static,
    {
        self.handlers.set_sample(handler);
        self
    }

    /// Offers these roots to the server, and declares the `roots` capability.
    #[must_use]
    pub fn roots(mut self, roots: Vec<Root>) -> Self {
        self.handlers.set_roots(roots);
        self
    }

    /// Answers the server's `roots/list` with `handler` (the roots as they
    /// are when asked), and declares the `roots` capability.
    #[must_use]
    pub fn on_roots<F, Fut>(mut self, handler: F) -> Self
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Vec<Root>, ErrorObject>> + Send + 'static,
    {
        self.handlers.set_roots_with(handler);
        self
    }

    /// Answers the server's `roots/list` with this client's own roots
    /// ([`roots`](Self::roots) or [`on_roots`](Self::on_roots)) also about a
    /// call whose questions are relayed to another client
    /// ([`CallOptions::relay_asks`](crate::CallOptions::relay_asks)), and
    /// declares those roots on it (2026-07-28) rather than the caller's: for
    /// a gateway that decides what the servers behind it may see, whatever
    /// its callers offer. Without a roots handler it changes nothing.
    #[must_use]
    pub fn keep_roots(mut self) -> Self {
        self.handlers.keep_roots();
        self
    }

    /// Declares the roots of a handler ([`on_roots`](Self::on_roots)) without
    /// `listChanged`: for a client that never tells the server of a change
    /// ([`Client::notify_roots_changed`] then sends nothing), such as a
    /// gateway whose roots are each caller's.
    #[must_use]
    pub fn unannounced_roots_changes(mut self) -> Self {
        self.handlers.tell_no_roots_changes();
        self
    }

    /// Asks `confirm` before every call; a `false` declines the call.
    #[must_use]
    pub fn before_call<F, Fut>(mut self, confirm: F) -> Self
    where
        F: Fn(&str, &Value) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = bool> + Send + 'static,
    {
        self.hooks.before_call = Some(Arc::new(move |name, arguments| {
            Box::pin(confirm(name, arguments))
        }));
        self
    }

    /// Authorizes every HTTP request with `auth` (an OAuth client, a static
    /// token...), which also answers the server's 401 and 403 challenges.
    #[cfg(feature = "client-http")]
    #[must_use]
    pub fn http_auth(mut self, auth: Arc<dyn HttpAuth>) -> Self {
        self.http.auth = Some(auth);
        self
    }

    /// Sends `headers` with every HTTP request: the fixed credential a
    /// server may want instead of OAuth (an API key header, a static
    /// `Authorization: Bearer ...`), or any header a gateway in the way
    /// needs. Their values are marked sensitive (left out of logs and
    /// debug output). The headers the transport sets itself (`Content-Type`,
    /// `Accept`, `Last-Event-ID`, every `Mcp-*` header,
    /// `MCP-Protocol-Version`, the hop-by-hop ones) cannot be given so:
    /// connecting fails naming the header, as it does for a name given
    /// twice. An [`http_auth`](Self::http_auth) hook's headers replace
    /// these where both set one. With such headers a redirect is followed
    /// only within the endpoint's origin (another would get the key).
    #[cfg(feature = "client-http")]
    #[must_use]
    pub fn http_headers(mut self, headers: reqwest::header::HeaderMap) -> Self {
        self.http.headers = headers;
        self
    }

    /// Shows `observe` the bytes of every message the server sends, as
    /// received and before the client reads them, from the handshake on:
    /// one JSON-RPC message (a line over stdio, a body or an SSE event's
    /// data over HTTP) per call, even when it is not valid JSON. A message
    /// over [`ClientOptions::max_message_bytes`] is not shown (the request it
    /// answers fails). For auditing a server's wire output (`toolshape
    /// check`); it runs on the reader task, so it must return quickly.
    #[must_use]
    pub fn on_message<F>(mut self, observe: F) -> Self
    where
        F: Fn(&[u8]) + Send + Sync + 'static,
    {
        self.hooks.on_message = Some(Arc::new(observe));
        self
    }

    /// Starts the server as a child process and connects over its stdin and stdout.
    pub async fn connect_stdio(self, command: ServerCommand) -> Result<Client, ClientError> {
        let transport = stdio::spawn(
            &command,
            self.options.max_message_bytes,
            self.handlers.clone(),
            self.hooks.on_message.clone(),
        )?;
        self.finish(
            transport.peer,
            Some(transport.child),
            transport.stderr,
            transport.stderr_reading,
        )
        .await
    }

    /// Connects to a server over byte streams of the caller's: JSON-RPC
    /// messages, one per line, written to `writer` and read from `reader`,
    /// as over stdio (a socket, an SSH channel, `tokio::io::duplex` to a
    /// [`Server::serve`](crate::Server::serve) in the same process). The
    /// connection ends when `reader` does, or on [`Client::close`].
    pub async fn connect<R, W>(self, reader: R, writer: W) -> Result<Client, ClientError>
    where
        R: tokio::io::AsyncRead + Unpin + Send + 'static,
        W: tokio::io::AsyncWrite + Unpin + Send + 'static,
    {
        let peer = stdio::over_streams(
            reader,
            writer,
            self.options.max_message_bytes,
            self.handlers.clone(),
            self.hooks.on_message.clone(),
        );
        self.finish(peer, None, stdio::StderrTail::default(), None)
            .await
    }

    /// Connects to an MCP endpoint over Streamable HTTP (`http://host:port/mcp`).
    #[cfg(feature = "client-http")]
    pub async fn connect_http(self, url: &str) -> Result<Client, ClientError> {
        let parsed = reqwest::Url::parse(url).map_err(|e| TransportError::Url {
            url: toolshape_protocol::text::excerpt(url, 200),
            reason: e.to_string(),
        })?;
        let peer = http::connect(
            parsed,
            self.options.max_message_bytes,
            self.http.clone(),
            self.handlers.clone(),
            self.hooks.on_message.clone(),
        )?;
        self.finish(peer, None, stdio::StderrTail::default(), None)
            .await
    }

    async fn finish(
        self,
        peer: Arc<Peer>,
        child: Option<Child>,
        stderr: stdio::StderrTail,
        stderr_reading: Option<tokio::task::JoinHandle<()>>,
    ) -> Result<Client, ClientError> {
        let negotiated = negotiate::negotiate(
            &peer,
            self.negotiation,
            &self.client_info,
            self.options.request_timeout,
            self.options.probe_timeout.min(self.options.request_timeout),
        )
        .await;
        let negotiated = match negotiated {
            Ok(negotiated) => negotiated,
            Err(error) => {
                peer.close_output().await;
                let mut status = None;
                if let Some(mut child) = child {
                    // A server whose output ended is exiting: how it did
                    // says why (a moment's wait); one still running is
                    // stopped.
                    if peer.is_closed() {
                        status = tokio::time::timeout(STDERR_DRAIN, child.wait())
                            .await
                            .ok()
                            .and_then(Result::ok);
                    }
                    let _ = child.kill().await;
                }
                // What the server said before it failed, once its stderr
                // has been read to its end (a moment: the child is gone).
                if let Some(reading) = stderr_reading {
                    let _ = tokio::time::timeout(STDERR_DRAIN, reading).await;
                }
                let tail: Vec<String> = stderr
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .iter()
                    .cloned()
                    .collect();
                return Err(error.with_server_end(tail, status));
            }
        };
        tracing::debug!(version = %negotiated.version, server = ?negotiated.server_info, "connected");
        let stateless = negotiated.version.is_stateless();
        let request_meta = stateless
            .then(|| negotiate::modern_meta(&self.client_info, &peer.handlers.capabilities()));
        let relay_meta = stateless.then(|| {
            let mut own = peer.handlers.capabilities();
            (own.elicitation, own.sampling) = (None, None);
            if !peer.handlers.keeps_roots() {
                own.roots = None;
            }
            negotiate::modern_meta(&self.client_info, &own)
        });
        Ok(Client {
            inner: Arc::new(Inner {
                peer,
                negotiated,
                engine: self.engine.unwrap_or_default(),
                options: self.options,
                hooks: self.hooks,
                tools: tokio::sync::Mutex::new(None),
                child: Mutex::new(child),
                stderr,
                request_meta,
                relay_meta,
            }),
        })
    }
}
