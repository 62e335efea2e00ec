//! Answering requests and notifications, whatever transport carried them:
//! one match on the request parsed once.

use serde_json::json;
use toolshape_protocol::{ErrorObject, KnownNotification, KnownRequest, Notification, RequestId};

use super::call::PreparedCall;
use super::in_flight::InFlight;
use super::outbox::{encode_error, encode_result};
use super::request::ParsedRequest;
use super::session::Session;
use super::{Shared, methods};

/// What a request needs.
pub(crate) enum Step {
    /// Its answer, ready now (serialized).
    Answer(Vec<u8>),
    /// A tool call to run.
    Call(Box<PreparedCall>),
}

impl Step {
    fn error(id: &RequestId, error: &ErrorObject) -> Step {
        Step::Answer(encode_error(Some(id), error))
    }
}

/// Works out a request's answer, or prepares its tool call.
pub(crate) fn route(shared: &Shared, session: &Session, request: ParsedRequest) -> Step {
    let ParsedRequest {
        id,
        body,
        meta,
        tool,
    } = request;
    let answer = match body {
        KnownRequest::CallTool(call) => {
            return match PreparedCall::prepare(shared, session, id.clone(), tool, call, meta) {
                Ok(prepared) => Step::Call(Box::new(prepared)),
                Err(error) => Step::error(&id, &error),
            };
        }
        KnownRequest::ListTools(params) => session
            .revision(&meta)
            .and_then(|version| methods::list_tools(shared, version, &params, &id)),
        KnownRequest::Initialize(params) => {
            methods::initialize(shared, session, &params).map(|r| encode_result(&id, &r))
        }
        KnownRequest::Discover(_) => {
            // A version named in `_meta` must be one this server speaks.
            let checked = match meta.protocol_version {
                Some(_) => session.revision(&meta).map(drop),
                None => Ok(()),
            };
            checked.map(|()| encode_result(&id, &methods::discover(shared)))
        }
        KnownRequest::Ping(_) => Ok(encode_result(&id, &json!({}))),
        KnownRequest::SetLoggingLevel(params) => {
            set_level(session, params.level).map(|()| encode_result(&id, &json!({})))
        }
        // A stream of notifications: only Streamable HTTP serves it.
        other => Err(ErrorObject::method_not_found(other.method())),
    };
    Step::Answer(answer.unwrap_or_else(|error| encode_error(Some(&id), &error)))
}

/// `logging/setLevel`: the least severe level of the log messages tools send
/// this peer (a handshake-revision method).
fn set_level(
    session: &Session,
    level: toolshape_protocol::LoggingLevel,
) -> Result<(), ErrorObject> {
    match session.handshake() {
        None => Err(ErrorObject::invalid_request(
            "logging/setLevel needs an initialized session",
        )),
        Some(version) if version.is_stateless() => Err(ErrorObject::method_not_found(
            toolshape_protocol::methods::LOGGING_SET_LEVEL,
        )),
        Some(_) => {
            session.set_log_level(level);
            Ok(())
        }
    }
}

/// Handles a notification from the peer.
pub(crate) fn notification(session: &Session, in_flight: &InFlight, notification: &Notification) {
    match KnownNotification::from_notification(notification) {
        Ok(KnownNotification::Initialized(_)) => session.mark_initialized(),
        Ok(KnownNotification::Cancelled(cancelled)) => match cancelled.request_id {
            Some(id) => in_flight.cancel(&id),
            None => tracing::debug!("ignored a cancellation without a requestId"),
        },
        Ok(other) => tracing::debug!(method = other.method(), "ignored a notification"),
        Err(error) => tracing::debug!(%error, "ignored a notification"),
    }
}
