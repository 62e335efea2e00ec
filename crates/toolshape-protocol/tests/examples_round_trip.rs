//! Round-trips every 2026-07-28 wire example this crate has a type for:
//! parse into our type, serialize, compare with the original as a
//! `serde_json::Value`; the questions of an `input_required` result, and
//! the form fields and sampling blocks in them, read and judged fit for a
//! 2026-07-28 client. (Of the 88 example folders, `ModelPreferences` is
//! kept as JSON; the listen stream's closing result is compared with what
//! the server sends, in `toolshape`'s `serve_until` test.)
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::fs;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use toolshape_protocol::asks::{
    Ask, CreateMessageParams, CreateMessageResult, ElicitParams, ElicitResult, ListRootsResult,
    Root, SamplingMessage,
};
use toolshape_protocol::completion::{CompleteParams, CompleteResult};
use toolshape_protocol::content::{BlobResourceContents, TextResourceContents};
use toolshape_protocol::lists::{
    ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult,
};
use toolshape_protocol::prompts::{GetPromptParams, GetPromptResult};
use toolshape_protocol::resources::{ReadResourceResult, Resource, ResourceUpdatedParams};
use toolshape_protocol::tools::PaginatedRequestParams;
use toolshape_protocol::{
    CallToolOutcome, CallToolParams, CallToolResult, CancelledNotificationParams,
    ClientCapabilities, ContentBlock, DiscoverResult, ErrorObject, Incoming, KnownNotification,
    KnownRequest, ListToolsResult, LoggingMessageNotificationParams, ProgressNotificationParams,
    ProtocolVersion, ResourceContents, Response, ServerCapabilities, ToolDefinition as Tool,
    classify, error_code,
};

type Check = fn(&[u8], &Value) -> Result<(), String>;

