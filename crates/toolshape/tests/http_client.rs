#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The client over Streamable HTTP, against an in-process server on a real
//! loopback port: automatic negotiation (2026-07-28) and a pinned handshake
//! revision (a session, ended on close), the request-metadata headers it
//! sends (seen through a recording proxy), typed calls, validation errors,
//! progress over SSE, many concurrent calls, cancellation, the listing's
//! `ttlMs` (connecting and its fallbacks: `http_client_connecting.rs`).

mod http_support;

use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::{Value, json};
use toolshape::client::{Client, ClientErrorKind, Negotiation};
use toolshape::protocol::ProtocolVersion;
use toolshape::protocol::content::ContentBlock;
use toolshape::{CallOptions, HttpOptions, Tool, ToolError};

use http_support::recorder::{Recorded, Recorder};
use http_support::{
    EchoOut, LEGACY, MODERN, Serving, SleepOut, TIMEOUT, connect, request, session_post,
};

const PINNED: Negotiation = Negotiation::Pinned(ProtocolVersion::V2025_11_25);

fn arguments(value: Value) -> Option<serde_json::Map<String, Value>> {
    value.as_object().cloned()
}

/// Typed calls, tool errors, decode errors: the same in every revision.
async fn typed_calls(client: &Client) {
    let sum: i64 = client.call("add", json!({"a": 2, "b": 40})).await.unwrap();
    assert_eq!(sum, 42);
    let echoed: EchoOut = client.call("echo", json!({"text": "héllo"})).await.unwrap();
    assert_eq!(
        echoed,
        EchoOut {
            text: "héllo".into(),
            length: 5
        }
    );
    let shouted: String = client.call("shout", json!({"text": "hi"})).await.unwrap();
    assert_eq!(shouted, "HI");

    let failed = client
        .call::<i64>("fail", json!({"text": "x"}))
        .await
        .unwrap_err();
    assert!(failed.is_tool_error(), "{failed}");
    assert!(
        failed.to_string().contains("it failed on purpose"),
        "{failed}"
    );
    // The tool's own result is kept, with its retry hints.
    let hint = failed.tool_error().expect("the tool's error is kept");
    assert_eq!(hint.message(), "it failed on purpose");
    assert!(hint.is_retryable());
    assert_eq!(hint.retry_delay(), Some(Duration::from_millis(250)));
    assert!(failed.rejected_result().is_some_and(|r| r.is_error));

    let wrong_type = client
        .call::<bool>("add", json!({"a": 1, "b": 1}))
        .await
        .unwrap_err();
    assert!(
        matches!(wrong_type.kind(), ClientErrorKind::Decode { .. }),
        "{wrong_type}"
    );
    let kept = wrong_type.rejected_result().expect("the result is kept");
    assert_eq!(kept.structured, Some(json!(2)));
    assert!(wrong_type.tool_error().is_none());

    // With options: a call slower than its own timeout fails as a timeout.
    let slept: SleepOut = client
        .call_with("sleep", json!({"ms": 1}), CallOptions::default())
        .await
        .unwrap();
    assert_eq!(slept.slept_ms, 1);
    let late = client
        .call_with::<SleepOut>(
            "sleep",
            json!({"ms": 5000}),
            CallOptions::default().timeout(Duration::from_millis(100)),
        )
        .await
        .unwrap_err();
    assert!(matches!(late.kind(), ClientErrorKind::Timeout(_)), "{late}");

    let invalid_arguments = client
        .call_tool("add", arguments(json!({"a": "one", "b": 1})))
        .await
        .unwrap();
    assert!(invalid_arguments.is_error, "{invalid_arguments:?}");

    let unknown = client
        .call::<i64>("no_such_tool", json!({}))
        .await
        .unwrap_err();
    assert!(
        matches!(unknown.kind(), ClientErrorKind::Protocol(_)),
        "{unknown}"
    );
}

