//! The endpoint: POST carries messages, GET opens the server-to-client stream
//! of a handshake session, DELETE ends one.

// A refusal is an axum `Response`, returned by value as axum handlers do.
#![allow(clippy::result_large_err)]

use std::sync::Arc;
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::Value;
use tokio::sync::{Semaphore, mpsc, oneshot};
use toolshape_protocol::meta::RequestMeta;
use toolshape_protocol::{ErrorObject, Incoming, Notification, ProtocolVersion, Request, methods};

use super::super::Shared;
use super::super::dispatch::{self, Step};
use super::super::outbox::Outbox;
use super::super::session::{Session, supported_strings};
use super::options::HttpOptions;
use super::sessions::{HttpSession, SessionError, Sessions};
use super::{origin, response};
use crate::transport::headers;

/// What every handler shares.
pub(crate) struct App {
    pub(crate) shared: Arc<Shared>,
    pub(crate) options: HttpOptions,
    pub(crate) sessions: Sessions,
    pub(crate) permits: Semaphore,
}

/// Methods a stateless 2026-07-28 request may name.
const MODERN_METHODS: &[&str] = &[
    methods::SERVER_DISCOVER,
    methods::PING,
    methods::TOOLS_LIST,
    methods::TOOLS_CALL,
];

fn header<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

/// Refuses foreign origins (DNS rebinding) with 403.
fn check_origin(app: &App, headers: &HeaderMap) -> Result<(), Response> {
    match headers.get(header::ORIGIN).map(|v| v.to_str()) {
        None => Ok(()),
        Some(Ok(origin)) if origin::is_allowed(origin, &app.options.allowed_origins) => Ok(()),
        Some(_) => Err(response::error(
            StatusCode::FORBIDDEN,
            None,
            &ErrorObject::invalid_request("Forbidden: this Origin may not use the endpoint"),
        )),
    }
}

pub(crate) async fn post(State(app): State<Arc<App>>, headers: HeaderMap, body: Bytes) -> Response {
    if let Err(refused) = check_origin(&app, &headers) {
        return refused;
    }
    let Ok(_permit) = app.permits.acquire().await else {
        return StatusCode::SERVICE_UNAVAILABLE.into_response();
    };
    match toolshape_protocol::classify(&body) {
        Incoming::Invalid { id, error } => {
            response::error(StatusCode::BAD_REQUEST, id.as_ref(), &error)
        }
        Incoming::Response(_) => StatusCode::ACCEPTED.into_response(),
        Incoming::Notification(notification) => notify(&app, &headers, &notification),
        Incoming::Request(request) => {
            let version = RequestMeta::from_params(request.params.as_deref())
                .ok()
                .and_then(|meta| meta.protocol_version);
            match version {
                Some(version) => modern(&app, &headers, request, &version).await,
                None => legacy(&app, &headers, request).await,
            }
        }
    }
}

fn mismatch(request: &Request, what: String) -> Response {
    response::error(
        StatusCode::BAD_REQUEST,
        Some(&request.id),
        &ErrorObject::header_mismatch(format!("Header mismatch: {what}")),
    )
}

/// The checks 2026-07-28 puts on a request's headers.
fn check_modern_headers(
    headers: &HeaderMap,
    request: &Request,
    version: &str,
) -> Result<(), Response> {
    match header(headers, headers::PROTOCOL_VERSION) {
        None => {
            return Err(mismatch(
                request,
                "the MCP-Protocol-Version header is missing".into(),
            ));
        }
        Some(value) if value != version => {
            return Err(mismatch(
                request,
                format!("MCP-Protocol-Version {value:?} does not match the body's {version:?}"),
            ));
        }
        Some(_) => {}
    }
    match header(headers, headers::METHOD) {
        None => return Err(mismatch(request, "the Mcp-Method header is missing".into())),
        Some(value) if value != request.method => {
            let value = crate::text::excerpt(value, 100);
            return Err(mismatch(
                request,
                format!("Mcp-Method {value:?} does not match the body"),
            ));
        }
        Some(_) => {}
    }
    if request.method == methods::TOOLS_CALL {
        let name = request
            .params
            .as_deref()
            .and_then(|raw| serde_json::from_str::<Value>(raw.get()).ok())
            .and_then(|params| {
                params
                    .get("name")
                    .and_then(Value::as_str)
                    .map(str::to_owned)
            });
        let header_name = header(headers, headers::NAME).map(headers::decode_value);
        match (name, header_name) {
            (Some(_), None) => {
                return Err(mismatch(request, "the Mcp-Name header is missing".into()));
            }
            (_, Some(None)) => {
                return Err(mismatch(request, "the Mcp-Name header is malformed".into()));
            }
            (Some(body), Some(Some(value))) if body != value => {
                return Err(mismatch(
                    request,
                    "Mcp-Name does not match the body's tool name".into(),
                ));
            }
            _ => {}
        }
    }
    Ok(())
}

