#![allow(clippy::unwrap_used, clippy::expect_used)]
//! `toolshape bench --url` through a gateway (a forwarding HTTP server on
//! loopback in front of `toolshape serve --http`, a real child process)
//! that starts answering `502 Bad Gateway` mid-run: the `502` is no
//! answer, so the run stops there (exit 4), the calls before it measured.

mod http_serve;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::body::Bytes;
use axum::http::{HeaderMap, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::Value;

use http_serve::{HttpServe, TOOLSHAPE};

/// Forwards each request to `upstream` until `passed` calls went through,
/// then answers every call `502`.
struct Gateway {
    upstream: String,
    http: reqwest::Client,
    calls: AtomicUsize,
    passed: usize,
}

impl Gateway {
    async fn forward(&self, method: Method, headers: HeaderMap, body: Bytes) -> Response {
        let is_call = std::str::from_utf8(&body).is_ok_and(|text| text.contains("tools/call"));
        if is_call && self.calls.fetch_add(1, Ordering::SeqCst) >= self.passed {
            return (StatusCode::BAD_GATEWAY, "upstream gone").into_response();
        }
        let mut request = self.http.request(method, &self.upstream).body(body);
        for (name, value) in &headers {
            if name != "host" && name != "content-length" {
                request = request.header(name, value);
            }
        }
        let answer = request.send().await.unwrap();
        let status = answer.status();
        let mut kept = HeaderMap::new();
        for (name, value) in answer.headers() {
            if name != "content-length" && name != "transfer-encoding" {
                kept.insert(name.clone(), value.clone());
            }
        }
        let body = answer.bytes().await.unwrap();
        (status, kept, body).into_response()
    }
}

#[test]
fn a_gateways_502_stops_the_run_as_no_answer() {
    let server = HttpServe::start(&["--stateless"]);
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let gateway = Arc::new(Gateway {
        upstream: server.url.clone(),
        http: reqwest::Client::new(),
        calls: AtomicUsize::new(0),
        passed: 100,
    });
    let listener = runtime
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let address = listener.local_addr().unwrap();
    let routed = Arc::clone(&gateway);
    let app =
        axum::Router::new().fallback(move |method: Method, headers: HeaderMap, body: Bytes| {
            let gateway = Arc::clone(&routed);
            async move { gateway.forward(method, headers, body).await }
        });
    runtime.spawn(async move { axum::serve(listener, app).await });

    let output = std::process::Command::new(TOOLSHAPE)
        .args(["bench", "--json", "--tool", "count_lines"])
        .args(["--args", r#"{"path":"three.txt"}"#, "--calls", "1000"])
        .args(["--concurrency", "1", "--url"])
        .arg(format!("http://{address}/mcp"))
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(4), "{output:?}");
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    let stopped = report["stopped"].as_str().unwrap_or_default();
    assert!(stopped.contains("502"), "{report}");
    assert_eq!(report["unanswered"], 1, "{report}");
    assert_eq!(report["failures"], 0, "{report}");
    // The calls before the 502 measured (a warm-up call or more among them).
    let answered = report["calls"].as_u64().unwrap();
    assert!((90..100).contains(&answered), "{report}");
}
