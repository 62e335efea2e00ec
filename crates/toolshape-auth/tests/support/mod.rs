//! Shared by the server-side tests: signing keys the tests generate (ES256
//! with ring, RS256 with the `openssl` command), a key set served on
//! loopback whose keys can change, tokens minted with them, and a
//! toolshape MCP server protected by `BearerAuth` on a real listener.

#![allow(dead_code, unreachable_pub, clippy::unwrap_used, clippy::expect_used)]

use std::net::SocketAddr;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::routing::get;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use ring::rand::SystemRandom;
use ring::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use toolshape::{HttpOptions, Server, Tool, ToolError};
use toolshape_auth::server::BearerAuth;

pub const ISSUER: &str = "https://auth.test.example";

/// A key tokens are signed with, and its public JWK.
pub struct TestKey {
    pub kid: String,
    pub algorithm: Algorithm,
    pub encoding: EncodingKey,
    pub jwk: Value,
}

/// A fresh P-256 key (ES256).
pub fn es256(kid: &str) -> TestKey {
    let document =
        EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &SystemRandom::new())
            .unwrap();
    let pair = EcdsaKeyPair::from_pkcs8(
        &ECDSA_P256_SHA256_FIXED_SIGNING,
        document.as_ref(),
        &SystemRandom::new(),
    )
    .unwrap();
    let point = pair.public_key().as_ref();
    TestKey {
        kid: kid.into(),
        algorithm: Algorithm::ES256,
        encoding: EncodingKey::from_ec_der(document.as_ref()),
        jwk: json!({
            "kty": "EC", "crv": "P-256", "kid": kid, "use": "sig", "alg": "ES256",
            "x": URL_SAFE_NO_PAD.encode(&point[1..33]),
            "y": URL_SAFE_NO_PAD.encode(&point[33..65]),
        }),
    }
}

/// A fresh 2048-bit RSA key (RS256), made by `openssl` (ring cannot make one).
pub fn rs256(kid: &str) -> TestKey {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("key.pem");
    let generated = Command::new("openssl")
        .args([
            "genpkey",
            "-algorithm",
            "RSA",
            "-pkeyopt",
            "rsa_keygen_bits:2048",
            "-out",
        ])
        .arg(&path)
        .output()
        .expect("the `openssl` command is needed to generate RSA test keys");
    assert!(generated.status.success(), "openssl genpkey: {generated:?}");
    let modulus = Command::new("openssl")
        .args(["rsa", "-noout", "-modulus", "-in"])
        .arg(&path)
        .output()
        .unwrap();
    assert!(modulus.status.success(), "openssl rsa: {modulus:?}");
    let text = String::from_utf8(modulus.stdout).unwrap();
    let hex = text.trim().strip_prefix("Modulus=").unwrap();
    let bytes: Vec<u8> = (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
        .collect();
    let pem = std::fs::read(&path).unwrap();
    TestKey {
        kid: kid.into(),
        algorithm: Algorithm::RS256,
        encoding: EncodingKey::from_rsa_pem(&pem).unwrap(),
        jwk: json!({
            "kty": "RSA", "kid": kid, "use": "sig", "alg": "RS256",
            "n": URL_SAFE_NO_PAD.encode(bytes), "e": "AQAB",
        }),
    }
}

/// Seconds since the epoch.
pub fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64
}

/// Claims of a token valid for `audience`, with `scope`.
pub fn claims(audience: &str, scope: &str) -> Value {
    json!({
        "iss": ISSUER,
        "aud": audience,
        "sub": "user-1",
        "client_id": "client-1",
        "scope": scope,
        "iat": now(),
        "exp": now() + 300,
    })
}

/// A JWT signed by `key` (with its key id).
pub fn mint(key: &TestKey, claims: &Value) -> String {
    let mut header = Header::new(key.algorithm);
    header.kid = Some(key.kid.clone());
    jsonwebtoken::encode(&header, claims, &key.encoding).unwrap()
}

/// A key set served on loopback at `url`: its keys can be replaced, and
/// its fetches are counted.
pub struct Jwks {
    pub url: String,
    pub keys: Arc<Mutex<Vec<Value>>>,
    pub fetches: Arc<AtomicUsize>,
}

impl Jwks {
    pub fn set(&self, keys: &[&TestKey]) {
        *self.keys.lock().unwrap() = keys.iter().map(|k| k.jwk.clone()).collect();
    }

    pub fn fetches(&self) -> usize {
        self.fetches.load(Ordering::SeqCst)
    }
}

