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
use tokio::sync::{Semaphore, mpsc, oneshot, watch};
use toolshape_protocol::meta::RequestMeta;
use toolshape_protocol::{
    ErrorObject, Incoming, Notification, ProtocolVersion, Request, RequestId, methods,
};

use super::super::Shared;
use super::super::dispatch::{self, Step};
use super::super::outbox::Outbox;
use super::super::session::{Session, supported_strings};
use super::header_rules::check_modern_headers;
use super::options::HttpOptions;
use super::sessions::{HttpSession, SessionError, Sessions};
use super::{origin, response};
use crate::transport::headers;

/// What every handler shares.
pub(crate) struct App {
    pub(crate) shared: Arc<Shared>,
    pub(crate) options: HttpOptions,
    pub(crate) sessions: Sessions,
    /// Taken by each request answered (for a streamed call, until its stream
    /// ends); never by notifications, so a cancellation is never queued
    /// behind the calls it would cancel.
    pub(crate) permits: Arc<Semaphore>,
    /// Turns true when the server shuts down: the long-lived streams (GET,
    /// `subscriptions/listen`) then end, so that shutdown does not wait on them.
    pub(crate) closing: watch::Receiver<bool>,
}

/// Resolves once the server is shutting down.
async fn closing(mut closing: watch::Receiver<bool>) {
    let _ = closing.wait_for(|closing| *closing).await;
}

/// Methods a stateless 2026-07-28 request may name (`ping` is not one: that
/// revision removed it).
const MODERN_METHODS: &[&str] = &[
    methods::SERVER_DISCOVER,
    methods::TOOLS_LIST,
    methods::TOOLS_CALL,
    SUBSCRIPTIONS_LISTEN,
];

/// `subscriptions/listen` (2026-07-28): a long-lived stream of the
/// notifications the client opts in to.
const SUBSCRIPTIONS_LISTEN: &str = "subscriptions/listen";
/// Its first message.
const SUBSCRIPTIONS_ACKNOWLEDGED: &str = "notifications/subscriptions/acknowledged";

pub(super) fn header<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
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
    match toolshape_protocol::classify(&body) {
        Incoming::Invalid { id, error } => {
            response::error(StatusCode::BAD_REQUEST, id.as_ref(), &error)
        }
        Incoming::Response(_) => StatusCode::ACCEPTED.into_response(),
        Incoming::Notification(notification) => notify(&app, &headers, &notification),
        Incoming::Request(request) => {
            // `_meta` is read once: its version picks the era, and a 2026-07-28
            // request must also declare the client's capabilities in it.
            let meta = RequestMeta::from_params(request.params.as_deref());
            let version = meta
                .as_ref()
                .ok()
                .and_then(|meta| meta.protocol_version.clone());
            match version {
                Some(version) => modern(&app, &headers, request, &version, meta).await,
                // A 2026-07-28 request (by its header) without the version in
                // `_meta`: invalid params, not a handshake request.
                None if header(&headers, headers::PROTOCOL_VERSION)
                    .and_then(ProtocolVersion::parse)
                    .is_some_and(ProtocolVersion::is_stateless) =>
                {
                    let error = toolshape_protocol::MetaError::MissingProtocolVersion;
                    response::error(
                        StatusCode::BAD_REQUEST,
                        Some(&request.id),
                        &error.to_error_object(),
                    )
                }
                None => legacy(&app, &headers, request).await,
            }
        }
    }
}

