//! Stateless 2026-07-28 requests: any instance can answer any of them.

use std::sync::Arc;

use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use toolshape_protocol::http::names;
use toolshape_protocol::subscriptions::ListenParams;
use toolshape_protocol::text::excerpt;
use toolshape_protocol::{ErrorObject, KnownRequest, ProtocolVersion, RequestId};

use super::super::notices::Listen;
use super::super::outbox::encode_result;
use super::super::request::{ParsedRequest, Unparsable};
use super::super::session::Session;
use super::app::{App, header};
use super::header_rules::check_modern_headers;
use super::streams::{StreamPlan, notification_stream};
use super::{response, run};

/// Whether `method` is one a stateless 2026-07-28 request may name (`ping`,
/// `initialize` and `logging/setLevel` are not).
fn is_modern_method(method: &str) -> bool {
    ProtocolVersion::V2026_07_28.has_request(method)
}

/// The revisions this endpoint serves: every one, or without handshake
/// sessions the stateless ones alone.
fn served(app: &App) -> Vec<ProtocolVersion> {
    ProtocolVersion::ALL
        .into_iter()
        .filter(|version| app.options.sessions || version.is_stateless())
        .collect()
}

/// [`served`], newest first, as an error's `supported` lists them.
fn served_strings(app: &App) -> Vec<&'static str> {
    served(app)
        .iter()
        .rev()
        .map(|version| version.as_str())
        .collect()
}

/// A request parsed as 2026-07-28 (its `_meta` names `version`).
pub(crate) async fn serve(
    app: &Arc<App>,
    headers: &HeaderMap,
    request: ParsedRequest,
    version: &str,
    caller: Option<Arc<str>>,
) -> Response {
    let refuse =
        |status: StatusCode, error: &ErrorObject| response::error(status, Some(&request.id), error);
    if let Err(error) = check_modern_headers(headers, &request, version) {
        return refuse(StatusCode::BAD_REQUEST, &error);
    }
    if !ProtocolVersion::parse(version).is_some_and(ProtocolVersion::is_stateless) {
        let error = ErrorObject::unsupported_protocol_version(version, &served_strings(app));
        return refuse(StatusCode::BAD_REQUEST, &error);
    }
    // Every 2026-07-28 request declares the client's capabilities.
    if let Err(error) = request.meta.require_modern() {
        return refuse(StatusCode::BAD_REQUEST, &error.to_error_object());
    }
    if !is_modern_method(request.body.method()) || !app.shared.offers(request.body.method()) {
        let error = ErrorObject::method_not_found(request.body.method());
        return refuse(StatusCode::NOT_FOUND, &error);
    }
    match &request.body {
        KnownRequest::Listen(params) => listen(app, &request.id, params),
        // An endpoint without sessions names only the revisions it serves.
        KnownRequest::Discover(_) if !app.options.sessions => {
            let result = crate::server::methods::discover_of(&app.shared, &served(app));
            response::json(StatusCode::OK, encode_result(&request.id, &result))
        }
        // A feature the server does not offer answers -32601: 404 too.
        _ => run::run(app, &Session::of_caller(caller), None, request, true).await,
    }
}

/// A request whose method is unknown or whose params are malformed, sent as
/// 2026-07-28: headers first, then 404 for an unknown method, the error otherwise.
pub(crate) fn refuse_unparsable(headers: &HeaderMap, unparsable: &Unparsable) -> Response {
    let refuse = |status: StatusCode, error: &ErrorObject| {
        response::error(status, Some(&unparsable.id), error)
    };
    let mismatch = match (
        header(headers, names::PROTOCOL_VERSION),
        &unparsable.meta_version,
        header(headers, names::METHOD),
    ) {
        (None, _, _) => Some("the MCP-Protocol-Version header is missing".to_owned()),
        (Some(header), Some(body), _) if header != body => Some(format!(
            "MCP-Protocol-Version {:?} does not match the body's {:?}",
            excerpt(header, 40),
            excerpt(body, 40)
        )),
        (_, _, None) => Some("the Mcp-Method header is missing".to_owned()),
        (_, _, Some(method)) if method != unparsable.method => Some(format!(
            "Mcp-Method {:?} does not match the body",
            excerpt(method, 100)
        )),
        _ => None,
    };
    if let Some(what) = mismatch {
        return refuse(StatusCode::BAD_REQUEST, &ErrorObject::header_mismatch(what));
    }
    if unparsable.unknown_method || !is_modern_method(&unparsable.method) {
        let error = ErrorObject::method_not_found(&unparsable.method);
        return refuse(StatusCode::NOT_FOUND, &error);
    }
    refuse(StatusCode::BAD_REQUEST, &unparsable.error)
}

/// `subscriptions/listen`: acknowledges the subscription (what it honours,
/// `notices.rs`), then sends the notifications it asked for, each tagged
/// with the subscription's id, until the client goes away.
fn listen(app: &Arc<App>, id: &RequestId, params: &ListenParams) -> Response {
    let permit = match app.stream_permit(Some(id)) {
        Ok(permit) => permit,
        Err(refused) => return refused,
    };
    let listen = Arc::new(Listen::new(&app.shared, id, params));
    let (tools, prompts, resources) = (Arc::clone(&listen), Arc::clone(&listen), listen);
    notification_stream(
        app,
        permit,
        StreamPlan {
            first: Some(tools.acknowledgement()),
            list_changed: Box::new(move || tools.tools_changed()),
            prompts_changed: Box::new(move || prompts.prompts_changed()),
            resource_changed: Box::new(move |event| resources.resource_changed(event)),
            elicitation_completed: None,
            ended: std::future::pending(),
            last: Some(crate::server::listens::ended(&app.shared, id)),
        },
    )
}
