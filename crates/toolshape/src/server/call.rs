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
use super::outbox::Outbox;
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

    /// Runs the call, sending progress and then its answer to `outbox`;
    /// nothing is sent when it is cancelled. Says whether the outbox took
    /// everything (false: the peer is gone).
    pub(crate) async fn run(
        self,
        shared: Arc<Shared>,
        outbox: Outbox,
        cancel: oneshot::Receiver<()>,
    ) -> bool {
        let PreparedCall {
            id,
            tool,
            arguments,
            version,
            progress_token,
            log_level,
        } = self;
        let (progress, mut reports) = mpsc::unbounded_channel::<Progress>();
        let (log, mut logs) = mpsc::unbounded_channel::<LogMessage>();
        let mut options = CallOptions::new().cancel_on(cancel);
        options.timeout = shared.options.call_timeout;
        if progress_token.is_some() {
            options = options.progress(progress);
        }
        if let Some(level) = log_level {
            options = options.log(level, log);
        }
        let running = tool.run(arguments, options);
        tokio::pin!(running);
        let mut delivered = true;
        let outcome = loop {
            tokio::select! {
                biased;
                outcome = &mut running => break outcome,
                Some(report) = reports.recv() => delivered &= send_progress(&outbox, progress_token.as_ref(), report).await,
                Some(message) = logs.recv() => delivered &= send_log(&outbox, message).await,
            }
        };
        while let Ok(report) = reports.try_recv() {
            delivered &= send_progress(&outbox, progress_token.as_ref(), report).await;
        }
        while let Ok(message) = logs.try_recv() {
            delivered &= send_log(&outbox, message).await;
        }
        let answered = match outcome {
            CallOutcome::Cancelled => true,
            CallOutcome::Success(output) => {
                let result =
                    shape::success(output, &tool, version, shared.options.text_block_for_modern);
                outbox.result(&id, &result).await
            }
            CallOutcome::Failed(failure) => {
                let result = shape::failure(&failure, &tool.name, version);
                outbox.result(&id, &result).await
            }
        };
        delivered && answered
    }
}

async fn send_progress(outbox: &Outbox, token: Option<&ProgressToken>, report: Progress) -> bool {
    let Some(token) = token else {
        return true;
    };
    let mut params = ProgressNotificationParams::new(token.clone(), report.progress);
    params.total = report.total;
    params.message = report.message;
    outbox.notification(methods::PROGRESS, &params).await
}

async fn send_log(outbox: &Outbox, message: LogMessage) -> bool {
    let mut params = LoggingMessageNotificationParams::new(message.level, message.data);
    params.logger = message.logger;
    outbox.notification(methods::LOGGING_MESSAGE, &params).await
}
