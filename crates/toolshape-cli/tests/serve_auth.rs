#![allow(clippy::unwrap_used, clippy::expect_used)]
//! `toolshape serve --http --auth-*` and the client commands' OAuth flags,
//! as processes over loopback: the warning for an unprotected endpoint
//! beyond loopback, the flags that must come together, the protected
//! endpoint with a key set file (its metadata, its 401/403, tokens the test
//! signs), and a client command that cannot ask for consent.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use ring::rand::SystemRandom;
use ring::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair};
use serde_json::{Value, json};

const TOOLSHAPE: &str = env!("CARGO_BIN_EXE_toolshape");
const WAIT: Duration = Duration::from_secs(10);
const ISSUER: &str = "https://auth.test.example";

/// `toolshape serve --http ADDRESS extra...`, its stderr lines until the
/// announcement (or exit), then kept draining; killed on drop.
struct Serve {
    child: Child,
    before: Vec<String>,
    url: Option<String>,
    _root: tempfile::TempDir,
}

impl Serve {
    fn start(address: &str, extra: &[&str]) -> Serve {
        let root = tempfile::tempdir().unwrap();
        std::fs::write(root.path().join("hello.txt"), "hello\n").unwrap();
        let mut child = Command::new(TOOLSHAPE)
            .args(["serve", "--http", address, "--root"])
            .arg(root.path())
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = child.stderr.take().unwrap();
        let (lines, received) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if lines.send(line).is_err() {
                    break;
                }
            }
        });
        let mut before = Vec::new();
        let mut url = None;
        while let Ok(line) = received.recv_timeout(WAIT) {
            if let Some(rest) = line.split("serving MCP on ").nth(1) {
                url = rest.split_whitespace().next().map(str::to_owned);
                break;
            }
            before.push(line);
        }
        Serve {
            child,
            before,
            url,
            _root: root,
        }
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A P-256 key: its signing half and its JWK Set.
fn key() -> (EncodingKey, Value) {
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
    let jwks = json!({"keys": [{
        "kty": "EC", "crv": "P-256", "kid": "k1", "alg": "ES256",
        "x": URL_SAFE_NO_PAD.encode(&point[1..33]),
        "y": URL_SAFE_NO_PAD.encode(&point[33..65]),
    }]});
    (EncodingKey::from_ec_der(document.as_ref()), jwks)
}

fn token(key: &EncodingKey, audience: &str, scope: &str) -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let mut header = Header::new(Algorithm::ES256);
    header.kid = Some("k1".into());
    let claims =
        json!({"iss": ISSUER, "aud": audience, "sub": "u", "scope": scope, "exp": now + 300});
    jsonwebtoken::encode(&header, &claims, key).unwrap()
}

fn call(url: &str, token: Option<&str>, tool: &str, arguments: Value) -> (u16, String, String) {
    let body = json!({
        "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": tool, "arguments": arguments, "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
        }},
    });
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let mut request = reqwest::Client::new()
            .post(url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", "tools/call")
            .header("mcp-name", tool)
            .body(body.to_string());
        if let Some(token) = token {
            request = request.header("authorization", format!("Bearer {token}"));
        }
        let response = request.send().await.unwrap();
        let status = response.status().as_u16();
        let challenge = response
            .headers()
            .get("www-authenticate")
            .map(|v| v.to_str().unwrap().to_owned())
            .unwrap_or_default();
        (status, challenge, response.text().await.unwrap())
    })
}

#[test]
fn unprotected_beyond_loopback_is_warned_about() {
    let open = Serve::start("0.0.0.0:0", &[]);
    assert!(open.url.is_some(), "{:?}", open.before);
    assert!(
        open.before
            .iter()
            .any(|l| l.contains("warning") && l.contains("--auth-issuer")),
        "{:?}",
        open.before
    );
    let local = Serve::start("127.0.0.1:0", &[]);
    assert!(local.url.is_some());
    assert!(
        !local.before.iter().any(|l| l.contains("warning")),
        "{:?}",
        local.before
    );
}