/// Every example directory covered, with how its files are parsed.
const COVERED: &[(&str, Check)] = &[
    // Full JSON-RPC messages.
    ("CallToolRequest", request),
    ("ListToolsRequest", request),
    ("DiscoverRequest", request),
    ("SubscriptionsListenRequest", request),
    ("ListResourcesRequest", request),
    ("ListResourceTemplatesRequest", request),
    ("ReadResourceRequest", request),
    ("ListPromptsRequest", request),
    ("GetPromptRequest", request),
    ("CompleteRequest", request),
    ("CallToolResultResponse", call_tool_response),
    ("ListToolsResultResponse", list_tools_response),
    ("DiscoverResultResponse", discover_response),
    (
        "ListResourcesResultResponse",
        response_of::<ListResourcesResult>,
    ),
    (
        "ListResourceTemplatesResultResponse",
        response_of::<ListResourceTemplatesResult>,
    ),
    (
        "ReadResourceResultResponse",
        response_of::<ReadResourceResult>,
    ),
    (
        "ListPromptsResultResponse",
        response_of::<ListPromptsResult>,
    ),
    ("GetPromptResultResponse", response_of::<GetPromptResult>),
    ("CompleteResultResponse", response_of::<CompleteResult>),
    ("CancelledNotification", notification),
    ("ProgressNotification", notification),
    ("LoggingMessageNotification", notification),
    ("ToolListChangedNotification", notification),
    ("ResourceUpdatedNotification", notification),
    ("ResourceListChangedNotification", notification),
    ("PromptListChangedNotification", notification),
    ("SubscriptionsAcknowledgedNotification", notification),
    ("UnsupportedProtocolVersionError", unsupported_version_error),
    ("HeaderMismatchError", header_mismatch_error),
    (
        "MissingRequiredClientCapabilityError",
        missing_capability_error,
    ),
    // Typed payloads.
    ("Tool", typed::<Tool>),
    ("CallToolRequestParams", typed::<CallToolParams>),
    ("CallToolResult", typed::<CallToolResult>),
    ("InputRequiredResult", input_required),
    ("ListToolsResult", typed::<ListToolsResult>),
    ("PaginatedRequestParams", typed::<PaginatedRequestParams>),
    ("DiscoverResult", typed::<DiscoverResult>),
    ("TextContent", typed::<ContentBlock>),
    ("ImageContent", typed::<ContentBlock>),
    ("AudioContent", typed::<ContentBlock>),
    ("ResourceLink", typed::<ContentBlock>),
    ("EmbeddedResource", typed::<ContentBlock>),
    ("TextResourceContents", text_resource_contents),
    ("BlobResourceContents", blob_resource_contents),
    (
        "CancelledNotificationParams",
        typed::<CancelledNotificationParams>,
    ),
    (
        "ProgressNotificationParams",
        typed::<ProgressNotificationParams>,
    ),
    (
        "LoggingMessageNotificationParams",
        typed::<LoggingMessageNotificationParams>,
    ),
    ("ServerCapabilities", typed::<ServerCapabilities>),
    ("Resource", typed::<Resource>),
    ("ListResourcesResult", typed::<ListResourcesResult>),
    (
        "ListResourceTemplatesResult",
        typed::<ListResourceTemplatesResult>,
    ),
    ("ReadResourceResult", typed::<ReadResourceResult>),
    (
        "ResourceUpdatedNotificationParams",
        typed::<ResourceUpdatedParams>,
    ),
    ("ListPromptsResult", typed::<ListPromptsResult>),
    ("GetPromptRequestParams", typed::<GetPromptParams>),
    ("GetPromptResult", typed::<GetPromptResult>),
    ("CompleteRequestParams", typed::<CompleteParams>),
    ("CompleteResult", typed::<CompleteResult>),
    ("ElicitRequestFormParams", typed::<ElicitParams>),
    ("ElicitRequestURLParams", typed::<ElicitParams>),
    ("ElicitResult", typed::<ElicitResult>),
    ("CreateMessageRequestParams", typed::<CreateMessageParams>),
    ("CreateMessageResult", typed::<CreateMessageResult>),
    ("SamplingMessage", typed::<SamplingMessage>),
    ("Root", typed::<Root>),
    ("ListRootsResult", typed::<ListRootsResult>),
    ("ClientCapabilities", typed::<ClientCapabilities>),
    // What a server asks inside an `input_required` result, and the answers.
    ("ElicitRequest", bare_ask),
    ("CreateMessageRequest", bare_ask),
    ("ListRootsRequest", bare_ask),
    ("InputRequests", input_requests),
    ("InputResponses", input_responses),
    // A form's fields and a sampling message's tool blocks: each fits
    // a question to a 2026-07-28 client.
    ("StringSchema", form_field),
    ("NumberSchema", form_field),
    ("BooleanSchema", form_field),
    ("UntitledSingleSelectEnumSchema", form_field),
    ("TitledSingleSelectEnumSchema", form_field),
    ("UntitledMultiSelectEnumSchema", form_field),
    ("TitledMultiSelectEnumSchema", form_field),
    ("ToolUseContent", sampling_block),
    ("ToolResultContent", sampling_block),
    ("ParseError", error_object::<{ error_code::PARSE_ERROR }>),
    (
        "InvalidParamsError",
        error_object::<{ error_code::INVALID_PARAMS }>,
    ),
    (
        "MethodNotFoundError",
        error_object::<{ error_code::METHOD_NOT_FOUND }>,
    ),
    (
        "InternalError",
        error_object::<{ error_code::INTERNAL_ERROR }>,
    ),
];

/// The spec's examples, carried in the repository (see `testdata/mcp/SOURCE`).
fn examples_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/mcp/2026-07-28/examples")
}

fn same(original: &Value, reserialized: &Value) -> Result<(), String> {
    if original == reserialized {
        Ok(())
    } else {
        Err(format!(
            "round trip changed the value:\n  original: {original}\n  got:      {reserialized}"
        ))
    }
}

fn round_trip<T: DeserializeOwned + Serialize>(original: &Value) -> Result<T, String> {
    let parsed: T = serde_json::from_value(original.clone()).map_err(|e| format!("parse: {e}"))?;
    same(
        original,
        &serde_json::to_value(&parsed).map_err(|e| format!("serialize: {e}"))?,
    )?;
    Ok(parsed)
}

fn typed<T: DeserializeOwned + Serialize>(_: &[u8], original: &Value) -> Result<(), String> {
    round_trip::<T>(original).map(drop)
}

