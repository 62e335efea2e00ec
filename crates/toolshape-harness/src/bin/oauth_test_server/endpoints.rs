//! The test authorization server's endpoints.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use axum::extract::{Form, Query, State as Shared};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use serde_json::{Value, json};

use super::state::{Client, Grant, State, lock};

type Params = HashMap<String, String>;

pub(crate) fn router(state: Arc<State>) -> Router {
    Router::new()
        .route("/.well-known/oauth-authorization-server", get(metadata))
        .route("/jwks", get(jwks))
        .route("/register", post(register))
        .route("/authorize", get(authorize))
        .route("/token", post(token))
        .route("/stats", get(stats))
        .with_state(state)
}

fn oauth_error(status: StatusCode, error: &str, description: &str) -> Response {
    (
        status,
        Json(json!({"error": error, "error_description": description})),
    )
        .into_response()
}

async fn metadata(Shared(state): Shared<Arc<State>>) -> Json<Value> {
    let issuer = &state.issuer;
    let mut document = json!({
        "issuer": issuer,
        "authorization_endpoint": format!("{issuer}/authorize"),
        "token_endpoint": format!("{issuer}/token"),
        "registration_endpoint": format!("{issuer}/register"),
        "jwks_uri": format!("{issuer}/jwks"),
        "response_types_supported": ["code"],
        "grant_types_supported": ["authorization_code", "refresh_token", "client_credentials"],
        "token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post", "none"],
        "code_challenge_methods_supported": ["S256"],
        "authorization_response_iss_parameter_supported": true,
    });
    if !state.options.scopes.is_empty() {
        document["scopes_supported"] = json!(state.options.scopes);
    }
    Json(document)
}

async fn jwks(Shared(state): Shared<Arc<State>>) -> Json<Value> {
    Json(json!({"keys": [state.jwk]}))
}

async fn stats(Shared(state): Shared<Arc<State>>) -> Json<Value> {
    Json(state.stats.json())
}

