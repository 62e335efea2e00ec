//! Serializes representative values of our types and validates them against
//! the matching definition of each revision's normative `schema.json`,
//! using the workspace's own schema engine.
//!
//! One definition is validated by compiling the whole document with its
//! root replaced by `{"$ref": "#/<definitions|$defs>/<Type>"}`: 2025-06-18
//! keeps its definitions under `definitions` (draft-07), 2025-11-25 and
//! 2026-07-28 under `$defs` (2020-12).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Serialize;
use serde_json::{Value, json};
use toolshape_protocol::content::{BinaryContent, BlobResourceContents, TextResourceContents};
use toolshape_protocol::meta::keys;
use toolshape_protocol::tools::{TaskSupport, ToolExecution};
use toolshape_protocol::{
    Annotations, CacheScope, CallToolParams, CallToolResult, CancelledNotificationParams,
    ClientCapabilities, ContentBlock, DiscoverResult, EmbeddedResource, EmptyResult, ErrorObject,
    Icon, Implementation, InitializeParams, InitializeResult, ListToolsParams, ListToolsResult,
    LoggingLevel, LoggingMessageNotificationParams, Meta, Notification, NotificationParams,
    ProgressNotificationParams, ProtocolVersion, Request, RequestId, RequestParams,
    ResourceContents, ResourceLink, Response, ResultType, Role, ServerCapabilities, TextContent,
    ToolAnnotations, ToolDefinition as Tool, methods,
};
use toolshape_schema::{CompiledSchema, SchemaEngine, Trust};

use ProtocolVersion::{V2025_06_18, V2025_11_25, V2026_07_28};

const REVISIONS: [ProtocolVersion; 3] = [V2025_06_18, V2025_11_25, V2026_07_28];

struct Schemas {
    engine: SchemaEngine,
    documents: HashMap<ProtocolVersion, Value>,
    compiled: HashMap<(ProtocolVersion, &'static str), Arc<CompiledSchema>>,
    checked: usize,
}

impl Schemas {
    fn load() -> Self {
        let documents = REVISIONS
            .into_iter()
            .map(|version| (version, spec_schema(version.as_str())))
            .collect();
        Self {
            engine: engine(),
            documents,
            compiled: HashMap::new(),
            checked: 0,
        }
    }

    /// The whole document with its root pointing at one definition.
    fn schema_for(&self, version: ProtocolVersion, definition: &str) -> Value {
        let document = &self.documents[&version];
        let container = if document.get("$defs").is_some() {
            "$defs"
        } else {
            "definitions"
        };
        assert!(
            document[container].get(definition).is_some(),
            "{version} schema.json has no definition {definition}"
        );
        json!({
            "$schema": document["$schema"],
            container: document[container],
            "$ref": format!("#/{container}/{definition}"),
        })
    }

    fn compiled(
        &mut self,
        version: ProtocolVersion,
        definition: &'static str,
    ) -> Arc<CompiledSchema> {
        if let Some(compiled) = self.compiled.get(&(version, definition)) {
            return Arc::clone(compiled);
        }
        let schema = self.schema_for(version, definition);
        let compiled = self
            .engine
            .compile(&schema)
            .unwrap_or_else(|e| panic!("compiling {version} {definition}: {e}"));
        self.compiled
            .insert((version, definition), Arc::clone(&compiled));
        compiled
    }

    #[track_caller]
    fn check<T: Serialize + ?Sized>(
        &mut self,
        version: ProtocolVersion,
        definition: &'static str,
        value: &T,
    ) {
        let instance = serde_json::to_value(value).unwrap();
        if let Err(error) = self.compiled(version, definition).validate(&instance) {
            panic!("{version} {definition} rejects {instance}: {error}");
        }
        self.checked += 1;
    }

    #[track_caller]
    fn check_rejects(
        &mut self,
        version: ProtocolVersion,
        definition: &'static str,
        instance: &Value,
    ) {
        assert!(
            self.compiled(version, definition)
                .validate(instance)
                .is_err(),
            "{version} {definition} accepts {instance}, so validation is vacuous"
        );
    }
}

/// The engine, with its default limits: the specification's own schemas
/// (recursive `JSONValue` included) must compile under them.
/// The folder of the spec's `schema.json` files, carried in the repository
/// (see `testdata/mcp/SOURCE`).
fn spec_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/mcp")
}

