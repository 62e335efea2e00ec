//! A recording reverse proxy for the `http_*` tests: what a client really
//! sent, headers and all.

use std::io;
use std::sync::Arc;
use std::time::Duration;

use reqwest::StatusCode;
use reqwest::header::HeaderMap;
use serde_json::Value;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

use super::{TIMEOUT, http};

/// One request that went through a [`Recorder`].
#[derive(Debug, Clone)]
pub struct Recorded {
    pub method: String,
    pub headers: HeaderMap,
    pub body: Value,
    /// The upstream answer's status and headers.
    pub status: StatusCode,
    pub response_headers: HeaderMap,
}

impl Recorded {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// The JSON-RPC method of a POST (empty otherwise).
    pub fn rpc_method(&self) -> &str {
        self.body["method"].as_str().unwrap_or("")
    }
}

/// A recording reverse proxy in front of an endpoint: every request is
/// forwarded as is (bodies streamed back) and logged with its headers.
pub struct Recorder {
    pub url: String,
    log: Arc<std::sync::Mutex<Vec<Recorded>>>,
    task: JoinHandle<()>,
}

impl Recorder {
    pub async fn start(upstream: &str) -> Recorder {
        Recorder::start_refusing(upstream, None).await
    }

    /// As [`Recorder::start_refusing`], but only `tools/call` is refused.
    pub async fn start_refusing_calls(
        upstream: &str,
        refusal: (StatusCode, &'static str),
    ) -> Recorder {
        Recorder::start_with(upstream, Some(refusal), Some("tools/call")).await
    }

    /// As [`Recorder::start`], but a POST naming 2026-07-28 in its
    /// `MCP-Protocol-Version` gets `refusal` (a status and a body) instead:
    /// a gateway in front of an older server, as some answer.
    pub async fn start_refusing(
        upstream: &str,
        refusal: Option<(StatusCode, &'static str)>,
    ) -> Recorder {
        Recorder::start_with(upstream, refusal, None).await
    }

    async fn start_with(
        upstream: &str,
        refusal: Option<(StatusCode, &'static str)>,
        refused_method: Option<&'static str>,
    ) -> Recorder {
        use axum::body::Body;
        use axum::extract::{Request, State};
        use axum::response::Response;

        #[derive(Clone)]
        struct Proxy {
            upstream: String,
            http: reqwest::Client,
            log: Arc<std::sync::Mutex<Vec<Recorded>>>,
            refusal: Option<(StatusCode, &'static str)>,
            refused_method: Option<&'static str>,
        }

        async fn forward(State(proxy): State<Proxy>, request: Request) -> Response {
            let (parts, body) = request.into_parts();
            let bytes = axum::body::to_bytes(body, usize::MAX).await.unwrap();
            let parsed: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
            let modern = parts
                .headers
                .get("mcp-protocol-version")
                .is_some_and(|v| v == "2026-07-28")
                && proxy
                    .refused_method
                    .is_none_or(|method| parsed["method"] == method);
            if let (Some((status, body)), true) = (proxy.refusal, modern) {
                proxy.log.lock().unwrap().push(Recorded {
                    method: parts.method.to_string(),
                    headers: parts.headers.clone(),
                    body: serde_json::from_slice(&bytes).unwrap_or(Value::Null),
                    status,
                    response_headers: HeaderMap::new(),
                });
                return Response::builder()
                    .status(status.as_u16())
                    .body(Body::from(body))
                    .unwrap();
            }
            let mut builder = proxy.http.request(parts.method.clone(), &proxy.upstream);
            for (name, value) in &parts.headers {
                if name != "host" && name != "content-length" {
                    builder = builder.header(name, value);
                }
            }
            let Ok(mut upstream) = builder.body(bytes.clone()).send().await else {
                return Response::builder().status(502).body(Body::empty()).unwrap();
            };
            proxy.log.lock().unwrap().push(Recorded {
                method: parts.method.to_string(),
                headers: parts.headers.clone(),
                body: serde_json::from_slice(&bytes).unwrap_or(Value::Null),
                status: upstream.status(),
                response_headers: upstream.headers().clone(),
            });
            let mut response = Response::builder().status(upstream.status());
            for (name, value) in upstream.headers() {
                if name != "content-length" && name != "transfer-encoding" {
                    response = response.header(name, value);
                }
            }
            let (chunks, receiver) =
                tokio::sync::mpsc::channel::<Result<axum::body::Bytes, io::Error>>(16);
            tokio::spawn(async move {
                while let Ok(Some(chunk)) = upstream.chunk().await {
                    if chunks.send(Ok(chunk)).await.is_err() {
                        break;
                    }
                }
            });
            let stream = tokio_stream::wrappers::ReceiverStream::new(receiver);
            response.body(Body::from_stream(stream)).unwrap()
        }

        let log = Arc::new(std::sync::Mutex::new(Vec::new()));
        let proxy = Proxy {
            upstream: upstream.to_owned(),
            http: http(),
            log: Arc::clone(&log),
            refusal,
            refused_method,
        };
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/mcp", listener.local_addr().unwrap());
        let router = axum::Router::new()
            .route("/mcp", axum::routing::any(forward))
            .with_state(proxy);
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, router).await;
        });
        Recorder { url, log, task }
    }

    /// What went through so far.
    pub fn log(&self) -> Vec<Recorded> {
        self.log.lock().unwrap().clone()
    }

    /// Waits until some recorded request satisfies `check`.
    pub async fn wait_for(&self, what: &str, check: impl Fn(&Recorded) -> bool) -> Recorded {
        let deadline = tokio::time::Instant::now() + TIMEOUT;
        loop {
            if let Some(found) = self.log().into_iter().find(|r| check(r)) {
                return found;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "timed out waiting for {what}: {:#?}",
                self.log()
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        self.task.abort();
    }
}
