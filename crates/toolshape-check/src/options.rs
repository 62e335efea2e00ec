//! What to check and how: the target, the call policy, the revisions, the bounds.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value};

use toolshape::client::ServerCommand;
use toolshape_protocol::ProtocolVersion;

/// The server to check.
#[derive(Debug, Clone)]
pub enum Target {
    /// An MCP server started as a child process, spoken to over stdio.
    Stdio {
        /// How to start it.
        command: ServerCommand,
        /// The command line, as shown in reports.
        display: String,
    },
    /// An MCP Streamable HTTP endpoint (`http://host:port/mcp`).
    Http(String),
    /// An OTC (Open Tool Calling) server's base URL (`http://host:port`).
    Otc(String),
}

/// Which tools are called.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CallPolicy {
    /// None: only the listing and the schemas are checked.
    None,
    /// Only tools annotated `readOnlyHint: true` (the default). OTC tools
    /// carry no such hint, so none is called.
    #[default]
    ReadOnly,
    /// Every tool: asks for it explicitly, since a tool may change things.
    All,
}

/// Which revisions are checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ProtocolChoice {
    /// The one the client negotiates (2026-07-28 discovery, else `initialize`).
    #[default]
    Auto,
    /// Each of 2025-06-18, 2025-11-25 and 2026-07-28 the server supports.
    All,
    /// Exactly this one.
    Only(ProtocolVersion),
}

impl Target {
    /// The server started by `argv` (program, then arguments), its stderr
    /// captured; `None` when `argv` is empty.
    pub fn stdio<S: AsRef<str>>(argv: &[S]) -> Option<Target> {
        let command = ServerCommand::from_argv(argv.iter().map(AsRef::as_ref))?
            .stderr(toolshape::client::StderrMode::Capture);
        let display = argv.iter().map(AsRef::as_ref).collect::<Vec<_>>().join(" ");
        Some(Target::Stdio { command, display })
    }
}

impl ProtocolChoice {
    /// The revisions `--protocol all` tries.
    pub const ALL_REVISIONS: [ProtocolVersion; 3] = [
        ProtocolVersion::V2025_06_18,
        ProtocolVersion::V2025_11_25,
        ProtocolVersion::V2026_07_28,
    ];
}

/// Where a check is: shown by a progress bar.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Progress {
    /// What is being done (`listing on 2025-11-25`, `calling add`, ...).
    pub stage: String,
    /// Steps done.
    pub done: usize,
    /// Steps planned (grows when a revision lists its tools).
    pub total: usize,
}

/// Told where a check is, as it goes.
pub type ProgressSink = Arc<dyn Fn(&Progress) + Send + Sync>;

/// How to check.
#[derive(Clone)]
#[non_exhaustive]
pub struct Options {
    /// Which tools are called.
    pub calls: CallPolicy,
    /// Which revisions are checked.
    pub protocol: ProtocolChoice,
    /// How long one call may go without an answer or a progress report.
    pub call_timeout: Duration,
    /// How long one call may take even while it reports progress.
    pub max_call_time: Duration,
    /// Arguments to call a tool with first (by tool name, or OTC id), before
    /// generated ones; values at the inputSchema's bounds are tried on them.
    pub arguments: HashMap<String, Map<String, Value>>,
    /// How long the handshake and one page of a listing may take.
    pub request_timeout: Duration,
    /// How long the whole check may take; past it, what is left is skipped.
    pub max_time: Duration,
    /// The compile time all the schemas the check compiles may take
    /// together; past it, the rest are not checked
    /// (`list-compile-over-budget`).
    pub compile_budget: Duration,
    /// Most calls with valid arguments per tool and revision.
    pub max_valid_calls: usize,
    /// Most calls with invalid arguments per tool and revision.
    pub max_invalid_calls: usize,
    /// Largest message accepted from the server, in bytes.
    pub max_message_bytes: usize,
    /// Most times a server that exited is started again, per revision.
    pub max_restarts: usize,
    /// Told where the check is.
    pub progress: Option<ProgressSink>,
}

impl std::fmt::Debug for Options {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Options")
            .field("calls", &self.calls)
            .field("protocol", &self.protocol)
            .field("call_timeout", &self.call_timeout)
            .field("max_call_time", &self.max_call_time)
            .field("arguments", &self.arguments)
            .field("request_timeout", &self.request_timeout)
            .field("max_time", &self.max_time)
            .field("compile_budget", &self.compile_budget)
            .field("max_valid_calls", &self.max_valid_calls)
            .field("max_invalid_calls", &self.max_invalid_calls)
            .field("max_message_bytes", &self.max_message_bytes)
            .field("max_restarts", &self.max_restarts)
            .finish_non_exhaustive()
    }
}

/// The longest any of the check's time limits counts: a longer one
/// (`Duration::MAX` for "no limit") would overflow the clock's arithmetic.
pub(crate) const LONGEST: Duration = Duration::from_secs(30 * 365 * 24 * 60 * 60);

impl Default for Options {
    fn default() -> Self {
        Options {
            calls: CallPolicy::default(),
            protocol: ProtocolChoice::default(),
            call_timeout: Duration::from_secs(10),
            max_call_time: Duration::from_secs(60),
            arguments: HashMap::new(),
            request_timeout: Duration::from_secs(30),
            max_time: Duration::from_secs(300),
            compile_budget: toolshape_schema::Limits::default().listing_budget,
            max_valid_calls: 3,
            max_invalid_calls: 2,
            max_message_bytes: 16 * 1024 * 1024,
            max_restarts: 3,
            progress: None,
        }
    }
}

impl Options {
    /// Tells the progress sink, if any.
    pub(crate) fn report_progress(&self, stage: impl Into<String>, done: usize, total: usize) {
        if let Some(sink) = &self.progress {
            // The stage names the server's tools: shown on one line, safely.
            let stage = stage.into();
            let stage =
                toolshape_protocol::text::one_line(&toolshape_protocol::text::excerpt(&stage, 200))
                    .into_owned();
            sink(&Progress { stage, done, total });
        }
    }
}