fn error_object<const CODE: i64>(_: &[u8], original: &Value) -> Result<(), String> {
    let error = round_trip::<ErrorObject>(original)?;
    if error.code == CODE {
        Ok(())
    } else {
        Err(format!("code {} instead of {CODE}", error.code))
    }
}

fn text_resource_contents(bytes: &[u8], original: &Value) -> Result<(), String> {
    round_trip::<TextResourceContents>(original)?;
    match round_trip::<ResourceContents>(original)? {
        ResourceContents::Text(_) => Ok(()),
        ResourceContents::Blob(_) => {
            Err(format!("read as blob: {}", String::from_utf8_lossy(bytes)))
        }
    }
}

fn blob_resource_contents(bytes: &[u8], original: &Value) -> Result<(), String> {
    round_trip::<BlobResourceContents>(original)?;
    match round_trip::<ResourceContents>(original)? {
        ResourceContents::Blob(_) => Ok(()),
        ResourceContents::Text(_) => {
            Err(format!("read as text: {}", String::from_utf8_lossy(bytes)))
        }
    }
}

/// Classifies the raw bytes and re-serializes the message.
fn classified(bytes: &[u8], original: &Value) -> Result<Incoming, String> {
    let incoming = classify(bytes);
    let reserialized = match &incoming {
        Incoming::Request(request) => serde_json::to_value(request),
        Incoming::Notification(notification) => serde_json::to_value(notification),
        Incoming::Response(response) => serde_json::to_value(response),
        Incoming::Invalid { error, .. } => return Err(format!("classified as invalid: {error}")),
    };
    same(original, &reserialized.map_err(|e| e.to_string())?)?;
    Ok(incoming)
}

fn params_of(original: &Value) -> &Value {
    original.get("params").unwrap_or(&Value::Null)
}

fn request(bytes: &[u8], original: &Value) -> Result<(), String> {
    let Incoming::Request(request) = classified(bytes, original)? else {
        return Err("not classified as a request".into());
    };
    let meta = request.request_meta().map_err(|e| e.to_string())?;
    let modern = meta.require_modern().map_err(|e| e.to_string())?;
    if modern.protocol_version != ProtocolVersion::V2026_07_28.as_str() {
        return Err(format!("protocol version {:?}", modern.protocol_version));
    }
    let typed_params = match KnownRequest::from_request(&request).map_err(|e| e.to_string())? {
        KnownRequest::CallTool(params) => serde_json::to_value(params),
        KnownRequest::ListTools(params) => serde_json::to_value(params),
        KnownRequest::Discover(params) => serde_json::to_value(params),
        KnownRequest::Listen(params) => serde_json::to_value(params),
        KnownRequest::ListResources(params)
        | KnownRequest::ListResourceTemplates(params)
        | KnownRequest::ListPrompts(params) => serde_json::to_value(params),
        KnownRequest::ReadResource(params) => serde_json::to_value(params),
        KnownRequest::GetPrompt(params) => serde_json::to_value(params),
        KnownRequest::Complete(params) => serde_json::to_value(params),
        other => return Err(format!("unexpected request kind {}", other.method())),
    };
    same(
        params_of(original),
        &typed_params.map_err(|e| e.to_string())?,
    )
}

fn notification(bytes: &[u8], original: &Value) -> Result<(), String> {
    let Incoming::Notification(notification) = classified(bytes, original)? else {
        return Err("not classified as a notification".into());
    };
    let typed_params =
        match KnownNotification::from_notification(&notification).map_err(|e| e.to_string())? {
            KnownNotification::Cancelled(params) => serde_json::to_value(params),
            KnownNotification::Progress(params) => serde_json::to_value(params),
            KnownNotification::LoggingMessage(params) => serde_json::to_value(params),
            KnownNotification::ToolListChanged(params) => serde_json::to_value(params),
            KnownNotification::Initialized(params) => serde_json::to_value(params),
            KnownNotification::ResourceUpdated(params) => serde_json::to_value(params),
            KnownNotification::ResourceListChanged(params)
            | KnownNotification::PromptListChanged(params) => serde_json::to_value(params),
            KnownNotification::SubscriptionsAcknowledged(params) => serde_json::to_value(params),
            KnownNotification::ElicitationComplete(params) => serde_json::to_value(params),
        };
    same(
        params_of(original),
        &typed_params.map_err(|e| e.to_string())?,
    )
}

