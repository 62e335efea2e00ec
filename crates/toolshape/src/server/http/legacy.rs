//! Requests of the handshake revisions (2025-11-25 and older): `initialize`
//! opens a session, the rest name theirs in `Mcp-Session-Id`.

// A refusal is an axum `Response`, returned by value as axum handlers do.
#![allow(clippy::result_large_err)]

use std::sync::Arc;

use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use toolshape_protocol::http::names;
use toolshape_protocol::text::excerpt;
use toolshape_protocol::{
    ErrorObject, Incoming, KnownRequest, MAX_BATCH_MESSAGES, ProtocolVersion,
};

use super::super::dispatch::{self, Step};
use super::super::outbox::{batch_answer, encode_error};
use super::super::request::{ParsedRequest, Unparsable};
use super::super::session::SUPPORTED;
use super::app::{App, header};
use super::sessions::{HttpSession, SessionError};
use super::{response, run};

/// A request without a protocol version in `_meta`, on an endpoint serving
/// 2026-07-28 only (`400`).
///
/// A handshake client's `initialize` (`requested`, the revision it asks
/// for) has no way forward: the error names the revision served, as the
/// spec asks of a modern-only server (-32022). Any other request without
/// the version in `_meta` is a 2026-07-28 request missing a required field
/// (-32602).
fn stateless_only(id: &toolshape_protocol::RequestId, requested: Option<&str>) -> Response {
    let error = match requested {
        Some(requested) => {
            let mut error = ErrorObject::unsupported_protocol_version(
                &excerpt(requested, 40),
                &[ProtocolVersion::V2026_07_28.as_str()],
            );
            // Handshake clients tend to show the message alone.
            error.message = format!(
                "Unsupported protocol version: this endpoint serves {} only",
                ProtocolVersion::V2026_07_28.as_str()
            );
            error
        }
        None => toolshape_protocol::MetaError::MissingProtocolVersion.to_error_object(),
    };
    response::error(StatusCode::BAD_REQUEST, Some(id), &error)
}

/// A request without a protocol version in `_meta`.
pub(crate) async fn serve(
    app: &Arc<App>,
    headers: &HeaderMap,
    request: ParsedRequest,
    caller: Option<Arc<str>>,
) -> Response {
    if !app.options.sessions {
        let requested = match &request.body {
            KnownRequest::Initialize(params) => Some(params.protocol_version.as_str()),
            _ => None,
        };
        return stateless_only(&request.id, requested);
    }
    if matches!(request.body, KnownRequest::Initialize(_)) {
        return initialize(app, request, caller);
    }
    let session = match session_of(app, headers) {
        Ok(session) => session,
        Err(refused) => return refused,
    };
    if let Err(refused) = check_version_header(headers, Some(&request.id)) {
        return refused;
    }
    let session_ref = Arc::clone(&session);
    run::run(app, &session_ref.session, Some(session), request, false).await
}

/// A JSON-RPC batch (`body`, an array) naming a session: served when the
/// session's revision has batches (2025-03-26), each message as if it came
/// alone, the requests concurrently; their answers go back together as one
/// JSON array (`202` when it held only notifications and answers). A batch
/// refused whole (broken, empty, over [`MAX_BATCH_MESSAGES`]) gets one
/// error. `None` when the session's revision has no batches: the body is
/// then refused as any array is.
///
/// [`MAX_BATCH_MESSAGES`]: toolshape_protocol::MAX_BATCH_MESSAGES
pub(crate) async fn batch(app: &Arc<App>, headers: &HeaderMap, body: &[u8]) -> Option<Response> {
    let session = match session_of(app, headers) {
        Ok(session) => session,
        Err(refused) => return Some(refused),
    };
    if !session
        .session
        .handshake()
        .is_some_and(ProtocolVersion::allows_batches)
    {
        return None;
    }
    if let Err(refused) = check_version_header(headers, None) {
        return Some(refused);
    }
    let messages = match toolshape_protocol::split_batch(body, MAX_BATCH_MESSAGES) {
        Ok(messages) => messages,
        Err(error) => return Some(response::error(StatusCode::BAD_REQUEST, None, &error)),
    };
    let mut answers = Vec::new();
    // Owned by this handler: a client that goes away drops them with it,
    // as it would a single request.
    let mut calls = tokio::task::JoinSet::new();
    let mut requests = 0;
    for message in messages {
        match toolshape_protocol::classify(message.get().as_bytes()) {
            Incoming::Invalid { id, error } => answers.push(encode_error(id.as_ref(), &error)),
            Incoming::Response(response) => {
                if !session.session.requests.resolve(response) {
                    tracing::debug!("ignored a response to no request of ours");
                }
            }
            Incoming::Notification(notification) => {
                dispatch::notification(&session.session, &session.in_flight, &notification);
            }
            Incoming::Request(request) => {
                requests += 1;
                match ParsedRequest::parse(request, &app.shared.registry) {
                    Ok(request) if matches!(request.body, KnownRequest::Initialize(_)) => {
                        let error = dispatch::initialize_in_batch();
                        answers.push(encode_error(Some(&request.id), &error));
                    }
                    Ok(request) => {
                        let (app, session) = (Arc::clone(app), Arc::clone(&session));
                        calls
                            .spawn(async move { run::answer_alone(&app, &session, request).await });
                    }
                    Err(unparsable) => {
                        answers.push(encode_error(Some(&unparsable.id), &unparsable.error));
                    }
                }
            }
        }
    }
    while let Some(answered) = calls.join_next().await {
        if let Ok(Some(answer)) = answered {
            answers.push(answer);
        }
    }
    match batch_answer(&answers) {
        Some(array) => Some(response::json(StatusCode::OK, array)),
        // Requests whose every one was cancelled still get what a request
        // gets (JSON or an event stream): an empty stream.
        None if requests > 0 => Some(response::unanswered()),
        None => Some(StatusCode::ACCEPTED.into_response()),
    }
}

