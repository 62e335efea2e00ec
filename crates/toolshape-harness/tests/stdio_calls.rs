#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Tool calls against the test server over real pipes: concurrency,
//! cancellation, time limits, panics, invalid output, progress, input
//! validation and the shaping of non-object outputs.

mod common;

use std::time::{Duration, Instant};

use common::{MODERN, OutputSchemas, Peer, WRAPPED_KEY, is_error, params_for, text_of};
use serde_json::{Value, json};
use toolshape::protocol::meta::keys::SERVER_INFO;

fn call_params(version: &str, name: &str, arguments: Value) -> Value {
    params_for(version, json!({"name": name, "arguments": arguments}))
}

#[tokio::test]
async fn concurrent_calls_answer_in_completion_order() {
    for version in ["2025-11-25", MODERN] {
        let mut peer = Peer::test_server::<_, &str>([]);
        peer.open(version).await;
        let slow = peer
            .send_request(
                "tools/call",
                call_params(version, "sleep", json!({"ms": 400})),
            )
            .await;
        let fast = peer
            .send_request(
                "tools/call",
                call_params(version, "sleep", json!({"ms": 10})),
            )
            .await;
        let first = peer.next_response().await;
        assert_eq!(first["id"], fast, "the short call answers first: {first}");
        assert_eq!(first["result"]["structuredContent"], json!({"slept": 10}));
        let second = peer.next_response().await;
        assert_eq!(second["id"], slow, "{second}");
        assert_eq!(second["result"]["structuredContent"], json!({"slept": 400}));
    }
}

#[tokio::test]
async fn a_cancelled_call_never_answers_and_the_server_keeps_serving() {
    let mut peer = Peer::test_server::<_, &str>([]);
    peer.initialize("2025-11-25").await;
    let started = Instant::now();
    let id = peer
        .send_request(
            "tools/call",
            json!({"name": "sleep", "arguments": {"ms": 5000}, "_meta": {"progressToken": "cancel-me"}}),
        )
        .await;
    // The first progress report proves the call is running.
    let first = peer
        .next_message(common::TIMEOUT)
        .await
        .expect("a progress notification");
    assert_eq!(first["method"], "notifications/progress", "{first}");
    assert_eq!(first["params"]["progressToken"], "cancel-me", "{first}");
    peer.notify(
        "notifications/cancelled",
        json!({"requestId": id, "reason": "the test changed its mind"}),
    )
    .await;
    // Messages are handled in order: once ping answers, the cancel was seen.
    assert_eq!(peer.result("ping", Value::Null).await, json!({}));
    peer.assert_no_response(id, Duration::from_millis(200))
        .await;
    // Cancelling again, or cancelling an unknown id, is harmless.
    peer.notify("notifications/cancelled", json!({"requestId": id}))
        .await;
    peer.notify(
        "notifications/cancelled",
        json!({"requestId": "never-sent"}),
    )
    .await;
    peer.notify("notifications/cancelled", json!({"bogus": true}))
        .await;
    let after = peer
        .result(
            "tools/call",
            json!({"name": "sleep", "arguments": {"ms": 5}}),
        )
        .await;
    assert_eq!(after["structuredContent"], json!({"slept": 5}));
    // At the end of input the server waits for every call still running
    // before it exits: it exits at once, and never answered the cancelled one.
    peer.close_stdin();
    let rest = peer.drain_to_eof().await;
    assert!(
        rest.iter()
            .all(|m| !(common::is_response(m) && m["id"] == id)),
        "the cancelled call answered: {rest:?}"
    );
    assert_eq!(peer.wait_exit().await.code(), Some(0));
    assert!(
        started.elapsed() < Duration::from_millis(4000),
        "the cancelled call kept running"
    );
}

#[tokio::test]
async fn a_call_past_the_time_limit_fails_with_a_timeout() {
    let mut peer = Peer::test_server(["--call-timeout-ms", "200"]);
    for version in ["2025-06-18", MODERN] {
        peer.open(version).await;
        let started = Instant::now();
        let result = peer
            .call_result(version, "sleep", json!({"ms": 5000}))
            .await;
        assert!(is_error(&result), "{result}");
        let text = text_of(&result);
        assert!(
            text.contains("timed out") && text.contains("200 ms"),
            "the message names the timeout: {text}"
        );
        assert!(result.get("structuredContent").is_none(), "{result}");
        assert!(
            started.elapsed() < Duration::from_secs(3),
            "the call was stopped at its limit"
        );
    }
    // A call inside the limit still succeeds.
    let ok = peer.call_result(MODERN, "sleep", json!({"ms": 20})).await;
    assert_eq!(ok["structuredContent"], json!({"slept": 20}));
}

#[tokio::test]
async fn the_time_limit_can_come_from_the_environment() {
    let mut peer = Peer::spawn_with_env(
        common::test_server_path(),
        std::iter::empty::<&str>(),
        [("TEST_SERVER_CALL_TIMEOUT_MS", "100")],
    );
    let result = peer.call_result(MODERN, "sleep", json!({"ms": 5000})).await;
    assert!(is_error(&result), "{result}");
    assert!(text_of(&result).contains("100 ms"), "{result}");
}

