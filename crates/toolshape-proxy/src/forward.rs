//! One upstream tool as a local tool: its calls go to the upstream, their
//! results come back checked, and every call is counted and audited.

use std::sync::Arc;
use std::time::Instant;

use serde_json::{Value, json};
use tokio::sync::{Semaphore, mpsc};
use toolshape::client::{Client, ClientError, ClientErrorKind, ToolResult};
use toolshape::protocol::ToolDefinition;
use toolshape::protocol::text::excerpt;
use toolshape::tool::{
    CallOptions, LogMessage, Progress, ToolContext, ToolOutput, UrlElicitationRequired,
};
use toolshape::{Tool, ToolError};

use crate::audit::{Audit, Record};
use crate::metrics::{Metrics, Outcome};
use crate::options::{OnInvalid, ProxyOptions};
use crate::output::{output, stripped};
use crate::rate::CallerLimits;
use crate::upstream::Upstream;

/// Progress reports and log messages of one call waiting to be relayed to
/// its caller; past it (the caller reads slower than the upstream sends)
/// new ones are dropped, never buffered without bound.
const RELAY_QUEUE: usize = 256;

/// The longest violation list an `isError` result carries, in characters.
const MAX_VIOLATION_TEXT: usize = 2000;

/// What every forwarding tool shares.
#[derive(Debug)]
pub(crate) struct Forwarder {
    pub(crate) upstream: Upstream,
    pub(crate) options: ProxyOptions,
    pub(crate) metrics: Metrics,
    pub(crate) audit: Option<Audit>,
    pub(crate) limit: Option<Semaphore>,
    /// Each client's allowance of calls, when limited.
    pub(crate) rates: Option<CallerLimits>,
    /// The toolkit and version of the tools over OTC.
    pub(crate) identity: (String, String),
}

/// What one call came to, besides its result.
struct Ended {
    outcome: Outcome,
    violations: Option<Violations>,
}

/// An invalid output's violations, told two ways.
struct Violations {
    /// Where and which keyword: no value of the output's (for the log and
    /// the audit log, which must not hold the data that passed through).
    bare: String,
    /// As the validator words them, quoting excerpts of the values (for the
    /// caller, and for an audit log that keeps arguments too).
    quoting: String,
}

impl Violations {
    fn of(error: &ClientError) -> Violations {
        match error.kind() {
            ClientErrorKind::Validation { source, .. } if !source.violations().is_empty() => {
                let bare = source
                    .violations()
                    .iter()
                    .map(|violation| {
                        let at = match violation.instance_path.as_str() {
                            "" => "/",
                            path => path,
                        };
                        match &violation.missing_property {
                            Some(missing) => format!("at {at}: {} ({missing})", violation.keyword),
                            None => format!("at {at}: {}", violation.keyword),
                        }
                    })
                    .collect::<Vec<_>>()
                    .join("; ");
                Violations {
                    bare,
                    quoting: source.to_string(),
                }
            }
            ClientErrorKind::Validation { source, .. } => Violations {
                bare: source.to_string(),
                quoting: source.to_string(),
            },
            _ => Violations {
                bare: error.to_string(),
                quoting: error.to_string(),
            },
        }
    }
}

impl Forwarder {
    /// The upstream tool `definition` as a tool that forwards to it.
    pub(crate) fn tool(self: &Arc<Self>, definition: &ToolDefinition) -> Tool {
        let name: Arc<str> = definition.name.as_str().into();
        let forwarder = Arc::clone(self);
        let handler = move |context: ToolContext, arguments: Value| {
            let (forwarder, name) = (Arc::clone(&forwarder), Arc::clone(&name));
            async move { forwarder.call(&name, context, arguments).await }
        };
        let tool = Tool::dynamic(
            definition.name.clone(),
            definition.input_schema.clone(),
            toolshape::client::unwrapped_output_schema(definition),
            handler,
        )
        // The upstream's output was checked by this proxy's client, against
        // the same schema; the handler decides what an invalid one becomes.
        .unchecked_output();
        self.describe(tool, definition)
    }

