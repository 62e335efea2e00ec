//! What a running tool is handed besides its input: progress reports and
//! log messages for the caller.

use std::sync::Arc;

use serde_json::Value;
use tokio::sync::mpsc;
use toolshape_protocol::notifications::LoggingLevel;

use super::ask::AskContext;
use super::requirements::Credentials;

/// A progress report from a running tool.
#[derive(Debug, Clone, PartialEq)]
pub struct Progress {
    /// Progress so far; increases with every report.
    pub progress: f64,
    /// The total, when known.
    pub total: Option<f64>,
    /// A human-readable message.
    pub message: Option<String>,
}

/// A log message from a running tool; the server sends it to the caller as
/// `notifications/message`.
#[derive(Debug, Clone, PartialEq)]
pub struct LogMessage {
    /// Its severity.
    pub level: LoggingLevel,
    /// The name of the logger, if any.
    pub logger: Option<String>,
    /// The message: any JSON value (usually a string).
    pub data: Value,
}

/// Where a call's log messages go, and the least severe level the caller wants.
#[derive(Debug, Clone)]
struct LogSink {
    min_level: LoggingLevel,
    sender: mpsc::Sender<LogMessage>,
}

/// What a running tool (or prompt, or resource reader) is handed besides
/// its input: progress reports and log messages for the caller, and (see
/// [`ToolContext::elicit`], [`ToolContext::sample`], [`ToolContext::roots`])
/// a way to ask the client.
#[derive(Debug, Clone, Default)]
pub struct ToolContext {
    progress: Option<mpsc::Sender<Progress>>,
    log: Option<LogSink>,
    credentials: Option<Arc<Credentials>>,
    tool: Arc<str>,
    asking: Option<AskContext>,
    caller: Option<Arc<str>>,
}

impl ToolContext {
    pub(crate) fn new(
        tool: Arc<str>,
        progress: Option<mpsc::Sender<Progress>>,
        log: Option<(LoggingLevel, mpsc::Sender<LogMessage>)>,
        credentials: Option<Arc<Credentials>>,
    ) -> Self {
        ToolContext {
            progress,
            log: log.map(|(min_level, sender)| LogSink { min_level, sender }),
            credentials,
            tool,
            asking: None,
            caller: None,
        }
    }

    /// The same context, naming who calls.
    pub(crate) fn with_caller(mut self, caller: Option<Arc<str>>) -> Self {
        self.caller = caller;
        self
    }

    /// The same context, able to ask the client.
    pub(crate) fn with_asking(mut self, asking: Option<AskContext>) -> Self {
        self.asking = asking;
        self
    }

    pub(crate) fn asking(&self) -> Option<&AskContext> {
        self.asking.as_ref()
    }

    /// The name of the tool being called.
    pub fn tool_name(&self) -> &str {
        &self.tool
    }

    /// The secret `id` the caller handed over, if any.
    pub fn secret(&self, id: &str) -> Option<&str> {
        self.credentials
            .as_ref()?
            .secrets
            .get(id)
            .map(String::as_str)
    }

    /// The caller's token from the provider `id`, if any.
    pub fn authorization_token(&self, id: &str) -> Option<&str> {
        self.credentials
            .as_ref()?
            .authorization
            .get(id)
            .map(String::as_str)
    }

    /// Who is calling, as the transport tells it: `stdio` for the peer on
    /// a server's stdio, the client's IP address over HTTP (MCP and OTC),
    /// `None` in process. Not authenticated: for limits and logs, not for
    /// access decisions.
    pub fn caller(&self) -> Option<&str> {
        self.caller.as_deref()
    }

    /// The caller's user id, if it gave one.
    pub fn user_id(&self) -> Option<&str> {
        self.credentials.as_ref()?.user_id.as_deref()
    }

    /// Whether this run ended to ask the client its questions (a 2026-07-28
    /// `input_required` result): the handler's future is dropped, as for a
    /// cancelled call, but the call goes on when the client retries with
    /// its answers. Read where the handler is dropped (a guard's `Drop`).
    pub fn ended_for_input(&self) -> bool {
        self.asking
            .as_ref()
            .is_some_and(|asking| asking.asker.ended_for_input())
    }

    /// Whether the caller asked for progress reports (a gateway then asks
    /// its upstream for them).
    pub fn wants_progress(&self) -> bool {
        self.progress.is_some()
    }

    /// The least severe level of log message the caller asked for, if it
    /// asked for any (a gateway then asks its upstream for them).
    pub fn log_level(&self) -> Option<LoggingLevel> {
        self.log.as_ref().map(|sink| sink.min_level)
    }

    /// Reports progress to the caller, when the caller asked for progress.
    /// Reports are advisory: while the caller's queue is full (it reads
    /// slower than they come), new ones are dropped rather than buffered.
    pub fn report_progress(&self, progress: f64, total: Option<f64>, message: Option<String>) {
        if let Some(sender) = &self.progress {
            let _ = sender.try_send(Progress {
                progress,
                total,
                message,
            });
        }
    }

    /// Whether a message at `level` would reach the caller: the caller asked
    /// for log messages (`logging/setLevel`, or `_meta` `logLevel` on
    /// 2026-07-28) at `level` or below.
    pub fn log_enabled(&self, level: LoggingLevel) -> bool {
        self.log
            .as_ref()
            .is_some_and(|sink| level >= sink.min_level)
    }

    /// Sends a log message to the caller (`notifications/message`) when it
    /// asked for messages at `level`; otherwise drops it. Like progress, a
    /// message that finds the caller's queue full is dropped.
    pub fn log(&self, level: LoggingLevel, logger: Option<&str>, data: impl Into<Value>) {
        if let Some(sink) = &self.log
            && level >= sink.min_level
        {
            let _ = sink.sender.try_send(LogMessage {
                level,
                logger: logger.map(str::to_owned),
                data: data.into(),
            });
        }
    }
}