/// A stateless 2026-07-28 request: any instance can answer it.
async fn modern(
    app: &Arc<App>,
    headers: &HeaderMap,
    request: Request,
    version: &str,
    meta: Result<RequestMeta, toolshape_protocol::MetaError>,
) -> Response {
    if let Err(refused) = check_modern_headers(app, headers, &request, version) {
        return refused;
    }
    if !ProtocolVersion::parse(version).is_some_and(ProtocolVersion::is_stateless) {
        return response::error(
            StatusCode::BAD_REQUEST,
            Some(&request.id),
            &ErrorObject::unsupported_protocol_version(version, &supported_strings()),
        );
    }
    // Every 2026-07-28 request declares the client's capabilities.
    if let Err(error) = meta.and_then(|meta| meta.require_modern().map(|_| ())) {
        return response::error(
            StatusCode::BAD_REQUEST,
            Some(&request.id),
            &error.to_error_object(),
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
    if request.method == SUBSCRIPTIONS_LISTEN {
        return listen(app, request);
    }
    run(app, &Session::default(), None, request, true).await
}

/// The notifications a `subscriptions/listen` request opts in to.
#[derive(serde::Deserialize, Default)]
struct ListenParams {
    #[serde(default)]
    notifications: SubscriptionFilter,
}

#[derive(serde::Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct SubscriptionFilter {
    #[serde(default)]
    tools_list_changed: bool,
}

/// `subscriptions/listen`: acknowledges the subscription (only
/// `toolsListChanged` can be honoured: a tools server has no prompts or
/// resources), then sends `notifications/tools/list_changed`, tagged with the
/// subscription's id, whenever the registry changes, until the client goes away.
fn listen(app: &Arc<App>, request: Request) -> Response {
    let params: ListenParams = match super::super::methods::params(request.params.as_deref()) {
        Ok(params) => params,
        Err(error) => return response::error(StatusCode::BAD_REQUEST, Some(&request.id), &error),
    };
    let tools = params.notifications.tools_list_changed;
    let id = serde_json::to_value(&request.id).unwrap_or(Value::Null);
    let meta = serde_json::json!({ toolshape_protocol::meta::keys::SUBSCRIPTION_ID: id });
    let mut honoured = serde_json::Map::new();
    if tools {
        honoured.insert("toolsListChanged".into(), Value::Bool(true));
    }
    let (sender, receiver) = mpsc::channel(16);
    let mut changes = app.shared.registry.watch_changes();
    let keep_alive =
        (app.sessions.idle_timeout() / 4).clamp(Duration::from_secs(1), Duration::from_secs(15));
    let shutdown = app.closing.clone();
    tokio::spawn(async move {
        let outbox = Outbox(sender);
        let ack = serde_json::json!({ "notifications": honoured, "_meta": meta });
        if !outbox.notification(SUBSCRIPTIONS_ACKNOWLEDGED, &ack).await {
            return;
        }
        let changed = serde_json::json!({ "_meta": meta });
        let mut ticks = tokio::time::interval(keep_alive);
        ticks.tick().await;
        let shutdown = closing(shutdown);
        tokio::pin!(shutdown);
        loop {
            let open = tokio::select! {
                () = &mut shutdown => false,
                result = changes.changed() => match result {
                    Ok(()) if tools => outbox.notification(methods::TOOLS_LIST_CHANGED, &changed).await,
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
    // The header must name a revision this server speaks over a handshake
    // (any of them: a client SHOULD send the negotiated one, but the server
    // MUST refuse only invalid or unsupported ones); the request is served
    // under the session's negotiated revision.
    if let Some(version) = header(headers, headers::PROTOCOL_VERSION)
        && !ProtocolVersion::parse(version).is_some_and(ProtocolVersion::uses_initialize_handshake)
    {
        let error = ErrorObject::invalid_request(format!(
            "Invalid Request: unsupported MCP-Protocol-Version {:?} for a session",
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
    let Ok(permit) = Arc::clone(&app.permits).acquire_owned().await else {
        return StatusCode::SERVICE_UNAVAILABLE.into_response();
    };
    let call = match dispatch::step(&app.shared, session, request) {
        Step::Answer(answer) => return response::json(StatusCode::OK, answer),
        Step::Call(call) => call,
    };
    let (cancel, cancelled) = oneshot::channel();
    let (cancelled, in_flight) = match http_session {
        Some(session) => match session.in_flight.begin(&call.id) {
            Ok(cancelled) => {
                let id = call.id.clone();
                (cancelled, Some(InFlightCall { session, id }))
            }
            Err(error) => return response::error(StatusCode::OK, Some(&call.id), &error),
        },
        None => (cancelled, None),
    };
    let shared = Arc::clone(&app.shared);
    if call.wants_notifications() {
        let (sender, receiver) = mpsc::channel(64);
        tokio::spawn(async move {
            // The call counts against the limit until it ends, not just
            // until its stream's headers are sent.
            let _permit = permit;
            let _in_flight = in_flight;
            call.run(shared, Outbox(sender), cancelled).await;
        });
        return response::event_stream(receiver, cancel_on_disconnect.then_some(cancel));
    }
    let (sender, mut receiver) = mpsc::channel(4);
    call.run(shared, Outbox(sender), cancelled).await;
    drop(in_flight);
    drop(permit);
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

/// A session's call in flight; forgotten when its request ends, however it
/// ends (a client that goes away drops the handler mid-call), so that its id
/// can be used again.
struct InFlightCall {
    session: Arc<HttpSession>,
    id: RequestId,
}

impl Drop for InFlightCall {
    fn drop(&mut self) {
        self.session.in_flight.finish(&self.id);
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
    let shutdown = closing(app.closing.clone());
    tokio::spawn(async move {
        let outbox = Outbox(sender);
        let mut ticks = tokio::time::interval(keep_alive);
        tokio::pin!(shutdown);
        loop {
            let open = tokio::select! {
                // The stream ends with its session, or when the server shuts down.
                () = session.ended() => false,
                () = &mut shutdown => false,
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
        // No session to end: to a 2026-07-28 client (which has none), DELETE
        // is not a method of this endpoint, as with GET.
        None => StatusCode::METHOD_NOT_ALLOWED.into_response(),
        Some(id) if app.sessions.remove(id) => StatusCode::OK.into_response(),
        Some(_) => StatusCode::NOT_FOUND.into_response(),
    }
}