    /// A stand-in for a tool whose schema cannot be used: listed with the
    /// problem, every call an error naming it.
    pub(crate) fn broken_tool(&self, definition: &ToolDefinition, problem: &str) -> Tool {
        let message = format!(
            "tool {} cannot be offered through this proxy: {problem}",
            definition.name
        );
        let description = format!(
            "[unavailable: {}] {}",
            toolshape::protocol::text::excerpt(problem, 300),
            definition.description.as_deref().unwrap_or_default()
        );
        let handler = move |_context: ToolContext, _arguments: Value| {
            let message = message.clone();
            async move { Err::<ToolOutput, _>(ToolError::new(message)) }
        };
        let mut described = definition.clone();
        described.description = Some(description);
        self.describe(
            Tool::dynamic(
                definition.name.clone(),
                json!({"type": "object"}),
                None,
                handler,
            ),
            &described,
        )
    }

    fn describe(&self, mut tool: Tool, definition: &ToolDefinition) -> Tool {
        let (toolkit, version) = &self.identity;
        // The upstream's names are its own: MCP's naming guidance is a SHOULD.
        tool = tool
            .relayed_name()
            .toolkit(toolkit.clone())
            .version(version.clone());
        if let Some(description) = &definition.description {
            tool = tool.description(description.clone());
        }
        if let Some(title) = &definition.title {
            tool = tool.title(title.clone());
        }
        if let Some(annotations) = &definition.annotations {
            tool = tool.annotations(annotations.clone());
        }
        tool
    }