#[test]
fn flags_that_must_come_together() {
    // Bound to every interface, the public URI cannot be guessed.
    let output = Command::new(TOOLSHAPE)
        .args(["serve", "--http", "0.0.0.0:0", "--auth-issuer", ISSUER])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("--auth-resource"));
    // A resource path the router would read as a parameter is refused, not
    // a panic when the metadata's route is made.
    let output = Command::new(TOOLSHAPE)
        .args([
            "serve",
            "--http",
            "127.0.0.1:0",
            "--auth-issuer",
            ISSUER,
            "--auth-resource",
            "https://mcp.example.com/:tenant/mcp",
        ])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(stderr.contains("cannot be routed"), "{stderr}");
    // --auth-scope means nothing without an issuer.
    let output = Command::new(TOOLSHAPE)
        .args(["serve", "--http", "127.0.0.1:0", "--auth-scope", "x"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    // Client credentials need a secret or a key.
    let output = Command::new(TOOLSHAPE)
        .args([
            "tools",
            "--url",
            "http://127.0.0.1:9/mcp",
            "--oauth-client-id",
            "c",
            "--oauth-client-credentials",
        ])
        .env_remove("TOOLSHAPE_OAUTH_CLIENT_SECRET")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("secret"));
    // A secret is shown only to the authorization server it was issued by,
    // which must then be named: never to one a server names (2026-07-28,
    // pre-registered credentials bound to their issuer).
    let output = Command::new(TOOLSHAPE)
        .args([
            "tools",
            "--url",
            "http://127.0.0.1:9/mcp",
            "--oauth-client-id",
            "c",
            "--oauth-client-credentials",
        ])
        .env("TOOLSHAPE_OAUTH_CLIENT_SECRET", "s3cret")
        .env_remove("TOOLSHAPE_OAUTH_CLIENT_ISSUER")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("--oauth-client-issuer"), "{stderr}");
}

#[test]
fn a_protected_endpoint_with_a_key_set_file() {
    let (key, jwks) = key();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("jwks.json");
    std::fs::write(&file, jwks.to_string()).unwrap();
    let file = file.to_str().unwrap();
    let serve = Serve::start(
        "127.0.0.1:0",
        &[
            "--auth-issuer",
            ISSUER,
            "--auth-jwks-file",
            file,
            "--auth-scope",
            "mcp:tools",
            "--auth-tool-scope",
            "read_text=files:read",
            "--allow-origin",
            "http://localhost:6274",
        ],
    );
    let url = serve.url.clone().expect("announced");
    let base = url.trim_end_matches("/mcp");

    // The metadata names the endpoint (its default resource) and the issuer.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let metadata: Value = runtime.block_on(async {
        let text = reqwest::get(format!("{base}/.well-known/oauth-protected-resource/mcp"))
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        serde_json::from_str(&text).unwrap()
    });
    assert_eq!(metadata["resource"], url);
    assert_eq!(metadata["authorization_servers"], json!([ISSUER]));

    // A browser page of an allowed origin (the MCP Inspector's) has its
    // preflight answered without a token, and may read the 401's challenge.
    let inspector = "http://localhost:6274";
    let (preflight, challenge_visible) = runtime.block_on(async {
        let client = reqwest::Client::new();
        let preflight = client
            .request(reqwest::Method::OPTIONS, &url)
            .header("origin", inspector)
            .header("access-control-request-method", "POST")
            .header(
                "access-control-request-headers",
                "authorization, content-type",
            )
            .send()
            .await
            .unwrap();
        let refused = client
            .post(&url)
            .header("origin", inspector)
            .header("content-type", "application/json")
            .body("{}")
            .send()
            .await
            .unwrap();
        assert_eq!(refused.status().as_u16(), 401);
        let exposed = refused
            .headers()
            .get("access-control-expose-headers")
            .map(|v| v.to_str().unwrap().to_ascii_lowercase())
            .unwrap_or_default();
        (preflight, exposed.contains("www-authenticate"))
    });
    assert!(preflight.status().is_success(), "{preflight:?}");
    assert_eq!(
        preflight
            .headers()
            .get("access-control-allow-origin")
            .unwrap(),
        inspector
    );
    assert!(challenge_visible);

    let info = json!({"path": "hello.txt"});
    let (status, challenge, _) = call(&url, None, "file_info", info.clone());
    assert_eq!(status, 401);
    assert!(challenge.contains("resource_metadata="), "{challenge}");
    let basic = token(&key, &url, "mcp:tools");
    assert_eq!(call(&url, Some(&basic), "file_info", info).0, 200);
    let read = json!({"path": "hello.txt"});
    let (status, challenge, _) = call(&url, Some(&basic), "read_text", read.clone());
    assert_eq!(status, 403);
    assert!(
        challenge.contains("insufficient_scope") && challenge.contains("files:read mcp:tools"),
        "{challenge}"
    );
    let (status, _, body) = call(
        &url,
        Some(&token(&key, &url, "mcp:tools files:read")),
        "read_text",
        read,
    );
    assert_eq!(status, 200);
    assert!(body.contains("hello"), "{body}");
    let elsewhere = token(&key, "http://127.0.0.1:1/mcp", "mcp:tools");
    assert_eq!(
        call(
            &url,
            Some(&elsewhere),
            "file_info",
            json!({"path": "hello.txt"})
        )
        .0,
        401
    );

    // A client command without a terminal cannot ask anyone to consent.
    let output = Command::new(TOOLSHAPE)
        .args(["tools", "--url", &url])
        .env_remove("TOOLSHAPE_OAUTH_CLIENT_ID")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(4), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("consent"), "{stderr}");
}

