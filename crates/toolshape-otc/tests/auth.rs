//! Authentication over real HTTP: API keys in both headers, HS256 JWTs
//! accepted and refused (expired, too far ahead, wrong `aud`, wrong
//! signature, `alg: none`, another algorithm, no `exp`), `/health` open.

mod common;

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use common::{TestResult, send, start, tools};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use toolshape_otc::{OtcAuth, OtcOptions};

const KEY: &str = "a-test-api-key-0123456789";
const SECRET: &[u8] = b"a-shared-hs256-secret-of-32-bytes-or-more!";

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

fn token(claims: &Value, secret: &[u8], algorithm: Algorithm) -> String {
    jsonwebtoken::encode(
        &Header::new(algorithm),
        claims,
        &EncodingKey::from_secret(secret),
    )
    .unwrap_or_default()
}

/// A token with `alg: none` and no signature.
fn unsigned(claims: &Value) -> String {
    let engine = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let header = engine.encode(br#"{"alg":"none","typ":"JWT"}"#);
    let payload = engine.encode(serde_json::to_vec(claims).unwrap_or_default());
    format!("{header}.{payload}.")
}

async fn status_with(
    running: &common::Running,
    headers: &[(&str, &str)],
) -> Result<u16, reqwest::Error> {
    let reply = send(running, "get", "/tools", headers, None).await?;
    if reply.status == 401 {
        assert_eq!(
            reply
                .headers
                .get("www-authenticate")
                .and_then(|v| v.to_str().ok()),
            Some("Bearer")
        );
        assert!(reply.body["message"].is_string());
    }
    Ok(reply.status)
}

#[tokio::test]
async fn api_keys_in_either_header() -> TestResult {
    let (registry, _) = tools::registry();
    let mut options = OtcOptions::default();
    options.auth = OtcAuth::none().api_key(KEY)?;
    let running = start(&registry, options).await?;
    assert_eq!(status_with(&running, &[("OXP-API-Key", KEY)]).await?, 200);
    assert_eq!(status_with(&running, &[("OTC-API-Key", KEY)]).await?, 200);
    assert_eq!(
        status_with(&running, &[("OXP-API-Key", "a-test-api-key-012345678")]).await?,
        401
    );
    assert_eq!(status_with(&running, &[]).await?, 401);
    let bearer = format!(
        "Bearer {}",
        token(&json!({"exp": now() + 60}), SECRET, Algorithm::HS256)
    );
    assert_eq!(
        status_with(&running, &[("authorization", &bearer)]).await?,
        401
    );
    // The call endpoint and the document need the key too; health does not.
    let call = send(
        &running,
        "post",
        "/tools/call",
        &[],
        Some(br#"{"request":{"tool_id":"Calculator.Add","input":{"a":1,"b":1}}}"#.to_vec()),
    )
    .await?;
    assert_eq!(call.status, 401);
    let keyed = send(
        &running,
        "post",
        "/tools/call",
        &[("OXP-API-Key", KEY)],
        Some(br#"{"request":{"tool_id":"Calculator.Add","input":{"a":1,"b":1}}}"#.to_vec()),
    )
    .await?;
    assert_eq!(keyed.body["result"]["value"], 2);
    assert_eq!(
        send(&running, "get", "/openapi.json", &[], None)
            .await?
            .status,
        401
    );
    let document = send(
        &running,
        "get",
        "/openapi.json",
        &[("OXP-API-Key", KEY)],
        None,
    )
    .await?;
    assert_eq!(
        document.body["paths"]["/tools"]["get"]["security"],
        json!([{"oxpApiKey": []}, {"otcApiKey": []}])
    );
    assert_eq!(
        send(&running, "get", "/health", &[], None).await?.status,
        200
    );
    // A caller without the key is refused from its headers, before its
    // body is read: one that never sends it is not held to the body's time.
    let mut slow = tokio::net::TcpStream::connect(running.address).await?;
    slow.write_all(
        b"POST /tools/call HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
          Content-Length: 4000000\r\n\r\n{\"request\":",
    )
    .await?;
    let mut head = vec![0_u8; 12];
    tokio::time::timeout(Duration::from_secs(5), slow.read_exact(&mut head)).await??;
    assert_eq!(&head, b"HTTP/1.1 401");
    Ok(())
}

#[tokio::test]
async fn jwts_accepted_and_refused() -> TestResult {
    let (registry, _) = tools::registry();
    let mut options = OtcOptions::default();
    options.auth = OtcAuth::none().jwt_hs256(SECRET, Some("otc-tests".into()))?;
    let running = start(&registry, options).await?;
    let bearer = |token: String| format!("Bearer {token}");
    let good = json!({"exp": now() + 300, "aud": "otc-tests", "sub": "ada"});
    let cases: Vec<(&str, String, u16)> = vec![
        ("valid", token(&good, SECRET, Algorithm::HS256), 200),
        (
            "almost 15 minutes ahead",
            token(
                &json!({"exp": now() + 890, "aud": "otc-tests"}),
                SECRET,
                Algorithm::HS256,
            ),
            200,
        ),
        (
            "expired",
            token(
                &json!({"exp": now() - 60, "aud": "otc-tests"}),
                SECRET,
                Algorithm::HS256,
            ),
            401,
        ),
        (
            "too far ahead",
            token(
                &json!({"exp": now() + 16 * 60, "aud": "otc-tests"}),
                SECRET,
                Algorithm::HS256,
            ),
            401,
        ),
        (
            "wrong aud",
            token(
                &json!({"exp": now() + 60, "aud": "someone-else"}),
                SECRET,
                Algorithm::HS256,
            ),
            401,
        ),
        (
            "no aud",
            token(&json!({"exp": now() + 60}), SECRET, Algorithm::HS256),
            401,
        ),
        (
            "no exp",
            token(&json!({"aud": "otc-tests"}), SECRET, Algorithm::HS256),
            401,
        ),
        (
            "wrong signature",
            token(
                &good,
                b"another-secret-of-32-bytes-or-more-!!!!",
                Algorithm::HS256,
            ),
            401,
        ),
        ("alg none", unsigned(&good), 401),
        ("HS384", token(&good, SECRET, Algorithm::HS384), 401),
        ("garbage", "not.a.token".to_owned(), 401),
    ];
    for (case, token, expected) in cases {
        let status = status_with(&running, &[("authorization", &bearer(token))]).await?;
        assert_eq!(status, expected, "{case}");
    }
    assert_eq!(
        status_with(&running, &[("OXP-API-Key", KEY)]).await?,
        401,
        "API keys are not configured"
    );
    // The client mints its own short-lived tokens from the shared secret.
    let client = toolshape_otc::OtcClient::builder(running.base.clone())
        .jwt_secret(SECRET.to_vec(), Some("otc-tests".into()))
        .build()?;
    let sum: i64 = client
        .call("Calculator.Add", json!({"a": 20, "b": 22}))
        .await?;
    assert_eq!(sum, 42);
    Ok(())
}

/// The token an Arcade Engine sends its workers (`arcade-serve` 3.6.0:
/// HS256, `aud: "worker"`, `ver: "1"`) is accepted by a server whose
/// audience is `worker`; Arcade's own check does not require `exp`, OTC does.
#[tokio::test]
async fn an_arcade_engine_worker_token_is_accepted() -> TestResult {
    let (registry, _) = tools::registry();
    let mut options = OtcOptions::default();
    options.auth = OtcAuth::none().jwt_hs256(SECRET, Some("worker".into()))?;
    let running = start(&registry, options).await?;
    let arcade = token(
        &json!({"aud": "worker", "ver": "1", "exp": now() + 300}),
        SECRET,
        Algorithm::HS256,
    );
    assert_eq!(
        status_with(&running, &[("authorization", &format!("Bearer {arcade}"))]).await?,
        200
    );
    let without_exp = token(
        &json!({"aud": "worker", "ver": "1"}),
        SECRET,
        Algorithm::HS256,
    );
    assert_eq!(
        status_with(
            &running,
            &[("authorization", &format!("Bearer {without_exp}"))]
        )
        .await?,
        401
    );
    Ok(())
}

#[test]
fn short_keys_and_secrets_are_refused() {
    assert!(OtcAuth::none().api_key("short").is_err());
    assert!(OtcAuth::none().jwt_hs256(b"too-short", None).is_err());
}