fn success_result<T: DeserializeOwned + Serialize>(
    bytes: &[u8],
    original: &Value,
) -> Result<T, String> {
    let Incoming::Response(response) = classified(bytes, original)? else {
        return Err("not classified as a response".into());
    };
    let typed: T = response.parse_result().map_err(|e| e.to_string())?;
    same(
        &original["result"],
        &serde_json::to_value(&typed).map_err(|e| e.to_string())?,
    )?;
    Ok(typed)
}

fn call_tool_response(bytes: &[u8], original: &Value) -> Result<(), String> {
    match success_result::<CallToolOutcome>(bytes, original)? {
        CallToolOutcome::Complete(_) => Ok(()),
        CallToolOutcome::InputRequired(_) => Err("read as input_required".into()),
    }
}

fn input_required(_: &[u8], original: &Value) -> Result<(), String> {
    match round_trip::<CallToolOutcome>(original)? {
        CallToolOutcome::InputRequired(_) => Ok(()),
        CallToolOutcome::Complete(_) => Err("read as complete".into()),
    }
}

fn response_of<T: DeserializeOwned + Serialize>(
    bytes: &[u8],
    original: &Value,
) -> Result<(), String> {
    success_result::<T>(bytes, original).map(drop)
}

fn list_tools_response(bytes: &[u8], original: &Value) -> Result<(), String> {
    success_result::<ListToolsResult>(bytes, original).map(drop)
}

fn discover_response(bytes: &[u8], original: &Value) -> Result<(), String> {
    let result = success_result::<DiscoverResult>(bytes, original)?;
    match result.select_version(&ProtocolVersion::ALL) {
        Some(ProtocolVersion::V2026_07_28) => Ok(()),
        other => Err(format!("selected version {other:?}")),
    }
}

fn error_response(bytes: &[u8], original: &Value, code: i64) -> Result<ErrorObject, String> {
    let Incoming::Response(Response::Error { error, .. }) = classified(bytes, original)? else {
        return Err("not classified as an error response".into());
    };
    if error.code != code {
        return Err(format!("code {} instead of {code}", error.code));
    }
    if !error.is_modern_mcp_error() {
        return Err("not recognised as a modern MCP error".into());
    }
    Ok(error)
}

fn unsupported_version_error(bytes: &[u8], original: &Value) -> Result<(), String> {
    let error = error_response(bytes, original, error_code::UNSUPPORTED_PROTOCOL_VERSION)?;
    let data = error
        .unsupported_protocol_version_data()
        .ok_or("data not readable")?;
    let rebuilt = ErrorObject::unsupported_protocol_version(&data.requested, &data.supported);
    same(
        &original["error"],
        &serde_json::to_value(rebuilt).map_err(|e| e.to_string())?,
    )
}

fn header_mismatch_error(bytes: &[u8], original: &Value) -> Result<(), String> {
    error_response(bytes, original, error_code::HEADER_MISMATCH).map(drop)
}

fn missing_capability_error(bytes: &[u8], original: &Value) -> Result<(), String> {
    let error = error_response(
        bytes,
        original,
        error_code::MISSING_REQUIRED_CLIENT_CAPABILITY,
    )?;
    let data = error
        .missing_required_client_capability_data()
        .ok_or("data not readable")?;
    if data.required_capabilities.supports_elicitation() {
        Ok(())
    } else {
        Err("elicitation not required".into())
    }
}

/// A question as an `inputRequests` entry (`method` and `params`): read as
/// an [`Ask`], written back the same (a `roots/list` has no params to
/// keep), fitting a 2026-07-28 client.
fn bare_ask(_: &[u8], original: &Value) -> Result<(), String> {
    let ask = Ask::from_input_request(original).ok_or("not read as a question")?;
    ask.check_fit(ProtocolVersion::V2026_07_28)
        .map_err(|lack| format!("does not fit 2026-07-28: {lack}"))?;
    if matches!(ask, Ask::Roots) {
        return Ok(());
    }
    same(original, &ask.to_input_request())
}