/// `--header` with `${NAME}` from the environment: a fixed bearer token
/// reaches the protected endpoint from `toolshape call` and through
/// `toolshape proxy --url` (no OAuth tried), a wrong one is the server's
/// 401 (the token never shown), and the flag wants `--url`.
#[test]
fn a_fixed_token_in_a_header_reaches_a_protected_endpoint() {
    let (key, jwks) = key();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("jwks.json");
    std::fs::write(&file, jwks.to_string()).unwrap();
    let serve = Serve::start(
        "127.0.0.1:0",
        &[
            "--auth-issuer",
            ISSUER,
            "--auth-jwks-file",
            file.to_str().unwrap(),
        ],
    );
    let url = serve.url.clone().expect("announced");
    let good = token(&key, &url, "");
    let header = "Authorization: Bearer ${TOOLSHAPE_TEST_TOKEN}";
    let args = r#"{"path":"hello.txt"}"#;
    let run = |token: &str, through_proxy: bool| {
        let mut command = Command::new(TOOLSHAPE);
        command.args(["call", "file_info", "--args", args]);
        if through_proxy {
            command.args(["--", TOOLSHAPE, "proxy", "--url", &url, "--header", header]);
        } else {
            command.args(["--url", &url, "--header", header]);
        }
        command
            .env("TOOLSHAPE_TEST_TOKEN", token)
            .stdin(Stdio::null())
            .output()
            .unwrap()
    };
    for through_proxy in [false, true] {
        let output = run(&good, through_proxy);
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert_eq!(
            output.status.code(),
            Some(0),
            "proxy {through_proxy}: {output:?}"
        );
        assert!(stdout.contains("hello.txt"), "{stdout}");
        let output = run("not-the-token", through_proxy);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(
            output.status.code(),
            Some(4),
            "proxy {through_proxy}: {stderr}"
        );
        assert!(stderr.contains("401"), "{stderr}");
        assert!(!stderr.contains("not-the-token"), "{stderr}");
    }
    let output = Command::new(TOOLSHAPE)
        .args(["tools", "--header", "X-Api-Key: k", "--", "true"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    let output = Command::new(TOOLSHAPE)
        .args([
            "tools",
            "--url",
            &url,
            "--header",
            "X: ${TOOLSHAPE_TEST_UNSET}",
        ])
        .env_remove("TOOLSHAPE_TEST_UNSET")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    assert!(String::from_utf8_lossy(&output.stderr).contains("TOOLSHAPE_TEST_UNSET is not set"));
}
