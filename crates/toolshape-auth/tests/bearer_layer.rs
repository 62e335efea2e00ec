#![allow(clippy::unwrap_used, clippy::expect_used)]
//! `BearerAuth` in front of a real toolshape MCP server on loopback, with
//! keys the tests generate and a key set served over HTTP: valid tokens
//! (ES256, RS256) pass; expired, wrong audience, wrong issuer, unknown key
//! id, `alg: none`, HMAC, tampered and malformed ones get `401
//! invalid_token`; missing scopes (for every request, or for one tool) get
//! `403 insufficient_scope`; the metadata document is served; key sets are
//! cached, refetched for a new key id, and their absence is a `503`.

mod support;

use std::sync::Arc;
use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::json;
use toolshape::client::{AuthChallenge, AuthFuture, AuthRequest, Client, HttpAuth, Negotiation};
use toolshape::protocol::ProtocolVersion;
use toolshape_auth::server::{BearerAuth, JwksVerifier};

use support::*;

/// Protection by `jwks` for every request needing `required`.
fn protection(jwks: &str, required: &[&str]) -> impl FnOnce(&str) -> BearerAuth {
    let (jwks, required) = (
        jwks.to_owned(),
        required.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
    );
    move |resource: &str| {
        let verifier = JwksVerifier::new(ISSUER, resource)
            .unwrap()
            .jwks_url(&jwks)
            .unwrap();
        BearerAuth::builder(resource)
            .unwrap()
            .authorization_server(ISSUER)
            .verifier(Arc::new(verifier))
            .required_scopes(required)
            .tool_scopes("delete_file", ["files:write"])
            .build()
            .unwrap()
    }
}

#[tokio::test]
async fn no_token_gets_the_challenge_and_the_metadata_is_served() {
    let key = es256("k1");
    let jwks = serve_jwks(&[&key]).await;
    let server = serve_protected(protection(&jwks.url, &["mcp:tools"])).await;

    let reply = post(&server.url, &[], "tools/list", json!({})).await;
    assert_eq!(reply.status, 401, "{reply:?}");
    let challenge = reply.challenge();
    let metadata_url = format!("{}/.well-known/oauth-protected-resource/mcp", server.base);
    assert_eq!(
        challenge.param("resource_metadata"),
        Some(metadata_url.as_str())
    );
    assert_eq!(challenge.param("scope"), Some("mcp:tools"));
    assert_eq!(
        challenge.param("error"),
        None,
        "no error code without credentials (RFC 6750 §3.1)"
    );

    let text = reqwest::get(&metadata_url)
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let document: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        document,
        json!({
            "resource": server.url,
            "authorization_servers": [ISSUER],
            "scopes_supported": ["mcp:tools"],
            "bearer_methods_supported": ["header"],
        })
    );
    // A token in the query string is not a credential (RFC 6750 §2.3 is not offered).
    let token = mint(&key, &claims(&server.url, "mcp:tools"));
    let reply = post(
        &format!("{}?access_token={token}", server.url),
        &[],
        "tools/list",
        json!({}),
    )
    .await;
    assert_eq!(reply.status, 401);
}

/// Sends one fixed bearer token.
#[derive(Debug)]
struct Fixed(String);

impl HttpAuth for Fixed {
    fn headers<'a>(&'a self, _: AuthRequest<'a>) -> AuthFuture<'a, http::HeaderMap> {
        Box::pin(async move {
            let mut headers = http::HeaderMap::new();
            headers.insert("authorization", format!("Bearer {}", self.0).parse()?);
            Ok(headers)
        })
    }

    fn challenge<'a>(&'a self, _: AuthChallenge<'a>) -> AuthFuture<'a, bool> {
        Box::pin(async { Ok(false) })
    }
}

#[tokio::test]
async fn valid_es256_and_rs256_tokens_reach_the_tools() {
    let (ec, rsa) = (es256("ec-1"), rs256("rsa-1"));
    let jwks = serve_jwks(&[&ec, &rsa]).await;
    let server = serve_protected(protection(&jwks.url, &["mcp:tools"])).await;
    for key in [&ec, &rsa] {
        let token = mint(key, &claims(&server.url, "mcp:tools files:read"));
        for version in [ProtocolVersion::V2026_07_28, ProtocolVersion::V2025_11_25] {
            let client = Client::builder()
                .negotiation(Negotiation::Pinned(version))
                .http_auth(Arc::new(Fixed(token.clone())))
                .connect_http(&server.url)
                .await
                .unwrap_or_else(|e| panic!("{:?} {version:?}: {e}", key.algorithm));
            let tools = client.list_tools().await.unwrap();
            assert_eq!(tools.len(), 2);
            let echoed = client
                .call_tool(
                    "echo",
                    Some(json!({"text": "hi"}).as_object().unwrap().clone()),
                )
                .await
                .unwrap();
            assert_eq!(echoed.text(), "hi");
            client.close(Duration::from_secs(1)).await;
        }
    }
    // One fetch served every token: the keys are cached.
    assert_eq!(jwks.fetches(), 1);
}

