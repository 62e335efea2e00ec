//! Running a call: validate the arguments, run the handler (bounded in time,
//! cancellable, panics contained), validate the output. The call holds its
//! tool from start to end, so a change to the registry never disturbs it.

use std::time::Duration;

use serde_json::{Map, Value};
use toolshape_schema::{ValidationError, ValidationErrorKind, Violation};

use std::sync::Arc;

use super::ask::AskContext;
use super::context::ToolContext;
use super::error::ToolError;
use super::handler::ToolOutput;
use super::options::CallOptions;
use super::registered::RegisteredTool;
use super::registry::ToolRegistry;
use super::requirements::MissingRequirements;
use super::round::Round;
use super::running::{Bounds, Ran, drive};

/// How a call ended.
#[derive(Debug)]
#[non_exhaustive]
pub enum CallOutcome {
    /// The tool ran and its output matched its schema.
    Success(ToolOutput),
    /// The call failed in a way the caller sees as a tool error (`isError: true`).
    Failed(ToolFailure),
    /// The caller cancelled it; nothing is to be sent back.
    Cancelled,
    /// The tool asked the client something (2026-07-28): the call ends here
    /// with these questions, by key, and runs again when the client retries
    /// with the answers. Only a server that speaks 2026-07-28 gets this.
    InputRequired(Vec<(String, toolshape_protocol::asks::Ask)>),
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
    /// The tool panicked; the panic is in the server's log under this incident id.
    Panicked(String),
    /// The tool ran past its time limit and was stopped.
    TimedOut(Duration),
    /// The call lacks credentials the tool requires; it did not run.
    MissingRequirements(MissingRequirements),
}

impl ToolFailure {
    /// The first error of type `E` in the chain of causes of a handler's
    /// error (the handler returned it as `ToolError::from_error`, or as a
    /// source), by which it asked for a particular answer.
    fn cause<E: std::error::Error + 'static>(&self) -> Option<&E> {
        let ToolFailure::Tool(error) = self else {
            return None;
        };
        let mut source = std::error::Error::source(error);
        while let Some(cause) = source {
            if let Some(found) = cause.downcast_ref::<E>() {
                return Some(found);
            }
            source = cause.source();
        }
        None
    }

    /// The URL-mode elicitations a handler said must be completed first,
    /// when it failed with [`UrlElicitationRequired`](super::UrlElicitationRequired).
    pub(crate) fn url_elicitation_required(&self) -> Option<&super::UrlElicitationRequired> {
        self.cause()
    }

    /// The URI a resource reader said names nothing, when it failed with
    /// [`ResourceNotFound`](crate::resource::ResourceNotFound).
    pub(crate) fn resource_not_found(&self) -> Option<&str> {
        self.cause::<crate::resource::ResourceNotFound>()
            .map(|missing| missing.uri.as_str())
    }

    /// What a prompt's renderer said of its arguments, when it failed with
    /// [`InvalidArguments`](crate::prompt::InvalidArguments).
    pub(crate) fn invalid_arguments(&self) -> Option<&str> {
        self.cause::<crate::prompt::InvalidArguments>()
            .map(|invalid| invalid.message.as_str())
    }

    /// When the tool failed because the client lacks a capability it needed
    /// (it asked the client something the client cannot answer): the
    /// capabilities that would have allowed it.
    pub fn missing_capability(&self) -> Option<&toolshape_protocol::ClientCapabilities> {
        match self.cause::<super::AskError>()? {
            super::AskError::MissingCapability { required, .. } => Some(required),
            _ => None,
        }
    }

    /// The message the caller sees, written for a model to act on. Nothing
    /// internal (a panic's message, an output that was withheld) is in it.
    pub fn message(&self, tool: &str) -> String {
        match self {
            ToolFailure::InvalidArguments(violations) => {
                let list: Vec<String> = violations.iter().map(ToString::to_string).collect();
                format!("Invalid arguments for tool {tool}: {}", list.join("; "))
            }
            ToolFailure::UncheckableArguments(error) => {
                format!("Invalid arguments for tool {tool}: {error}")
            }
            ToolFailure::Tool(error) => error.model_text(),
            ToolFailure::InvalidOutput(_) => format!(
                "Tool {tool} produced output that does not match its output schema; it was withheld"
            ),
            ToolFailure::Panicked(incident) => format!(
                "Tool {tool} failed unexpectedly (incident {incident}; the details are in the server's log)"
            ),
            ToolFailure::TimedOut(limit) => {
                format!("Tool {tool} timed out after {} ms", limit.as_millis())
            }
            ToolFailure::MissingRequirements(missing) => {
                format!("Tool {tool} cannot run: {missing}")
            }
        }
    }

    /// What an MCP result's `_meta` carries of the failure: the tool's retry
    /// hints ([`ToolError::retry_meta`]), if any.
    pub fn meta(&self) -> Option<toolshape_protocol::Meta> {
        match self {
            ToolFailure::Tool(error) => error.retry_meta(),
            _ => None,
        }
    }
}