/// One revision's normative `schema.json`; a missing or unreadable file fails
/// the test with the path and where the data comes from.
fn spec_schema(revision: &str) -> Value {
    let path = spec_root().join(revision).join("schema.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "test data missing: cannot read {} ({e}); the repository carries each revision's \
             schema.json under testdata/mcp/ (testdata/mcp/SOURCE names its origin)",
            path.display()
        )
    });
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()))
}

fn engine() -> SchemaEngine {
    SchemaEngine::builder().trust(Trust::Trusted).build()
}

fn meta(pairs: Value) -> Meta {
    serde_json::from_value(pairs).unwrap()
}

/// `_meta` every 2026-07-28 request must carry.
fn request_meta(version: ProtocolVersion) -> Option<Meta> {
    version.is_stateless().then(|| {
        meta(json!({
            keys::PROTOCOL_VERSION: version.as_str(),
            keys::CLIENT_CAPABILITIES: {},
            keys::CLIENT_INFO: {"name": "client", "version": "1.0.0"},
        }))
    })
}

fn complete_if_modern(version: ProtocolVersion) -> Option<ResultType> {
    version.has_result_type().then_some(ResultType::Complete)
}

fn annotations() -> Annotations {
    let mut annotations = Annotations::default();
    annotations.audience = Some(vec![Role::User, Role::Assistant]);
    annotations.priority = Some(0.5);
    annotations.last_modified = Some("2025-05-03T14:30:00Z".into());
    annotations
}

fn content_blocks(version: ProtocolVersion) -> Vec<(&'static str, ContentBlock)> {
    let binary = |mime: &str| {
        let mut content = BinaryContent::new("AAEC", mime);
        content.annotations = Some(annotations());
        content.meta = Some(meta(json!({"com.example/k": 1})));
        content
    };
    let text = {
        let mut text = TextContent::new("hello");
        text.annotations = Some(annotations());
        text
    };
    let link = {
        let mut link = ResourceLink::new("file:///project/src/main.rs", "main.rs");
        link.title = Some("Main".into());
        link.description = Some("Entry point".into());
        link.mime_type = Some("text/x-rust".into());
        link.size = Some(42);
        link.annotations = Some(annotations());
        link
    };
    let embedded_text = {
        let mut contents = TextResourceContents::new("file:///a.txt", "a");
        contents.mime_type = Some("text/plain".into());
        let mut embedded = EmbeddedResource::new(ResourceContents::Text(contents));
        embedded.annotations = Some(annotations());
        embedded
    };
    let embedded_blob = EmbeddedResource::new(ResourceContents::Blob(BlobResourceContents::new(
        "file:///a.png",
        "AAEC",
    )));
    let icons = version.has_icons().then(|| vec![icon()]);
    vec![
        ("TextContent", ContentBlock::Text(text)),
        ("ImageContent", ContentBlock::Image(binary("image/png"))),
        ("AudioContent", ContentBlock::Audio(binary("audio/wav"))),
        (
            "ResourceLink",
            ContentBlock::ResourceLink({
                let mut link = link;
                link.icons = icons;
                link
            }),
        ),
        ("EmbeddedResource", ContentBlock::Resource(embedded_text)),
        ("EmbeddedResource", ContentBlock::Resource(embedded_blob)),
    ]
}

fn icon() -> Icon {
    let mut icon = Icon::new("https://example.com/icon.png");
    icon.mime_type = Some("image/png".into());
    icon.sizes = Some(vec!["48x48".into()]);
    icon
}

