//! A request ready to run (see [`Work`]): its revision decided, its handler
//! found and held to the end, how it may ask the client, and where its
//! progress and log messages go.

use std::sync::Arc;

use tokio::sync::{mpsc, oneshot};
use toolshape_protocol::meta::RequestMeta;
use toolshape_protocol::{
    CallToolParams, ErrorObject, LoggingLevel, LoggingMessageNotificationParams,
    ProgressNotificationParams, ProgressToken, ProtocolVersion, RequestId, methods,
};

use super::Shared;
use super::asking::{AskPlan, RequestIdentity, Retry};
use super::outbox::Outbox;
use super::session::Session;
use super::work::{Answer, Running, Work};
use crate::tool::{CallOptions, LogMessage, Progress, RegisteredTool, UnknownTool};

/// Progress reports and log messages one call may have waiting for its peer;
/// past it (the peer reads slower than the handler reports) new ones are
/// dropped.
const NOTIFICATION_QUEUE: usize = 1024;

/// A request ready to run.
pub(crate) struct PreparedCall {
    pub(crate) id: RequestId,
    pub(crate) version: ProtocolVersion,
    progress_token: Option<ProgressToken>,
    log_level: Option<LoggingLevel>,
    caller: Option<Arc<str>>,
    /// How the handler asks the client, if it does.
    plan: AskPlan,
    work: Work,
}

/// What a request is, for its asking plan: identity and retry.
pub(crate) struct Asks {
    pub(crate) identity: RequestIdentity,
    pub(crate) retry: Retry,
}

impl PreparedCall {
    /// Decides the revision and how the handler may ask the client.
    pub(crate) fn prepare(
        shared: &Shared,
        session: &Session,
        id: RequestId,
        meta: RequestMeta,
        asks: Asks,
        work: impl FnOnce(ProtocolVersion) -> Result<Work, ErrorObject>,
    ) -> Result<PreparedCall, ErrorObject> {
        let version = session.revision(&meta)?;
        let work = work(version)?;
        let plan = AskPlan::new(
            shared,
            session,
            version,
            meta.client_capabilities.as_ref(),
            asks.identity,
            asks.retry,
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
            version,
            progress_token: meta.progress_token,
            log_level,
            caller: session.caller().cloned(),
            plan,
            work,
        })
    }

    /// A `tools/call`; the call holds `tool` (looked up when the request was
    /// parsed) to its end.
    pub(crate) fn tool(
        shared: &Shared,
        session: &Session,
        id: RequestId,
        tool: Option<Arc<RegisteredTool>>,
        call: CallToolParams,
        meta: RequestMeta,
    ) -> Result<PreparedCall, ErrorObject> {
        let tool =
            tool.ok_or_else(|| ErrorObject::invalid_params(UnknownTool::named(&call.name)))?;
        let asks = Asks {
            identity: RequestIdentity {
                method: methods::TOOLS_CALL,
                name: call.name,
                arguments: call.arguments.clone(),
            },
            retry: Retry {
                input_responses: call.input_responses,
                request_state: call.request_state,
            },
        };
        let arguments = call.arguments;
        PreparedCall::prepare(shared, session, id, meta, asks, |_| {
            Ok(Work::Tool { tool, arguments })
        })
    }

    /// Whether messages may precede the answer: the caller asked for
    /// progress or log messages, or the handler may ask the client over a
    /// handshake session (an HTTP answer is then an event stream).
    #[cfg_attr(not(feature = "server-http"), allow(dead_code))]
    pub(crate) fn wants_notifications(&self) -> bool {
        self.progress_token.is_some()
            || self.log_level.is_some()
            || (self.work.may_ask() && self.plan.may_ask_over_session())
    }

    /// Runs the request and returns its answer (`None`: it was cancelled,
    /// nothing is to be sent). Progress reports and log messages the caller
    /// asked for go to `notifications` as they come; without an outbox, or
    /// when the caller asked for none, no channel is made.
    pub(crate) async fn run(
        self,
        shared: &Shared,
        notifications: Option<&Outbox>,
        cancel: oneshot::Receiver<()>,
    ) -> Option<Answer> {
        let PreparedCall {
            id,
            version,
            progress_token,
            log_level,
            caller,
            plan,
            work,
        } = self;
        let mut options = CallOptions::new().cancel_on(cancel);
        options.caller = caller;
        options.timeout = shared.options.call_timeout;
        let asking = plan.asking(shared, notifications);
        let running = Running {
            shared,
            id: &id,
            version,
            plan: &plan,
            asking,
        };
        let outbox = notifications.filter(|_| progress_token.is_some() || log_level.is_some());
        let Some(outbox) = outbox else {
            let answer = work.run(running, options).await;
            return answer.map(|answer| answer.identified(shared, version));
        };
        let (progress, mut reports) = mpsc::channel::<Progress>(NOTIFICATION_QUEUE);
        let (log, mut logs) = mpsc::channel::<LogMessage>(NOTIFICATION_QUEUE);
        if progress_token.is_some() {
            options = options.progress(progress);
        }
        if let Some(level) = log_level {
            options = options.log(level, log);
        }
        let working = work.run(running, options);
        tokio::pin!(working);
        let answer = loop {
            tokio::select! {
                biased;
                answer = &mut working => break answer,
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
        answer.map(|answer| answer.identified(shared, version))
    }
}

impl Work {
    /// Whether the work runs a handler that may ask the client.
    fn may_ask(&self) -> bool {
        matches!(
            self,
            Work::Tool { .. } | Work::Prompt { .. } | Work::Read { .. }
        )
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
