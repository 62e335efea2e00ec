//! How a proxy treats its upstream's tools: what an invalid output becomes,
//! which tools it shows, how long calls may take, what it records.

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Duration;

use toolshape::ConnectedClient;
use toolshape::protocol::LoggingLevel;
use toolshape::protocol::asks::Root;

use crate::filter::ToolFilter;
use crate::rate::RateLimit;

/// What the client gets when an upstream tool's `structuredContent` fails
/// (or is missing from) the tool's `outputSchema`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OnInvalid {
    /// An `isError` result naming the violations; the output is withheld.
    #[default]
    Error,
    /// The content blocks without `structuredContent`.
    Strip,
    /// The result as the upstream sent it; the violation is only logged.
    Pass,
}

impl std::str::FromStr for OnInvalid {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text {
            "error" => Ok(OnInvalid::Error),
            "strip" => Ok(OnInvalid::Strip),
            "pass" => Ok(OnInvalid::Pass),
            other => Err(format!("{other:?} is not one of error, strip, pass")),
        }
    }
}

/// What happens to an upstream tool whose schema cannot be used (it does not
/// compile, fetches a remote `$ref`, or breaks a bound).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BrokenTools {
    /// The tool is not listed.
    #[default]
    Hide,
    /// The tool is listed with the problem in its description, and every
    /// call of it is an `isError` result naming the problem.
    List,
}

impl std::str::FromStr for BrokenTools {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text {
            "hide" => Ok(BrokenTools::Hide),
            "list" => Ok(BrokenTools::List),
            other => Err(format!("{other:?} is not one of hide, list")),
        }
    }
}

/// Where the audit log goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AuditTarget {
    /// Standard error (never standard output: that may be the stdio front).
    Stderr,
    /// A file, appended to.
    File(PathBuf),
}

/// A proxy's settings; every field has a default.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ProxyOptions {
    /// What an invalid output becomes.
    pub on_invalid: OnInvalid,
    /// What a tool with an unusable schema becomes.
    pub broken_tools: BrokenTools,
    /// Which upstream tools are shown.
    pub filter: ToolFilter,
    /// The longest one upstream call may take, unless `tool_timeouts` says otherwise.
    pub call_timeout: Duration,
    /// Per-tool limits on one upstream call.
    pub tool_timeouts: HashMap<String, Duration>,
    /// The compile time the schemas of one listing of the upstream's tools
    /// may take together (default 30 s): past it, the tools whose schemas
    /// are not compiled yet are unusable (hidden or listed, as
    /// `broken_tools` says) until later listings compile them: the proxy
    /// lists again a pause later (as long as registering took, at least
    /// 1 s), while each such listing leaves fewer out. Each schema is
    /// bounded on its own too (`toolshape_schema::Limits`).
    pub compile_budget: Duration,
    /// Most upstream calls running at once, over all clients (`None`: no limit
    /// besides each connection's own).
    pub max_concurrent: Option<usize>,
    /// How many calls each client may make (`None`: no limit). A client is
    /// who the front says calls: its IP address over HTTP and OTC; the stdio
    /// front has one. A call over the limit is an error with a retry hint;
    /// the upstream never sees it.
    pub rate_limit: Option<RateLimit>,
    /// Upstream connections (child processes, or HTTP clients) calls are spread over.
    pub upstreams: usize,
    /// Where the audit log goes (`None`: no audit log).
    pub audit: Option<AuditTarget>,
    /// Whether audit records carry the call's arguments (off: only their size).
    pub audit_arguments: bool,
    /// The toolkit the tools belong to over OTC.
    pub toolkit: Option<String>,
    /// The version the tools have over OTC.
    pub version: Option<String>,
    /// The level the proxy asks a handshake-revision upstream to log at
    /// (`logging/setLevel`, when it declares `logging`); `None` asks nothing.
    /// Messages about a call go to its caller (at the caller's own level);
    /// the others to the proxy's log. 2026-07-28 upstreams are asked per call.
    pub upstream_log_level: Option<LoggingLevel>,
    /// Whether the upstream's questions (elicitation, sampling, roots) are
    /// relayed to the client each is about (default). When `false`, the
    /// proxy declares none of the capabilities to answer them, so the
    /// upstream asks nothing (or takes its own fallback).
    pub relay_asks: bool,
    /// The roots the proxy offers the upstream itself, when set: its
    /// `roots/list` is answered with these, in a call or outside one, and
    /// never relayed to a client (`None`, the default: a call's roots
    /// question is relayed with the others, and one outside a call is
    /// refused). For a server that works in the folders its client names
    /// (the official filesystem server asks at start-up): the operator
    /// decides what it may see, whatever the proxy's clients offer.
    pub roots: Option<Vec<Root>>,
    /// The proxy's one client, when it has only one (its stdio front alone;
    /// give the same handle to `ServerBuilder::connected_client`): the
    /// upstream's questions outside any call (the filesystem server asks
    /// for the roots right after its handshake) go to it, once it has
    /// finished its own handshake (waited for up to 30 s: the upstream
    /// starts first). `None` (the default, and with several clients): they
    /// are refused, no client being the one they are about.
    pub sole_client: Option<ConnectedClient>,
}

impl Default for ProxyOptions {
    fn default() -> Self {
        ProxyOptions {
            on_invalid: OnInvalid::default(),
            broken_tools: BrokenTools::default(),
            filter: ToolFilter::default(),
            call_timeout: Duration::from_secs(60),
            tool_timeouts: HashMap::new(),
            compile_budget: toolshape::schema::Limits::default().listing_budget,
            max_concurrent: None,
            rate_limit: None,
            upstreams: 1,
            audit: None,
            audit_arguments: false,
            toolkit: None,
            version: None,
            upstream_log_level: Some(LoggingLevel::Info),
            relay_asks: true,
            roots: None,
            sole_client: None,
        }
    }
}

impl ProxyOptions {
    /// The limit on one upstream call of `tool`.
    pub(crate) fn timeout_for(&self, tool: &str) -> Duration {
        self.tool_timeouts
            .get(tool)
            .copied()
            .unwrap_or(self.call_timeout)
    }

    /// The longest any call may take: what the serving side allows a call.
    pub fn longest_call(&self) -> Duration {
        self.tool_timeouts
            .values()
            .copied()
            .fold(self.call_timeout, Duration::max)
    }
}