#[tokio::test]
async fn a_panicking_tool_fails_and_the_server_keeps_serving() {
    let mut peer = Peer::test_server::<_, &str>([]);
    peer.initialize("2025-11-25").await;
    for version in ["2025-11-25", MODERN] {
        let result = peer.call_result(version, "panic", json!({})).await;
        assert!(is_error(&result), "{result}");
        let text = text_of(&result);
        assert!(text.contains("panic"), "{text}");
        assert!(
            !text.contains("as asked"),
            "the panic's own message stays in the server: {text}"
        );
    }
    assert_eq!(peer.result("ping", Value::Null).await, json!({}));
    let numbers = peer
        .call_result("2025-11-25", "numbers", json!({"n": 3}))
        .await;
    assert_eq!(numbers["structuredContent"], json!({"result": [0, 1, 2]}));
}

#[tokio::test]
async fn output_that_breaks_its_schema_is_withheld() {
    let mut peer = Peer::test_server::<_, &str>([]);
    peer.initialize("2025-11-25").await;
    for version in ["2025-11-25", MODERN] {
        let response = peer.call(version, "bad_output", json!({})).await;
        let result = &response["result"];
        assert!(is_error(result), "{response}");
        assert!(result.get("structuredContent").is_none(), "{response}");
        assert!(
            text_of(result).contains("output schema"),
            "the message says why: {response}"
        );
        assert!(
            !response
                .to_string()
                .contains("secret-invalid-output-marker"),
            "the invalid output must not be sent: {response}"
        );
    }
}

#[tokio::test]
async fn progress_notifications_arrive_before_the_response() {
    let mut peer = Peer::test_server::<_, &str>([]);
    peer.initialize("2025-11-25").await;
    for (version, token) in [("2025-11-25", json!("tok-1")), (MODERN, json!(7))] {
        let mut params = call_params(version, "sleep", json!({"ms": 60}));
        params["_meta"]["progressToken"] = token.clone();
        let id = peer.send_request("tools/call", params).await;
        let response = peer.response(id).await;
        assert_eq!(
            response["result"]["structuredContent"],
            json!({"slept": 60})
        );
        let log = peer.log();
        let answered_at = log
            .iter()
            .position(|message| message["id"] == id && common::is_response(message))
            .unwrap();
        let progress: Vec<(usize, &Value)> = log
            .iter()
            .enumerate()
            .filter(|(_, message)| {
                message["method"] == "notifications/progress"
                    && message["params"]["progressToken"] == token
            })
            .collect();
        assert!(
            !progress.is_empty(),
            "{version}: no progress notification for token {token}"
        );
        let mut last = f64::NEG_INFINITY;
        for (at, message) in &progress {
            assert!(*at < answered_at, "progress after the response: {message}");
            let value = message["params"]["progress"].as_f64().unwrap();
            assert!(value > last, "progress must increase: {progress:?}");
            last = value;
            assert_eq!(message["params"]["total"], 60.0, "{message}");
        }
        let _ = peer.take_notifications("notifications/progress");
    }

    // Without a token, no progress is sent.
    let before = peer.log().len();
    let id = peer
        .send_request(
            "tools/call",
            call_params("2025-11-25", "sleep", json!({"ms": 40})),
        )
        .await;
    peer.response(id).await;
    assert!(
        peer.log()[before..]
            .iter()
            .all(|message| message["method"] != "notifications/progress"),
        "progress without a token: {:?}",
        &peer.log()[before..]
    );
}

