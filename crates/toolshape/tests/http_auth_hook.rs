#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The client's authorization hook over real HTTP: credentials go with every
//! request, a 401 challenge is answered and the request resent, and a hook
//! that keeps asking to retry is stopped after a bounded number of tries.

mod http_support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::extract::Request;
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde_json::json;
use toolshape::HttpOptions;
use toolshape::client::{AuthChallenge, AuthFuture, AuthRequest, Client, HttpAuth, Negotiation};
use toolshape::protocol::ProtocolVersion;

use http_support::{Probe, server};

/// Accepts only `Authorization: Bearer good`; counts the refusals.
async fn guard(refused: Arc<AtomicUsize>, request: Request, next: Next) -> Response {
    let authorized = request
        .headers()
        .get("authorization")
        .is_some_and(|value| value == "Bearer good");
    if authorized {
        return next.run(request).await;
    }
    refused.fetch_add(1, Ordering::SeqCst);
    let mut response = StatusCode::UNAUTHORIZED.into_response();
    response.headers_mut().insert(
        "www-authenticate",
        HeaderValue::from_static(
            r#"Bearer resource_metadata="http://127.0.0.1/.well-known/oauth-protected-resource""#,
        ),
    );
    response
}

/// Starts with a stale token; on a challenge, takes the good one when `learns`.
#[derive(Debug)]
struct Tokens {
    good: std::sync::atomic::AtomicBool,
    learns: bool,
    challenges: AtomicUsize,
}

impl HttpAuth for Tokens {
    fn headers<'a>(&'a self, request: AuthRequest<'a>) -> AuthFuture<'a, HeaderMap> {
        assert!(["POST", "GET", "DELETE"].contains(&request.method));
        let token = if self.good.load(Ordering::SeqCst) {
            "good"
        } else {
            "stale"
        };
        Box::pin(async move {
            let mut headers = HeaderMap::new();
            headers.insert(
                "authorization",
                HeaderValue::from_str(&format!("Bearer {token}"))?,
            );
            Ok(headers)
        })
    }

    fn challenge<'a>(&'a self, challenge: AuthChallenge<'a>) -> AuthFuture<'a, bool> {
        assert_eq!(challenge.status, 401);
        assert!(challenge.headers.contains_key("www-authenticate"));
        // The refused request's own credentials come back with the challenge.
        assert!(
            challenge
                .sent
                .get("authorization")
                .is_some_and(|v| v == "Bearer stale")
        );
        self.challenges.fetch_add(1, Ordering::SeqCst);
        if self.learns {
            self.good.store(true, Ordering::SeqCst);
        }
        Box::pin(async { Ok(true) })
    }
}

async fn serve_guarded() -> (String, Arc<AtomicUsize>) {
    let refused = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&refused);
    let probe = Arc::new(Probe::default());
    let router =
        server(&probe, 100)
            .router(HttpOptions::default())
            .layer(axum::middleware::from_fn(
                move |request: Request, next: Next| guard(Arc::clone(&counter), request, next),
            ));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, router).await });
    (url, refused)
}