    /// A place among the requests at once to the upstream
    /// (`--max-concurrent`), when they are limited.
    pub(crate) async fn permit(&self) -> Option<tokio::sync::SemaphorePermit<'_>> {
        match &self.limit {
            Some(limit) => limit.acquire().await.ok(),
            None => None,
        }
    }

    async fn call(
        &self,
        tool: &str,
        context: ToolContext,
        arguments: Value,
    ) -> Result<ToolOutput, ToolError> {
        let started = Instant::now();
        // A call dropped before its end (the caller went away, or
        // cancelled) is counted and audited as cancelled all the same.
        let mut abandoned = Abandoned {
            forwarder: Some(self),
            tool,
            context: &context,
            arguments: &arguments,
            started,
        };
        let (result, ended) = match self.over_rate(&context) {
            Some(refused) => refused,
            None => self.within_limit(tool, &context, &arguments, started).await,
        };
        abandoned.forwarder = None;
        self.account(tool, &context, &arguments, started.elapsed(), &ended);
        if let Some(Violations {
            bare: violations, ..
        }) = &ended.violations
        {
            tracing::warn!(tool, %violations, on_invalid = ?self.options.on_invalid, "upstream output does not match its outputSchema");
        }
        result
    }

    /// Forwards a call that arrived at `started`, within its time limit,
    /// which counts from its arrival: a wait for a place toward the
    /// upstream is part of it (timed apart from the call, which has its own
    /// limit: a wait that ends at once sets no timer). A reconnection runs
    /// to its end whatever the limit (cut short, a slow-starting upstream
    /// would never come back); the call then has what is left.
    async fn within_limit(
        &self,
        tool: &str,
        context: &ToolContext,
        arguments: &Value,
        started: Instant,
    ) -> (Result<ToolOutput, ToolError>, Ended) {
        let limit = self.options.timeout_for(tool);
        // Without `--max-concurrent` nothing can wait: no timer is made
        // (a `timeout` around a ready future costs 0.7k instructions a call).
        let _permit = match &self.limit {
            None => None,
            Some(_) => match tokio::time::timeout(limit, self.permit()).await {
                Ok(permit) => permit,
                Err(_) => return timed_out(tool, limit, None),
            },
        };
        let client = match self.upstream.client().await {
            Ok(client) => client,
            Err(error) => return upstream_failed(tool, error),
        };
        let Some(left) = limit
            .checked_sub(started.elapsed())
            .filter(|left| !left.is_zero())
        else {
            return timed_out(tool, limit, None);
        };
        match self.forward(tool, context, arguments, &client, left).await {
            // Past the time left: said with the call's whole limit.
            (Err(_), ended) if ended.outcome == Outcome::Timeout => timed_out(tool, limit, None),
            forwarded => forwarded,
        }
    }

    /// Counts and audits a call that ended as `ended` says.
    fn account(
        &self,
        tool: &str,
        context: &ToolContext,
        arguments: &Value,
        took: std::time::Duration,
        ended: &Ended,
    ) {
        self.metrics.record(tool, ended.outcome, took);
        if let Some(audit) = &self.audit {
            audit.record(&Record {
                tool,
                client: context.caller(),
                user: context.user_id(),
                took,
                outcome: ended.outcome,
                violations: ended
                    .violations
                    .as_ref()
                    .map(|v| (v.bare.as_str(), v.quoting.as_str())),
                arguments,
            });
        }
    }

    /// Calls `tool` through `client`, within `left` of its time limit.
    async fn forward(
        &self,
        tool: &str,
        context: &ToolContext,
        arguments: &Value,
        client: &Client,
        left: std::time::Duration,
    ) -> (Result<ToolOutput, ToolError>, Ended) {
        let arguments = match arguments {
            Value::Object(map) => Some(map.clone()),
            _ => None,
        };
        // Results are relayed as received where they can be: no `Value` of them is built then.
        let mut options = CallOptions::new().timeout(left).relaying();
        if self.options.relay_asks {
            options = options.relay_asks(context.clone());
        }
        let mut reports = None;
        if context.wants_progress() {
            let (sender, receiver) = mpsc::channel(RELAY_QUEUE);
            options = options.progress(sender);
            reports = Some(receiver);
        }
        let mut logs = None;
        if let Some(level) = context.log_level() {
            let (sender, receiver) = mpsc::channel(RELAY_QUEUE);
            options = options.log(level, sender);
            logs = Some(receiver);
        }
        let call = client.call_tool_with(tool, arguments, options);
        let answer = if reports.is_none() && logs.is_none() {
            call.await
        } else {
            tokio::join!(call, relay(context, reports, logs)).0
        };
        self.upstream.observe(client, answer.as_ref().err());
        match answer {
            Ok(result) if result.is_error => (
                Err(result.tool_error(tool)),
                Ended {
                    outcome: Outcome::ToolError,
                    violations: None,
                },
            ),
            Ok(result) => (
                Ok(output(result)),
                Ended {
                    outcome: Outcome::Ok,
                    violations: None,
                },
            ),
            Err(error) => match (error.rejected_result(), url_visits_first(&error)) {
                (Some(rejected), _) => self.invalid(tool, &error, rejected.clone()),
                (None, Some(required)) => (
                    Err(required),
                    Ended {
                        outcome: Outcome::ToolError,
                        violations: None,
                    },
                ),
                (None, None) => upstream_failed(tool, error),
            },
        }
    }

    /// The refusal of a call over its client's rate limit, if it is.
    fn over_rate(&self, context: &ToolContext) -> Option<(Result<ToolOutput, ToolError>, Ended)> {
        let rates = self.rates.as_ref()?;
        let wait = rates.take(context.caller()).err()?;
        let error = ToolError::new(format!(
            "Too many calls from this client: the proxy allows {} per second; try again in {} ms",
            rates.limit().per_second,
            wait.as_millis().max(1)
        ))
        .retryable(true)
        .retry_after(wait);
        Some((
            Err(error),
            Ended {
                outcome: Outcome::RateLimited,
                violations: None,
            },
        ))
    }

    /// An output that failed its schema, as `--on-invalid` says.
    fn invalid(
        &self,
        tool: &str,
        error: &ClientError,
        rejected: ToolResult,
    ) -> (Result<ToolOutput, ToolError>, Ended) {
        let violations = Violations::of(error);
        let result = match self.options.on_invalid {
            OnInvalid::Error => Err(ToolError::new(format!(
                "The upstream tool {tool} returned output that does not match its outputSchema, \
                 so the proxy withheld it: {}",
                toolshape::protocol::text::excerpt(&violations.quoting, MAX_VIOLATION_TEXT)
            ))),
            OnInvalid::Strip => Ok(output(stripped(rejected))),
            OnInvalid::Pass => Ok(output(rejected)),
        };
        (
            result,
            Ended {
                outcome: Outcome::InvalidOutput,
                violations: Some(violations),
            },
        )
    }
}

