//! `call_id` as an idempotency key over real HTTP.

mod common;

use common::{TestResult, call_request, send, start, tools};
use serde_json::json;
use toolshape_otc::{OtcAuth, OtcOptions};

#[tokio::test]
async fn a_repeated_call_is_answered_from_the_store() -> TestResult {
    let (registry, counters) = tools::registry();
    let running = start(&registry, OtcOptions::default()).await?;
    let request =
        json!({"tool_id": "Test.Counted", "call_id": "order-1", "input": {"a": 1, "b": 2}});
    let first = call_request(&running, request.clone()).await?;
    assert_eq!(counters.counted(), 1);
    // Same id, same tool, same input (keys in another order): the stored response, the tool not run.
    let again = call_request(
        &running,
        json!({"call_id": "order-1", "tool_id": "Test.Counted@1.0.0", "input": {"b": 2, "a": 1}}),
    )
    .await?;
    assert_eq!(again.body, first.body);
    assert_eq!(counters.counted(), 1);
    // A bare request with the same id gets the same response, bare.
    let bare = common::call(&running, &[], &request).await?;
    assert_eq!(bare.body, first.body["result"]);
    // Same id, different input: 409.
    let conflict = call_request(
        &running,
        json!({"tool_id": "Test.Counted", "call_id": "order-1", "input": {"a": 1, "b": 3}}),
    )
    .await?;
    assert_eq!(conflict.status, 409);
    assert!(
        conflict.body["message"]
            .as_str()
            .unwrap_or("")
            .contains("order-1")
    );
    // Same id, different tool: 409.
    let other_tool = call_request(
        &running,
        json!({"tool_id": "Calculator.Add", "call_id": "order-1", "input": {"a": 1, "b": 2}}),
    )
    .await?;
    assert_eq!(other_tool.status, 409);
    assert_eq!(counters.counted(), 1);
    // No call_id: every call runs, each with its own generated id.
    let one = call_request(
        &running,
        json!({"tool_id": "Test.Counted", "input": {"a": 1, "b": 2}}),
    )
    .await?;
    let two = call_request(
        &running,
        json!({"tool_id": "Test.Counted", "input": {"a": 1, "b": 2}}),
    )
    .await?;
    assert_ne!(one.body["result"]["call_id"], two.body["result"]["call_id"]);
    assert_eq!(counters.counted(), 3);
    // Refused input is not stored: the same id may then be used with valid input.
    let invalid = call_request(
        &running,
        json!({"tool_id": "Test.Counted", "call_id": "order-2", "input": {}}),
    )
    .await?;
    assert_eq!(invalid.status, 422);
    let valid = call_request(
        &running,
        json!({"tool_id": "Test.Counted", "call_id": "order-2", "input": {"a": 0, "b": 0}}),
    )
    .await?;
    assert_eq!(valid.status, 200);
    Ok(())
}

#[tokio::test]
async fn a_repeat_with_other_credentials_is_not_answered_from_the_store() -> TestResult {
    // No authentication: every caller is the same principal.
    let (registry, _) = tools::registry();
    let running = start(&registry, OtcOptions::default()).await?;
    let with_secret = |secret: Option<&str>| {
        let secrets = secret.map_or(
            json!([]),
            |value| json!([{"id": "API_KEY", "value": value}]),
        );
        json!({"tool_id": "Test.Secretive", "call_id": "mail-1", "input": {},
               "context": {"secrets": secrets, "user_id": "alice"}})
    };
    let first = call_request(&running, with_secret(Some("alice-key"))).await?;
    assert_eq!(first.body["result"]["value"], "alice:9", "{}", first.body);
    // The same credentials: the stored response.
    let again = call_request(&running, with_secret(Some("alice-key"))).await?;
    assert_eq!(again.body, first.body);
    // Another secret, or none, for the same id and user: never alice's response.
    for other in [Some("guess"), None] {
        let replayed = call_request(&running, with_secret(other)).await?;
        assert_ne!(replayed.status, 200, "{other:?}: {}", replayed.body);
        assert!(
            replayed.body["message"]
                .as_str()
                .unwrap_or("")
                .contains("credentials"),
            "{}",
            replayed.body
        );
    }
    Ok(())
}