async fn register(Shared(state): Shared<Arc<State>>, Json(body): Json<Value>) -> Response {
    let redirect_uris: Vec<String> = body["redirect_uris"]
        .as_array()
        .map(|uris| {
            uris.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    if redirect_uris.is_empty() {
        return oauth_error(
            StatusCode::BAD_REQUEST,
            "invalid_redirect_uri",
            "redirect_uris is required",
        );
    }
    let public = body["token_endpoint_auth_method"].as_str() == Some("none");
    // RFC 7591 §2: without `grant_types`, the client uses authorization codes only.
    let refreshes = body["grant_types"]
        .as_array()
        .is_some_and(|grants| grants.iter().any(|g| g == "refresh_token"));
    let client_id = state.random_id();
    let secret = (!public).then(|| state.random_id());
    lock(&state.clients).insert(
        client_id.clone(),
        Client {
            secret: secret.clone(),
            redirect_uris: redirect_uris.clone(),
            refreshes,
        },
    );
    state.stats.registrations.fetch_add(1, Ordering::SeqCst);
    let mut answer = json!({
        "client_id": client_id,
        "redirect_uris": redirect_uris,
        "token_endpoint_auth_method": if public { "none" } else { "client_secret_basic" },
        "grant_types": if refreshes { json!(["authorization_code", "refresh_token"]) } else { json!(["authorization_code"]) },
        "client_name": body["client_name"],
    });
    if let Some(secret) = secret {
        answer["client_secret"] = json!(secret);
        answer["client_secret_expires_at"] = json!(0);
    }
    (StatusCode::CREATED, Json(answer)).into_response()
}

/// Approves at once: redirects back with a code bound to the request.
async fn authorize(Shared(state): Shared<Arc<State>>, Query(query): Query<Params>) -> Response {
    let param = |name: &str| query.get(name).cloned().unwrap_or_default();
    let client_id = param("client_id");
    let redirect_uri = param("redirect_uri");
    let known = lock(&state.clients)
        .get(&client_id)
        .is_some_and(|client| client.redirect_uris.contains(&redirect_uri));
    if !known {
        state.stats.refused.fetch_add(1, Ordering::SeqCst);
        return oauth_error(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            "unknown client or redirect_uri",
        );
    }
    if param("response_type") != "code"
        || param("code_challenge_method") != "S256"
        || param("code_challenge").is_empty()
        || param("resource").is_empty()
    {
        state.stats.refused.fetch_add(1, Ordering::SeqCst);
        return oauth_error(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            "response_type=code, PKCE S256 and resource are required",
        );
    }
    let code = state.random_id();
    lock(&state.codes).insert(
        code.clone(),
        Grant {
            client_id,
            redirect_uri: redirect_uri.clone(),
            challenge: param("code_challenge"),
            scope: query.get("scope").cloned(),
            resource: param("resource"),
        },
    );
    state.stats.authorizations.fetch_add(1, Ordering::SeqCst);
    let Ok(mut target) = url::Url::parse(&redirect_uri) else {
        return oauth_error(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            "bad redirect_uri",
        );
    };
    target
        .query_pairs_mut()
        .append_pair("code", &code)
        .append_pair("state", &param("state"))
        .append_pair("iss", &state.issuer);
    (StatusCode::FOUND, [(header::LOCATION, target.to_string())]).into_response()
}

/// The client a token request authenticates as (Basic or form), checked.
fn authenticate(state: &State, headers: &HeaderMap, form: &Params) -> Option<String> {
    let basic = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Basic "))
        .and_then(|v| STANDARD.decode(v).ok())
        .and_then(|v| String::from_utf8(v).ok());
    let (id, secret) = match basic {
        Some(pair) => {
            let (id, secret) = pair.split_once(':')?;
            let decode = |s: &str| {
                url::form_urlencoded::parse(format!("x={s}").as_bytes())
                    .next()
                    .map(|(_, v)| v.into_owned())
                    .unwrap_or_default()
            };
            (decode(id), Some(decode(secret)))
        }
        None => (
            form.get("client_id").cloned()?,
            form.get("client_secret").cloned(),
        ),
    };
    let client = lock(&state.clients).get(&id).cloned()?;
    match (&client.secret, &secret) {
        (None, _) => Some(id),
        (Some(expected), Some(given)) if expected == given => Some(id),
        _ => None,
    }
}

async fn token(
    Shared(state): Shared<Arc<State>>,
    headers: HeaderMap,
    Form(form): Form<Params>,
) -> Response {
    let refuse = |status, error: &str, description: &str| {
        state.stats.refused.fetch_add(1, Ordering::SeqCst);
        oauth_error(status, error, description)
    };
    let Some(client_id) = authenticate(&state, &headers, &form) else {
        return refuse(
            StatusCode::UNAUTHORIZED,
            "invalid_client",
            "client authentication failed",
        );
    };
    let param = |name: &str| form.get(name).cloned().unwrap_or_default();
    let grant = match param("grant_type").as_str() {
        "authorization_code" => {
            let Some(grant) = lock(&state.codes).remove(&param("code")) else {
                return refuse(
                    StatusCode::BAD_REQUEST,
                    "invalid_grant",
                    "unknown or used code",
                );
            };
            let verifier = param("code_verifier");
            let challenge = URL_SAFE_NO_PAD.encode(ring::digest::digest(
                &ring::digest::SHA256,
                verifier.as_bytes(),
            ));
            if grant.client_id != client_id
                || grant.redirect_uri != param("redirect_uri")
                || grant.challenge != challenge
                || grant.resource != param("resource")
            {
                return refuse(
                    StatusCode::BAD_REQUEST,
                    "invalid_grant",
                    "client, redirect_uri, code_verifier or resource do not match",
                );
            }
            state.stats.code_grants.fetch_add(1, Ordering::SeqCst);
            grant
        }
        "refresh_token" => {
            let Some(grant) = lock(&state.refresh_tokens).remove(&param("refresh_token")) else {
                return refuse(
                    StatusCode::BAD_REQUEST,
                    "invalid_grant",
                    "unknown refresh token",
                );
            };
            if grant.client_id != client_id {
                return refuse(
                    StatusCode::BAD_REQUEST,
                    "invalid_grant",
                    "another client's refresh token",
                );
            }
            // RFC 6749 §6: a refresh never widens the grant.
            let held: Vec<&str> = grant
                .scope
                .as_deref()
                .unwrap_or_default()
                .split(' ')
                .collect();
            if let Some(asked) = form.get("scope")
                && !asked
                    .split(' ')
                    .filter(|s| !s.is_empty())
                    .all(|s| held.contains(&s))
            {
                return refuse(
                    StatusCode::BAD_REQUEST,
                    "invalid_scope",
                    "a refresh cannot widen the scope",
                );
            }
            state.stats.refresh_grants.fetch_add(1, Ordering::SeqCst);
            grant
        }
        "client_credentials" => {
            let confidential = lock(&state.clients)
                .get(&client_id)
                .is_some_and(|c| c.secret.is_some());
            if !confidential || param("resource").is_empty() {
                return refuse(
                    StatusCode::BAD_REQUEST,
                    "unauthorized_client",
                    "a confidential client and a resource are required",
                );
            }
            state
                .stats
                .client_credentials_grants
                .fetch_add(1, Ordering::SeqCst);
            Grant {
                client_id: client_id.clone(),
                redirect_uri: String::new(),
                challenge: String::new(),
                scope: form.get("scope").cloned(),
                resource: param("resource"),
            }
        }
        _ => {
            return refuse(
                StatusCode::BAD_REQUEST,
                "unsupported_grant_type",
                "unsupported grant_type",
            );
        }
    };
    let access = match state.access_token(&client_id, grant.scope.as_deref(), &grant.resource) {
        Ok(token) => token,
        Err(error) => {
            return oauth_error(StatusCode::INTERNAL_SERVER_ERROR, "server_error", &error);
        }
    };
    let mut answer = json!({
        "access_token": access,
        "token_type": "Bearer",
        "expires_in": state.options.token_lifetime,
    });
    if let Some(scope) = &grant.scope {
        answer["scope"] = json!(scope);
    }
    let refreshes = lock(&state.clients)
        .get(&client_id)
        .is_some_and(|client| client.refreshes);
    if refreshes && !grant.redirect_uri.is_empty() {
        let refresh = state.random_id();
        lock(&state.refresh_tokens).insert(refresh.clone(), grant);
        answer["refresh_token"] = json!(refresh);
    }
    ([(header::CACHE_CONTROL, "no-store")], Json(answer)).into_response()
}
