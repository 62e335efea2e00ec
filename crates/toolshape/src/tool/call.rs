//! Calling a tool: validate the arguments, run the handler (bounded in time,
//! cancellable, panics contained), validate the output.

use std::time::Duration;

use serde_json::{Map, Value};
use tokio::sync::{mpsc, oneshot};
use toolshape_schema::{ValidationError, Violation};

use toolshape_protocol::notifications::LoggingLevel;

use super::handler::{BoxFuture, LogMessage, Progress, ToolContext, ToolError, ToolOutput};
use super::registry::ToolRegistry;

/// How one call runs.
#[derive(Debug, Default)]
pub struct CallOptions {
    /// The longest the handler may run; past it the call fails with [`ToolFailure::TimedOut`].
    pub timeout: Option<Duration>,
    /// Resolves (or is dropped) when the caller cancels the call.
    pub cancel: Option<oneshot::Receiver<()>>,
    /// Where the handler's progress reports go.
    pub progress: Option<mpsc::UnboundedSender<Progress>>,
    /// Where the handler's log messages go, with the least severe level wanted.
    pub log: Option<(LoggingLevel, mpsc::UnboundedSender<LogMessage>)>,
}

/// How a call ended.
#[derive(Debug)]
pub enum CallOutcome {
    /// The tool ran and its output matched its schema.
    Success(ToolOutput),
    /// The call failed in a way the caller sees as a tool error (`isError: true`).
    Failed(ToolFailure),
    /// The caller cancelled it; nothing is to be sent back.
    Cancelled,
}

/// Why a call failed.
#[derive(Debug)]
#[non_exhaustive]
pub enum ToolFailure {
    /// The arguments do not match the input schema.
    InvalidArguments(Vec<Violation>),
    /// The arguments could not be checked (too deep, or over the validation budget).
    UncheckableArguments(ValidationError),
    /// The tool reported an error.
    Tool(ToolError),
    /// The tool's output does not match its output schema; it was not sent.
    InvalidOutput(ValidationError),
    /// The tool panicked.
    Panicked,
    /// The tool ran past its time limit and was stopped.
    TimedOut(Duration),
}

impl ToolFailure {
    /// The message the caller sees, written for a model to act on.
    pub fn message(&self, tool: &str) -> String {
        match self {
            ToolFailure::InvalidArguments(violations) => {
                let list: Vec<String> = violations.iter().map(ToString::to_string).collect();
                format!("Invalid arguments for tool {tool}: {}", list.join("; "))
            }
            ToolFailure::UncheckableArguments(error) => {
                format!("Invalid arguments for tool {tool}: {error}")
            }
            ToolFailure::Tool(error) => error.to_string(),
            ToolFailure::InvalidOutput(_) => {
                format!(
                    "Tool {tool} produced output that does not match its output schema; it was withheld"
                )
            }
            ToolFailure::Panicked => format!("Tool {tool} failed unexpectedly (it panicked)"),
            ToolFailure::TimedOut(limit) => {
                format!("Tool {tool} timed out after {} ms", limit.as_millis())
            }
        }
    }
}

/// A handler that panicked.
struct Panicked;

/// Polls a handler, turning a panic into [`Panicked`]; it is not polled again after.
struct CatchPanic(BoxFuture<Result<ToolOutput, ToolError>>);

impl std::future::Future for CatchPanic {
    type Output = Result<Result<ToolOutput, ToolError>, Panicked>;

    fn poll(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Self::Output> {
        let polled =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.0.as_mut().poll(cx)));
        match polled {
            Ok(std::task::Poll::Ready(output)) => std::task::Poll::Ready(Ok(output)),
            Ok(std::task::Poll::Pending) => std::task::Poll::Pending,
            Err(_) => std::task::Poll::Ready(Err(Panicked)),
        }
    }
}

/// The name of a tool that is not registered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("Unknown tool: {0}")]
pub struct UnknownTool(pub String);

impl ToolRegistry {
    /// Calls the tool `name` with `arguments` (absent means `{}`).
    pub async fn call(
        &self,
        name: &str,
        arguments: Option<Map<String, Value>>,
        options: CallOptions,
    ) -> Result<CallOutcome, UnknownTool> {
        let tool = self
            .get(name)
            .ok_or_else(|| UnknownTool(crate::text::excerpt(name, 100)))?;
        let arguments = Value::Object(arguments.unwrap_or_default());

        if let Err(error) = tool.input.validate(&arguments) {
            let failure = match error.violations() {
                [] => ToolFailure::UncheckableArguments(error),
                violations => ToolFailure::InvalidArguments(violations.to_vec()),
            };
            return Ok(CallOutcome::Failed(failure));
        }

        let context = ToolContext::new(tool.name.clone(), options.progress, options.log);
        // The handler runs within this call: dropping the call (its caller went
        // away) drops the handler too, and a panic is caught where it happens.
        let mut task = CatchPanic(tool.handler.call(context, arguments));
        let cancelled = async {
            match options.cancel {
                // Either a cancel or the canceller going away ends the call.
                Some(cancel) => {
                    let _ = cancel.await;
                }
                None => std::future::pending().await,
            }
        };
        let deadline = async {
            match options.timeout {
                Some(limit) => tokio::time::sleep(limit).await,
                None => std::future::pending().await,
            }
        };
        let joined = tokio::select! {
            joined = &mut task => joined,
            () = cancelled => return Ok(CallOutcome::Cancelled),
            () = deadline => {
                let limit = options.timeout.unwrap_or_default();
                tracing::warn!(tool = %tool.name, limit_ms = limit.as_millis(), "tool timed out");
                return Ok(CallOutcome::Failed(ToolFailure::TimedOut(limit)));
            }
        };
        let output = match joined {
            Ok(Ok(output)) => output,
            Ok(Err(error)) => return Ok(CallOutcome::Failed(ToolFailure::Tool(error))),
            Err(Panicked) => {
                tracing::error!(tool = %tool.name, "tool handler panicked");
                return Ok(CallOutcome::Failed(ToolFailure::Panicked));
            }
        };

        if let Some(schema) = &tool.output {
            let checked = match &output.structured {
                Some(value) => schema.validate(value),
                None => Err(toolshape_schema::ValidationErrorKind::Mismatch {
                    violations: vec![Violation {
                        instance_path: String::new(),
                        keyword: "outputSchema".into(),
                        schema_path: String::new(),
                        message:
                            "the tool declares an outputSchema but returned no structured content"
                                .into(),
                    }],
                    truncated: false,
                }
                .into()),
            };
            if let Err(error) = checked {
                tracing::error!(tool = %tool.name, %error, "tool output does not match its outputSchema; withheld");
                return Ok(CallOutcome::Failed(ToolFailure::InvalidOutput(error)));
            }
        }
        Ok(CallOutcome::Success(output))
    }
}