#[tokio::test]
async fn concurrent_repeats_run_the_tool_once() -> TestResult {
    let (registry, counters) = tools::registry();
    let running = std::sync::Arc::new(start(&registry, OtcOptions::default()).await?);
    let mut calls = tokio::task::JoinSet::new();
    for _ in 0..8 {
        let running = std::sync::Arc::clone(&running);
        calls.spawn(async move {
            call_request(
                &running,
                json!({"tool_id": "Test.Counted", "call_id": "same", "input": {"a": 5, "b": 6}}),
            )
            .await
        });
    }
    let mut bodies = Vec::new();
    while let Some(reply) = calls.join_next().await {
        bodies.push(reply??.body);
    }
    assert_eq!(counters.counted(), 1);
    assert!(bodies.windows(2).all(|pair| pair[0] == pair[1]));
    Ok(())
}

#[tokio::test]
async fn each_caller_has_its_own_ids() -> TestResult {
    let (registry, counters) = tools::registry();
    let mut options = OtcOptions::default();
    options.auth = OtcAuth::none()
        .api_key("first-caller-key-0001")?
        .api_key("second-caller-key-002")?;
    let running = start(&registry, options).await?;
    let body =
        br#"{"request":{"tool_id":"Test.Counted","call_id":"shared-id","input":{"a":1,"b":1}}}"#
            .to_vec();
    let first = send(
        &running,
        "post",
        "/tools/call",
        &[("OXP-API-Key", "first-caller-key-0001")],
        Some(body.clone()),
    )
    .await?;
    let second = send(
        &running,
        "post",
        "/tools/call",
        &[("OXP-API-Key", "second-caller-key-002")],
        Some(body),
    )
    .await?;
    assert_eq!((first.status, second.status), (200, 200));
    assert_eq!(
        counters.counted(),
        2,
        "one caller never gets another's stored response"
    );
    Ok(())
}

/// An empty `call_id` is no idempotency key: two different calls with it
/// both run, each answered with the id it sent.
#[tokio::test]
async fn an_empty_call_id_is_echoed_and_never_a_key() -> TestResult {
    let (registry, counters) = tools::registry();
    let running = start(&registry, OtcOptions::default()).await?;
    for b in [2, 3] {
        let request = json!({"tool_id": "Test.Counted", "call_id": "", "input": {"a": 1, "b": b}});
        let answered = call_request(&running, request).await?;
        assert_eq!(answered.status, 200, "{:?}", answered.body);
        assert_eq!(
            answered.body["result"]["call_id"], "",
            "{:?}",
            answered.body
        );
    }
    assert_eq!(counters.counted(), 2);
    Ok(())
}

/// A failure the caller may retry is not kept under its `call_id`: the
/// retry the error invites runs the tool again. A failure for good is kept.
#[tokio::test]
async fn a_retryable_failure_is_not_replayed() -> TestResult {
    let (registry, counters) = tools::registry();
    let running = start(&registry, OtcOptions::default()).await?;
    let flaky = json!({"tool_id": "Test.Flaky", "call_id": "retry-1", "input": {}});
    let mut answers = Vec::new();
    for _ in 0..3 {
        let answered = call_request(&running, flaky.clone()).await?;
        answers.push(answered.body["result"].clone());
    }
    assert_eq!(
        counters.flaky.load(std::sync::atomic::Ordering::SeqCst),
        3,
        "{answers:?}"
    );
    assert_eq!(answers[0]["error"]["can_retry"], true, "{answers:?}");
    assert_eq!(answers[2]["success"], true, "{answers:?}");
    // Succeeded: now kept.
    let again = call_request(&running, flaky).await?;
    assert_eq!(again.body["result"], answers[2]);
    assert_eq!(counters.flaky.load(std::sync::atomic::Ordering::SeqCst), 3);
    // A call that timed out is not kept either (the slow tool runs twice).
    let mut slow_options = OtcOptions::default();
    slow_options.call_timeout = Some(std::time::Duration::from_millis(100));
    let slow_server = start(&registry, slow_options).await?;
    let slow = json!({"tool_id": "Test.Slow", "call_id": "slow-1", "input": {"a": 2000, "b": 1}});
    for _ in 0..2 {
        // Run again, not replayed: each answer waits out the time limit.
        let started = std::time::Instant::now();
        let answered = call_request(&slow_server, slow.clone()).await?;
        assert!(started.elapsed() >= std::time::Duration::from_millis(100));
        assert_eq!(
            answered.body["result"]["success"], false,
            "{}",
            answered.body
        );
        let message = answered.body["result"]["error"]["message"].to_string();
        assert!(message.contains("time"), "{message}");
    }
    Ok(())
}