/// A request of a session whose method is unknown or whose params are
/// malformed: the session is checked as for any request, then the error
/// goes back with 200.
pub(crate) fn refuse_unparsable(
    app: &App,
    headers: &HeaderMap,
    unparsable: &Unparsable,
) -> Response {
    if !app.options.sessions {
        return stateless_only(&unparsable.id, None);
    }
    if unparsable.method != toolshape_protocol::methods::INITIALIZE
        && let Err(refused) = session_of(app, headers)
    {
        return refused;
    }
    response::error(StatusCode::OK, Some(&unparsable.id), &unparsable.error)
}

/// The header must name a revision this server speaks over a handshake (any
/// of them: a client SHOULD send the negotiated one, but the server MUST
/// refuse only invalid or unsupported ones); the request is served under the
/// session's negotiated revision. A revision without a handshake (a
/// 2026-07-28 batch in a 2025-03-26 session) is unsupported there:
/// `-32022` listing the handshake revisions, as for an unknown one.
fn check_version_header(
    headers: &HeaderMap,
    id: Option<&toolshape_protocol::RequestId>,
) -> Result<(), Response> {
    match header(headers, names::PROTOCOL_VERSION) {
        Some(version)
            if !ProtocolVersion::parse(version)
                .is_some_and(ProtocolVersion::uses_initialize_handshake) =>
        {
            let handshake: Vec<&str> = SUPPORTED
                .iter()
                .rev()
                .filter(|supported| supported.uses_initialize_handshake())
                .map(|supported| supported.as_str())
                .collect();
            let error =
                ErrorObject::unsupported_protocol_version(&excerpt(version, 40), &handshake);
            Err(response::error(StatusCode::BAD_REQUEST, id, &error))
        }
        _ => Ok(()),
    }
}

/// Opens a session for the client `caller` (who it is, for every call of
/// the session).
fn initialize(app: &Arc<App>, request: ParsedRequest, caller: Option<Arc<str>>) -> Response {
    let id = request.id.clone();
    let (session_id, session) = match app.sessions.create(caller) {
        Ok(created) => created,
        Err(_) => {
            let error = ErrorObject::server_busy("too many sessions; try again later");
            return response::error(StatusCode::SERVICE_UNAVAILABLE, Some(&id), &error);
        }
    };
    let Step::Answer(answer) = dispatch::route(&app.shared, &session.session, request) else {
        return StatusCode::INTERNAL_SERVER_ERROR.into_response();
    };
    if session.session.handshake().is_none() {
        // The handshake failed: no session was opened after all.
        app.sessions.remove(&session_id);
        return response::json(StatusCode::OK, answer);
    }
    let mut reply = response::json(StatusCode::OK, answer);
    if let Ok(value) = session_id.parse() {
        reply.headers_mut().insert(names::SESSION_ID, value);
    }
    reply
}

/// The session a request names, or the response that refuses it.
pub(crate) fn session_of(app: &App, headers: &HeaderMap) -> Result<Arc<HttpSession>, Response> {
    let Some(id) = header(headers, names::SESSION_ID) else {
        return Err(response::error(
            StatusCode::BAD_REQUEST,
            None,
            &ErrorObject::invalid_request(
                "an Mcp-Session-Id header is required (send initialize first)",
            ),
        ));
    };
    app.sessions.get(id).map_err(|error| match error {
        SessionError::Unknown => response::error(
            StatusCode::NOT_FOUND,
            None,
            &ErrorObject::invalid_request(
                "session not found: it is unknown or expired; initialize again",
            ),
        ),
        SessionError::Full | SessionError::NoRandomness => {
            StatusCode::SERVICE_UNAVAILABLE.into_response()
        }
    })
}