#[tokio::test]
async fn auto_negotiates_2026_07_28_and_sends_the_metadata_headers() {
    let serving = Serving::start(HttpOptions::default()).await;
    let recorder = Recorder::start(&serving.url).await;
    let client = connect(&recorder.url, Negotiation::Auto).await;
    assert_eq!(client.protocol_version(), ProtocolVersion::V2026_07_28);
    assert_eq!(client.server_info().unwrap().name, "http-test");

    let names: Vec<String> = client
        .list_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert_eq!(names, ["add", "echo", "fail", "shout", "sleep"]);
    typed_calls(&client).await;
    client.close(Duration::from_secs(1)).await;

    let log = recorder.log();
    assert!(log.len() >= 8, "{log:#?}");
    for recorded in &log {
        assert_eq!(recorded.method, "POST", "{recorded:?}");
        assert_eq!(recorded.header("mcp-protocol-version"), Some(MODERN));
        assert_eq!(
            recorded.header("mcp-method"),
            Some(recorded.rpc_method()),
            "{recorded:?}"
        );
        assert_eq!(
            recorded.body["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"],
            MODERN
        );
        assert!(recorded.header("mcp-session-id").is_none(), "{recorded:?}");
        let accept = recorded.header("accept").unwrap();
        assert!(
            accept.contains("application/json") && accept.contains("text/event-stream"),
            "{accept}"
        );
        if recorded.rpc_method() == "tools/call" {
            assert_eq!(
                recorded.header("mcp-name"),
                recorded.body["params"]["name"].as_str(),
                "{recorded:?}"
            );
        }
        assert!(
            recorded.status == StatusCode::OK,
            "the server accepted every request: {recorded:?}"
        );
    }
    assert_eq!(log[0].rpc_method(), "server/discover");
}

