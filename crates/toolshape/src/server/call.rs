//! A `tools/call` ready to run: its tool looked up once and held to the end,
//! its revision decided, and where its progress and log messages go.

use std::sync::Arc;

use serde_json::{Map, Value};
use tokio::sync::{mpsc, oneshot};
use toolshape_protocol::meta::RequestMeta;
use toolshape_protocol::{
    CallToolParams, ErrorObject, LoggingLevel, LoggingMessageNotificationParams,
    ProgressNotificationParams, ProgressToken, ProtocolVersion, RequestId, methods,
};

use super::Shared;
use super::asking::{AskPlan, RequestIdentity, Retry};
use super::outbox::{Outbox, encode_error, encode_result};
use super::session::Session;
use super::shape;
use crate::tool::{
    Asking, CallOptions, CallOutcome, LogMessage, Progress, RegisteredTool, UnknownTool,
};

/// A `tools/call` ready to run.
pub(crate) struct PreparedCall {
    pub(crate) id: RequestId,
    pub(crate) tool: Arc<RegisteredTool>,
    arguments: Option<Map<String, Value>>,
    pub(crate) version: ProtocolVersion,
    progress_token: Option<ProgressToken>,
    log_level: Option<LoggingLevel>,
    /// How the tool asks the client, if it does.
    plan: AskPlan,
}

impl PreparedCall {
    /// Decides the revision and how the tool may ask the client; the call
    /// holds `tool` (looked up when the request was parsed) to its end.
    pub(crate) fn prepare(
        shared: &Shared,
        session: &Session,
        id: RequestId,
        tool: Option<Arc<RegisteredTool>>,
        call: CallToolParams,
        meta: RequestMeta,
    ) -> Result<PreparedCall, ErrorObject> {
        let version = session.revision(&meta)?;
        let tool =
            tool.ok_or_else(|| ErrorObject::invalid_params(UnknownTool::named(&call.name)))?;
        let arguments = call.arguments;
        let plan = AskPlan::new(
            shared,
            session,
            version,
            meta.client_capabilities.as_ref(),
            RequestIdentity {
                method: methods::TOOLS_CALL,
                name: call.name,
                arguments: arguments.clone(),
            },
            Retry {
                input_responses: call.input_responses,
                request_state: call.request_state,
            },
        )?;
        // 2026-07-28: a request opts in to log messages with `_meta`;
        // before, the session's `logging/setLevel` decides.
        let log_level = if version.is_stateless() {
            meta.log_level
        } else {
            session.log_level()
        };
        Ok(PreparedCall {
            id,
            tool,
            arguments,
            version,
            progress_token: meta.progress_token,
            log_level,
            plan,
        })
    }

    /// Whether messages may precede the answer: the caller asked for
    /// progress or log messages, or the tool may ask the client over a
    /// handshake session (an HTTP answer is then an event stream).
    #[cfg_attr(not(feature = "server-http"), allow(dead_code))]
    pub(crate) fn wants_notifications(&self) -> bool {
        self.progress_token.is_some()
            || self.log_level.is_some()
            || self.plan.may_ask_over_session()
    }

    /// Runs the call and returns its serialized answer (`None`: it was
    /// cancelled, nothing is to be sent). Progress reports and log messages
    /// the caller asked for go to `notifications` as they come; without an
    /// outbox, or when the caller asked for none, no channel is made.
    pub(crate) async fn run(
        self,
        shared: &Shared,
        notifications: Option<&Outbox>,
        cancel: oneshot::Receiver<()>,
    ) -> Option<Vec<u8>> {
        let PreparedCall {
            id,
            tool,
            arguments,
            version,
            progress_token,
            log_level,
            plan,
        } = self;
        let mut options = CallOptions::new().cancel_on(cancel);
        options.timeout = shared.options.call_timeout;
        let asking = plan.asking(shared, notifications);
        let outbox = notifications.filter(|_| progress_token.is_some() || log_level.is_some());
        let outcome = match outbox {
            None => tool.run(arguments, options, Some(asking.clone())).await,
            Some(outbox) => {
                let call = Forwarded {
                    tool: &tool,
                    arguments,
                    options,
                    asking: asking.clone(),
                };
                call.run(outbox, progress_token, log_level).await
            }
        };
        match outcome {
            CallOutcome::Cancelled => None,
            CallOutcome::Success(output) => {
                let result =
                    shape::success(output, &tool, version, shared.options.text_block_for_modern);
                Some(encode_result(&id, &result))
            }
            CallOutcome::Failed(failure) => Some(match failure.missing_capability() {
                // 2026-07-28: a request that needs a capability its client
                // did not declare is a protocol error, not a tool error.
                Some(required) if version.is_stateless() => encode_error(
                    Some(&id),
                    &ErrorObject::missing_required_client_capability(
                        failure.message(&tool.name),
                        required,
                    ),
                ),
                _ => encode_result(&id, &shape::failure(&failure, &tool.name, version)),
            }),
            CallOutcome::InputRequired(questions) => {
                let result = plan.input_required(shared, &asking, questions);
                Some(encode_result(&id, &result))
            }
        }
    }
}

/// A call whose progress reports and log messages go to an outbox as they
/// come, all of them before the call's answer.
struct Forwarded<'a> {
    tool: &'a RegisteredTool,
    arguments: Option<Map<String, Value>>,
    options: CallOptions,
    asking: Asking,
}

impl Forwarded<'_> {
    async fn run(
        self,
        outbox: &Outbox,
        progress_token: Option<ProgressToken>,
        log_level: Option<LoggingLevel>,
    ) -> CallOutcome {
        let Forwarded {
            tool,
            arguments,
            mut options,
            asking,
        } = self;
        let (progress, mut reports) = mpsc::unbounded_channel::<Progress>();
        let (log, mut logs) = mpsc::unbounded_channel::<LogMessage>();
        if progress_token.is_some() {
            options = options.progress(progress);
        }
        if let Some(level) = log_level {
            options = options.log(level, log);
        }
        let running = tool.run(arguments, options, Some(asking));
        tokio::pin!(running);
        let outcome = loop {
            tokio::select! {
                biased;
                outcome = &mut running => break outcome,
                Some(report) = reports.recv() => send_progress(outbox, progress_token.as_ref(), report).await,
                Some(message) = logs.recv() => send_log(outbox, message).await,
            }
        };
        while let Ok(report) = reports.try_recv() {
            send_progress(outbox, progress_token.as_ref(), report).await;
        }
        while let Ok(message) = logs.try_recv() {
            send_log(outbox, message).await;
        }
        outcome
    }
}

async fn send_progress(outbox: &Outbox, token: Option<&ProgressToken>, report: Progress) {
    let Some(token) = token else {
        return;
    };
    let mut params = ProgressNotificationParams::new(token.clone(), report.progress);
    params.total = report.total;
    params.message = report.message;
    outbox.notification(methods::PROGRESS, &params).await;
}

async fn send_log(outbox: &Outbox, message: LogMessage) {
    let mut params = LoggingMessageNotificationParams::new(message.level, message.data);
    params.logger = message.logger;
    outbox.notification(methods::LOGGING_MESSAGE, &params).await;
}
