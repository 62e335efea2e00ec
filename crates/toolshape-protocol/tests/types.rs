//! Behaviour of the typed payloads beyond the specification's examples:
//! legacy shapes, tolerance, helpers and routing.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::time::Duration;

use serde_json::{Value, json};
use toolshape_protocol::result::ttl_from_ms;
use toolshape_protocol::tools::{TaskSupport, ToolNameError, validate_tool_name};
use toolshape_protocol::{
    CacheScope, CallToolOutcome, CallToolResult, CancelledNotificationParams, ClientCapabilities,
    ContentBlock, InitializeParams, InitializeResult, KnownRequest, ListToolsResult,
    ProgressNotificationParams, Request, ResultType, ServerCapabilities, ToolAnnotations,
    ToolDefinition as Tool, error_code,
};

fn round_trip<T: serde::de::DeserializeOwned + serde::Serialize>(value: &Value) -> T {
    let parsed: T = serde_json::from_value(value.clone()).unwrap();
    assert_eq!(&serde_json::to_value(&parsed).unwrap(), value);
    parsed
}

#[test]
fn legacy_list_results_parse_without_2026_fields() {
    let legacy = json!({"tools": [{"name": "t", "inputSchema": {"type": "object"}}]});
    let result: ListToolsResult = round_trip(&legacy);
    assert_eq!(result.result_type, None);
    assert_eq!(result.ttl(), Duration::ZERO);
    let modern = result.with_cache_hints(Duration::from_secs(300), CacheScope::Private);
    let value = serde_json::to_value(&modern).unwrap();
    assert_eq!(value["resultType"], "complete");
    assert_eq!(value["ttlMs"], 300_000);
    assert_eq!(value["cacheScope"], "private");
}

#[test]
fn tools_of_2025_11_25_keep_execution_and_icons() {
    let tool = json!({
        "name": "long_job",
        "inputSchema": {"type": "object"},
        "execution": {"taskSupport": "optional"},
        "icons": [{"src": "https://example.com/i.svg", "sizes": ["any"], "theme": "dark"}],
        "annotations": {"title": "Job", "readOnlyHint": false, "openWorldHint": false},
        "_meta": {"com.example/x": 1}
    });
    let tool: Tool = round_trip(&tool);
    assert_eq!(
        tool.execution.as_ref().unwrap().task_support,
        Some(TaskSupport::Optional)
    );
    assert_eq!(tool.display_name(), "Job");
}

#[test]
fn unknown_fields_are_tolerated() {
    let tool: Tool =
        serde_json::from_value(json!({"name": "t", "inputSchema": {}, "newField": {"x": 1}, "annotations": {"futureHint": true}}))
            .unwrap();
    assert_eq!(tool.name, "t");
    let caps: ServerCapabilities =
        round_trip(&json!({"tools": {}, "com.example/custom": {"a": 1}}));
    assert!(caps.other.contains_key("com.example/custom"));
    let caps: ClientCapabilities =
        round_trip(&json!({"roots": {"listChanged": true}, "somethingNew": {}}));
    assert_eq!(caps.roots.unwrap().list_changed, Some(true));
}

#[test]
fn display_name_precedence_and_annotation_defaults() {
    let mut tool = Tool::new("name", json!({"type": "object"}));
    assert_eq!(tool.display_name(), "name");
    let mut annotations = ToolAnnotations::default();
    annotations.title = Some("Annotated".into());
    tool.annotations = Some(annotations);
    assert_eq!(tool.display_name(), "Annotated");
    tool.title = Some("Title".into());
    assert_eq!(tool.display_name(), "Title");

    let defaults = ToolAnnotations::default();
    assert!(
        !defaults.is_read_only()
            && defaults.is_destructive()
            && !defaults.is_idempotent()
            && defaults.is_open_world()
    );
    let mut read_only = ToolAnnotations::default();
    read_only.read_only_hint = Some(true);
    assert!(!read_only.is_destructive() && read_only.is_idempotent());
}

#[test]
fn tool_name_guidance() {
    assert_eq!(validate_tool_name("admin.tools.list"), Ok(()));
    assert_eq!(validate_tool_name("DATA_EXPORT_v2"), Ok(()));
    assert_eq!(validate_tool_name(""), Err(ToolNameError::Empty));
    assert_eq!(
        validate_tool_name("a b"),
        Err(ToolNameError::InvalidCharacter(' '))
    );
    assert_eq!(
        validate_tool_name("é"),
        Err(ToolNameError::InvalidCharacter('é'))
    );
    assert_eq!(validate_tool_name(&"a".repeat(128)), Ok(()));
    assert_eq!(
        validate_tool_name(&"a".repeat(129)),
        Err(ToolNameError::TooLong(129))
    );
}