fn tool(version: ProtocolVersion) -> Tool {
    let mut tool = Tool::new(
        "get_weather",
        json!({"type": "object", "properties": {"location": {"type": "string"}}, "required": ["location"]}),
    );
    tool.description = Some("Get the weather".into());
    tool.title = Some("Weather".into());
    tool.output_schema =
        Some(json!({"type": "object", "properties": {"temperature": {"type": "number"}}}));
    let mut annotations = ToolAnnotations::default();
    annotations.title = Some("Weather".into());
    annotations.read_only_hint = Some(true);
    annotations.destructive_hint = Some(false);
    annotations.idempotent_hint = Some(true);
    annotations.open_world_hint = Some(true);
    tool.annotations = Some(annotations);
    tool.icons = version.has_icons().then(|| vec![icon()]);
    tool.execution = version
        .has_tool_execution_field()
        .then(|| ToolExecution::with_task_support(TaskSupport::Optional));
    tool.meta = Some(meta(json!({"com.example/owner": "team"})));
    tool
}

fn list_tools_result(version: ProtocolVersion) -> ListToolsResult {
    let mut result = ListToolsResult::new(vec![
        tool(version),
        Tool::new("noop", json!({"type": "object"})),
    ]);
    result.next_cursor = Some("page-2".into());
    if version.has_result_type() {
        result = result.with_cache_hints(std::time::Duration::from_secs(300), CacheScope::Public);
    }
    result
}

fn call_tool_results(version: ProtocolVersion) -> Vec<CallToolResult> {
    let mut with_every_kind = CallToolResult::new(
        content_blocks(version)
            .into_iter()
            .map(|(_, block)| block)
            .collect(),
    );
    with_every_kind.result_type = complete_if_modern(version);
    with_every_kind.meta = Some(meta(json!({"com.example/trace": "t"})));
    let mut results = vec![
        with_every_kind,
        {
            let mut result = CallToolResult::error_text("bad date");
            result.result_type = complete_if_modern(version);
            result
        },
        {
            let mut result = CallToolResult::structured(json!({"temperature": 22.5}));
            result.result_type = complete_if_modern(version);
            result
        },
    ];
    if version.allows_any_structured_content() {
        results.push(CallToolResult::structured(json!([1, 2, 3])).complete());
        results.push(CallToolResult::structured(json!("text")).complete());
    }
    results
}

fn server_capabilities() -> ServerCapabilities {
    let mut capabilities = ServerCapabilities::with_tools(Some(true));
    capabilities.logging = Some(serde_json::Map::new());
    capabilities
}

