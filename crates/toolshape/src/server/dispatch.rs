//! Answering requests and notifications, whatever transport carried them.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};
use toolshape_protocol::meta::keys;
use toolshape_protocol::{
    CallToolParams, CancelledNotificationParams, ErrorObject, LoggingLevel,
    LoggingMessageNotificationParams, Notification, ProgressNotificationParams, ProtocolVersion,
    Request, RequestId, methods,
};

use super::outbox::{Outbox, encode_error, encode_result};
use super::session::Session;
use super::{Shared, methods as answer, shape};
use crate::tool::{CallOptions, CallOutcome, LogMessage, Progress};

/// `logging/setLevel` (2024-11-05 through 2025-11-25; removed in 2026-07-28,
/// where a request carries its level in `_meta`).
pub(crate) const LOGGING_SET_LEVEL: &str = "logging/setLevel";

#[derive(serde::Deserialize)]
struct SetLevelParams {
    level: LoggingLevel,
}

/// What a request needs.
pub(crate) enum Step {
    /// Its answer, ready now (serialized).
    Answer(Vec<u8>),
    /// A tool call to run.
    Call(Box<PreparedCall>),
}

/// Works out a request's answer, or prepares its tool call.
pub(crate) fn step(shared: &Shared, session: &Session, request: Request) -> Step {
    let params = request.params.as_deref();
    let id = &request.id;
    let answer = match request.method.as_str() {
        methods::TOOLS_CALL => return prepare_call(session, request),
        methods::TOOLS_LIST => {
            let mut out = Vec::with_capacity(4096);
            answer::list_tools(shared, session, params, &mut out, id).map(|()| out)
        }
        methods::INITIALIZE => {
            answer::initialize(shared, session, params).map(|r| encode_result(id, &r))
        }
        methods::SERVER_DISCOVER => {
            answer::discover(shared, session, params).map(|r| encode_result(id, &r))
        }
        methods::PING => Ok(encode_result(id, &json!({}))),
        LOGGING_SET_LEVEL => set_level(session, params).map(|()| encode_result(id, &json!({}))),
        // Name the method, but never echo an arbitrarily long one back.
        other => Err(ErrorObject::method_not_found(&crate::text::excerpt(
            other, 100,
        ))),
    };
    Step::Answer(answer.unwrap_or_else(|error| encode_error(Some(id), &error)))
}

/// `logging/setLevel`: the least severe level of the log messages tools send
/// this peer (a handshake-revision method).
fn set_level(
    session: &Session,
    raw: Option<&serde_json::value::RawValue>,
) -> Result<(), ErrorObject> {
    let Some(version) = session.handshake() else {
        return Err(ErrorObject::invalid_request(
            "Invalid Request: logging/setLevel needs an initialized session",
        ));
    };
    if version.is_stateless() {
        return Err(ErrorObject::method_not_found(LOGGING_SET_LEVEL));
    }
    let params: Option<SetLevelParams> = answer::params(raw)?;
    let params =
        params.ok_or_else(|| ErrorObject::invalid_params("Invalid params: level is required"))?;
    session.set_log_level(params.level);
    Ok(())
}

fn prepare_call(session: &Session, request: Request) -> Step {
    let Request { id, params, .. } = request;
    let prepared = answer::params::<Option<CallToolParams>>(params.as_deref())
        .and_then(|params| {
            params.ok_or_else(|| {
                ErrorObject::invalid_params("Invalid params: tools/call needs a tool name")
            })
        })
        .and_then(|call| {
            let version = session.revision(call.meta.as_ref())?;
            Ok((call, version))
        });
    match prepared {
        Ok((call, version)) => {
            let progress_token = call
                .meta
                .as_ref()
                .and_then(|meta| meta.get(keys::PROGRESS_TOKEN))
                .cloned();
            // 2026-07-28: a request opts in to log messages with `_meta`;
            // before, the session's `logging/setLevel` decides.
            let log_level = if version.is_stateless() {
                call.meta
                    .as_ref()
                    .and_then(|meta| meta.get(keys::LOG_LEVEL))
                    .and_then(|level| serde_json::from_value(level.clone()).ok())
            } else {
                session.log_level()
            };
            Step::Call(Box::new(PreparedCall {
                id,
                call,
                version,
                progress_token,
                log_level,
            }))
        }
        Err(error) => Step::Answer(encode_error(Some(&id), &error)),
    }
}

/// A `tools/call` ready to run.
pub(crate) struct PreparedCall {
    pub(crate) id: RequestId,
    call: CallToolParams,
    pub(crate) version: ProtocolVersion,
    progress_token: Option<Value>,
    log_level: Option<LoggingLevel>,
}

impl PreparedCall {
    /// Whether the caller asked for progress or log messages (so
    /// notifications may precede the answer).
    pub(crate) fn wants_notifications(&self) -> bool {
        self.progress_token.is_some() || self.log_level.is_some()
    }

