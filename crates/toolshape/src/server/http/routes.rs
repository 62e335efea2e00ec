//! The endpoint: POST carries messages, GET opens the server-to-client stream
//! of a handshake session, DELETE ends one. Each POST body is classified and
//! parsed once; its era (stateless 2026-07-28, or a handshake session) is
//! decided from that.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Extension;
use axum::body::Body;
use axum::extract::{ConnectInfo, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use toolshape_protocol::http::names;
use toolshape_protocol::meta::RequestMeta;
use toolshape_protocol::{ErrorObject, Incoming, Notification, ProtocolVersion, methods};

use super::super::asking::over_long_answer;
use super::super::request::ParsedRequest;
use super::super::session::supported_strings;
use super::super::{dispatch, notices};
use super::app::{App, header};
use super::body::{ReadBody, read_limited};
use super::streams::{StreamPlan, notification_stream};
use super::{legacy, modern, response};
use crate::tool::options::address_caller;
use crate::transport::lines::{Leading, leading};

/// Whether the `MCP-Protocol-Version` header names a stateless revision.
fn header_says_stateless(headers: &HeaderMap) -> bool {
    header(headers, names::PROTOCOL_VERSION)
        .and_then(ProtocolVersion::parse)
        .is_some_and(ProtocolVersion::is_stateless)
}

/// `400` for an `MCP-Protocol-Version` header that names no revision at all,
/// on a handshake session's requests (a revision of the wrong kind is
/// refused where the request is read): the spec's MUST, for requests that
/// do not parse, notifications, answers, GET and DELETE too. The error is
/// `UnsupportedProtocolVersion` (-32022) listing the revisions served,
/// which a 2026-07-28 client carrying a stray session id reads as such.
fn unknown_version(headers: &HeaderMap) -> Option<Response> {
    let version = header(headers, names::PROTOCOL_VERSION)
        .or_else(|| headers.get(names::PROTOCOL_VERSION).map(|_| ""))?;
    if ProtocolVersion::parse(version).is_some() {
        return None;
    }
    let error = ErrorObject::unsupported_protocol_version(
        &toolshape_protocol::text::excerpt(version, 40),
        &supported_strings(),
    );
    Some(response::error(StatusCode::BAD_REQUEST, None, &error))
}

pub(crate) async fn post(
    State(app): State<Arc<App>>,
    connection: Option<Extension<ConnectInfo<SocketAddr>>>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    if let Err(refused) = app.check_origin(&headers) {
        return refused;
    }
    // Within a session (a 2026-07-28 request naming an unknown revision
    // gets -32022 with the supported ones, where its `_meta` is read).
    if app.options.sessions
        && header(&headers, names::SESSION_ID).is_some()
        && let Some(refused) = unknown_version(&headers)
    {
        return refused;
    }
    let body = match read_limited(body, app.options.max_body_bytes).await {
        ReadBody::Whole(body) => body,
        ReadBody::TooLarge(prefix) => return too_large(&app, &headers, leading(&prefix)),
        ReadBody::Failed => return StatusCode::BAD_REQUEST.into_response(),
        ReadBody::TimedOut => return StatusCode::REQUEST_TIMEOUT.into_response(),
    };
    // A 2025-03-26 session's batch.
    if toolshape_protocol::is_batch(&body)
        && app.options.sessions
        && header(&headers, names::SESSION_ID).is_some()
        && let Some(reply) = legacy::batch(&app, &headers, &body).await
    {
        return reply;
    }
    // Who calls: the client's address, when the server was told it.
    let caller = connection.map(|Extension(ConnectInfo(address))| address_caller(address));
    match toolshape_protocol::classify(&body) {
        Incoming::Invalid { id, error } => {
            response::error(StatusCode::BAD_REQUEST, id.as_ref(), &error)
        }
        Incoming::Response(response) => answer(&app, &headers, response),
        Incoming::Notification(notification) => notify(&app, &headers, &notification),
        Incoming::Request(request) => match ParsedRequest::parse(request, &app.shared.registry) {
            Ok(request) => match request.meta.protocol_version.clone() {
                Some(version) => modern::serve(&app, &headers, request, &version, caller).await,
                // A 2026-07-28 request (by its header) without the version in
                // `_meta`: invalid params, not a handshake request.
                None if header_says_stateless(&headers) => {
                    let error = toolshape_protocol::MetaError::MissingProtocolVersion;
                    response::error(
                        StatusCode::BAD_REQUEST,
                        Some(&request.id),
                        &error.to_error_object(),
                    )
                }
                None => legacy::serve(&app, &headers, request, caller).await,
            },
            Err(unparsable) => {
                if unparsable.meta_version.is_some() || header_says_stateless(&headers) {
                    modern::refuse_unparsable(&headers, &unparsable)
                } else {
                    legacy::refuse_unparsable(&app, &headers, &unparsable)
                }
            }
        },
    }
}

/// A body over the size limit, unread past its first bytes: `413`. An
/// answer to one of a session's questions fails that question at once (it
/// would wait for its ask timeout); anything else is refused with its id
/// when that came early enough, as over stdio.
fn too_large(app: &App, headers: &HeaderMap, leading: Leading) -> Response {
    let limit = app.options.max_body_bytes;
    tracing::warn!(limit, kind = ?leading.kind, "refused a body over the size limit");
    let session = (app.options.sessions && header(headers, names::SESSION_ID).is_some())
        .then(|| legacy::session_of(app, headers).ok())
        .flatten();
    let requests = session.as_ref().map(|session| &*session.session.requests);
    let answer = over_long_answer(requests, &leading, limit);
    let id = leading.id.filter(|_| !answer);
    let error = ErrorObject::invalid_request(format!("body larger than {limit} bytes"));
    response::error(StatusCode::PAYLOAD_TOO_LARGE, id.as_ref(), &error)
}

/// A client's answer to a request of ours (elicitation, sampling, roots on a
/// handshake session): handed to the call waiting for it. Outside a session
/// it is refused (`400`): a 2026-07-28 client sends no responses (its
/// answers go in the retried request's `inputResponses`), and a handshake
/// session's names its session.
fn answer(app: &App, headers: &HeaderMap, response: toolshape_protocol::Response) -> Response {
    if !app.options.sessions || header(headers, names::SESSION_ID).is_none() {
        let error = ErrorObject::invalid_request(
            "a JSON-RPC response is taken only within a session: 2026-07-28 clients send none \
             (answers to a server's questions go in the retried request's inputResponses)",
        );
        return response::error(StatusCode::BAD_REQUEST, None, &error);
    }
    match legacy::session_of(app, headers) {
        Ok(session) => {
            if !session.session.requests.resolve(response) {
                tracing::debug!("ignored a response to no request of ours");
            }
            StatusCode::ACCEPTED.into_response()
        }
        Err(refused) => refused,
    }
}

fn notify(app: &App, headers: &HeaderMap, notification: &Notification) -> Response {
    let modern = RequestMeta::from_params(notification.params.as_deref())
        .ok()
        .is_some_and(|meta| meta.protocol_version.is_some());
    if modern || !app.options.sessions || header(headers, names::SESSION_ID).is_none() {
        // Stateless: a cancellation is the client closing its stream.
        return StatusCode::ACCEPTED.into_response();
    }
    match legacy::session_of(app, headers) {
        Ok(session) => {
            dispatch::notification(&session.session, &session.in_flight, notification);
            StatusCode::ACCEPTED.into_response()
        }
        Err(refused) => refused,
    }
}

/// GET: a handshake session's stream of server-to-client notifications. A
/// session has one: a new GET replaces the older stream.
pub(crate) async fn get(State(app): State<Arc<App>>, headers: HeaderMap) -> Response {
    if let Err(refused) = app.check_origin(&headers) {
        return refused;
    }
    if app.options.sessions
        && let Some(refused) = unknown_version(&headers)
    {
        return refused;
    }
    if !app.options.sessions || header(&headers, names::SESSION_ID).is_none() {
        return not_allowed(&app);
    }
    let session = match legacy::session_of(&app, &headers) {
        Ok(session) => session,
        Err(refused) => return refused,
    };
    // Refused before the session's older stream is replaced, which it keeps.
    let permit = match app.stream_permit(None) {
        Ok(permit) => permit,
        Err(refused) => return refused,
    };
    let slot = session.open_stream();
    let watched = Arc::clone(&session);
    let prompting = Arc::clone(&session);
    let subscribed = Arc::clone(&session);
    let elicited = Arc::clone(&session);
    let shared = Arc::clone(&app.shared);
    let announces_prompts = shared.announces_prompt_changes;
    let ended = async move {
        tokio::select! {
            () = session.ended() => {}
            () = slot.replaced() => {}
        }
    };
    notification_stream(
        &app,
        permit,
        StreamPlan {
            first: None,
            list_changed: Box::new(move || {
                watched
                    .session
                    .is_initialized()
                    .then(|| (methods::TOOLS_LIST_CHANGED, serde_json::json!({})))
            }),
            prompts_changed: Box::new(move || {
                (announces_prompts && prompting.session.is_initialized())
                    .then(|| (methods::PROMPTS_LIST_CHANGED, serde_json::json!({})))
            }),
            resource_changed: Box::new(move |event| {
                notices::for_session(&shared, &subscribed.session, event)
            }),
            elicitation_completed: Some(Box::new(move |elicitation_id| {
                notices::elicitation_completed(&elicited.session, elicitation_id)
            })),
            ended,
            last: None,
        },
    )
}

/// DELETE: ends a handshake session.
pub(crate) async fn delete(State(app): State<Arc<App>>, headers: HeaderMap) -> Response {
    if let Err(refused) = app.check_origin(&headers) {
        return refused;
    }
    if app.options.sessions
        && let Some(refused) = unknown_version(&headers)
    {
        return refused;
    }
    if !app.options.sessions {
        return not_allowed(&app);
    }
    match header(&headers, names::SESSION_ID) {
        // No session to end: to a 2026-07-28 client (which has none), DELETE
        // is not a method of this endpoint, as with GET.
        None => not_allowed(&app),
        Some(id) if app.sessions.remove(id) => StatusCode::OK.into_response(),
        Some(_) => StatusCode::NOT_FOUND.into_response(),
    }
}

/// `405`, with the `Allow` header a 405 must carry: POST, and GET and
/// DELETE where handshake sessions are served (with a session id).
fn not_allowed(app: &App) -> Response {
    let allowed = if app.options.sessions {
        "POST, GET, DELETE"
    } else {
        "POST"
    };
    (
        StatusCode::METHOD_NOT_ALLOWED,
        [(axum::http::header::ALLOW, allowed)],
    )
        .into_response()
}