#[tokio::test]
async fn a_pinned_handshake_revision_uses_a_session_and_ends_it_on_close() {
    let serving = Serving::start(HttpOptions::default()).await;
    let recorder = Recorder::start(&serving.url).await;
    let client = connect(&recorder.url, PINNED).await;
    assert_eq!(client.protocol_version(), ProtocolVersion::V2025_11_25);
    assert_eq!(client.list_tools().await.unwrap().len(), 5);
    // 2025-11-25 wraps non-object outputs; the client unwraps them.
    let result = client
        .call_tool("add", arguments(json!({"a": 1, "b": 2})))
        .await
        .unwrap();
    assert_eq!(result.structured, Some(json!(3)));
    // The JSON as sent is kept, wrapped: the text block repeats it exactly.
    assert_eq!(result.structured_json(), Some(r#"{"result":3}"#));
    assert_eq!(result.text(), r#"{"result":3}"#);
    typed_calls(&client).await;

    let log = recorder.log();
    let initialize = &log[0];
    assert_eq!(initialize.rpc_method(), "initialize");
    assert!(initialize.header("mcp-session-id").is_none());
    let session = initialize
        .response_headers
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .expect("the server minted a session")
        .to_owned();
    assert!(
        log.iter()
            .any(|r| r.rpc_method() == "notifications/initialized"),
        "{log:#?}"
    );
    for recorded in &log[1..] {
        assert_eq!(
            recorded.header("mcp-session-id"),
            Some(session.as_str()),
            "{recorded:?}"
        );
        assert_eq!(recorded.header("mcp-protocol-version"), Some(LEGACY));
        assert!(recorded.header("mcp-method").is_none(), "{recorded:?}");
    }

    client.close(Duration::from_secs(1)).await;
    let deleted = recorder
        .wait_for("the DELETE that ends the session", |r| r.method == "DELETE")
        .await;
    assert_eq!(deleted.header("mcp-session-id"), Some(session.as_str()));
    assert_eq!(deleted.status, StatusCode::OK);
    let reply = session_post(&serving.url, &session, &request(9, "tools/list", json!({}))).await;
    assert_eq!(reply.status, StatusCode::NOT_FOUND, "the session is gone");
}

/// Replaces `liar` in the registry with `replacement` (same name).
fn swap(serving: &Serving, replacement: Tool) {
    assert!(serving.server.registry().remove("liar"));
    serving.server.registry().register(replacement).unwrap();
}

#[tokio::test]
async fn results_that_break_the_listed_output_schema_are_validation_errors() {
    for negotiation in [Negotiation::Auto, PINNED] {
        let serving = Serving::start(HttpOptions::default()).await;
        let liar = || {
            Tool::typed("liar", |_: http_support::EchoIn| async move {
                Ok::<_, ToolError>(7_i64)
            })
        };
        serving.server.registry().register(liar()).unwrap();
        let client = connect(&serving.url, negotiation).await;
        // The client lists (and caches) `liar` with an integer outputSchema...
        let seven: i64 = client.call("liar", json!({"text": "x"})).await.unwrap();
        assert_eq!(seven, 7);

        // ...then the server's `liar` starts returning strings.
        let mut changes = client.tool_list_changes();
        swap(
            &serving,
            Tool::typed("liar", |_: http_support::EchoIn| async move {
                Ok::<_, ToolError>("seven".to_owned())
            }),
        );
        if negotiation == PINNED {
            // A session hears of the change (its GET stream) and lists
            // again: the new result fits the new listing.
            tokio::time::timeout(Duration::from_secs(5), changes.changed())
                .await
                .expect("no tools/list_changed on the session's stream")
                .unwrap();
            let seven: String = client.call("liar", json!({"text": "x"})).await.unwrap();
            assert_eq!(seven, "seven");
            client.close(Duration::from_secs(1)).await;
            continue;
        }
        // A 2026-07-28 client that does not listen still holds the old
        // listing: the result breaks it.
        let error = client
            .call_tool("liar", arguments(json!({"text": "x"})))
            .await
            .unwrap_err();
        assert!(
            matches!(error.kind(), ClientErrorKind::Validation { .. }),
            "{negotiation:?}: {error}"
        );
        assert!(error.is_validation_error());

        // ...or no structured content at all.
        swap(
            &serving,
            Tool::text("liar", |_: http_support::EchoIn| async move {
                Ok::<_, ToolError>("seven".to_owned())
            }),
        );
        let error = client
            .call::<i64>("liar", json!({"text": "x"}))
            .await
            .unwrap_err();
        assert!(
            matches!(
                error.kind(),
                ClientErrorKind::MissingStructuredContent { .. }
            ),
            "{negotiation:?}: {error}"
        );
        client.close(Duration::from_secs(1)).await;
    }
}

/// A tool that returns nothing decodes as `()`; a tool's text that is JSON
/// of another type than asked for is read as the string it is.
#[tokio::test]
async fn typed_calls_read_nothing_as_unit_and_text_as_a_string() {
    for negotiation in [Negotiation::Auto, PINNED] {
        let serving = Serving::start(HttpOptions::default()).await;
        let registry = serving.server.registry();
        registry
            .register(Tool::action(
                "nothing",
                |_: http_support::EchoIn| async move { Ok::<_, ToolError>(()) },
            ))
            .unwrap();
        registry
            .register(Tool::content(
                "forty_two",
                |_: http_support::EchoIn| async move {
                    Ok::<_, ToolError>(vec![ContentBlock::text("42")])
                },
            ))
            .unwrap();
        let client = connect(&serving.url, negotiation).await;
        let x = || json!({"text": "x"});
        client
            .call::<()>("nothing", x())
            .await
            .unwrap_or_else(|error| panic!("{negotiation:?}: {error}"));
        let number: u32 = client.call("forty_two", x()).await.unwrap();
        assert_eq!(number, 42, "{negotiation:?}");
        let text: String = client.call("forty_two", x()).await.unwrap();
        assert_eq!(text, "42", "{negotiation:?}");
        client.close(Duration::from_secs(1)).await;
    }
}

#[tokio::test]
async fn progress_arrives_over_the_event_stream() {
    for negotiation in [Negotiation::Auto, PINNED] {
        let serving = Serving::start(HttpOptions::default()).await;
        let client = connect(&serving.url, negotiation).await;
        let (sender, mut reports) = tokio::sync::mpsc::channel(64);
        let settings = CallOptions::new().progress(sender);
        let result = client
            .call_tool_with("sleep", arguments(json!({"ms": 60, "steps": 3})), settings)
            .await
            .unwrap();
        assert_eq!(result.structured, Some(json!({"slept_ms": 60})));
        let mut seen = Vec::new();
        while let Ok(report) = reports.try_recv() {
            seen.push(report);
        }
        let progress: Vec<f64> = seen.iter().map(|r| r.progress).collect();
        assert_eq!(progress, [1.0, 2.0, 3.0], "{negotiation:?}: {seen:?}");
        assert_eq!(seen[2].total, Some(3.0));
        assert_eq!(seen[0].message.as_deref(), Some("step 1"));
        client.close(Duration::from_secs(1)).await;
    }
}

#[tokio::test]
async fn many_concurrent_calls_each_get_their_own_answer() {
    for negotiation in [Negotiation::Auto, PINNED] {
        let serving = Serving::start(HttpOptions::default()).await;
        let client = connect(&serving.url, negotiation).await;
        let started = Instant::now();
        let tasks: Vec<_> = (0..16_i64)
            .map(|task| {
                let client = client.clone();
                tokio::spawn(async move {
                    for i in 0..13_i64 {
                        let n = task * 100 + i;
                        if i % 3 == 0 {
                            let echoed: EchoOut = client
                                .call("echo", json!({"text": format!("n{n}")}))
                                .await
                                .unwrap();
                            assert_eq!(echoed.text, format!("n{n}"));
                        } else {
                            let sum: i64 =
                                client.call("add", json!({"a": n, "b": n})).await.unwrap();
                            assert_eq!(sum, 2 * n);
                        }
                    }
                })
            })
            .collect();
        for task in tasks {
            tokio::time::timeout(TIMEOUT, task).await.unwrap().unwrap();
        }
        // 208 calls.
        assert!(started.elapsed() < TIMEOUT);
        client.close(Duration::from_secs(1)).await;
    }
}

#[tokio::test]
async fn a_request_timeout_cancels_the_call_at_the_server() {
    for (negotiation, progress) in [
        (Negotiation::Auto, false),
        (Negotiation::Auto, true),
        (PINNED, false),
        (PINNED, true),
    ] {
        let serving = Serving::start(HttpOptions::default()).await;
        let client = connect(&serving.url, negotiation).await;
        let (sender, _reports) = tokio::sync::mpsc::channel(64);
        let mut settings = CallOptions::new().timeout(Duration::from_millis(150));
        settings.progress = progress.then_some(sender);
        let error = client
            .call_tool_with("sleep", arguments(json!({"ms": 10_000})), settings)
            .await
            .unwrap_err();
        assert!(
            matches!(error.kind(), ClientErrorKind::Timeout(_)),
            "{negotiation:?}: {error}"
        );
        serving
            .probe
            .wait_for(
                &format!("{negotiation:?} (progress {progress}): the server to stop the call"),
                |p| p.aborted() == 1,
            )
            .await;

        // A call abandoned by its caller (its future dropped) is cancelled too.
        let abandoned = tokio::time::timeout(
            Duration::from_millis(150),
            client.call::<SleepOut>("sleep", json!({"ms": 10_000})),
        )
        .await;
        assert!(abandoned.is_err());
        serving
            .probe
            .wait_for(
                &format!("{negotiation:?}: the server to stop the abandoned call"),
                |p| p.aborted() == 2,
            )
            .await;
        assert_eq!(serving.probe.finished(), 0);
        client.close(Duration::from_secs(1)).await;
    }
}

/// On 2026-07-28 `list_tools` keeps a listing for its `ttlMs` and no
/// longer (`0`: listed each time); calls use the listing as cached. On a
/// handshake revision the listing stays until the server says it changed.
#[tokio::test]
async fn list_tools_follows_the_listings_ttl_on_2026_07_28() {
    for (ttl, negotiation, lists) in [
        (Duration::ZERO, Negotiation::Auto, 3),
        (Duration::from_secs(3600), Negotiation::Auto, 1),
        (
            Duration::ZERO,
            Negotiation::Pinned(ProtocolVersion::V2025_11_25),
            1,
        ),
    ] {
        let probe = std::sync::Arc::new(http_support::Probe::default());
        let mut options = toolshape::ServerOptions::default();
        options.list_ttl = ttl;
        let server = toolshape::Server::builder("ttl", "1")
            .options(options)
            .tools(http_support::tools(&probe))
            .build()
            .unwrap();
        let serving = Serving::start_server(server, probe, HttpOptions::default()).await;
        let recorder = Recorder::start(&serving.url).await;
        let client = connect(&recorder.url, negotiation).await;
        for _ in 0..3 {
            assert_eq!(client.list_tools().await.unwrap().len(), 5);
        }
        let sum: i64 = client.call("add", json!({"a": 1, "b": 2})).await.unwrap();
        assert_eq!(sum, 3);
        let listed = recorder
            .log()
            .iter()
            .filter(|r| r.rpc_method() == "tools/list")
            .count();
        assert_eq!(listed, lists, "ttl {ttl:?}, {negotiation:?}");
        // Callers at once share the listing one of them makes, even at
        // `ttlMs` 0 (each waited for it, rather than listing in turn).
        let client = std::sync::Arc::new(client);
        let callers: Vec<_> = (0..8)
            .map(|_| {
                let client = std::sync::Arc::clone(&client);
                tokio::spawn(async move { client.list_tools().await.map(|tools| tools.len()) })
            })
            .collect();
        for caller in callers {
            assert_eq!(caller.await.unwrap().unwrap(), 5);
        }
        let more = recorder
            .log()
            .iter()
            .filter(|r| r.rpc_method() == "tools/list")
            .count()
            - listed;
        assert!(more <= 2, "{more} listings for 8 callers at once, {ttl:?}");
        if let Ok(client) = std::sync::Arc::try_unwrap(client) {
            client.close(Duration::from_secs(1)).await;
        }
    }
}

// A toolshape client listens on its session's GET stream from its start,
// so its session is in use however long it waits between calls: past the
// server's idle time, no new `initialize`. (A session that did end is
// replaced: the next test.)
#[tokio::test]
async fn a_listening_client_keeps_its_session_past_the_idle_time() {
    let mut options = HttpOptions::default();
    options.session_idle_timeout = Duration::from_millis(200);
    let serving = Serving::start(options).await;
    let recorder = Recorder::start(&serving.url).await;
    let client = connect(&recorder.url, PINNED).await;
    let sum: i64 = client.call("add", json!({"a": 1, "b": 1})).await.unwrap();
    assert_eq!(sum, 2);
    tokio::time::sleep(Duration::from_millis(600)).await;
    let sum: i64 = client.call("add", json!({"a": 2, "b": 2})).await.unwrap();
    assert_eq!(sum, 4);
    let initializes = recorder
        .log()
        .iter()
        .filter(|entry| entry.rpc_method() == "initialize")
        .count();
    assert_eq!(initializes, 1, "{:?}", recorder.log());
}

#[tokio::test]
async fn an_ended_session_is_replaced_by_a_new_one() {
    let serving = Serving::start(HttpOptions::default()).await;
    let recorder = Recorder::start(&serving.url).await;
    let client = connect(&recorder.url, PINNED).await;
    let session_of = |entry: &Recorded| {
        entry
            .response_headers
            .get("mcp-session-id")
            .map(|v| v.to_str().unwrap().to_owned())
    };
    let first = session_of(&recorder.log()[0]).unwrap();
    let ended = http_support::http()
        .delete(&serving.url)
        .header("mcp-session-id", &first)
        .send()
        .await
        .unwrap();
    assert_eq!(ended.status(), StatusCode::OK);

    let started = Instant::now();
    let sum: i64 = client.call("add", json!({"a": 1, "b": 1})).await.unwrap();
    assert_eq!(sum, 2);
    assert!(started.elapsed() < Duration::from_secs(2));
    let sessions: Vec<String> = recorder.log().iter().filter_map(session_of).collect();
    assert_eq!(sessions.len(), 2, "one new initialize: {sessions:?}");
    assert_ne!(sessions[0], sessions[1]);
}