#[test]
fn serialized_values_conform_to_every_revision_schema() {
    let mut schemas = Schemas::load();
    for version in REVISIONS {
        // The harness must be able to fail.
        schemas.check_rejects(version, "Tool", &json!({"name": 1}));
        schemas.check_rejects(
            version,
            "CallToolResult",
            &json!({"content": [{"type": "text"}]}),
        );

        schemas.check(version, "Tool", &tool(version));
        schemas.check(version, "ListToolsResult", &list_tools_result(version));
        for result in call_tool_results(version) {
            schemas.check(version, "CallToolResult", &result);
        }
        for (definition, block) in content_blocks(version) {
            schemas.check(version, definition, &block);
            schemas.check(version, "ContentBlock", &block);
        }
        schemas.check(
            version,
            "Implementation",
            &Implementation::new("server", "1.0.0"),
        );
        schemas.check(version, "ServerCapabilities", &server_capabilities());
        schemas.check(
            version,
            "ClientCapabilities",
            &ClientCapabilities::default(),
        );

        let id = RequestId::from("req-1");
        let mut call = CallToolParams::new(
            "get_weather",
            Some(serde_json::Map::from_iter([(
                "location".into(),
                json!("Paris"),
            )])),
        );
        call.meta = request_meta(version);
        schemas.check(
            version,
            "CallToolRequest",
            &Request::new(id.clone(), methods::TOOLS_CALL, &call).unwrap(),
        );
        let mut list = ListToolsParams::default();
        list.cursor = Some("page-2".into());
        list.meta = request_meta(version);
        let list_request = Request::new(RequestId::Number(2), methods::TOOLS_LIST, &list).unwrap();
        schemas.check(version, "ListToolsRequest", &list_request);
        schemas.check(version, "JSONRPCRequest", &list_request);
        schemas.check(version, "JSONRPCMessage", &list_request);

        let response = Response::success(id.clone(), &list_tools_result(version)).unwrap();
        schemas.check(version, "JSONRPCResponse", &response);
        schemas.check(version, "JSONRPCMessage", &response);

        let error = Response::error(
            Some(id.clone()),
            ErrorObject::method_not_found("prompts/list"),
        );
        let error_definition = if version >= V2025_11_25 {
            "JSONRPCErrorResponse"
        } else {
            "JSONRPCError"
        };
        schemas.check(version, error_definition, &error);
        schemas.check(version, "JSONRPCMessage", &error);

        let cancelled = CancelledNotificationParams::new(id.clone(), Some("user".into()));
        let mut progress = ProgressNotificationParams::new(RequestId::from("tok"), 50.0);
        progress.total = Some(100.0);
        progress.message = Some("half".into());
        let mut log =
            LoggingMessageNotificationParams::new(LoggingLevel::Error, json!({"error": "down"}));
        log.logger = Some("db".into());
        for (definition, notification) in [
            (
                "CancelledNotification",
                Notification::new(methods::CANCELLED, &cancelled).unwrap(),
            ),
            (
                "ProgressNotification",
                Notification::new(methods::PROGRESS, &progress).unwrap(),
            ),
            (
                "LoggingMessageNotification",
                Notification::new(methods::LOGGING_MESSAGE, &log).unwrap(),
            ),
            (
                "ToolListChangedNotification",
                Notification::without_params(methods::TOOLS_LIST_CHANGED),
            ),
            (
                "ToolListChangedNotification",
                Notification::new(methods::TOOLS_LIST_CHANGED, &NotificationParams::default())
                    .unwrap(),
            ),
        ] {
            schemas.check(version, definition, &notification);
            schemas.check(version, "JSONRPCNotification", &notification);
        }

        if version.uses_initialize_handshake() {
            let initialize = InitializeParams::new(
                version.as_str(),
                ClientCapabilities::default(),
                Implementation::new("client", "1.0.0"),
            );
            schemas.check(
                version,
                "InitializeRequest",
                &Request::new(1, methods::INITIALIZE, &initialize).unwrap(),
            );
            let mut result = InitializeResult::new(
                version,
                server_capabilities(),
                Implementation::new("server", "1.0.0"),
            );
            result.instructions = Some("Use get_weather for forecasts.".into());
            schemas.check(version, "InitializeResult", &result);
            schemas.check(
                version,
                "InitializedNotification",
                &Notification::without_params(methods::INITIALIZED),
            );
            schemas.check(
                version,
                "PingRequest",
                &Request::without_params(3, methods::PING),
            );
            schemas.check(version, "EmptyResult", &EmptyResult::default());
        } else {
            schemas.check(version, "EmptyResult", &{
                let mut empty = EmptyResult::default();
                empty.result_type = Some(ResultType::Complete);
                empty
            });
        }
    }
    modern_only_messages(&mut schemas);
    url_elicitation_messages(&mut schemas);
    println!("{} validations passed", schemas.checked);
}

/// What 2025-11-25 alone has: the `-32042` error and the completion of a
/// URL-mode elicitation (both removed in 2026-07-28), and the URL
/// elicitation itself, which must carry its id there.
fn url_elicitation_messages(schemas: &mut Schemas) {
    use toolshape_protocol::asks::{ElicitParams, ElicitationCompleteParams};
    let version = V2025_11_25;
    let page = ElicitParams::url("Sign in", "https://example.com/connect?id=e-1", "e-1");
    schemas.check(version, "ElicitRequestURLParams", &page);
    let mut without_id = page.clone();
    without_id.elicitation_id = None;
    schemas.check_rejects(
        version,
        "ElicitRequestURLParams",
        &serde_json::to_value(&without_id).unwrap(),
    );
    let required = ErrorObject::url_elicitation_required("Sign in first", vec![page]);
    assert!(required.url_elicitation_required_data().is_some());
    schemas.check(
        version,
        "URLElicitationRequiredError",
        &Response::error(Some(RequestId::Number(2)), required),
    );
    let complete = Notification::new(
        methods::ELICITATION_COMPLETE,
        &ElicitationCompleteParams::new("e-1"),
    )
    .unwrap();
    schemas.check(version, "ElicitationCompleteNotification", &complete);
    schemas.check(version, "JSONRPCNotification", &complete);
    schemas.check_rejects(
        version,
        "ElicitationCompleteNotification",
        &serde_json::to_value(
            Notification::new(methods::ELICITATION_COMPLETE, &json!({})).unwrap(),
        )
        .unwrap(),
    );
}

