//! The tower layer: every request needs a valid bearer token with the
//! scopes its operation requires, or gets the RFC 6750 answer.

use std::collections::BTreeSet;
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use axum::body::Body;
use axum::http::{HeaderValue, Method, Request, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;
use tower_layer::Layer;
use tower_service::Service;

use super::BearerAuth;
use super::tool_call::{Called, tools_called};
use super::verifier::VerifyError;
use crate::challenge;

/// The layer of a [`BearerAuth`]: `router.layer(auth.layer())`.
#[derive(Debug, Clone)]
pub struct BearerAuthLayer {
    pub(super) auth: BearerAuth,
}

impl<S> Layer<S> for BearerAuthLayer {
    type Service = BearerAuthService<S>;

    fn layer(&self, inner: S) -> Self::Service {
        BearerAuthService {
            inner,
            auth: self.auth.clone(),
        }
    }
}

/// The service [`BearerAuthLayer`] wraps around the protected one.
#[derive(Debug, Clone)]
pub struct BearerAuthService<S> {
    inner: S,
    auth: BearerAuth,
}

impl<S> Service<Request<Body>> for BearerAuthService<S>
where
    S: Service<Request<Body>, Error = Infallible> + Clone + Send + 'static,
    S::Response: IntoResponse,
    S::Future: Send + 'static,
{
    type Response = Response;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response, Infallible>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<Body>) -> Self::Future {
        // The clone that was driven to readiness serves this request.
        let clone = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, clone);
        let auth = self.auth.clone();
        Box::pin(async move {
            match admit(&auth, request).await {
                Ok(request) => inner.call(request).await.map(IntoResponse::into_response),
                Err(refusal) => Ok(refusal),
            }
        })
    }
}

/// The request with its grant attached, or the refusal.
async fn admit(auth: &BearerAuth, request: Request<Body>) -> Result<Request<Body>, Response> {
    let shared = &auth.shared;
    let token = match bearer_token(request.headers()) {
        Presented::Token(token) => token,
        Presented::Nothing => return Err(auth.unauthorized(None)),
        Presented::Malformed(why) => return Err(bad_request("invalid_request", why)),
    };
    let grant = match shared.verifier.verify(&token).await {
        Ok(grant) => grant,
        Err(VerifyError::Invalid(why)) => {
            tracing::debug!(reason = %why, "refused a token");
            return Err(auth.unauthorized(Some(&why)));
        }
        Err(VerifyError::Unavailable(why)) => {
            tracing::warn!(reason = %why, "cannot check tokens");
            let body = json!({"error": "temporarily_unavailable", "error_description": why});
            return Err((StatusCode::SERVICE_UNAVAILABLE, axum::Json(body)).into_response());
        }
    };
    // The scopes this request needs: the endpoint's, and each called tool's.
    let mut needed: BTreeSet<String> = shared.required.clone();
    let mut request = request;
    if !shared.tool_scopes.is_empty() && request.method() == Method::POST {
        let (parts, body) = request.into_parts();
        let bytes = match axum::body::to_bytes(body, shared.max_body_bytes).await {
            Ok(bytes) => bytes,
            Err(error) if timed_out(&error) => {
                let body = json!({
                    "jsonrpc": "2.0",
                    "error": {"code": -32600, "message": "the request body did not arrive in time"}
                });
                return Err((StatusCode::REQUEST_TIMEOUT, axum::Json(body)).into_response());
            }
            Err(_) => {
                // As the endpoint refuses a body over its own limit.
                let body = json!({
                    "jsonrpc": "2.0",
                    "error": {"code": -32600, "message": format!(
                        "body larger than {} bytes (the authorization layer reads it for tool scopes)",
                        shared.max_body_bytes
                    )}
                });
                return Err((StatusCode::PAYLOAD_TOO_LARGE, axum::Json(body)).into_response());
            }
        };
        match tools_called(&bytes) {
            Called::Tools(tools) => {
                for tool in tools {
                    if let Some(scopes) = shared.tool_scopes.get(&tool) {
                        needed.extend(scopes.iter().cloned());
                    }
                }
            }
            Called::Unreadable => {
                let body = json!({
                    "jsonrpc": "2.0",
                    "error": {"code": -32700, "message": "Parse error: the body is not a JSON-RPC message the authorization layer can read"}
                });
                return Err((StatusCode::BAD_REQUEST, axum::Json(body)).into_response());
            }
        }
        request = Request::from_parts(parts, Body::from(bytes));
    }
    if !needed.is_subset(&grant.scopes) {
        return Err(auth.insufficient_scope(&needed));
    }
    request.extensions_mut().insert(grant);
    Ok(request)
}

