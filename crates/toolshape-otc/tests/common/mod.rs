//! What the OTC tests share: a server on a loopback port, raw HTTP with
//! every response body checked against the corrected OpenAPI document, and
//! tools built for the seed's examples.

#![allow(dead_code, unreachable_pub, missing_docs)]

pub mod tools;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use serde_json::Value;
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use toolshape::ToolRegistry;
use toolshape::schema::{CompiledSchema, SchemaEngine, Trust};
use toolshape_otc::OtcOptions;

pub type TestResult = Result<(), Box<dyn std::error::Error + Send + Sync>>;

/// An OTC server running on a loopback port; stops when dropped.
pub struct Running {
    pub address: SocketAddr,
    pub base: String,
    stop: Option<oneshot::Sender<()>>,
    pub task: tokio::task::JoinHandle<std::io::Result<()>>,
}

impl Running {
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// Begins shutdown.
    pub fn stop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.stop();
    }
}

pub async fn start(registry: &ToolRegistry, options: OtcOptions) -> std::io::Result<Running> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let address = listener.local_addr()?;
    let (stop, stopped) = oneshot::channel::<()>();
    let registry = registry.clone();
    let task = tokio::spawn(async move {
        toolshape_otc::serve(&registry, listener, options, async {
            let _ = stopped.await;
        })
        .await
    });
    Ok(Running {
        address,
        base: format!("http://{address}"),
        stop: Some(stop),
        task,
    })
}

/// One response: status, headers, body (JSON, or `Null` when empty or not JSON).
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub headers: reqwest::header::HeaderMap,
    pub body: Value,
    pub raw: Vec<u8>,
}

static SCHEMAS: OnceLock<Mutex<HashMap<String, Arc<CompiledSchema>>>> = OnceLock::new();

fn engine() -> &'static SchemaEngine {
    static ENGINE: OnceLock<SchemaEngine> = OnceLock::new();
    ENGINE.get_or_init(|| SchemaEngine::builder().trust(Trust::Trusted).build())
}

/// Checks a response body against the corrected OpenAPI document: the
/// status must be declared for the operation, and a declared JSON body
/// must match its schema.
pub fn check_against_openapi(path: &str, method: &str, reply: &Reply) {
    let document = toolshape_otc::openapi::corrected_document();
    let declared = document
        .pointer(&format!(
            "/paths/{}/{method}/responses/{}",
            path.replace('/', "~1"),
            reply.status
        ))
        .is_some();
    assert!(
        declared,
        "{method} {path} answered {} which the OpenAPI document does not declare: {}",
        reply.status, reply.body
    );
    let key = format!("{method} {path} {}", reply.status);
    let cache = SCHEMAS.get_or_init(|| Mutex::new(HashMap::new()));
    let compiled = {
        let mut cache = cache
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        match cache.get(&key) {
            Some(compiled) => Some(Arc::clone(compiled)),
            None => {
                let schema =
                    toolshape_otc::openapi::response_schema(&document, path, method, reply.status);
                let compiled = schema.map(|schema| match engine().compile(&schema) {
                    Ok(compiled) => compiled,
                    Err(error) => panic!("the OpenAPI schema of {key} does not compile: {error}"),
                });
                if let Some(compiled) = &compiled {
                    cache.insert(key.clone(), Arc::clone(compiled));
                }
                compiled
            }
        }
    };
    if let Some(compiled) = compiled
        && let Err(error) = compiled.validate(&reply.body)
    {
        panic!(
            "{key}: the body does not match the OpenAPI document: {error}\n{}",
            reply.body
        );
    }
}

pub fn http() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(Duration::from_secs(30))
        .build()
        .unwrap_or_default()
}

async fn reply_of(response: reqwest::Response) -> Result<Reply, reqwest::Error> {
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let raw = response.bytes().await?.to_vec();
    let body = serde_json::from_slice(&raw).unwrap_or(Value::Null);
    Ok(Reply {
        status,
        headers,
        body,
        raw,
    })
}

/// A request to `path`, its answer checked against the OpenAPI document.
pub async fn send(
    running: &Running,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Option<Vec<u8>>,
) -> Result<Reply, reqwest::Error> {
    let client = http();
    let url = running.url(path);
    let mut request = match method {
        "post" => client.post(&url),
        _ => client.get(&url),
    };
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    if let Some(body) = body {
        request = request
            .header("content-type", "application/json")
            .body(body);
    }
    let reply = reply_of(request.send().await?).await?;
    check_against_openapi(path, method, &reply);
    Ok(reply)
}

/// `POST /tools/call` with a JSON body.
pub async fn call(
    running: &Running,
    headers: &[(&str, &str)],
    body: &Value,
) -> Result<Reply, reqwest::Error> {
    send(
        running,
        "post",
        "/tools/call",
        headers,
        Some(serde_json::to_vec(body).unwrap_or_default()),
    )
    .await
}

/// `POST /tools/call` of `{"request": request}`.
pub async fn call_request(running: &Running, request: Value) -> Result<Reply, reqwest::Error> {
    call(running, &[], &serde_json::json!({"request": request})).await
}