fn modern_only_messages(schemas: &mut Schemas) {
    let version = V2026_07_28;
    let mut params = RequestParams::default();
    params.meta = request_meta(version);
    schemas.check(
        version,
        "DiscoverRequest",
        &Request::new("discover-1", methods::SERVER_DISCOVER, &params).unwrap(),
    );
    let mut discover = DiscoverResult::new(
        &[V2026_07_28, V2025_11_25],
        server_capabilities(),
        std::time::Duration::from_secs(3600),
        CacheScope::Public,
    );
    discover.instructions = Some("Weather tools.".into());
    discover.meta = Some(meta(
        json!({keys::SERVER_INFO: {"name": "server", "version": "1.0.0"}}),
    ));
    schemas.check(version, "DiscoverResult", &discover);
    let response = Response::success(RequestId::from("discover-1"), &discover).unwrap();
    schemas.check(version, "DiscoverResultResponse", &response);
    let list = Response::success(RequestId::Number(1), &list_tools_result(version)).unwrap();
    schemas.check(version, "ListToolsResultResponse", &list);
    let call =
        Response::success(RequestId::Number(1), &CallToolResult::text("ok").complete()).unwrap();
    schemas.check(version, "CallToolResultResponse", &call);

    for (definition, error) in [
        ("ParseError", ErrorObject::parse_error("Parse error")),
        (
            "InvalidRequestError",
            ErrorObject::invalid_request("Invalid Request"),
        ),
        (
            "MethodNotFoundError",
            ErrorObject::method_not_found("prompts/list"),
        ),
        (
            "InvalidParamsError",
            ErrorObject::invalid_params("Unknown tool: x"),
        ),
        (
            "InternalError",
            ErrorObject::internal_error("Internal error"),
        ),
    ] {
        schemas.check(version, definition, &error);
    }
    let id = Some(RequestId::Number(1));
    let unsupported =
        ErrorObject::unsupported_protocol_version("1900-01-01", &["2026-07-28", "2025-11-25"]);
    schemas.check(
        version,
        "UnsupportedProtocolVersionError",
        &Response::error(id.clone(), unsupported),
    );
    let mut required = ClientCapabilities::default();
    required.elicitation = Some(serde_json::Map::new());
    let missing =
        ErrorObject::missing_required_client_capability("Elicitation required", &required);
    schemas.check(
        version,
        "MissingRequiredClientCapabilityError",
        &Response::error(id.clone(), missing),
    );
    let mismatch = ErrorObject::header_mismatch("Mcp-Name header does not match");
    schemas.check(
        version,
        "HeaderMismatchError",
        &Response::error(id, mismatch),
    );
}

/// Every revision the repository carries, 2024-11-05 included, compiles under
/// the engine, and its `Tool` definition tells a tool from a non-tool.
#[test]
fn every_carried_revision_schema_compiles() {
    let engine = engine();
    for version in ProtocolVersion::ALL {
        let revision = version.as_str();
        let document = spec_schema(revision);
        let container = if document.get("$defs").is_some() {
            "$defs"
        } else {
            "definitions"
        };
        let tool = engine
            .compile(&json!({
                "$schema": document["$schema"],
                container: document[container],
                "$ref": format!("#/{container}/Tool"),
            }))
            .unwrap_or_else(|e| panic!("{revision} Tool does not compile: {e}"));
        let minimal = json!({"name": "add", "inputSchema": {"type": "object"}});
        assert!(
            tool.validate(&minimal).is_ok(),
            "{revision} rejects a minimal tool"
        );
        assert!(
            tool.validate(&json!({"name": 7})).is_err(),
            "{revision} accepts a tool without inputSchema and with a numeric name"
        );
    }
}
