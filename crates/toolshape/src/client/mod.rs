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
mod batch;
mod builder;
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
mod process;
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
use toolshape_protocol::asks::{
    CreateMessageParams, CreateMessageResult, ElicitParams, ElicitResult, Root,
};
use toolshape_protocol::{ErrorObject, Implementation, Meta, ProtocolVersion};
use toolshape_schema::SchemaEngine;

pub use builder::ClientBuilder;
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
    child: Mutex<Option<process::ServerProcess>>,
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
            .and_then(process::ServerProcess::id)
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
    /// over HTTP, ends the session. On Unix the server runs in a process
    /// group of its own: once it has exited, what it left running there (a
    /// wrapper's other children) is sent SIGTERM; killed, the whole group
    /// is. A client dropped without closing kills the group too.
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
