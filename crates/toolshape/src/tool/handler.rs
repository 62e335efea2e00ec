//! What a tool handler returns, how it fails, and what it is handed.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde_json::Value;
use tokio::sync::mpsc;
use toolshape_protocol::ContentBlock;
use toolshape_protocol::notifications::LoggingLevel;

/// A boxed, sendable future: what an erased handler returns.
pub type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;

/// What a handler produced: structured output, content blocks, or both.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ToolOutput {
    /// The structured result, checked against the tool's `outputSchema`.
    pub structured: Option<Value>,
    /// Content blocks (text, image, audio, resource links, resources).
    pub content: Vec<ContentBlock>,
}

impl ToolOutput {
    /// Structured output only; the text block is added when the result is shaped.
    pub fn structured(value: Value) -> Self {
        ToolOutput {
            structured: Some(value),
            content: Vec::new(),
        }
    }

    /// One text block.
    pub fn text(text: impl Into<String>) -> Self {
        ToolOutput {
            structured: None,
            content: vec![ContentBlock::text(text)],
        }
    }

    /// Content blocks only.
    pub fn content(content: Vec<ContentBlock>) -> Self {
        ToolOutput {
            structured: None,
            content,
        }
    }
}

/// A tool's own failure: the caller sees an `isError: true` result with this message.
///
/// Any error converts into it with `?`, so a handler can fail with the errors it meets.
#[derive(Clone, PartialEq, Eq)]
pub struct ToolError {
    message: String,
}

impl ToolError {
    /// A tool error with this message.
    pub fn new(message: impl Into<String>) -> Self {
        ToolError {
            message: message.into(),
        }
    }

    /// The message the caller sees.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Debug for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("ToolError").field(&self.message).finish()
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl<E: std::error::Error> From<E> for ToolError {
    fn from(error: E) -> Self {
        ToolError::new(error.to_string())
    }
}

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
    sender: mpsc::UnboundedSender<LogMessage>,
}

/// What a running tool is handed besides its input.
#[derive(Debug, Clone, Default)]
pub struct ToolContext {
    progress: Option<mpsc::UnboundedSender<Progress>>,
    log: Option<LogSink>,
    tool: Arc<str>,
}

impl ToolContext {
    pub(crate) fn new(
        tool: Arc<str>,
        progress: Option<mpsc::UnboundedSender<Progress>>,
        log: Option<(LoggingLevel, mpsc::UnboundedSender<LogMessage>)>,
    ) -> Self {
        ToolContext {
            progress,
            log: log.map(|(min_level, sender)| LogSink { min_level, sender }),
            tool,
        }
    }

    /// The name of the tool being called.
    pub fn tool_name(&self) -> &str {
        &self.tool
    }

    /// Reports progress to the caller, when the caller asked for progress.
    pub fn report_progress(&self, progress: f64, total: Option<f64>, message: Option<String>) {
        if let Some(sender) = &self.progress {
            let _ = sender.send(Progress {
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
    /// asked for messages at `level`; otherwise drops it.
    pub fn log(&self, level: LoggingLevel, logger: Option<&str>, data: impl Into<Value>) {
        if let Some(sink) = &self.log
            && level >= sink.min_level
        {
            let _ = sink.sender.send(LogMessage {
                level,
                logger: logger.map(str::to_owned),
                data: data.into(),
            });
        }
    }
}

/// A tool handler with its types erased: JSON arguments in, output or error out.
pub trait ErasedHandler: Send + Sync + 'static {
    /// Runs the tool on arguments already validated against its input schema.
    fn call(
        &self,
        context: ToolContext,
        arguments: Value,
    ) -> BoxFuture<Result<ToolOutput, ToolError>>;
}

impl<F, Fut> ErasedHandler for F
where
    F: Fn(ToolContext, Value) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<ToolOutput, ToolError>> + Send + 'static,
{
    fn call(
        &self,
        context: ToolContext,
        arguments: Value,
    ) -> BoxFuture<Result<ToolOutput, ToolError>> {
        Box::pin(self(context, arguments))
    }
}
