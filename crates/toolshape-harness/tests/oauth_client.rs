#![allow(clippy::unwrap_used, clippy::expect_used)]
//! `toolshape_auth::client::OAuthClient` against a real authorization
//! server (the `oauth_test_server` binary, a child process) and a toolshape
//! MCP server protected by `BearerAuth` with that server's keys, all on
//! loopback: discovery, dynamic registration, authorization code with PKCE
//! and `resource`, the `iss` check, step-up to a tool's scope, refresh,
//! client credentials, a token file reused by a second client, tokens kept
//! to their origin, and refusals (no consent, a foreign resource).

use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::net::TcpListener;
use tokio::process::{Child, Command};
use tokio::sync::oneshot;
use toolshape::client::{AuthRequest, Client, HttpAuth};
use toolshape::{HttpOptions, Server, Tool, ToolError};
use toolshape_auth::client::{
    ClientIdentity, FileTokenStore, Grant, HeadlessConsent, OAuthClient, OAuthClientBuilder,
};
use toolshape_auth::server::{BearerAuth, JwksVerifier};

/// The test authorization server, running until dropped.
struct AuthServer {
    issuer: String,
    _child: Child,
}

async fn auth_server(args: &[&str]) -> AuthServer {
    let mut child = Command::new(env!("CARGO_BIN_EXE_oauth_test_server"))
        .args(args)
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut lines = BufReader::new(stdout).lines();
    let line = tokio::time::timeout(Duration::from_secs(10), lines.next_line())
        .await
        .expect("the authorization server did not start")
        .unwrap()
        .unwrap();
    let issuer = line.strip_prefix("listening on ").unwrap().to_owned();
    AuthServer {
        issuer,
        _child: child,
    }
}

impl AuthServer {
    async fn stats(&self) -> Value {
        let text = reqwest::get(format!("{}/stats", self.issuer))
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        serde_json::from_str(&text).unwrap()
    }
}

#[derive(Deserialize, JsonSchema)]
struct Text {
    text: String,
}

/// A toolshape MCP server behind `BearerAuth`, trusting `issuer`, at
/// `/mcp`; its metadata names the resource at `resource_path` (default:
/// its own URL).
struct Protected {
    url: String,
    _stop: oneshot::Sender<()>,
}