pub async fn serve_jwks(keys: &[&TestKey]) -> Jwks {
    let published = Arc::new(Mutex::new(
        keys.iter().map(|k| k.jwk.clone()).collect::<Vec<_>>(),
    ));
    let fetches = Arc::new(AtomicUsize::new(0));
    let (state, counter) = (Arc::clone(&published), Arc::clone(&fetches));
    let app = Router::new().route(
        "/jwks",
        get(move || {
            counter.fetch_add(1, Ordering::SeqCst);
            let keys = state.lock().unwrap().clone();
            async move { axum::Json(json!({ "keys": keys })) }
        }),
    );
    let address = spawn(app).await;
    Jwks {
        url: format!("http://{address}/jwks"),
        keys: published,
        fetches,
    }
}

/// A key set URL that answers every fetch `500`, and its count of fetches.
pub async fn serve_failing_jwks() -> (String, Arc<AtomicUsize>) {
    let fetches = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&fetches);
    let app = Router::new().route(
        "/jwks",
        get(move || {
            counter.fetch_add(1, Ordering::SeqCst);
            async { axum::http::StatusCode::INTERNAL_SERVER_ERROR }
        }),
    );
    let address = spawn(app).await;
    (format!("http://{address}/jwks"), fetches)
}

async fn spawn(app: Router) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    address
}

#[derive(Deserialize, JsonSchema)]
pub struct Text {
    pub text: String,
}

#[derive(Deserialize, JsonSchema)]
pub struct PathArg {
    pub path: String,
}

/// The MCP server under protection: `echo`, and `delete_file`.
pub fn mcp_server() -> Server {
    Server::builder("protected", "1.0.0")
        .tool(Tool::text("echo", |input: Text| async move {
            Ok::<_, ToolError>(input.text)
        }))
        .tool(Tool::text("delete_file", |input: PathArg| async move {
            Ok::<_, ToolError>(format!("deleted {}", input.path))
        }))
        .build()
        .unwrap()
}

/// A protected MCP server on loopback; dropped, it stops.
pub struct Protected {
    pub url: String,
    pub base: String,
    _stop: oneshot::Sender<()>,
}

/// Serves [`mcp_server`] behind `auth(resource)` through `Server::serve_http_with`.
pub async fn serve_protected(auth: impl FnOnce(&str) -> BearerAuth) -> Protected {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let base = format!("http://{address}");
    let url = format!("{base}/mcp");
    let auth = auth(&url);
    let (stop, stopped) = oneshot::channel::<()>();
    tokio::spawn(async move {
        let server = mcp_server();
        let shutdown = async move {
            let _ = stopped.await;
        };
        server
            .serve_http_with(
                listener,
                HttpOptions::default(),
                |router| auth.protect(router),
                shutdown,
            )
            .await
    });
    Protected {
        url,
        base,
        _stop: stop,
    }
}

/// An HTTP reply read whole.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub headers: reqwest::header::HeaderMap,
    pub body: String,
}

impl Reply {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("{e}: {}", self.body))
    }

    /// The `WWW-Authenticate` challenge, parsed.
    pub fn challenge(&self) -> toolshape_auth::challenge::Challenge {
        let all = toolshape_auth::challenge::from_headers(&self.headers);
        all.into_iter()
            .find(|c| c.is("Bearer"))
            .unwrap_or_else(|| panic!("no Bearer challenge in {self:?}"))
    }
}

/// A stateless 2026-07-28 request (`method`, `params`), with these extra headers.
pub async fn post(url: &str, headers: &[(&str, String)], method: &str, params: Value) -> Reply {
    let mut params = params;
    params.as_object_mut().unwrap().insert(
        "_meta".into(),
        json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "auth-test", "version": "0"},
            "io.modelcontextprotocol/clientCapabilities": {},
        }),
    );
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let mut request = reqwest::Client::builder()
        .no_proxy()
        .build()
        .unwrap()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", method);
    if let Some(name) = body["params"]["name"].as_str() {
        request = request.header("mcp-name", name);
    }
    for (name, value) in headers {
        request = request.header(*name, value);
    }
    let response = tokio::time::timeout(
        Duration::from_secs(10),
        request.body(body.to_string()).send(),
    )
    .await
    .unwrap()
    .unwrap();
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let body = response.text().await.unwrap();
    Reply {
        status,
        headers,
        body,
    }
}

/// `Authorization: Bearer <token>`.
pub fn bearer(token: &str) -> Vec<(&'static str, String)> {
    vec![("authorization", format!("Bearer {token}"))]
}
