//! A `tools/call` ready to run: its tool looked up once and held to the end,
//! its revision decided, and where its progress and log messages go.

use std::sync::Arc;

use serde_json::{Map, Value};
use tokio::sync::{mpsc, oneshot};
use toolshape_protocol::meta::RequestMeta;
use toolshape_protocol::{
    ErrorObject, LoggingLevel, LoggingMessageNotificationParams, ProgressNotificationParams,
    ProgressToken, ProtocolVersion, RequestId, methods,
};

use super::Shared;
use super::outbox::{Outbox, encode_result};
use super::session::Session;
use super::shape;
use crate::tool::{CallOptions, CallOutcome, LogMessage, Progress, RegisteredTool, UnknownTool};

/// A `tools/call` ready to run.
pub(crate) struct PreparedCall {
    pub(crate) id: RequestId,
    pub(crate) tool: Arc<RegisteredTool>,
    arguments: Option<Map<String, Value>>,
    pub(crate) version: ProtocolVersion,
    progress_token: Option<ProgressToken>,
    log_level: Option<LoggingLevel>,
}

impl PreparedCall {
    /// Decides the revision; the call holds `tool` (looked up when the
    /// request was parsed) to its end.
    pub(crate) fn prepare(
        session: &Session,
        id: RequestId,
        tool: Option<Arc<RegisteredTool>>,
        name: &str,
        arguments: Option<Map<String, Value>>,
        meta: RequestMeta,
    ) -> Result<PreparedCall, ErrorObject> {
        let version = session.revision(&meta)?;
        let tool = tool.ok_or_else(|| ErrorObject::invalid_params(UnknownTool::named(name)))?;
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
        })
    }

    /// Whether the caller asked for progress or log messages (so
    /// notifications may precede the answer).
    #[cfg_attr(not(feature = "server-http"), allow(dead_code))]
    pub(crate) fn wants_notifications(&self) -> bool {
        self.progress_token.is_some() || self.log_level.is_some()
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
        } = self;
        let mut options = CallOptions::new().cancel_on(cancel);
        options.timeout = shared.options.call_timeout;
        let outbox = notifications.filter(|_| progress_token.is_some() || log_level.is_some());
        let outcome = match outbox {
            None => tool.run(arguments, options).await,
            Some(outbox) => {
                forward_notifications(&tool, arguments, options, outbox, progress_token, log_level)
                    .await
            }
        };
        let result = match outcome {
            CallOutcome::Cancelled => return None,
            CallOutcome::Success(output) => {
                shape::success(output, &tool, version, shared.options.text_block_for_modern)
            }
            CallOutcome::Failed(failure) => shape::failure(&failure, &tool.name, version),
        };
        Some(encode_result(&id, &result))
    }
}

/// Runs a call whose progress reports and log messages go to `outbox` as
/// they come, all of them before the call's answer.
async fn forward_notifications(
    tool: &RegisteredTool,
    arguments: Option<Map<String, Value>>,
    mut options: CallOptions,
    outbox: &Outbox,
    progress_token: Option<ProgressToken>,
    log_level: Option<LoggingLevel>,
) -> CallOutcome {
    let (progress, mut reports) = mpsc::unbounded_channel::<Progress>();
    let (log, mut logs) = mpsc::unbounded_channel::<LogMessage>();
    if progress_token.is_some() {
        options = options.progress(progress);
    }
    if let Some(level) = log_level {
        options = options.log(level, log);
    }
    let running = tool.run(arguments, options);
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
