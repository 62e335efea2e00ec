#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Stateless 2026-07-28 Streamable HTTP, spoken by hand over real HTTP to an
//! in-process server: JSON answers, the request-metadata headers and their
//! `-32020` refusals, unknown methods (404),
//! progress over SSE, closing the stream as cancellation, GET/DELETE (405),
//! and any instance answering any request (no sticky sessions). Versions
//! refused: `http_stateless_versions.rs`.

mod http_support;

use std::sync::Arc;

use reqwest::StatusCode;
use serde_json::{Value, json};
use toolshape::HttpOptions;

use http_support::{
    EventStream, MODERN, Probe, Serving, TIMEOUT, http, modern, modern_headers, modern_params,
    post_raw, request, result_of, server,
};
use toolshape::tool::Elicitation;
use toolshape::{Server, Tool, ToolContext, ToolError};

/// Posts a `tools/call` of `echo` with these headers (the body is always right).
async fn echo_with_headers(url: &str, headers: &[(&str, &str)]) -> http_support::Reply {
    let body = request(
        7,
        "tools/call",
        modern_params(json!({"name": "echo", "arguments": {"text": "hi"}})),
    );
    post_raw(url, headers, body.to_string()).await
}

fn assert_header_mismatch(reply: &http_support::Reply, what: &str) {
    assert_eq!(reply.status, StatusCode::BAD_REQUEST, "{what}: {reply:?}");
    assert!(
        reply.content_type().starts_with("application/json"),
        "{what}"
    );
    let body = reply.json();
    assert_eq!(body["error"]["code"], -32020, "{what}: {body}");
    assert_eq!(body["id"], 7, "{what}: the error names the request: {body}");
}

