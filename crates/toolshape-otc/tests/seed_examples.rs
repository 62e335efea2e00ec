//! The examples of the OTC CallToolResponse page, reproduced over real HTTP
//! by tools built for them: every field equal, `duration` measured.

mod common;

use common::{TestResult, call_request, start, tools};
use serde_json::{Value, json};
use toolshape_otc::OtcOptions;

/// Calls `tool_id` with `call_id` and `input`; the response must equal
/// `expected` once its measured `duration` stands in for the example's.
async fn reproduce(
    running: &common::Running,
    tool_id: &str,
    input: Value,
    expected: Value,
) -> TestResult {
    let call_id = expected["call_id"].clone();
    let reply = call_request(
        running,
        json!({"tool_id": tool_id, "call_id": call_id, "input": input}),
    )
    .await?;
    assert_eq!(reply.status, 200, "{}", reply.body);
    let mut result = reply.body["result"].clone();
    let duration = result["duration"].as_f64().ok_or("no duration")?;
    assert!((0.0..10_000.0).contains(&duration), "duration {duration}");
    result["duration"] = expected["duration"].clone();
    assert_eq!(result, expected);
    Ok(())
}

#[tokio::test]
async fn the_seven_examples_of_the_seed() -> TestResult {
    let (registry, _) = tools::registry();
    let running = start(&registry, OtcOptions::default()).await?;
    reproduce(
        &running,
        "Calculator.Add",
        json!({"a": 7, "b": 8}),
        json!({"call_id": "123e4567-e89b-12d3-a456-426614174000", "duration": 50, "success": true, "value": 15}),
    )
    .await?;
    reproduce(
        &running,
        "Doorbell.Ring",
        json!({"doorbell_id": "front"}),
        json!({"call_id": "223e4567-e89b-12d3-a456-426614174001", "duration": 30, "success": true, "value": null}),
    )
    .await?;
    reproduce(
        &running,
        "System.GetTimestamp",
        json!({}),
        json!({"call_id": "323e4567-e89b-12d3-a456-426614174002", "duration": 25, "success": true,
               "value": {"timestamp": "2023-10-05T12:00:00Z"}}),
    )
    .await?;
    reproduce(
        &running,
        "Gmail.GetEmails",
        json!({}),
        json!({"call_id": "423e4567-e89b-12d3-a456-426614174003", "duration": 120, "success": true,
               "value": {"emails": [
                   {"id": "email_1", "subject": "Welcome to Gmail", "snippet": "Hello, welcome to your inbox!"},
                   {"id": "email_2", "subject": "Your Receipt", "snippet": "Thank you for your purchase..."}]}}),
    )
    .await?;
    reproduce(
        &running,
        "SMS.Send",
        json!({"to": "+15550100", "body": "hi"}),
        json!({"call_id": "523e4567-e89b-12d3-a456-426614174004", "duration": 80, "success": true,
               "value": {"status": "sent"}}),
    )
    .await?;
    reproduce(
        &running,
        "Web.Fetch",
        json!({}),
        json!({"call_id": "623e4567-e89b-12d3-a456-426614174005", "duration": 40, "success": false,
               "error": {"message": "Could not reach the server. Please try again later.",
                         "developer_message": "The host api.example.com is not reachable (ECONNREFUSED)"}}),
    )
    .await?;
    reproduce(
        &running,
        "Doorbell.Find",
        json!({"doorbell_id": "doorbell1"}),
        json!({"call_id": "723e4567-e89b-12d3-a456-426614174006", "duration": 60, "success": false,
               "error": {"message": "Doorbell ID not found",
                         "developer_message": "The doorbell with ID 'doorbell1' does not exist.",
                         "can_retry": true,
                         "additional_prompt_content": "ids: doorbell42,doorbell84",
                         "retry_after_ms": 500}}),
    )
    .await?;
    Ok(())
}

/// The examples themselves pass the corrected schema and fail the
/// published one (the known defect).
#[test]
fn the_published_schema_rejects_its_own_examples_and_the_corrected_one_accepts_them() -> TestResult
{
    use toolshape::schema::{SchemaEngine, Trust};
    let engine = SchemaEngine::builder().trust(Trust::Trusted).build();
    let upstream: Value = serde_json::from_str(toolshape_otc::openapi::UPSTREAM)?;
    let corrected = toolshape_otc::openapi::corrected_document();
    let schema = |document: &Value| {
        toolshape_otc::openapi::component_schema(document, "CallToolResponse")
            .ok_or("no CallToolResponse")
    };
    let published = engine.compile(&schema(&upstream)?)?;
    let fixed = engine.compile(&schema(&corrected)?)?;
    let examples = [
        json!({"call_id": "1", "duration": 50, "success": true, "value": 15}),
        json!({"call_id": "2", "duration": 30, "success": true, "value": null}),
        json!({"call_id": "6", "duration": 40, "success": false,
               "error": {"message": "m", "developer_message": "d"}}),
    ];
    for example in &examples {
        assert!(
            published.validate(example).is_err(),
            "the published schema accepted {example}"
        );
        fixed.validate(example)?;
    }
    // What both accept and what the corrected one still refuses.
    let null_response = json!({"call_id": "n", "success": true});
    published.validate(&null_response)?;
    fixed.validate(&null_response)?;
    for wrong in [
        json!({"call_id": "x", "success": true, "error": {"message": "m"}}),
        json!({"call_id": "x", "success": false}),
        json!({"call_id": "x", "success": false, "value": 1, "error": {"message": "m"}}),
        json!({"call_id": "x", "success": true, "extra": 1}),
    ] {
        assert!(
            fixed.validate(&wrong).is_err(),
            "the corrected schema accepted {wrong}"
        );
    }
    Ok(())
}
