//! `GET /health`, `GET /tools` and `GET /openapi.json`.

use std::sync::Arc;

use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::Response;
use serde_json::{Value, json};
use toolshape_protocol::text::excerpt;

use super::reply;
use super::state::OtcState;

/// No credentials needed: 200 when calls are taken, 503 once shutdown has
/// begun, or with a `reason` while [`OtcOptions::readiness`](super::OtcOptions::readiness) says no.
pub(crate) async fn health(State(state): State<Arc<OtcState>>, headers: HeaderMap) -> Response {
    if let Err(refused) = state.check_origin(&headers) {
        return refused;
    }
    if !state.is_ready() {
        return reply::json(
            StatusCode::SERVICE_UNAVAILABLE,
            &json!({"status": "unavailable"}),
        );
    }
    match state
        .options
        .readiness
        .as_ref()
        .map(super::Readiness::check)
    {
        Some(Err(reason)) => reply::json(
            StatusCode::SERVICE_UNAVAILABLE,
            &json!({"status": "unavailable", "reason": reason}),
        ),
        _ => reply::json(StatusCode::OK, &json!({"status": "ok"})),
    }
}

/// A method a path of the endpoint does not take: `405` with the error body
/// every refusal has (axum adds the `Allow` header).
pub(crate) async fn method_not_allowed(method: Method, uri: Uri) -> Response {
    reply::refuse(
        StatusCode::METHOD_NOT_ALLOWED,
        format!(
            "{} is not allowed on {} (the Allow header says what is)",
            excerpt(method.as_str(), 40),
            excerpt(uri.path(), 200)
        ),
    )
}

/// Every tool, every version, under `items` and (for older clients) `tools`.
pub(crate) async fn tools(State(state): State<Arc<OtcState>>, headers: HeaderMap) -> Response {
    if let Err(refused) = state.admit(&headers) {
        return refused;
    }
    rendered(state.listing.get(&state, listing).await)
}

/// A rendered document as the answer, or `500` if it could not be rendered.
fn rendered(document: Option<axum::body::Bytes>) -> Response {
    match document {
        Some(document) => reply::json_bytes(StatusCode::OK, document),
        None => reply::refuse(
            StatusCode::INTERNAL_SERVER_ERROR,
            "the document could not be rendered",
        ),
    }
}

/// The body of `GET /tools`: the items twice, unless two copies would pass
/// what a client reads ([`crate::wire::MAX_LISTING_BYTES`]); then once,
/// under `items` (older clients' `tools` left out).
fn listing(state: &OtcState) -> Value {
    let items = crate::wire::listing(&state.registry.tools());
    let items = serde_json::to_value(&items).unwrap_or(Value::Array(Vec::new()));
    let size = crate::wire::json_len(&items);
    let version = crate::wire::PROTOCOL_VERSIONS[0];
    if size.saturating_mul(2).saturating_add(1024) > crate::wire::MAX_LISTING_BYTES {
        if size.saturating_add(1024) > crate::wire::MAX_LISTING_BYTES {
            tracing::warn!(
                bytes = size,
                "the tool listing is larger than an OTC client reads (16 MiB): register fewer or smaller tools"
            );
        }
        return json!({"$schema": version, "items": items});
    }
    json!({"$schema": version, "items": items, "tools": items})
}

/// The OpenAPI document of what this server implements.
pub(crate) async fn openapi(State(state): State<Arc<OtcState>>, headers: HeaderMap) -> Response {
    if let Err(refused) = state.admit(&headers) {
        return refused;
    }
    rendered(state.openapi.get(&state, super::openapi::render).await)
}
