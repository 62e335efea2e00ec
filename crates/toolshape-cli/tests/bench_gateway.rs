#![allow(clippy::unwrap_used, clippy::expect_used)]
//! `toolshape bench --url` through a gateway (a forwarding HTTP server on
//! loopback in front of `toolshape serve --http`, a real child process):
//! one that starts answering `502 Bad Gateway` mid-run: the `502` is no
//! answer, so the run stops there (exit 4), the calls before it measured;
//! one that fails a connection's warm-up call: later calls are still
//! compared with the first warm-up value.

mod http_serve;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::body::Bytes;
use axum::http::{HeaderMap, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::Value;

use http_serve::{HttpServe, TOOLSHAPE};

/// What the gateway does to calls.
#[derive(Clone, Copy)]
enum Meddling {
    /// Forwards this many calls, then answers every call `502`.
    GoneAfter(usize),
    /// Answers the call of this number (from 0) itself, with a tool error.
    ToolErrorAt(usize),
}

/// Forwards each request to `upstream`, meddling with calls.
struct Gateway {
    upstream: String,
    http: reqwest::Client,
    calls: AtomicUsize,
    meddling: Meddling,
}

impl Gateway {
    async fn forward(&self, method: Method, headers: HeaderMap, body: Bytes) -> Response {
        let message: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        if message["method"] == "tools/call" {
            let number = self.calls.fetch_add(1, Ordering::SeqCst);
            match self.meddling {
                Meddling::GoneAfter(passed) if number >= passed => {
                    return (StatusCode::BAD_GATEWAY, "upstream gone").into_response();
                }
                Meddling::ToolErrorAt(at) if number == at => {
                    let failed = serde_json::json!({"jsonrpc": "2.0", "id": message["id"], "result": {
                        "resultType": "complete", "isError": true,
                        "content": [{"type": "text", "text": "failed this once"}],
                    }});
                    return axum::Json(failed).into_response();
                }
                _ => {}
            }
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

/// `toolshape bench --json` of `count_lines` (`calls` calls over
/// `clients` connections) through a gateway meddling so with the calls to
/// `toolshape serve --http --stateless`: its exit code and report.
fn bench_through(meddling: Meddling, calls: &str, clients: &str) -> (Option<i32>, Value) {
    let server = HttpServe::start(&["--stateless"]);
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let gateway = Arc::new(Gateway {
        upstream: server.url.clone(),
        http: reqwest::Client::new(),
        calls: AtomicUsize::new(0),
        meddling,
    });
    let listener = runtime
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let address = listener.local_addr().unwrap();
    let app =
        axum::Router::new().fallback(move |method: Method, headers: HeaderMap, body: Bytes| {
            let gateway = Arc::clone(&gateway);
            async move { gateway.forward(method, headers, body).await }
        });
    runtime.spawn(async move { axum::serve(listener, app).await });

    let output = std::process::Command::new(TOOLSHAPE)
        .args(["bench", "--json", "--tool", "count_lines"])
        .args(["--args", r#"{"path":"three.txt"}"#, "--calls", calls])
        .args(["--clients", clients, "--concurrency", clients, "--url"])
        .arg(format!("http://{address}/mcp"))
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let report =
        serde_json::from_slice(&output.stdout).unwrap_or_else(|e| panic!("{e}: {output:?}"));
    (output.status.code(), report)
}

#[test]
fn a_gateways_502_stops_the_run_as_no_answer() {
    let (code, report) = bench_through(Meddling::GoneAfter(100), "1000", "1");
    assert_eq!(code, Some(4), "{report}");
    let stopped = report["stopped"].as_str().unwrap_or_default();
    assert!(stopped.contains("502"), "{report}");
    assert_eq!(report["unanswered"], 1, "{report}");
    assert_eq!(report["failures"], 0, "{report}");
    // The calls before the 502 measured (a warm-up call or more among them).
    let answered = report["calls"].as_u64().unwrap();
    assert!((90..100).contains(&answered), "{report}");
}

/// Later calls are compared with the first warm-up call's value: a
/// connection whose warm-up call failed (here the second's) does not make
/// every later value a mismatch.
#[test]
fn later_calls_are_compared_with_the_first_warm_up_value() {
    let (code, report) = bench_through(Meddling::ToolErrorAt(1), "300", "2");
    assert_eq!(code, Some(0), "{report}");
    assert_eq!(report["mismatches"], 0, "{report}");
    assert_eq!(report["failures"], 0, "{report}");
    assert_eq!(report["calls"], 300, "{report}");
}