#[tokio::test]
async fn an_array_output_is_shaped_for_each_revision() {
    for version in common::ALL {
        let mut peer = Peer::test_server::<_, &str>([]);
        peer.open(version).await;
        let tools = peer.list_all_tools(version).await;
        let schemas = OutputSchemas::new(&tools);
        let listed = schemas.tool("numbers");
        let result = peer.call_result(version, "numbers", json!({"n": 4})).await;
        match version {
            "2024-11-05" | "2025-03-26" => {
                assert!(listed.get("outputSchema").is_none(), "{version}: {listed}");
                assert!(result.get("structuredContent").is_none(), "{result}");
                let text: Value = serde_json::from_str(&text_of(&result)).unwrap();
                assert_eq!(text, json!([0, 1, 2, 3]), "{version}: {result}");
            }
            "2025-06-18" | "2025-11-25" => {
                assert_eq!(listed["outputSchema"]["type"], "object", "{listed}");
                assert_eq!(listed["_meta"][WRAPPED_KEY], "result", "{listed}");
                let structured = schemas.check("numbers", &result);
                assert_eq!(structured, json!({"result": [0, 1, 2, 3]}));
                assert_eq!(result["_meta"][WRAPPED_KEY], "result", "{result}");
            }
            _ => {
                assert_eq!(listed["outputSchema"]["type"], "array", "{listed}");
                assert!(listed.get("_meta").is_none(), "{listed}");
                let structured = schemas.check("numbers", &result);
                assert_eq!(structured, json!([0, 1, 2, 3]));
                // Not wrapped: its `_meta` only names the server.
                let meta = result["_meta"].as_object().expect("a _meta");
                assert_eq!(meta.keys().collect::<Vec<_>>(), [SERVER_INFO], "{result}");
                assert_eq!(meta[SERVER_INFO]["name"], "test_server", "{result}");
                assert_eq!(result["resultType"], "complete", "{result}");
            }
        }
        // An object output is never wrapped.
        let slept = peer.call_result(version, "sleep", json!({"ms": 1})).await;
        if version >= "2025-06-18" {
            assert_eq!(schemas.check("sleep", &slept), json!({"slept": 1}));
            assert!(slept["_meta"].get(WRAPPED_KEY).is_none(), "{slept}");
            let named = slept["_meta"].get(SERVER_INFO).is_some();
            assert_eq!(named, version == "2026-07-28", "{slept}");
        } else {
            assert_eq!(text_of(&slept), r#"{"slept":1}"#);
        }
    }
}

#[tokio::test]
async fn constrained_inputs_are_checked_before_the_tool_runs() {
    let mut peer = Peer::test_server::<_, &str>([]);
    peer.initialize("2025-11-25").await;
    let ok = peer
        .call_result(
            "2025-11-25",
            "constrained",
            json!({"count": 3, "name": "ab"}),
        )
        .await;
    assert_eq!(ok["structuredContent"], json!({"repeated": "ababab"}));

    let cases = [
        (json!({"count": 0, "name": "ab"}), "/count"),
        (json!({"count": 11, "name": "ab"}), "/count"),
        (json!({"count": "3", "name": "ab"}), "/count"),
        (json!({"count": 1.5, "name": "ab"}), "/count"),
        (json!({"count": 3, "name": "ABC"}), "/name"),
        (json!({"count": 3, "name": "abcdefghijklmnopq"}), "/name"),
        (json!({"count": 3, "name": ""}), "/name"),
        (json!({"count": 3}), "name"),
        (json!({"name": "ab"}), "count"),
        (json!({"count": 3, "name": "ab", "extra": true}), "extra"),
    ];
    for version in ["2025-11-25", MODERN] {
        for (arguments, mentions) in &cases {
            let result = peer
                .call_result(version, "constrained", arguments.clone())
                .await;
            assert!(is_error(&result), "{arguments}: {result}");
            let text = text_of(&result);
            assert!(
                text.contains("Invalid arguments") && text.contains(mentions),
                "{arguments}: the message names {mentions}: {text}"
            );
            assert!(result.get("structuredContent").is_none(), "{result}");
        }
    }
    // Arguments that are not an object are malformed params.
    let error = peer
        .error(
            "tools/call",
            json!({"name": "constrained", "arguments": [1, 2]}),
        )
        .await;
    assert_eq!(error["code"], -32602, "{error}");
}

#[tokio::test]
async fn an_unknown_tool_is_invalid_params() {
    let mut peer = Peer::test_server::<_, &str>([]);
    peer.initialize("2025-11-25").await;
    let long_name = "n".repeat(10_000);
    for name in ["does_not_exist", long_name.as_str()] {
        for version in ["2025-11-25", MODERN] {
            let response = peer.call(version, name, json!({})).await;
            let error = &response["error"];
            assert_eq!(error["code"], -32602, "{response}");
            assert!(
                response.to_string().len() < 1000,
                "the error does not echo a long name: {} bytes",
                response.to_string().len()
            );
        }
    }
    let missing_name = peer.error("tools/call", json!({"arguments": {}})).await;
    assert_eq!(missing_name["code"], -32602, "{missing_name}");
    let no_params = peer.error("tools/call", Value::Null).await;
    assert_eq!(no_params["code"], -32602, "{no_params}");
}

#[tokio::test]
async fn a_duplicate_id_in_flight_is_refused_and_the_first_call_still_answers() {
    let mut peer = Peer::test_server::<_, &str>([]);
    peer.initialize("2025-11-25").await;
    let call = |ms: u64| {
        json!({"jsonrpc": "2.0", "id": "same", "method": "tools/call",
               "params": {"name": "sleep", "arguments": {"ms": ms}}})
    };
    peer.send(&call(200)).await;
    peer.send(&call(1)).await;
    let first = peer.next_response().await;
    assert_eq!(first["id"], "same");
    assert_eq!(first["error"]["code"], -32600, "{first}");
    let second = peer.next_response().await;
    assert_eq!(
        second["result"]["structuredContent"],
        json!({"slept": 200}),
        "{second}"
    );
    // Once answered, the id may be used again.
    peer.send(&call(1)).await;
    let again = peer.next_response().await;
    assert_eq!(
        again["result"]["structuredContent"],
        json!({"slept": 1}),
        "{again}"
    );
}