/// A stateless 2026-07-28 request: any instance can answer it.
async fn modern(app: &Arc<App>, headers: &HeaderMap, request: Request, version: &str) -> Response {
    if let Err(refused) = check_modern_headers(headers, &request, version) {
        return refused;
    }
    if !ProtocolVersion::parse(version).is_some_and(ProtocolVersion::is_stateless) {
        return response::error(
            StatusCode::BAD_REQUEST,
            Some(&request.id),
            &ErrorObject::unsupported_protocol_version(version, &supported_strings()),
        );
    }
    if !MODERN_METHODS.contains(&request.method.as_str()) {
        let method = crate::text::excerpt(&request.method, 100);
        return response::error(
            StatusCode::NOT_FOUND,
            Some(&request.id),
            &ErrorObject::method_not_found(&method),
        );
    }
    run(app, &Session::default(), None, request, true).await
}

/// A request of the handshake revisions: `initialize` opens a session, the
/// rest name theirs in `Mcp-Session-Id`.
async fn legacy(app: &Arc<App>, headers: &HeaderMap, request: Request) -> Response {
    if !app.options.sessions {
        let error = ErrorObject::invalid_request(
            "Invalid Request: this endpoint is stateless 2026-07-28 only: put the protocol version in `_meta`",
        );
        return response::error(StatusCode::BAD_REQUEST, Some(&request.id), &error);
    }
    if request.method == methods::INITIALIZE {
        return initialize(app, request);
    }
    let session = match session_of(app, headers) {
        Ok(session) => session,
        Err(refused) => return refused,
    };
    if let Some(version) = header(headers, headers::PROTOCOL_VERSION)
        && session.session.handshake().map(ProtocolVersion::as_str) != Some(version)
    {
        let error = ErrorObject::invalid_request(format!(
            "Invalid Request: MCP-Protocol-Version {:?} is not this session's version",
            crate::text::excerpt(version, 40)
        ));
        return response::error(StatusCode::BAD_REQUEST, Some(&request.id), &error);
    }
    let session_ref = Arc::clone(&session);
    run(app, &session_ref.session, Some(session), request, false).await
}

fn initialize(app: &Arc<App>, request: Request) -> Response {
    let id = request.id.clone();
    let (session_id, session) = match app.sessions.create() {
        Ok(created) => created,
        Err(_) => {
            let error = ErrorObject::new(-32000, "Server busy: too many sessions; try again later");
            return response::error(StatusCode::SERVICE_UNAVAILABLE, Some(&id), &error);
        }
    };
    let Step::Answer(answer) = dispatch::step(&app.shared, &session.session, request) else {
        return StatusCode::INTERNAL_SERVER_ERROR.into_response();
    };
    if session.session.handshake().is_none() {
        // The handshake failed: no session was opened after all.
        app.sessions.remove(&session_id);
        return response::json(StatusCode::OK, answer);
    }
    let mut reply = response::json(StatusCode::OK, answer);
    if let Ok(value) = session_id.parse() {
        reply.headers_mut().insert(headers::SESSION_ID, value);
    }
    reply
}

/// The session a request names, or the response that refuses it.
fn session_of(app: &App, headers: &HeaderMap) -> Result<Arc<HttpSession>, Response> {
    let Some(id) = header(headers, headers::SESSION_ID) else {
        return Err(response::error(
            StatusCode::BAD_REQUEST,
            None,
            &ErrorObject::invalid_request(
                "Bad Request: Mcp-Session-Id header is required (send initialize first)",
            ),
        ));
    };
    app.sessions.get(id).map_err(|error| match error {
        SessionError::Unknown => response::error(
            StatusCode::NOT_FOUND,
            None,
            &ErrorObject::invalid_request(
                "Session not found: it is unknown or expired; initialize again",
            ),
        ),
        SessionError::Full | SessionError::NoRandomness => {
            StatusCode::SERVICE_UNAVAILABLE.into_response()
        }
    })
}