async fn protected(issuer: &str, resource_path: Option<&str>) -> Protected {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let url = format!("{base}/mcp");
    let resource = format!("{base}{}", resource_path.unwrap_or("/mcp"));
    let verifier = JwksVerifier::new(issuer, &resource)
        .unwrap()
        .jwks_url(&format!("{issuer}/jwks"))
        .unwrap();
    let auth = BearerAuth::builder(&resource)
        .unwrap()
        .authorization_server(issuer)
        .verifier(Arc::new(verifier))
        .required_scopes(["mcp:tools"])
        .tool_scopes("delete_file", ["files:write"])
        .build()
        .unwrap();
    let server = Server::builder("protected", "1.0.0")
        .tool(Tool::text("echo", |input: Text| async move {
            Ok::<_, ToolError>(input.text)
        }))
        .tool(Tool::text("delete_file", |input: Text| async move {
            Ok::<_, ToolError>(format!("deleted {}", input.text))
        }))
        .build()
        .unwrap();
    let (stop, stopped) = oneshot::channel::<()>();
    tokio::spawn(async move {
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
    Protected { url, _stop: stop }
}

fn text(value: Value) -> Option<Map<String, Value>> {
    value.as_object().cloned()
}

fn oauth(url: &str) -> OAuthClientBuilder {
    let consent = HeadlessConsent::new("http://127.0.0.1:9/callback").unwrap();
    OAuthClient::builder(url)
        .unwrap()
        .consent(Arc::new(consent))
}

async fn connect(url: &str, oauth: OAuthClient) -> Result<Client, toolshape::client::ClientError> {
    Client::builder()
        .request_timeout(Duration::from_secs(20))
        .http_auth(Arc::new(oauth))
        .connect_http(url)
        .await
}

#[tokio::test]
async fn authorization_code_then_step_up_to_a_tools_scope() {
    let authority = auth_server(&[]).await;
    let server = protected(&authority.issuer, None).await;
    let oauth = oauth(&server.url).build().unwrap();
    let client = connect(&server.url, oauth.clone()).await.unwrap();
    assert_eq!(client.list_tools().await.unwrap().len(), 2);
    let echoed = client
        .call_tool("echo", text(json!({"text": "hi"})))
        .await
        .unwrap();
    assert_eq!(echoed.text(), "hi");
    let stats = authority.stats().await;
    assert_eq!(stats["registrations"], 1, "{stats}");
    assert_eq!(stats["authorizations"], 1, "{stats}");
    assert_eq!(stats["code_grants"], 1, "{stats}");
    let token = oauth.token().unwrap();
    assert_eq!(token.scopes, ["mcp:tools"]);
    assert_eq!(token.resource, server.url);
    assert_eq!(token.issuer, authority.issuer);

    // delete_file needs files:write too: the 403 leads to one more
    // authorization, for the union of the scopes.
    let deleted = client
        .call_tool("delete_file", text(json!({"text": "a"})))
        .await
        .unwrap();
    assert_eq!(deleted.text(), "deleted a");
    let stats = authority.stats().await;
    assert_eq!(stats["authorizations"], 2, "{stats}");
    assert_eq!(
        stats["registrations"], 1,
        "the registration is kept: {stats}"
    );
    assert_eq!(oauth.token().unwrap().scopes, ["files:write", "mcp:tools"]);
    // Both kinds of call work on with the one token.
    client
        .call_tool("echo", text(json!({"text": "again"})))
        .await
        .unwrap();
    assert_eq!(authority.stats().await["authorizations"], 2);
}

#[tokio::test]
async fn a_token_about_to_expire_is_refreshed() {
    let authority = auth_server(&["--token-lifetime", "20"]).await;
    let server = protected(&authority.issuer, None).await;
    let oauth = oauth(&server.url).build().unwrap();
    let client = connect(&server.url, oauth.clone()).await.unwrap();
    let first = oauth.token().unwrap().access_token;
    for n in 0..3 {
        client
            .call_tool("echo", text(json!({"text": n.to_string()})))
            .await
            .unwrap();
    }
    let stats = authority.stats().await;
    assert_eq!(stats["authorizations"], 1, "{stats}");
    assert!(stats["refresh_grants"].as_u64().unwrap() >= 1, "{stats}");
    assert_ne!(oauth.token().unwrap().access_token, first);
}

#[tokio::test]
async fn client_credentials_need_no_user() {
    let authority = auth_server(&["--client", "svc:s3cret"]).await;
    let server = protected(&authority.issuer, None).await;
    let oauth = OAuthClient::builder(&server.url)
        .unwrap()
        .identity(ClientIdentity::new("svc").secret("s3cret"))
        .grant(Grant::ClientCredentials)
        .build()
        .unwrap();
    let client = connect(&server.url, oauth).await.unwrap();
    client
        .call_tool("echo", text(json!({"text": "x"})))
        .await
        .unwrap();
    let stats = authority.stats().await;
    assert_eq!(stats["client_credentials_grants"], 1, "{stats}");
    assert_eq!(stats["registrations"], 0, "{stats}");

    // A wrong secret is refused by the authorization server, and said so.
    let oauth = OAuthClient::builder(&server.url)
        .unwrap()
        .identity(ClientIdentity::new("svc").secret("wrong"))
        .grant(Grant::ClientCredentials)
        .build()
        .unwrap();
    let error = connect(&server.url, oauth)
        .await
        .expect_err("a wrong secret must fail");
    assert!(error.to_string().contains("invalid_client"), "{error}");
}

#[tokio::test]
async fn a_token_file_serves_the_next_client() {
    let authority = auth_server(&[]).await;
    let server = protected(&authority.issuer, None).await;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tokens.json");
    for _ in 0..2 {
        let oauth = oauth(&server.url)
            .store(Arc::new(FileTokenStore::new(&path)))
            .build()
            .unwrap();
        let client = connect(&server.url, oauth).await.unwrap();
        client
            .call_tool("echo", text(json!({"text": "x"})))
            .await
            .unwrap();
        client.close(Duration::from_secs(1)).await;
    }
    let stats = authority.stats().await;
    assert_eq!(
        stats["authorizations"], 1,
        "the second client used the kept token: {stats}"
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o077, 0, "the token file is private: {mode:o}");
    }
}

#[tokio::test]
async fn tokens_stay_with_their_origin() {
    let authority = auth_server(&[]).await;
    let server = protected(&authority.issuer, None).await;
    let oauth = oauth(&server.url).build().unwrap();
    let _client = connect(&server.url, oauth.clone()).await.unwrap();
    let own = reqwest::Url::parse(&server.url).unwrap();
    let headers = oauth
        .headers(AuthRequest {
            url: &own,
            method: "POST",
        })
        .await
        .unwrap();
    assert!(headers.contains_key("authorization"));
    for elsewhere in [
        "http://127.0.0.2:1/mcp",
        "https://evil.example/mcp",
        &authority.issuer,
    ] {
        let url = reqwest::Url::parse(elsewhere).unwrap();
        let headers = oauth
            .headers(AuthRequest {
                url: &url,
                method: "POST",
            })
            .await
            .unwrap();
        assert!(headers.is_empty(), "a token went to {elsewhere}");
    }
}

#[tokio::test]
async fn refusals_without_consent_or_for_a_foreign_resource() {
    let authority = auth_server(&[]).await;
    let server = protected(&authority.issuer, None).await;
    let without = OAuthClient::builder(&server.url).unwrap().build().unwrap();
    let error = connect(&server.url, without)
        .await
        .expect_err("no consent, no token");
    assert!(error.to_string().contains("consent"), "{error}");

    // Metadata naming another resource than the endpoint: refused before any authorization.
    let foreign = protected(&authority.issuer, Some("/other")).await;
    let error = connect(&foreign.url, oauth(&foreign.url).build().unwrap())
        .await
        .expect_err("a foreign resource must be refused");
    assert!(error.to_string().contains("not for the server"), "{error}");
    assert_eq!(authority.stats().await["authorizations"], 0);
}
