#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The HTTP client connecting: automatic negotiation against a
//! stateless-only server (a pinned handshake revision fails at once), its
//! fallback to `initialize` when `server/discover` meets a bare `4xx`, and
//! endpoints that are unreachable or no MCP endpoint at all.

mod http_support;

use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::json;
use toolshape::HttpOptions;
use toolshape::client::{Client, ClientErrorKind, Negotiation};
use toolshape::protocol::ProtocolVersion;

use http_support::recorder::Recorder;
use http_support::{Serving, TIMEOUT, connect};

const PINNED: Negotiation = Negotiation::Pinned(ProtocolVersion::V2025_11_25);

#[tokio::test]
async fn against_a_stateless_only_server_auto_works_and_a_pinned_handshake_fails_cleanly() {
    let mut options = HttpOptions::default();
    options.sessions = false;
    let serving = Serving::start(options).await;

    let client = connect(&serving.url, Negotiation::Auto).await;
    assert_eq!(client.protocol_version(), ProtocolVersion::V2026_07_28);
    let sum: i64 = client.call("add", json!({"a": 1, "b": 1})).await.unwrap();
    assert_eq!(sum, 2);
    client.close(Duration::from_secs(1)).await;

    let started = Instant::now();
    let error = Client::builder()
        .negotiation(PINNED)
        .request_timeout(TIMEOUT)
        .connect_http(&serving.url)
        .await
        .unwrap_err();
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "it failed at once, not by timing out: {error}"
    );
    assert!(
        matches!(error.kind(), ClientErrorKind::Protocol(_)),
        "{error}"
    );
}

/// In front of an older server, `server/discover` may meet a `4xx` with no
/// JSON-RPC error: an empty `400`, a web server's `404` page, a `405`. The
/// client falls back to `initialize` (the spec's rule) and works.
#[tokio::test]
async fn auto_falls_back_to_a_handshake_on_a_bare_4xx() {
    let serving = Serving::start(HttpOptions::default()).await;
    for (status, body) in [
        (StatusCode::BAD_REQUEST, ""),
        (StatusCode::NOT_FOUND, "<html><body>Not Found</body></html>"),
        (StatusCode::METHOD_NOT_ALLOWED, ""),
        (StatusCode::BAD_REQUEST, r#"{"detail": "bad request"}"#),
    ] {
        let gateway = Recorder::start_refusing(&serving.url, Some((status, body))).await;
        let client = connect(&gateway.url, Negotiation::Auto).await;
        assert_eq!(
            client.protocol_version(),
            ProtocolVersion::V2025_11_25,
            "{status}"
        );
        let sum: i64 = client.call("add", json!({"a": 2, "b": 3})).await.unwrap();
        assert_eq!(sum, 5);
        let probes = gateway
            .log()
            .iter()
            .filter(|r| r.rpc_method() == "server/discover")
            .count();
        assert_eq!(probes, 1, "{status}: probed once");
        client.close(Duration::from_secs(1)).await;
    }
    // Credentials refused are not an older server: no fallback.
    let gateway = Recorder::start_refusing(&serving.url, Some((StatusCode::FORBIDDEN, ""))).await;
    let error = Client::builder()
        .request_timeout(TIMEOUT)
        .connect_http(&gateway.url)
        .await
        .unwrap_err();
    assert!(
        matches!(error.kind(), ClientErrorKind::Transport(_)),
        "{error}"
    );
    assert!(
        gateway.log().iter().all(|r| r.rpc_method() != "initialize"),
        "{:#?}",
        gateway.log()
    );
}

#[tokio::test]
async fn an_unreachable_or_wrong_endpoint_fails_cleanly() {
    // Nothing listens on this port once the listener is dropped.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    drop(listener);
    let error = Client::builder()
        .request_timeout(TIMEOUT)
        .connect_http(&format!("http://{address}/mcp"))
        .await
        .unwrap_err();
    assert!(
        matches!(error.kind(), ClientErrorKind::Transport(_)),
        "{error}"
    );

    let error = Client::builder()
        .request_timeout(TIMEOUT)
        .connect_http("not a url")
        .await
        .unwrap_err();
    assert!(
        matches!(error.kind(), ClientErrorKind::Transport(_)),
        "{error}"
    );

    // A server, but not an MCP endpoint at this path: 404 with no JSON-RPC body.
    let serving = Serving::start(HttpOptions::default()).await;
    let wrong = format!("http://{}/elsewhere", serving.address);
    let started = Instant::now();
    let error = Client::builder()
        .request_timeout(TIMEOUT)
        .connect_http(&wrong)
        .await
        .unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(2), "{error}");
    assert!(
        !matches!(error.kind(), ClientErrorKind::Timeout(_)),
        "{error}"
    );
}