    /// Runs the call, sending progress and then its answer to `outbox`; nothing
    /// is sent when it is cancelled.
    pub(crate) async fn run(
        self,
        shared: Arc<Shared>,
        outbox: Outbox,
        cancel: oneshot::Receiver<()>,
    ) {
        let PreparedCall {
            id,
            call,
            version,
            progress_token,
            log_level,
        } = self;
        let (progress, mut reports) = mpsc::unbounded_channel::<Progress>();
        let (log, mut logs) = mpsc::unbounded_channel::<LogMessage>();
        let options = CallOptions {
            timeout: shared.options.call_timeout,
            cancel: Some(cancel),
            progress: progress_token.is_some().then_some(progress),
            log: log_level.map(|level| (level, log)),
        };
        let running = shared.registry.call(&call.name, call.arguments, options);
        tokio::pin!(running);
        let outcome = loop {
            tokio::select! {
                biased;
                outcome = &mut running => break outcome,
                Some(report) = reports.recv() => send_progress(&outbox, progress_token.as_ref(), report).await,
                Some(message) = logs.recv() => send_log(&outbox, message).await,
            }
        };
        while let Ok(report) = reports.try_recv() {
            send_progress(&outbox, progress_token.as_ref(), report).await;
        }
        while let Ok(message) = logs.try_recv() {
            send_log(&outbox, message).await;
        }
        match outcome {
            Err(unknown) => {
                outbox
                    .error(Some(&id), &ErrorObject::invalid_params(unknown.to_string()))
                    .await;
            }
            Ok(CallOutcome::Cancelled) => {}
            Ok(CallOutcome::Success(output)) => {
                let Some(tool) = shared.registry.get(&call.name) else {
                    return;
                };
                let result =
                    shape::success(output, &tool, version, shared.options.text_block_for_modern);
                outbox.result(&id, &result).await;
            }
            Ok(CallOutcome::Failed(failure)) => {
                let result = shape::failure(&failure, &call.name, version);
                outbox.result(&id, &result).await;
            }
        }
    }
}

async fn send_progress(outbox: &Outbox, token: Option<&Value>, report: Progress) {
    let Some(token) = token.and_then(|t| serde_json::from_value(t.clone()).ok()) else {
        return;
    };
    let params = ProgressNotificationParams {
        progress_token: token,
        progress: report.progress,
        total: report.total,
        message: report.message,
        meta: None,
    };
    outbox.notification(methods::PROGRESS, &params).await;
}

async fn send_log(outbox: &Outbox, message: LogMessage) {
    let params = LoggingMessageNotificationParams {
        level: message.level,
        logger: message.logger,
        data: message.data,
        meta: None,
    };
    outbox.notification(methods::LOGGING_MESSAGE, &params).await;
}

/// The calls running for one peer, by request id, so that they can be cancelled.
#[derive(Default)]
pub(crate) struct InFlight {
    calls: Mutex<HashMap<RequestId, oneshot::Sender<()>>>,
}

impl InFlight {
    fn calls(&self) -> std::sync::MutexGuard<'_, HashMap<RequestId, oneshot::Sender<()>>> {
        self.calls.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Registers a call; its receiver resolves when it is cancelled. A second
    /// call with the same id while the first runs is refused.
    pub(crate) fn begin(&self, id: &RequestId) -> Result<oneshot::Receiver<()>, ErrorObject> {
        let mut calls = self.calls();
        if calls.contains_key(id) {
            return Err(ErrorObject::invalid_request(
                "Invalid Request: a request with this id is already in flight",
            ));
        }
        let (cancel, cancelled) = oneshot::channel();
        calls.insert(id.clone(), cancel);
        Ok(cancelled)
    }

    /// Forgets a finished call.
    pub(crate) fn finish(&self, id: &RequestId) {
        self.calls().remove(id);
    }

    fn cancel(&self, id: &RequestId) {
        if let Some(cancel) = self.calls().remove(id) {
            tracing::debug!(%id, "call cancelled");
            let _ = cancel.send(());
        }
    }
}

/// Handles a notification from the peer.
pub(crate) fn notification(session: &Session, in_flight: &InFlight, notification: &Notification) {
    match notification.method.as_str() {
        methods::INITIALIZED => session.mark_initialized(),
        methods::CANCELLED => match notification.parse_params::<CancelledNotificationParams>() {
            Ok(CancelledNotificationParams {
                request_id: Some(id),
                ..
            }) => in_flight.cancel(&id),
            _ => tracing::debug!("ignored a cancellation without a usable requestId"),
        },
        other => tracing::debug!(method = other, "ignored a notification"),
    }
}

/// The notification that the tool list changed.
pub(crate) fn list_changed() -> Value {
    json!({})
}