/// Answers a request: at once as JSON, or as an SSE stream when the call may
/// send progress before its answer.
async fn run(
    app: &Arc<App>,
    session: &Session,
    http_session: Option<Arc<HttpSession>>,
    request: Request,
    cancel_on_disconnect: bool,
) -> Response {
    let call = match dispatch::step(&app.shared, session, request) {
        Step::Answer(answer) => return response::json(StatusCode::OK, answer),
        Step::Call(call) => call,
    };
    let (cancel, cancelled) = oneshot::channel();
    let cancelled = match &http_session {
        Some(http_session) => match http_session.in_flight.begin(&call.id) {
            Ok(cancelled) => cancelled,
            Err(error) => return response::error(StatusCode::OK, Some(&call.id), &error),
        },
        None => cancelled,
    };
    let shared = Arc::clone(&app.shared);
    let id = call.id.clone();
    if call.wants_progress() {
        let (sender, receiver) = mpsc::channel(64);
        tokio::spawn(async move {
            call.run(shared, Outbox(sender), cancelled).await;
            if let Some(http_session) = http_session {
                http_session.in_flight.finish(&id);
            }
        });
        return response::event_stream(receiver, cancel_on_disconnect.then_some(cancel));
    }
    let (sender, mut receiver) = mpsc::channel(4);
    call.run(shared, Outbox(sender), cancelled).await;
    if let Some(http_session) = http_session {
        http_session.in_flight.finish(&id);
    }
    drop(cancel);
    let mut answer = None;
    while let Ok(message) = receiver.try_recv() {
        answer = Some(message);
    }
    match answer {
        Some(answer) => response::json(StatusCode::OK, answer),
        // Cancelled: there is nothing to answer.
        None => StatusCode::NO_CONTENT.into_response(),
    }
}

fn notify(app: &App, headers: &HeaderMap, notification: &Notification) -> Response {
    let modern = RequestMeta::from_params(notification.params.as_deref())
        .ok()
        .is_some_and(|meta| meta.protocol_version.is_some());
    if modern || !app.options.sessions || header(headers, headers::SESSION_ID).is_none() {
        // Stateless: a cancellation is the client closing its stream.
        return StatusCode::ACCEPTED.into_response();
    }
    match session_of(app, headers) {
        Ok(session) => {
            dispatch::notification(&session.session, &session.in_flight, notification);
            StatusCode::ACCEPTED.into_response()
        }
        Err(refused) => refused,
    }
}

/// GET: a handshake session's stream of server-to-client notifications.
pub(crate) async fn get(State(app): State<Arc<App>>, headers: HeaderMap) -> Response {
    if let Err(refused) = check_origin(&app, &headers) {
        return refused;
    }
    if !app.options.sessions || header(&headers, headers::SESSION_ID).is_none() {
        return StatusCode::METHOD_NOT_ALLOWED.into_response();
    }
    let session = match session_of(&app, &headers) {
        Ok(session) => session,
        Err(refused) => return refused,
    };
    let (sender, receiver) = mpsc::channel(16);
    let mut changes = app.shared.registry.watch_changes();
    let keep_alive =
        (app.sessions.idle_timeout() / 4).clamp(Duration::from_secs(1), Duration::from_secs(15));
    tokio::spawn(async move {
        let outbox = Outbox(sender);
        let mut ticks = tokio::time::interval(keep_alive);
        loop {
            let open = tokio::select! {
                changed = changes.changed() => match changed {
                    Ok(()) if session.session.is_initialized() => {
                        outbox.notification(methods::TOOLS_LIST_CHANGED, &dispatch::list_changed()).await
                    }
                    Ok(()) => true,
                    Err(_) => false,
                },
                _ = ticks.tick() => outbox.send(Vec::new()).await,
            };
            if !open {
                return;
            }
        }
    });
    response::event_stream(receiver, None)
}

/// DELETE: ends a handshake session.
pub(crate) async fn delete(State(app): State<Arc<App>>, headers: HeaderMap) -> Response {
    if let Err(refused) = check_origin(&app, &headers) {
        return refused;
    }
    if !app.options.sessions {
        return StatusCode::METHOD_NOT_ALLOWED.into_response();
    }
    match header(&headers, headers::SESSION_ID) {
        None => StatusCode::BAD_REQUEST.into_response(),
        Some(id) if app.sessions.remove(id) => StatusCode::OK.into_response(),
        Some(_) => StatusCode::NOT_FOUND.into_response(),
    }
}