/// The name of a tool that is not registered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("Unknown tool: {0}")]
pub struct UnknownTool(pub String);

impl UnknownTool {
    pub(crate) fn named(name: &str) -> Self {
        UnknownTool(toolshape_protocol::text::excerpt(name, 100))
    }
}

impl ToolRegistry {
    /// Calls the tool `name` with `arguments` (absent means `{}`).
    pub async fn call(
        &self,
        name: &str,
        arguments: Option<Map<String, Value>>,
        options: CallOptions,
    ) -> Result<CallOutcome, UnknownTool> {
        let tool = self.get(name).ok_or_else(|| UnknownTool::named(name))?;
        Ok(tool.run(arguments, options, None).await)
    }
}

/// Who a call may ask (see [`ToolContext::elicit`]), and, for a 2026-07-28
/// request, the round it is in.
#[derive(Debug, Clone)]
pub(crate) struct Asking {
    pub(crate) context: AskContext,
    pub(crate) round: Option<Arc<Round>>,
}

impl RegisteredTool {
    /// Runs one call of this tool.
    pub(crate) async fn run(
        &self,
        arguments: Option<Map<String, Value>>,
        options: CallOptions,
        asking: Option<Asking>,
    ) -> CallOutcome {
        let arguments = Value::Object(arguments.unwrap_or_default());
        if let Err(error) = self.input.validate(&arguments) {
            let failure = match error.violations() {
                [] => ToolFailure::UncheckableArguments(error),
                violations => ToolFailure::InvalidArguments(violations.to_vec()),
            };
            return CallOutcome::Failed(failure);
        }

        if let Some(missing) = self.requirements.missing(options.credentials.as_ref()) {
            return CallOutcome::Failed(ToolFailure::MissingRequirements(missing));
        }
        let credentials = options.credentials.map(std::sync::Arc::new);
        let context = ToolContext::new(
            self.name.clone(),
            options.progress,
            options.log,
            credentials,
        );
        let round = asking.as_ref().and_then(|asking| asking.round.clone());
        let context = context
            .with_asking(asking.map(|asking| asking.context))
            .with_caller(options.caller);
        let bounds = Bounds {
            cancel: options.cancel,
            timeout: options.timeout,
            round,
        };
        let future = self.handler.call(context, arguments);
        let output = match drive(self.name.clone(), future, bounds).await {
            Ran::Done(output) => output,
            Ran::Failed(failure) => return CallOutcome::Failed(failure),
            Ran::Cancelled => return CallOutcome::Cancelled,
            Ran::InputRequired(questions) => return CallOutcome::InputRequired(questions),
        };
        match self.check_output(&output) {
            Ok(()) => CallOutcome::Success(output),
            Err(error) => {
                tracing::error!(tool = %self.name, %error, "tool output does not match its outputSchema; withheld");
                CallOutcome::Failed(ToolFailure::InvalidOutput(error))
            }
        }
    }

    /// Checks a handler's output against the output schema, if the tool has one.
    fn check_output(&self, output: &ToolOutput) -> Result<(), ValidationError> {
        let Some(schema) = &self.output else {
            return Ok(());
        };
        if self.output_checked_by_handler {
            return Ok(());
        }
        match output.structured_value() {
            Some(value) => schema.validate(&value),
            None => Err(ValidationErrorKind::Mismatch {
                violations: vec![Violation::new(
                    "",
                    "outputSchema",
                    "the tool declares an outputSchema but returned no structured content",
                )],
                truncated: false,
            }
            .into()),
        }
    }
}