#[test]
fn content_blocks_cover_every_kind_and_keep_unknown_ones() {
    let blocks = json!([
        {"type": "text", "text": "t", "_meta": {"k": 1}},
        {"type": "image", "data": "AA==", "mimeType": "image/png", "annotations": {"audience": ["user"], "priority": 1}},
        {"type": "audio", "data": "AA==", "mimeType": "audio/wav"},
        {"type": "resource_link", "uri": "file:///a", "name": "a", "size": 3, "title": "A"},
        {"type": "resource", "resource": {"uri": "file:///b", "blob": "AA=="}},
        {"type": "resource", "resource": {"uri": "file:///c", "text": "c"}},
        {"type": "hologram", "depth": 3}
    ]);
    let parsed: Vec<ContentBlock> = round_trip(&blocks);
    let kinds: Vec<&str> = parsed.iter().map(ContentBlock::type_name).collect();
    assert_eq!(
        kinds,
        [
            "text",
            "image",
            "audio",
            "resource_link",
            "resource",
            "resource",
            "hologram"
        ]
    );
    assert!(matches!(parsed[6], ContentBlock::Unknown(_)));
    assert_eq!(parsed[0].as_text(), Some("t"));

    assert!(serde_json::from_value::<ContentBlock>(json!({"text": "no type"})).is_err());
    assert!(serde_json::from_value::<ContentBlock>(json!({"type": 1})).is_err());
    assert!(serde_json::from_value::<ContentBlock>(json!({"type": "text"})).is_err());
    assert!(
        serde_json::from_value::<ContentBlock>(
            json!({"type": "resource", "resource": {"uri": "u"}})
        )
        .is_err()
    );
}

#[test]
fn call_results_helpers() {
    let value = serde_json::to_value(CallToolResult::text("hi")).unwrap();
    assert_eq!(value, json!({"content": [{"type": "text", "text": "hi"}]}));
    let error = CallToolResult::error_text("bad").complete();
    assert!(error.is_error());
    assert_eq!(
        serde_json::to_value(&error).unwrap()["resultType"],
        "complete"
    );

    let structured = CallToolResult::structured(json!([1, 2]));
    assert_eq!(structured.content[0].as_text(), Some("[1,2]"));
    assert_eq!(structured.structured_content, Some(json!([1, 2])));
    // Any JSON value, including null, is valid structured content in 2026-07-28.
    let null: CallToolResult = round_trip(&json!({"content": [], "structuredContent": null}));
    assert_eq!(null.structured_content, Some(Value::Null));
}

#[test]
fn call_outcomes_follow_result_type() {
    let legacy: CallToolOutcome = serde_json::from_value(json!({"content": []})).unwrap();
    assert!(matches!(legacy, CallToolOutcome::Complete(_)));
    let interim: CallToolOutcome =
        serde_json::from_value(json!({"resultType": "input_required", "requestState": "s"}))
            .unwrap();
    assert!(matches!(interim, CallToolOutcome::InputRequired(_)));
    assert!(
        serde_json::from_value::<CallToolOutcome>(json!({"resultType": "weird", "content": []}))
            .is_err()
    );
    assert_eq!(ResultType::from("weird"), ResultType::Other("weird".into()));
    assert_eq!(
        serde_json::to_value(ResultType::Other("x".into())).unwrap(),
        json!("x")
    );
}

#[test]
fn numbers_are_written_like_javascript() {
    let progress: ProgressNotificationParams =
        serde_json::from_value(json!({"progressToken": 1, "progress": 50, "total": 100.5}))
            .unwrap();
    assert_eq!(progress.progress, 50.0);
    let value = serde_json::to_value(&progress).unwrap();
    assert_eq!(
        value,
        json!({"progressToken": 1, "progress": 50, "total": 100.5})
    );
    assert_eq!(serde_json::to_string(&value["progress"]).unwrap(), "50");
}

#[test]
fn ttl_is_never_negative() {
    assert_eq!(ttl_from_ms(Some(-5)), Duration::ZERO);
    assert_eq!(ttl_from_ms(None), Duration::ZERO);
    assert_eq!(ttl_from_ms(Some(1500)), Duration::from_millis(1500));
}