fn input_requests(bytes: &[u8], original: &Value) -> Result<(), String> {
    let entries = original.as_object().ok_or("not an object")?;
    for (key, entry) in entries {
        bare_ask(bytes, entry).map_err(|e| format!("{key}: {e}"))?;
    }
    let result = json!({"resultType": "input_required", "inputRequests": original});
    input_required(bytes, &result)
}

/// Each answer read as the result of the question it answers.
fn input_responses(_: &[u8], original: &Value) -> Result<(), String> {
    let entries = original.as_object().ok_or("not an object")?;
    for (key, entry) in entries {
        let read = if entry.get("action").is_some() {
            round_trip::<ElicitResult>(entry).map(drop)
        } else if entry.get("roots").is_some() {
            round_trip::<ListRootsResult>(entry).map(drop)
        } else {
            round_trip::<CreateMessageResult>(entry).map(drop)
        };
        read.map_err(|e| format!("{key}: {e}"))?;
    }
    Ok(())
}

fn form_field(_: &[u8], original: &Value) -> Result<(), String> {
    let form = json!({"type": "object", "properties": {"field": original}});
    Ask::Elicit(ElicitParams::form("Which?", form))
        .check_fit(ProtocolVersion::V2026_07_28)
        .map_err(|lack| format!("does not fit 2026-07-28: {lack}"))
}

fn sampling_block(_: &[u8], original: &Value) -> Result<(), String> {
    let message: SamplingMessage =
        serde_json::from_value(json!({"role": "assistant", "content": original}))
            .map_err(|e| format!("not a sampling message's content: {e}"))?;
    Ask::Sample(CreateMessageParams::new(vec![message], 100))
        .check_fit(ProtocolVersion::V2026_07_28)
        .map_err(|lack| format!("does not fit 2026-07-28: {lack}"))
}

#[test]
fn every_covered_example_round_trips() {
    let dir = examples_dir();
    assert!(
        dir.is_dir(),
        "test data missing: the MCP 2026-07-28 examples directory {} does not exist \
         (the repository carries it under testdata/mcp/; testdata/mcp/SOURCE names its origin)",
        dir.display()
    );
    let (mut passed, mut failures) = (0_usize, Vec::new());
    for (type_name, check) in COVERED {
        let type_dir = dir.join(type_name);
        let mut files: Vec<PathBuf> = fs::read_dir(&type_dir)
            .unwrap_or_else(|e| panic!("covered directory {} unreadable: {e}", type_dir.display()))
            .map(|entry| entry.unwrap().path())
            .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
            .collect();
        files.sort();
        assert!(
            !files.is_empty(),
            "covered directory {type_name} has no examples"
        );
        for file in files {
            let bytes = fs::read(&file).unwrap();
            let outcome = serde_json::from_slice::<Value>(&bytes)
                .map_err(|e| format!("example is not JSON: {e}"))
                .and_then(|original| check(&bytes, &original));
            let name = format!(
                "{type_name}/{}",
                file.file_name().unwrap().to_string_lossy()
            );
            match outcome {
                Ok(()) => {
                    println!("ok   {name}");
                    passed += 1;
                }
                Err(reason) => {
                    println!("FAIL {name}: {reason}");
                    failures.push(name);
                }
            }
        }
    }
    let covered: Vec<&str> = COVERED.iter().map(|(name, _)| *name).collect();
    println!(
        "covered example directories ({}): {}",
        covered.len(),
        covered.join(", ")
    );
    println!("{passed} passed, {} failed", failures.len());
    assert!(failures.is_empty(), "failed examples: {failures:?}");
}

#[test]
fn the_comparison_catches_dropped_fields() {
    // Unknown fields are tolerated but not kept, so this must not pass.
    let with_unknown =
        serde_json::json!({"name": "t", "inputSchema": {"type": "object"}, "futureField": 1});
    assert!(typed::<Tool>(b"", &with_unknown).is_err());
    let explicit_null = serde_json::json!({"content": [], "structuredContent": null});
    assert!(
        typed::<CallToolResult>(b"", &explicit_null).is_ok(),
        "explicit null structuredContent is kept"
    );
}