enum Presented {
    Token(String),
    Nothing,
    Malformed(&'static str),
}

/// The token of an `Authorization: Bearer <token>` header (RFC 6750 §2.1);
/// other schemes count as no token.
fn bearer_token(headers: &axum::http::HeaderMap) -> Presented {
    let mut values = headers.get_all(header::AUTHORIZATION).iter();
    let Some(value) = values.next() else {
        return Presented::Nothing;
    };
    if values.next().is_some() {
        return Presented::Malformed("more than one Authorization header");
    }
    let Ok(value) = value.to_str() else {
        return Presented::Malformed("the Authorization header is not text");
    };
    let (scheme, token) = value.split_once(' ').unwrap_or((value, ""));
    if !scheme.eq_ignore_ascii_case("bearer") {
        return Presented::Nothing;
    }
    let token = token.trim_matches(' ');
    let token68 = |b: u8| b.is_ascii_alphanumeric() || b"-._~+/=".contains(&b);
    if token.is_empty() || !token.bytes().all(token68) {
        return Presented::Malformed("the bearer token is not a token68 value");
    }
    Presented::Token(token.to_owned())
}

fn bad_request(error: &str, description: &str) -> Response {
    let body = json!({"error": error, "error_description": description});
    (StatusCode::BAD_REQUEST, axum::Json(body)).into_response()
}

impl BearerAuth {
    /// `401` with the challenge that leads a client to the metadata.
    pub(super) fn unauthorized(&self, invalid: Option<&str>) -> Response {
        let shared = &self.shared;
        let metadata = shared.metadata_url.as_str();
        let scope = join(&shared.required);
        let mut params = Vec::with_capacity(4);
        if let Some(why) = invalid {
            params.push(("error", "invalid_token"));
            params.push(("error_description", why));
        }
        params.push(("resource_metadata", metadata));
        if !scope.is_empty() {
            params.push(("scope", scope.as_str()));
        }
        let body = match invalid {
            Some(why) => json!({"error": "invalid_token", "error_description": why}),
            None => {
                json!({"error": "unauthorized", "error_description": "a bearer token is required"})
            }
        };
        challenge_response(StatusCode::UNAUTHORIZED, &params, body)
    }

    /// `403 insufficient_scope` naming every scope the operation needs.
    pub(super) fn insufficient_scope(&self, needed: &BTreeSet<String>) -> Response {
        let scope = join(needed);
        let description = "the token lacks a scope this operation needs";
        let params = [
            ("error", "insufficient_scope"),
            ("scope", scope.as_str()),
            ("resource_metadata", self.shared.metadata_url.as_str()),
            ("error_description", description),
        ];
        let body = json!({"error": "insufficient_scope", "error_description": description, "scope": scope});
        challenge_response(StatusCode::FORBIDDEN, &params, body)
    }
}

fn challenge_response(
    status: StatusCode,
    params: &[(&str, &str)],
    body: serde_json::Value,
) -> Response {
    let mut response = (status, axum::Json(body)).into_response();
    if let Ok(value) = HeaderValue::from_str(&challenge::format("Bearer", params)) {
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, value);
    }
    response
}

fn join(scopes: &BTreeSet<String>) -> String {
    scopes
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join(" ")
}

/// Whether reading a body failed because it did not arrive in time (an
/// `io::Error` of kind `TimedOut` among the causes: what toolshape's
/// servers give when a body misses its deadline).
fn timed_out(error: &(dyn std::error::Error + 'static)) -> bool {
    std::iter::successors(Some(error), |error| error.source()).any(|error| {
        error
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::TimedOut)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_body_that_timed_out_is_told_from_other_failures() {
        let late = axum::Error::new(std::io::Error::new(
            std::io::ErrorKind::TimedOut,
            "the request body did not arrive in time",
        ));
        assert!(timed_out(&late));
        let reset = axum::Error::new(std::io::Error::from(std::io::ErrorKind::ConnectionReset));
        assert!(!timed_out(&reset));
        assert!(!timed_out(&axum::Error::new("over the limit")));
    }
}