/// A call in progress: dropped before its end (`forwarder` still set), it
/// is accounted as cancelled.
struct Abandoned<'a> {
    forwarder: Option<&'a Forwarder>,
    tool: &'a str,
    context: &'a ToolContext,
    arguments: &'a Value,
    started: Instant,
}

impl Drop for Abandoned<'_> {
    fn drop(&mut self) {
        if let Some(forwarder) = self.forwarder {
            // A run ended to ask the client (2026-07-28) is one round of a
            // call that may go on: the upstream ran it up to its question.
            let outcome = if self.context.ended_for_input() {
                Outcome::InputRequired
            } else {
                Outcome::Cancelled
            };
            let ended = Ended {
                outcome,
                violations: None,
            };
            let took = self.started.elapsed();
            forwarder.account(self.tool, self.context, self.arguments, took, &ended);
        }
    }
}

/// Passes the upstream's progress reports and log messages about a call on
/// to its caller, until the call ends (its routes are dropped).
async fn relay(
    context: &ToolContext,
    mut reports: Option<mpsc::Receiver<Progress>>,
    mut logs: Option<mpsc::Receiver<LogMessage>>,
) {
    loop {
        tokio::select! {
            Some(report) = next(&mut reports) => {
                context.report_progress(report.progress, report.total, report.message);
            }
            Some(message) = next(&mut logs) => {
                context.log(message.level, message.logger.as_deref(), message.data);
            }
            else => break,
        }
    }
}

/// The next item of a channel that may not be there.
async fn next<T>(receiver: &mut Option<mpsc::Receiver<T>>) -> Option<T> {
    match receiver {
        Some(receiver) => receiver.recv().await,
        None => None,
    }
}

/// When the upstream needs the user elsewhere first (`-32042`, naming the
/// URL-mode elicitations to complete): the error that passes it on, as each
/// client's revision can take it.
pub(crate) fn url_visits_first(error: &ClientError) -> Option<ToolError> {
    let required = error.url_elicitation_required()?;
    let message = match error.kind() {
        ClientErrorKind::Protocol(object) => excerpt(&object.message, crate::MAX_ERROR_TEXT),
        _ => excerpt(&error.to_string(), crate::MAX_ERROR_TEXT),
    };
    Some(UrlElicitationRequired::from_params(message, required.elicitations).into())
}

/// The upstream could not be asked, or did not answer well.
fn upstream_failed(tool: &str, error: ClientError) -> (Result<ToolOutput, ToolError>, Ended) {
    if let ClientErrorKind::Timeout(limit) = error.kind() {
        return timed_out(tool, *limit, Some(error));
    }
    let retryable = matches!(error.kind(), ClientErrorKind::Transport(_));
    // The upstream's own words, cut (its error message may be as long as a
    // message can be).
    let message = format!(
        "The upstream server could not run {tool}: {}",
        excerpt(&error.to_string(), crate::MAX_ERROR_TEXT)
    );
    (
        Err(ToolError::with_source(message, error).retryable(retryable)),
        Ended {
            outcome: Outcome::UpstreamError,
            violations: None,
        },
    )
}

/// A call past its time limit (`error`, when the upstream call itself
/// timed out).
fn timed_out(
    tool: &str,
    limit: std::time::Duration,
    error: Option<ClientError>,
) -> (Result<ToolOutput, ToolError>, Ended) {
    let message = format!(
        "The upstream server did not answer the call of {tool} within {} ms",
        limit.as_millis()
    );
    let error = match error {
        Some(error) => ToolError::with_source(message, error),
        None => ToolError::new(message),
    };
    (
        Err(error.retryable(true)),
        Ended {
            outcome: Outcome::Timeout,
            violations: None,
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_upstream_error_is_cut_before_it_reaches_the_client() {
        let long = toolshape::protocol::ErrorObject::new(-32603, "x".repeat(100_000));
        let error = ClientError::from(ClientErrorKind::Protocol(long));
        let (Err(refused), ended) = upstream_failed("t", error) else {
            panic!("an upstream error is an error");
        };
        assert_eq!(ended.outcome, Outcome::UpstreamError);
        let said = refused.to_string();
        assert!(
            said.starts_with("The upstream server could not run t: "),
            "{said}"
        );
        assert!(said.len() < 1_000, "{} bytes", said.len());
    }
}
