//! Small legacy Streamable HTTP servers on loopback (JSON answers, no
//! sessions, 2025-11-25), each defined by what it answers to a method: for
//! servers whose defects a test plants.

#![allow(dead_code, unreachable_pub)]

use std::sync::Arc;

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

/// What a server answers to a method (`None`: method not found).
pub type Answers = Arc<dyn Fn(&str) -> Option<Value> + Send + Sync>;

/// Serves `answers` (the handshake answered for it) on loopback; the
/// endpoint's URL.
pub async fn serve(name: &'static str, answers: Answers) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let app = axum::Router::new()
        .route("/mcp", axum::routing::post(answer))
        .with_state((name, answers));
    tokio::spawn(async move { axum::serve(listener, app).await });
    url
}

async fn answer(
    State((name, answers)): State<(&'static str, Answers)>,
    Json(message): Json<Value>,
) -> Response {
    let Some(id) = message.get("id").cloned() else {
        return StatusCode::ACCEPTED.into_response();
    };
    let method = message["method"].as_str().unwrap_or_default();
    let result = match method {
        "initialize" => Some(json!({
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": name, "version": "1.0.0"}
        })),
        method => answers(method),
    };
    let Some(result) = result else {
        let error = json!({"code": -32601, "message": "Method not found"});
        return Json(json!({"jsonrpc": "2.0", "id": id, "error": error})).into_response();
    };
    Json(json!({"jsonrpc": "2.0", "id": id, "result": result})).into_response()
}

/// A server whose listing is costly to compile: `tools` tools, each
/// output schema holding a distinct pattern that takes a while to compile
/// (about 0.1 s in a debug build), each schema within the bounds on one
/// schema.
pub async fn costly_listing(tools: usize) -> String {
    let tool = |index: usize| {
        json!({
            "name": format!("patterned_{index}"),
            "inputSchema": {"type": "object"},
            "outputSchema": {
                "type": "object",
                "properties": {"code": {"type": "string", "pattern": format!("^(\\p{{L}}|\\p{{N}}){{12}}-{index}$")}}
            },
            "annotations": {"readOnlyHint": true}
        })
    };
    let answers: Answers = Arc::new(move |method| {
        (method == "tools/list").then(|| json!({"tools": (0..tools).map(tool).collect::<Vec<_>>()}))
    });
    serve("costly", answers).await
}

/// A gateway in front of the endpoint at `upstream`: `initialize` gets a
/// bare `refusal` (a status, no body), anything else is forwarded as is.
/// Its URL.
pub async fn refusing_initialize(upstream: String, refusal: StatusCode) -> String {
    async fn forward(
        State((upstream, refusal)): State<(Arc<String>, StatusCode)>,
        headers: axum::http::HeaderMap,
        body: axum::body::Bytes,
    ) -> Response {
        let message: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        if message["method"] == "initialize" {
            return refusal.into_response();
        }
        let mut request = reqwest::Client::new().post(upstream.as_str()).body(body);
        for (name, value) in &headers {
            if name != "host" && name != "content-length" {
                request = request.header(name, value);
            }
        }
        let Ok(answer) = request.send().await else {
            return StatusCode::BAD_GATEWAY.into_response();
        };
        let status = StatusCode::from_u16(answer.status().as_u16()).unwrap();
        let content_type = answer.headers().get("content-type").cloned();
        let bytes = answer.bytes().await.unwrap_or_default();
        let mut response = (status, bytes).into_response();
        if let Some(content_type) = content_type {
            response.headers_mut().insert("content-type", content_type);
        }
        response
    }
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let app = axum::Router::new()
        .route("/mcp", axum::routing::post(forward))
        .with_state((Arc::new(upstream), refusal));
    tokio::spawn(async move { axum::serve(listener, app).await });
    url
}