#[test]
fn cancellation_of_2025_11_25_may_omit_the_request_id() {
    let params: CancelledNotificationParams = round_trip(&json!({"reason": "task"}));
    assert_eq!(params.request_id, None);
}

#[test]
fn initialize_messages_of_the_lifecycle_docs_round_trip() {
    let params = json!({
        "protocolVersion": "2025-11-25",
        "capabilities": {"roots": {"listChanged": true}, "sampling": {}, "elicitation": {"form": {}, "url": {}},
            "tasks": {"requests": {"elicitation": {"create": {}}, "sampling": {"createMessage": {}}}}},
        "clientInfo": {"name": "ExampleClient", "title": "Example Client Display Name", "version": "1.0.0",
            "description": "An example MCP client application",
            "icons": [{"src": "https://example.com/icon.png", "mimeType": "image/png", "sizes": ["48x48"]}],
            "websiteUrl": "https://example.com"}
    });
    let params: InitializeParams = round_trip(&params);
    assert_eq!(params.client_info.name, "ExampleClient");
    let result = json!({
        "protocolVersion": "2025-11-25",
        "capabilities": {"logging": {}, "prompts": {"listChanged": true}, "resources": {"subscribe": true, "listChanged": true},
            "tools": {"listChanged": true}, "tasks": {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}},
        "serverInfo": {"name": "ExampleServer", "version": "1.0.0"},
        "instructions": "Optional instructions for the client"
    });
    let result: InitializeResult = round_trip(&result);
    assert_eq!(result.capabilities.tools.unwrap().list_changed, Some(true));
}

#[test]
fn routing_reports_unknown_methods_and_bad_params() {
    let unknown = Request::without_params(1, "widgets/list");
    let error = KnownRequest::from_request(&unknown).unwrap_err();
    assert_eq!(error.to_error_object().code, error_code::METHOD_NOT_FOUND);

    let missing_name = Request::new(2, "tools/call", &json!({"arguments": {}})).unwrap();
    let error = KnownRequest::from_request(&missing_name).unwrap_err();
    assert_eq!(error.to_error_object().code, error_code::INVALID_PARAMS);
    assert!(error.to_error_object().message.contains("name"));

    // tools/list and ping need no params at all.
    assert!(matches!(
        KnownRequest::from_request(&Request::without_params(3, "tools/list")),
        Ok(KnownRequest::ListTools(_))
    ));
    assert!(matches!(
        KnownRequest::from_request(&Request::without_params(4, "ping")),
        Ok(KnownRequest::Ping(_))
    ));
}

/// The 2025-11-25 specification's example of
/// `notifications/elicitation/complete` (client/elicitation.mdx) parses as
/// the known notification and writes back as it was; a `-32042` error's
/// data reads back only when every elicitation is in URL mode with an id.
#[test]
fn url_elicitation_completion_and_error_round_trip() {
    use toolshape_protocol::asks::ElicitParams;
    use toolshape_protocol::{ErrorObject, Incoming, KnownNotification, classify};
    let example = json!({
        "jsonrpc": "2.0",
        "method": "notifications/elicitation/complete",
        "params": {"elicitationId": "550e8400-e29b-41d4-a716-446655440000"}
    });
    let bytes = serde_json::to_vec(&example).unwrap();
    let Incoming::Notification(notification) = classify(&bytes) else {
        panic!("not a notification");
    };
    let KnownNotification::ElicitationComplete(params) =
        KnownNotification::from_notification(&notification).unwrap()
    else {
        panic!("not the completion");
    };
    assert_eq!(
        params.elicitation_id,
        "550e8400-e29b-41d4-a716-446655440000"
    );
    assert_eq!(serde_json::to_value(&params).unwrap(), example["params"]);

    let page = ElicitParams::url("Sign in", "https://mcp.example.com/connect", "e-1");
    let error = ErrorObject::url_elicitation_required("Sign in first", vec![page.clone()]);
    assert_eq!(error.code, -32042);
    let data = error.url_elicitation_required_data().unwrap();
    assert_eq!(data.elicitations, vec![page.clone()]);
    let mut form = error.clone();
    form.data = Some(json!({"elicitations": [{"mode": "form", "message": "Name?"}]}));
    assert!(form.url_elicitation_required_data().is_none());
    let mut other = error;
    other.code = -32603;
    assert!(other.url_elicitation_required_data().is_none());
}