#[tokio::test]
async fn invalid_tokens_get_401_invalid_token() {
    let (key, stranger) = (es256("k1"), es256("k2"));
    let jwks = serve_jwks(&[&key]).await;
    let server = serve_protected(protection(&jwks.url, &[])).await;
    let good = claims(&server.url, "");
    let with = |change: serde_json::Value| {
        let mut claims = good.clone();
        for (name, value) in change.as_object().unwrap() {
            if value.is_null() {
                claims.as_object_mut().unwrap().remove(name);
            } else {
                claims[name] = value.clone();
            }
        }
        claims
    };
    let valid = mint(&key, &good);
    let b64 = |value: serde_json::Value| URL_SAFE_NO_PAD.encode(value.to_string());
    let unsigned = format!(
        "{}.{}.",
        b64(json!({"alg": "none", "typ": "JWT", "kid": "k1"})),
        b64(good.clone())
    );
    let hmac = {
        let mut header = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::HS256);
        header.kid = Some("k1".into());
        let secret =
            jsonwebtoken::EncodingKey::from_secret(key.jwk["x"].as_str().unwrap().as_bytes());
        jsonwebtoken::encode(&header, &good, &secret).unwrap()
    };
    let tampered = {
        let (head, _) = valid.rsplit_once('.').unwrap();
        let other = mint(&key, &with(json!({"sub": "admin"})));
        format!("{head}.{}", other.rsplit_once('.').unwrap().1)
    };
    let cases = [
        (
            "expired",
            mint(&key, &with(json!({"exp": now() - 600}))),
            "expired",
        ),
        (
            "wrong audience",
            mint(&key, &with(json!({"aud": "https://other.example/mcp"}))),
            "not issued for this resource",
        ),
        (
            "no audience",
            mint(&key, &with(json!({"aud": null}))),
            "audience",
        ),
        (
            "wrong issuer",
            mint(&key, &with(json!({"iss": "https://evil.example"}))),
            "another authorization server",
        ),
        (
            "no expiry",
            mint(&key, &with(json!({"exp": null}))),
            "expiry",
        ),
        (
            "not yet valid",
            mint(&key, &with(json!({"nbf": now() + 3600}))),
            "not valid yet",
        ),
        ("unknown key id", mint(&stranger, &good), "no key"),
        (
            "alg none",
            unsigned,
            "not a JWT signed with a supported algorithm",
        ),
        (
            "HMAC with public material",
            hmac,
            "algorithm is not accepted",
        ),
        ("tampered payload", tampered, "signature"),
        ("not a JWT", "abc.def".to_owned(), "not a JWT"),
    ];
    for (case, token, reason) in cases {
        let reply = post(&server.url, &bearer(&token), "tools/list", json!({})).await;
        assert_eq!(reply.status, 401, "{case}: {reply:?}");
        let challenge = reply.challenge();
        assert_eq!(challenge.param("error"), Some("invalid_token"), "{case}");
        let description = challenge.param("error_description").unwrap_or_default();
        assert!(
            description.contains(reason),
            "{case}: {description:?} lacks {reason:?}"
        );
        assert!(challenge.param("resource_metadata").is_some(), "{case}");
        assert_eq!(reply.json()["error"], "invalid_token", "{case}");
    }
    // The valid one passes, so the refusals above were about the tokens.
    let reply = post(&server.url, &bearer(&valid), "tools/list", json!({})).await;
    assert_eq!(reply.status, 200, "{reply:?}");
}

#[tokio::test]
async fn missing_scopes_get_403_insufficient_scope() {
    let key = es256("k1");
    let jwks = serve_jwks(&[&key]).await;
    let server = serve_protected(protection(&jwks.url, &["mcp:tools"])).await;
    let token = |scope: &str| mint(&key, &claims(&server.url, scope));

    let reply = post(
        &server.url,
        &bearer(&token("profile")),
        "tools/list",
        json!({}),
    )
    .await;
    assert_eq!(reply.status, 403, "{reply:?}");
    let challenge = reply.challenge();
    assert_eq!(challenge.param("error"), Some("insufficient_scope"));
    assert_eq!(challenge.param("scope"), Some("mcp:tools"));
    assert!(challenge.param("resource_metadata").is_some());

    // Scopes per tool: echo needs only the endpoint's; delete_file also files:write.
    let basic = token("mcp:tools");
    let echo = json!({"name": "echo", "arguments": {"text": "x"}});
    let delete = json!({"name": "delete_file", "arguments": {"path": "a"}});
    assert_eq!(
        post(&server.url, &bearer(&basic), "tools/call", echo.clone())
            .await
            .status,
        200
    );
    let reply = post(&server.url, &bearer(&basic), "tools/call", delete.clone()).await;
    assert_eq!(reply.status, 403, "{reply:?}");
    assert_eq!(
        reply.challenge().param("scope"),
        Some("files:write mcp:tools")
    );
    let both = token("mcp:tools files:write");
    let reply = post(&server.url, &bearer(&both), "tools/call", delete.clone()).await;
    assert_eq!(reply.status, 200, "{reply:?}");
    assert!(reply.body.contains("deleted a"), "{}", reply.body);

    // The tool is read from the body, not from a header that could lie.
    let mut lying = bearer(&basic);
    lying.push(("mcp-name", "echo".to_owned()));
    let reply = post(&server.url, &lying, "tools/call", delete).await;
    assert_eq!(reply.status, 403, "{reply:?}");
}