#[tokio::test]
async fn discover_list_and_call_answer_with_json() {
    let probe = Arc::new(Probe::default());
    let serving = Serving::start_server(server(&probe, 2), probe, HttpOptions::default()).await;

    let reply = modern(&serving.url, 1, "server/discover", json!({})).await;
    let discovered = result_of(&reply);
    assert!(reply.headers.get("mcp-session-id").is_none(), "{reply:?}");
    let supported: Vec<&str> = discovered["supportedVersions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert!(supported.contains(&MODERN), "{discovered}");
    assert!(supported.contains(&"2025-11-25"), "{discovered}");
    assert_eq!(
        discovered["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "http-test"
    );
    assert!(
        discovered["capabilities"]["tools"].is_object(),
        "{discovered}"
    );

    // Two tools a page: three pages, each its own stateless request.
    let mut names = Vec::new();
    let mut cursor: Option<String> = None;
    let mut pages = 0;
    loop {
        let mut params = json!({});
        if let Some(cursor) = &cursor {
            params["cursor"] = json!(cursor);
        }
        let page = result_of(&modern(&serving.url, 10 + pages, "tools/list", params).await);
        pages += 1;
        let tools = page["tools"].as_array().unwrap();
        assert!(tools.len() <= 2, "{page}");
        assert_eq!(page["resultType"], "complete", "{page}");
        names.extend(tools.iter().map(|t| t["name"].as_str().unwrap().to_owned()));
        match page.get("nextCursor").and_then(Value::as_str) {
            Some(next) => cursor = Some(next.to_owned()),
            None => break,
        }
    }
    assert_eq!(pages, 3);
    assert_eq!(names, ["add", "echo", "fail", "shout", "sleep"]);

    let reply = modern(
        &serving.url,
        20,
        "tools/call",
        json!({"name": "echo", "arguments": {"text": "héllo"}}),
    )
    .await;
    let result = result_of(&reply);
    assert_eq!(reply.json()["id"], 20);
    assert_eq!(
        result["structuredContent"],
        json!({"text": "héllo", "length": 5})
    );
    assert_ne!(result["isError"], true, "{result}");

    // A tool error is a result, not a JSON-RPC error.
    let result = result_of(
        &modern(
            &serving.url,
            21,
            "tools/call",
            json!({"name": "fail", "arguments": {"text": "x"}}),
        )
        .await,
    );
    assert_eq!(result["isError"], true, "{result}");
}

#[tokio::test]
async fn headers_must_be_present_and_match_the_body() {
    let serving = Serving::start(HttpOptions::default()).await;
    let url = serving.url.as_str();

    let good = modern_headers("tools/call", Some("echo"));
    let reply = echo_with_headers(url, &good).await;
    assert_eq!(result_of(&reply)["structuredContent"]["text"], "hi");

    let cases: Vec<(&str, Vec<(&str, &str)>)> = vec![
        (
            "no MCP-Protocol-Version",
            vec![("mcp-method", "tools/call"), ("mcp-name", "echo")],
        ),
        (
            "MCP-Protocol-Version differs from _meta",
            vec![
                ("mcp-protocol-version", "2025-11-25"),
                ("mcp-method", "tools/call"),
                ("mcp-name", "echo"),
            ],
        ),
        (
            "no Mcp-Method",
            vec![("mcp-protocol-version", MODERN), ("mcp-name", "echo")],
        ),
        (
            "Mcp-Method names another method",
            modern_headers("tools/list", Some("echo")),
        ),
        (
            "Mcp-Method differs in case (values are case-sensitive)",
            modern_headers("Tools/Call", Some("echo")),
        ),
        ("no Mcp-Name", modern_headers("tools/call", None)),
        (
            "Mcp-Name names another tool",
            modern_headers("tools/call", Some("add")),
        ),
        (
            "Mcp-Name is a malformed sentinel",
            modern_headers("tools/call", Some("=?base64?!!not-base64?=")),
        ),
        (
            "Mcp-Name's sentinel decodes to another tool",
            modern_headers("tools/call", Some("=?base64?YWRk?=")),
        ),
    ];
    for (what, headers) in cases {
        assert_header_mismatch(&echo_with_headers(url, &headers).await, what);
    }

    // The sentinel is decoded before comparing, even for a plain name.
    let reply = echo_with_headers(
        url,
        &modern_headers("tools/call", Some("=?base64?ZWNobw==?=")),
    )
    .await;
    assert_eq!(result_of(&reply)["structuredContent"]["text"], "hi");

    // A name that is not header-safe travels Base64-encoded and is decoded
    // before the comparison ("café"; the registry refuses such a name, so
    // the call gets past the headers and fails as an unknown tool).
    let body = request(
        8,
        "tools/call",
        modern_params(json!({"name": "café", "arguments": {"text": "x"}})),
    );
    let reply = post_raw(
        url,
        &modern_headers("tools/call", Some("=?base64?Y2Fmw6k=?=")),
        body.to_string(),
    )
    .await;
    assert_eq!(reply.status, StatusCode::OK, "{reply:?}");
    assert_eq!(
        reply.error_code(),
        -32602,
        "unknown tool, not a header mismatch"
    );
    // ...and a lossy ASCII spelling of it does not match.
    let reply = post_raw(
        url,
        &modern_headers("tools/call", Some("cafe")),
        body.to_string(),
    )
    .await;
    assert_eq!(reply.status, StatusCode::BAD_REQUEST, "{reply:?}");
    assert_eq!(reply.error_code(), -32020);

    // Non-call requests need MCP-Protocol-Version and Mcp-Method too.
    let list = request(9, "tools/list", modern_params(json!({}))).to_string();
    let reply = post_raw(url, &[("mcp-protocol-version", MODERN)], list.clone()).await;
    assert_eq!(reply.status, StatusCode::BAD_REQUEST, "{reply:?}");
    assert_eq!(reply.error_code(), -32020);
    let reply = post_raw(url, &[("mcp-method", "tools/list")], list).await;
    assert_eq!(reply.status, StatusCode::BAD_REQUEST, "{reply:?}");
    assert_eq!(reply.error_code(), -32020);
}

#[tokio::test]
async fn an_unknown_method_is_404_with_method_not_found() {
    let serving = Serving::start(HttpOptions::default()).await;
    // `ping` and `initialize` are gone from 2026-07-28.
    for (id, method) in [
        (4, "resources/list"),
        (5, "initialize"),
        (6, "no/such"),
        (7, "ping"),
    ] {
        let reply = modern(&serving.url, id, method, json!({})).await;
        assert_eq!(reply.status, StatusCode::NOT_FOUND, "{method}: {reply:?}");
        let body = reply.json();
        assert_eq!(body["error"]["code"], -32601, "{method}: {body}");
        assert_eq!(body["id"], id, "{body}");
    }
}

#[tokio::test]
async fn a_session_id_on_a_modern_request_is_ignored_and_never_minted() {
    let serving = Serving::start(HttpOptions::default()).await;
    let body = request(1, "tools/list", modern_params(json!({})));
    let mut headers = modern_headers("tools/list", None);
    headers.push(("mcp-session-id", "0123456789abcdef0123456789abcdef"));
    let reply = post_raw(&serving.url, &headers, body.to_string()).await;
    assert_eq!(result_of(&reply)["tools"].as_array().unwrap().len(), 5);
    assert!(reply.headers.get("mcp-session-id").is_none(), "{reply:?}");
}

#[tokio::test]
async fn a_call_with_a_progress_token_streams_progress_then_its_answer() {
    let serving = Serving::start(HttpOptions::default()).await;
    let reply = modern(
        &serving.url,
        11,
        "tools/call",
        json!({
            "name": "sleep",
            "arguments": {"ms": 60, "steps": 3},
            "_meta": {"progressToken": "tok-1"},
        }),
    )
    .await;
    assert_eq!(reply.status, StatusCode::OK, "{reply:?}");
    assert!(
        reply.content_type().starts_with("text/event-stream"),
        "{reply:?}"
    );
    assert_eq!(reply.headers["x-accel-buffering"], "no", "{reply:?}");
    let events = reply.events();
    assert_eq!(events.len(), 4, "{events:#?}");
    for (i, event) in events[..3].iter().enumerate() {
        assert_eq!(event["method"], "notifications/progress", "{event}");
        assert!(event.get("id").is_none(), "{event}");
        assert_eq!(event["params"]["progressToken"], "tok-1");
        assert_eq!(event["params"]["progress"].as_f64(), Some((i + 1) as f64));
        assert_eq!(event["params"]["total"].as_f64(), Some(3.0));
    }
    let last = &events[3];
    assert_eq!(last["id"], 11, "{last}");
    assert_eq!(last["result"]["structuredContent"], json!({"slept_ms": 60}));
    assert_eq!(serving.probe.finished(), 1);

    // Without a token, the same call is answered with JSON.
    let reply = modern(
        &serving.url,
        12,
        "tools/call",
        json!({"name": "sleep", "arguments": {"ms": 1, "steps": 2}}),
    )
    .await;
    assert_eq!(
        result_of(&reply)["structuredContent"],
        json!({"slept_ms": 1})
    );
}

/// Starts a slow `sleep` call with a progress token; returns its open stream.
async fn start_streamed_sleep(serving: &Serving, steps: u32) -> EventStream {
    let body = request(
        13,
        "tools/call",
        modern_params(json!({
            "name": "sleep",
            "arguments": {"ms": 10_000, "steps": steps},
            "_meta": {"progressToken": 13},
        })),
    );
    let response = http()
        .post(&serving.url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", MODERN)
        .header("mcp-method", "tools/call")
        .header("mcp-name", "sleep")
        .body(body.to_string())
        .send();
    let response = tokio::time::timeout(TIMEOUT, response)
        .await
        .expect("the stream's headers did not arrive")
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    EventStream::new(response)
}

#[tokio::test]
async fn closing_the_event_stream_cancels_the_call() {
    let serving = Serving::start(HttpOptions::default()).await;

    // A call that reports progress: the server notices at its next write.
    let mut stream = start_streamed_sleep(&serving, 1000).await;
    let first = stream.next(TIMEOUT).await.unwrap();
    assert_eq!(first["method"], "notifications/progress", "{first}");
    drop(stream);
    serving
        .probe
        .wait_for("the call to be aborted", |p| p.aborted() == 1)
        .await;

    // A silent call: no stream opens before its first message or answer,
    // yet a client that goes away before then is seen.
    let body = request(
        13,
        "tools/call",
        modern_params(json!({
            "name": "sleep",
            "arguments": {"ms": 10_000},
            "_meta": {"progressToken": 13},
        })),
    );
    let headers = modern_headers("tools/call", Some("sleep"));
    let url = serving.url.clone();
    let abandoned = tokio::spawn(async move {
        let headers: Vec<(&str, &str)> = headers.clone();
        post_raw(&url, &headers, body.to_string()).await
    });
    serving
        .probe
        .wait_for("the second call to start", |p| p.started() == 2)
        .await;
    assert!(!abandoned.is_finished(), "no answer before the call's end");
    abandoned.abort();
    serving
        .probe
        .wait_for("the silent call to be aborted", |p| p.aborted() == 2)
        .await;
    assert_eq!(serving.probe.finished(), 0);
}

/// A call that needs a capability the client did not declare is refused
/// with `400` and `-32021`, also when it asked for progress (its event
/// stream would open only with a first message).
#[tokio::test]
async fn a_missing_capability_is_a_400_also_for_a_call_asking_for_progress() {
    let ask = Tool::typed_with_context("ask_name", |context: ToolContext, _: Empty| async move {
        let name = match context.elicit::<Named>("Who are you?").await? {
            Elicitation::Accepted(named) => named.name,
            _ => String::new(),
        };
        Ok::<_, ToolError>(Named { name })
    });
    let server = Server::builder("asking", "1").tool(ask).build().unwrap();
    let probe = Arc::new(Probe::default());
    let serving = Serving::start_server(server, probe, HttpOptions::default()).await;
    for meta in [json!({}), json!({"progressToken": "p"})] {
        let reply = modern(
            &serving.url,
            21,
            "tools/call",
            json!({"name": "ask_name", "arguments": {}, "_meta": meta}),
        )
        .await;
        assert_eq!(reply.status, StatusCode::BAD_REQUEST, "{meta}: {reply:?}");
        let body = reply.json();
        assert_eq!(body["error"]["code"], -32021, "{meta}: {body}");
        assert!(
            body["error"]["data"]["requiredCapabilities"]["elicitation"].is_object(),
            "{body}"
        );
    }
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Empty {}

#[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
struct Named {
    name: String,
}

#[tokio::test]
async fn abandoning_a_json_call_cancels_it() {
    let serving = Serving::start(HttpOptions::default()).await;
    let body = request(
        14,
        "tools/call",
        modern_params(json!({"name": "sleep", "arguments": {"ms": 10_000}})),
    );
    let sending = http()
        .post(&serving.url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", MODERN)
        .header("mcp-method", "tools/call")
        .header("mcp-name", "sleep")
        .body(body.to_string())
        .send();
    let abandoned = tokio::spawn(sending);
    serving
        .probe
        .wait_for("the call to start", |p| p.started() == 1)
        .await;
    abandoned.abort();
    serving
        .probe
        .wait_for("the call to be aborted", |p| p.aborted() == 1)
        .await;
}

#[tokio::test]
async fn get_and_delete_without_a_session_are_405() {
    for sessions in [true, false] {
        let mut options = HttpOptions::default();
        options.sessions = sessions;
        let serving = Serving::start(options).await;
        let client = http();
        let got = client
            .get(&serving.url)
            .header("accept", "text/event-stream")
            .send()
            .await
            .unwrap();
        assert_eq!(
            got.status(),
            StatusCode::METHOD_NOT_ALLOWED,
            "GET, sessions {sessions}"
        );
        let deleted = client
            .delete(&serving.url)
            .header("mcp-protocol-version", MODERN)
            .send()
            .await
            .unwrap();
        assert_eq!(
            deleted.status(),
            StatusCode::METHOD_NOT_ALLOWED,
            "DELETE, sessions {sessions}"
        );
    }
}

#[tokio::test]
async fn any_instance_answers_any_request() {
    let a = Serving::start(HttpOptions::default()).await;
    let b = Serving::start(HttpOptions::default()).await;
    assert_ne!(a.url, b.url);

    // List on one instance, follow the cursor and call on the other.
    let probe = Arc::new(Probe::default());
    let paged_a = Serving::start_server(
        server(&probe, 2),
        Arc::clone(&probe),
        HttpOptions::default(),
    )
    .await;
    let paged_b = Serving::start_server(server(&probe, 2), probe, HttpOptions::default()).await;
    let first = result_of(&modern(&paged_a.url, 1, "tools/list", json!({})).await);
    let cursor = first["nextCursor"].as_str().unwrap();
    let second = result_of(&modern(&paged_b.url, 2, "tools/list", json!({"cursor": cursor})).await);
    assert_eq!(second["tools"][0]["name"], "fail", "{second}");

    let listed = result_of(&modern(&a.url, 3, "tools/list", json!({})).await);
    assert!(
        listed["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"] == "add")
    );
    let result = result_of(
        &modern(
            &b.url,
            4,
            "tools/call",
            json!({"name": "add", "arguments": {"a": 2, "b": 40}}),
        )
        .await,
    );
    assert_eq!(result["structuredContent"], 42);

    // Many callers, alternating instances, no session anywhere.
    let mut calls = Vec::new();
    for i in 0..20i64 {
        let url = if i % 2 == 0 {
            a.url.clone()
        } else {
            b.url.clone()
        };
        calls.push(tokio::spawn(async move {
            let reply = modern(
                &url,
                100 + i,
                "tools/call",
                json!({"name": "add", "arguments": {"a": i, "b": 1}}),
            )
            .await;
            assert!(reply.headers.get("mcp-session-id").is_none());
            (i, result_of(&reply)["structuredContent"].clone())
        }));
    }
    for call in calls {
        let (i, value) = call.await.unwrap();
        assert_eq!(value, json!(i + 1));
    }
}