#[tokio::test]
async fn a_challenge_is_answered_and_the_request_sent_again() {
    let (url, refused) = serve_guarded().await;
    let tokens = Arc::new(Tokens {
        good: false.into(),
        learns: true,
        challenges: AtomicUsize::new(0),
    });
    let client = Client::builder()
        .http_auth(Arc::clone(&tokens) as Arc<dyn HttpAuth>)
        .connect_http(&url)
        .await
        .unwrap();
    let tools = client.list_tools().await.unwrap();
    assert!(!tools.is_empty());
    let result = client
        .call_tool("echo", json!({"text": "hi"}).as_object().cloned())
        .await
        .unwrap();
    assert!(!result.is_error, "{result:?}");
    assert_eq!(tokens.challenges.load(Ordering::SeqCst), 1);
    assert_eq!(refused.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_hook_that_never_gets_credentials_is_stopped() {
    let (url, refused) = serve_guarded().await;
    let tokens = Arc::new(Tokens {
        good: false.into(),
        learns: false,
        challenges: AtomicUsize::new(0),
    });
    let error = Client::builder()
        .http_auth(Arc::clone(&tokens) as Arc<dyn HttpAuth>)
        .connect_http(&url)
        .await
        .expect_err("never authorized");
    assert!(error.to_string().contains("401"), "{error}");
    // The first attempt and three more per request, no loop.
    let challenges = tokens.challenges.load(Ordering::SeqCst);
    assert!((3..=12).contains(&challenges), "{challenges} challenges");
    assert_eq!(refused.load(Ordering::SeqCst), challenges + challenges / 3);
}

/// Headers given once (`ClientBuilder::http_headers`) go with every request
/// of the connection: the handshake, the calls, the session's stream and its
/// end; without them the server's 401 is the caller's; the transport's own
/// headers cannot be given so; a hook's credentials win over them.
#[tokio::test]
async fn fixed_headers_go_with_every_request() {
    let (url, refused) = serve_guarded().await;
    let fixed = |token: &str| {
        let mut headers = HeaderMap::new();
        headers.insert("authorization", HeaderValue::from_str(token).unwrap());
        headers.insert("x-tenant", HeaderValue::from_static("acme"));
        headers
    };
    // A session (its GET stream, its DELETE at the end) and a stateless client.
    for negotiation in [
        Negotiation::Pinned(ProtocolVersion::V2025_11_25),
        Negotiation::Pinned(ProtocolVersion::V2026_07_28),
    ] {
        let client = Client::builder()
            .negotiation(negotiation)
            .http_headers(fixed("Bearer good"))
            .connect_http(&url)
            .await
            .unwrap();
        let result = client
            .call_tool("echo", json!({"text": "hi"}).as_object().cloned())
            .await
            .unwrap();
        assert!(!result.is_error, "{result:?}");
        client.close(std::time::Duration::from_secs(2)).await;
    }
    assert_eq!(refused.load(Ordering::SeqCst), 0);

    let error = Client::builder()
        .http_headers(fixed("Bearer stale"))
        .connect_http(&url)
        .await
        .expect_err("refused");
    assert!(error.to_string().contains("401"), "{error}");
    assert!(refused.load(Ordering::SeqCst) > 0);

    let mut twice = HeaderMap::new();
    twice.append("x-api-key", HeaderValue::from_static("a"));
    twice.append("x-api-key", HeaderValue::from_static("b"));
    let error = Client::builder()
        .http_headers(twice)
        .connect_http(&url)
        .await
        .expect_err("a name twice");
    assert!(error.to_string().contains("more than once"), "{error}");

    for name in [
        "mcp-session-id",
        "MCP-Protocol-Version",
        "content-type",
        "host",
    ] {
        let mut headers = HeaderMap::new();
        headers.insert(
            axum::http::HeaderName::from_bytes(name.as_bytes()).unwrap(),
            HeaderValue::from_static("x"),
        );
        let error = Client::builder()
            .http_headers(headers)
            .connect_http(&url)
            .await
            .expect_err("the transport's header");
        let message = error.to_string();
        assert!(message.contains(&name.to_ascii_lowercase()), "{message}");
    }

    let tokens = Arc::new(Tokens {
        good: true.into(),
        learns: false,
        challenges: AtomicUsize::new(0),
    });
    let client = Client::builder()
        .http_headers(fixed("Bearer stale"))
        .http_auth(tokens as Arc<dyn HttpAuth>)
        .connect_http(&url)
        .await
        .unwrap();
    assert!(!client.list_tools().await.unwrap().is_empty());
}

/// A redirect to another origin is not followed when fixed headers go
/// with the requests: the other origin never sees the key.
#[tokio::test]
async fn fixed_headers_never_follow_a_redirect_to_another_origin() {
    let seen = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&seen);
    let elsewhere = axum::Router::new().fallback(move |request: Request| {
        let counter = Arc::clone(&counter);
        async move {
            if request.headers().contains_key("x-api-key") {
                counter.fetch_add(1, Ordering::SeqCst);
            }
            StatusCode::NOT_FOUND
        }
    });
    let other = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let target = format!("http://{}/mcp", other.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(other, elsewhere).await });
    let redirecting = axum::Router::new().fallback(move || {
        let target = target.clone();
        async move { (StatusCode::TEMPORARY_REDIRECT, [("location", target)]) }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, redirecting).await });

    let mut headers = HeaderMap::new();
    headers.insert("x-api-key", HeaderValue::from_static("secret"));
    let error = Client::builder()
        .negotiation(Negotiation::Pinned(ProtocolVersion::V2025_11_25))
        .http_headers(headers)
        .connect_http(&url)
        .await
        .expect_err("the redirect is not followed");
    assert!(error.to_string().contains("307"), "{error}");
    assert_eq!(seen.load(Ordering::SeqCst), 0);
}