#[tokio::test]
async fn a_new_key_id_refetches_the_key_set() {
    let (old, new) = (es256("old"), rs256("new"));
    let jwks = serve_jwks(&[&old]).await;
    let url = jwks.url.clone();
    let server = serve_protected(move |resource: &str| {
        let verifier = JwksVerifier::new(ISSUER, resource)
            .unwrap()
            .jwks_url(&url)
            .unwrap()
            .refetch_interval(Duration::ZERO);
        BearerAuth::builder(resource)
            .unwrap()
            .authorization_server(ISSUER)
            .verifier(Arc::new(verifier))
            .build()
            .unwrap()
    })
    .await;
    let rotated = mint(&new, &claims(&server.url, ""));
    let reply = post(&server.url, &bearer(&rotated), "tools/list", json!({})).await;
    assert_eq!(
        reply.status, 401,
        "the new key is not published yet: {reply:?}"
    );
    jwks.set(&[&old, &new]);
    let reply = post(&server.url, &bearer(&rotated), "tools/list", json!({})).await;
    assert_eq!(reply.status, 200, "published now: {reply:?}");
    let fetched = jwks.fetches();
    for key in [&old, &new] {
        let token = mint(key, &claims(&server.url, ""));
        assert_eq!(
            post(&server.url, &bearer(&token), "tools/list", json!({}))
                .await
                .status,
            200
        );
    }
    assert_eq!(
        jwks.fetches(),
        fetched,
        "known keys are served from the cache"
    );
}

#[tokio::test]
async fn an_unreachable_key_set_is_503_not_401() {
    let key = es256("k1");
    // A port nobody listens on.
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let server = serve_protected(protection(&format!("http://{closed}/jwks"), &[])).await;
    let token = mint(&key, &claims(&server.url, ""));
    let reply = post(&server.url, &bearer(&token), "tools/list", json!({})).await;
    assert_eq!(reply.status, 503, "{reply:?}");
}

#[tokio::test]
async fn a_failing_key_set_is_not_fetched_again_for_each_token() {
    let key = es256("k1");
    let (url, fetches) = serve_failing_jwks().await;
    let server = serve_protected(protection(&url, &[])).await;
    for n in 0..5 {
        // A new token each time, as a peer sending bad ones would.
        let token = mint(&key, &claims(&server.url, &format!("scope-{n}")));
        let reply = post(&server.url, &bearer(&token), "tools/list", json!({})).await;
        assert_eq!(reply.status, 503, "{reply:?}");
    }
    // Within the refetch interval (30 s), one fetch for them all.
    assert_eq!(fetches.load(std::sync::atomic::Ordering::SeqCst), 1);
}

#[tokio::test]
async fn malformed_credentials_are_400() {
    let key = es256("k1");
    let jwks = serve_jwks(&[&key]).await;
    let server = serve_protected(protection(&jwks.url, &[])).await;
    let token = mint(&key, &claims(&server.url, ""));
    let twice = vec![
        ("authorization", format!("Bearer {token}")),
        ("authorization", format!("Bearer {token}")),
    ];
    assert_eq!(
        post(&server.url, &twice, "tools/list", json!({}))
            .await
            .status,
        400
    );
    let spaces = vec![("authorization", "Bearer a b".to_owned())];
    assert_eq!(
        post(&server.url, &spaces, "tools/list", json!({}))
            .await
            .status,
        400
    );
    // Another scheme is no bearer token at all.
    let basic = vec![("authorization", "Basic dXNlcjpwYXNz".to_owned())];
    assert_eq!(
        post(&server.url, &basic, "tools/list", json!({}))
            .await
            .status,
        401
    );
}

#[tokio::test]
async fn keys_found_through_the_issuer_metadata() {
    let key = es256("k1");
    let jwks = serve_jwks(&[&key]).await;
    // An authorization server whose metadata names the key set.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let issuer = format!("http://{}", listener.local_addr().unwrap());
    let document = json!({"issuer": issuer, "jwks_uri": jwks.url});
    let app = axum::Router::new().route(
        "/.well-known/oauth-authorization-server",
        axum::routing::get(move || {
            let document = document.clone();
            async move { axum::Json(document) }
        }),
    );
    tokio::spawn(async move { axum::serve(listener, app).await });
    let as_issuer = issuer.clone();
    let server = serve_protected(move |resource: &str| {
        let verifier = JwksVerifier::new(&as_issuer, resource).unwrap();
        BearerAuth::builder(resource)
            .unwrap()
            .authorization_server(&as_issuer)
            .verifier(Arc::new(verifier))
            .build()
            .unwrap()
    })
    .await;
    let mut good = claims(&server.url, "");
    good["iss"] = json!(issuer);
    let reply = post(
        &server.url,
        &bearer(&mint(&key, &good)),
        "tools/list",
        json!({}),
    )
    .await;
    assert_eq!(reply.status, 200, "{reply:?}");
}
