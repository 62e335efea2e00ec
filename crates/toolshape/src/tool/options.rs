//! [`CallOptions`]: how one call runs, on either side of the wire.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{mpsc, oneshot};
use toolshape_protocol::notifications::LoggingLevel;

use super::context::{LogMessage, Progress, ToolContext};
use super::requirements::Credentials;

/// How one call runs: its time limit, its cancellation, and where its
/// progress reports and log messages go.
///
/// The same settings serve a call made through a [`ToolRegistry`](crate::ToolRegistry)
/// in process and one made by a [`Client`](crate::client::Client) over the
/// wire.
///
/// ```
/// use std::time::Duration;
/// let (progress, _reports) = tokio::sync::mpsc::channel(64);
/// let options = toolshape::CallOptions::new()
///     .timeout(Duration::from_secs(5))
///     .progress(progress);
/// assert_eq!(options.timeout, Some(Duration::from_secs(5)));
/// ```
#[derive(Debug, Default)]
#[non_exhaustive]
pub struct CallOptions {
    /// The longest the call may take (for a client: overrides its request timeout).
    pub timeout: Option<Duration>,
    /// Resolves (or is dropped) when the caller cancels the call.
    pub cancel: Option<oneshot::Receiver<()>>,
    /// Where the call's progress reports go (a client then asks the server
    /// for them). Bounded: a report that finds the channel full is dropped,
    /// so a peer that reports faster than this side reads costs no memory.
    pub progress: Option<mpsc::Sender<Progress>>,
    /// Where the handler's log messages go, with the least severe level
    /// wanted. A client passes on the server's messages about this call (on
    /// 2026-07-28 it asks for them in the request's `_meta`; before, see
    /// `Client::set_log_level`). Over stdio a message is known to be about a
    /// call only while that call is the only request in flight; over HTTP,
    /// by the stream it arrives on. Bounded like `progress`.
    pub log: Option<(LoggingLevel, mpsc::Sender<LogMessage>)>,
    /// What the caller hands the tool: tokens, secrets, its user id (in
    /// process and over OTC; MCP carries none, so `Client::call_tool_with`
    /// does not send them).
    pub credentials: Option<Credentials>,
    /// Who is calling, as the transport tells it (see `ToolContext::caller`);
    /// set by a server for its handlers, not sent by a client.
    pub caller: Option<Arc<str>>,
    /// For a gateway that relays results as received (a client's
    /// `ToolResult::take_received`): a result that can be relayed so is
    /// validated from its text, and its `structured` value is not built
    /// (`None`; the JSON is in `structured_json` and in the received result).
    /// A tool the server's current listing lacks is not called
    /// (`ClientErrorKind::Unlisted`): nothing is left to check its result by.
    pub relay: bool,
    /// For a gateway serving a call of its own client: the server's
    /// questions about this call (elicitation, sampling, roots) are asked of
    /// the client of this context, in the shape of its revision, and its
    /// answers go back (a client's call only; see [`CallOptions::relay_asks`]).
    pub relay_asks: Option<ToolContext>,
}

impl CallOptions {
    /// No time limit of its own, no cancellation, no progress, no log messages.
    pub fn new() -> Self {
        CallOptions::default()
    }

    /// Sets the time limit.
    #[must_use]
    pub fn timeout(mut self, limit: Duration) -> Self {
        self.timeout = Some(limit);
        self
    }

    /// Cancels the call when `cancel` resolves or is dropped.
    #[must_use]
    pub fn cancel_on(mut self, cancel: oneshot::Receiver<()>) -> Self {
        self.cancel = Some(cancel);
        self
    }

    /// Sends the call's progress reports to `sender`.
    #[must_use]
    pub fn progress(mut self, sender: mpsc::Sender<Progress>) -> Self {
        self.progress = Some(sender);
        self
    }

    /// Names who is calling (see `ToolContext::caller`).
    #[must_use]
    pub fn caller(mut self, caller: impl Into<Arc<str>>) -> Self {
        self.caller = Some(caller.into());
        self
    }

    /// Names the caller by its network address: its IP address, as every
    /// HTTP binding names it.
    #[must_use]
    pub fn caller_address(mut self, address: SocketAddr) -> Self {
        self.caller = Some(address_caller(address));
        self
    }

    /// Hands the tool these credentials.
    #[must_use]
    pub fn credentials(mut self, credentials: Credentials) -> Self {
        self.credentials = Some(credentials);
        self
    }

    /// Sets [`CallOptions::relay`]: the caller relays the result as received
    /// when it can, and needs no `Value` of it then.
    #[must_use]
    pub fn relaying(mut self) -> Self {
        self.relay = true;
        self
    }

    /// Relays the server's questions about this call (elicitation,
    /// sampling, roots) to the client calling `context`'s tool, and their
    /// answers back: a gateway's way of passing them through. On 2026-07-28
    /// the call's request declares `context`'s client's capabilities for
    /// them (before, the connection declared its own at the handshake); a
    /// question that client cannot take is answered with an error naming the
    /// capability. Over a connection every request shares (stdio), a
    /// question is known to be about this call only while it is the only
    /// request in flight (as for log messages); over HTTP, by the stream it
    /// arrives on; a 2026-07-28 server's questions come in the call's own
    /// result.
    #[must_use]
    pub fn relay_asks(mut self, context: ToolContext) -> Self {
        self.relay_asks = Some(context);
        self
    }

    /// Sends the handler's log messages at `level` and above to `sender`.
    #[must_use]
    pub fn log(mut self, level: LoggingLevel, sender: mpsc::Sender<LogMessage>) -> Self {
        self.log = Some((level, sender));
        self
    }
}

/// How a caller at `address` is named: its IP address (an IPv4 address
/// mapped into IPv6 as plain IPv4).
pub(crate) fn address_caller(address: SocketAddr) -> Arc<str> {
    Arc::from(address.ip().to_canonical().to_string())
}
