#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Two `toolshape proxy --http --stateless` processes, as behind a load
//! balancer, in front of one upstream whose tool asks the user: a 2026-07-28
//! client's retry of an `input_required` round reaches the other proxy.
//! With one `--request-state-key-file` the other proxy takes it; with a
//! random secret each, it is refused. A short secret is a usage error, as
//! is an audit log that cannot be opened (found before any upstream starts).

#[path = "../../toolshape-harness/tests/client_common/mod.rs"]
mod client_common;
mod http_serve;

use serde_json::{Value, json};

use http_serve::HttpServe;

/// A 2026-07-28 `tools/call` of `test_elicitation`, with `extra` params.
fn call(extra: Value) -> Value {
    let mut params = json!({
        "name": "test_elicitation",
        "arguments": {"message": "Who are you?"},
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
            "io.modelcontextprotocol/clientInfo": {"name": "tests", "version": "0.0.0"},
        },
    });
    if let (Some(params), Value::Object(extra)) = (params.as_object_mut(), extra) {
        params.extend(extra);
    }
    json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
}

/// POSTs `message` to `url` and reads the JSON-RPC response (a JSON body,
/// or the response event of a stream).
async fn post(url: &str, message: &Value) -> Value {
    let reply = reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", "test_elicitation")
        .body(message.to_string())
        .send()
        .await
        .unwrap();
    let text = reply.text().await.unwrap();
    let json = text
        .lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .map(str::trim)
        .find(|data| data.contains("\"id\""))
        .unwrap_or(&text);
    serde_json::from_str(json).unwrap_or_else(|e| panic!("{e}: {text}"))
}

/// Asks through `first`, answers through `second`: the second's response.
async fn answered_elsewhere(first: &HttpServe, second: &HttpServe) -> Value {
    let asked = post(&first.url, &call(json!({}))).await;
    let result = &asked["result"];
    assert_eq!(result["resultType"], "input_required", "{asked}");
    let (key, question) = result["inputRequests"]
        .as_object()
        .unwrap()
        .iter()
        .next()
        .unwrap();
    assert_eq!(question["method"], "elicitation/create", "{asked}");
    let answer =
        json!({"action": "accept", "content": {"username": "ada", "email": "ada@example.com"}});
    let retry = call(json!({
        "requestState": result["requestState"],
        "inputResponses": { key.clone(): answer },
    }));
    post(&second.url, &retry).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn proxies_sharing_a_state_key_take_each_others_retries() {
    let server = toolshape::Server::builder("asks", "1")
        .tools(toolshape_harness::conformance::asking_tools())
        .build()
        .unwrap();
    let upstream = client_common::serve_over_http(server).await;
    let folder = tempfile::tempdir().unwrap();
    let key = folder.path().join("state.key");
    std::fs::write(&key, format!("{}\n", "7f".repeat(32))).unwrap();
    let key = key.to_str().unwrap();
    let proxy = |shared: bool| {
        let mut args = vec!["proxy", "--http", "127.0.0.1:0", "--stateless"];
        if shared {
            args.extend(["--request-state-key-file", key]);
        }
        args.extend(["--url", &upstream]);
        let args: Vec<String> = args.into_iter().map(str::to_owned).collect();
        async move {
            tokio::task::spawn_blocking(move || {
                let args: Vec<&str> = args.iter().map(String::as_str).collect();
                HttpServe::run(&args)
            })
            .await
            .unwrap()
        }
    };

    let (a, b) = (proxy(true).await, proxy(true).await);
    let done = answered_elsewhere(&a, &b).await;
    let result = &done["result"];
    assert_eq!(result["resultType"], "complete", "{done}");
    let text = result["structuredContent"]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(text.contains("ada@example.com"), "{done}");

    let (c, d) = (proxy(false).await, proxy(false).await);
    let refused = answered_elsewhere(&c, &d).await;
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
}

#[test]
fn a_short_state_key_is_a_usage_error() {
    let folder = tempfile::tempdir().unwrap();
    let key = folder.path().join("state.key");
    std::fs::write(&key, "too short\n").unwrap();
    let output = http_serve::toolshape(&[
        "proxy",
        "--http",
        "127.0.0.1:0",
        "--request-state-key-file",
        key.to_str().unwrap(),
        "--",
        "true",
    ]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("at least 32"), "{stderr}");
}

/// An audit log that cannot be opened is a usage error found before the
/// upstream is started (its command would leave a mark).
#[test]
fn an_audit_log_that_cannot_be_opened_is_a_usage_error() {
    let folder = tempfile::tempdir().unwrap();
    let audit = folder.path().join("no such folder").join("audit.jsonl");
    let mark = folder.path().join("started");
    let upstream = format!("touch '{}'; exec cat", mark.display());
    let output = http_serve::toolshape(&[
        "proxy",
        "--audit",
        audit.to_str().unwrap(),
        "--",
        "sh",
        "-c",
        &upstream,
    ]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("audit log"), "{stderr}");
    assert!(!mark.exists(), "the upstream was started");
}
