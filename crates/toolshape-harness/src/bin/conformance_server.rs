//! The server side of the official MCP conformance suite
//! (`@modelcontextprotocol/conformance`, driven by `conformance/run.sh`): a
//! toolshape [`Server`] over Streamable HTTP on `/mcp` with every `test_*` tool
//! the suite's server scenarios call that a tools server can offer.
//!
//! Run: `cargo run -p toolshape-harness --bin conformance_server -- [PORT]`
//! (or `CONFORMANCE_PORT=PORT`; default 3001; `0` picks a free port). It
//! listens on 127.0.0.1 and prints `listening on http://127.0.0.1:PORT/mcp`
//! once ready, then serves until interrupted. With `--stdio` it serves the
//! same over stdin and stdout instead (for the SDK interop and stdio tests).
//!
//! With them, the prompts, resources, template, completions and the tools
//! that ask the client (sampling, elicitation, roots, input-required rounds)
//! of `toolshape_harness::conformance`. Not here: tasks.

use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use toolshape::protocol::{ContentBlock, LoggingLevel};
use toolshape::{HttpOptions, Server, Tool, ToolContext, ToolError, ToolOutput, ToolRegistry};
use toolshape_harness::conformance;

/// A 1×1 red PNG.
const PNG_1X1: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
/// A WAV header with one silent 8-bit mono sample at 8 kHz.
const WAV_SILENCE: &str = "UklGRiUAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQEAAACA";

/// No arguments.
#[derive(Deserialize, JsonSchema)]
struct NoArgs {}

/// The name of the tool `test_trigger_tool_change` adds and removes.
const DYNAMIC_TOOL: &str = "test_dynamic_tool";

fn block(value: Value) -> Result<ContentBlock, ToolError> {
    serde_json::from_value(value).map_err(|e| ToolError::new(format!("bad content block: {e}")))
}

fn image() -> Result<ContentBlock, ToolError> {
    block(json!({"type": "image", "data": PNG_1X1, "mimeType": "image/png"}))
}

/// The inputSchema of `json_schema_2020_12_tool`: `$schema`, `$defs` with an
/// `$anchor`, a `$ref`, `allOf`/`anyOf`, `if`/`then`/`else`, and
/// `additionalProperties: false` (SEP-1613, SEP-2106).
fn json_schema_2020_12() -> Value {
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {
            "address": {
                "$anchor": "addressDef",
                "type": "object",
                "properties": {"street": {"type": "string"}, "city": {"type": "string"}}
            }
        },
        "properties": {
            "name": {"type": "string"},
            "address": {"$ref": "#/$defs/address"},
            "contactMethod": {"type": "string", "enum": ["phone", "email"]},
            "phone": {"type": "string"},
            "email": {"type": "string"}
        },
        "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
        "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
        "then": {"required": ["phone"]},
        "else": {"required": ["email"]},
        "additionalProperties": false
    })
}

/// Three info-level log messages 50 ms apart, sent when the caller asked for
/// them (`logging/setLevel`, or `_meta` logLevel on 2026-07-28).
async fn log_three(context: &ToolContext) {
    let logger = Some(context.tool_name());
    context.log(LoggingLevel::Info, logger, "Tool execution started");
    tokio::time::sleep(Duration::from_millis(50)).await;
    context.log(LoggingLevel::Info, logger, "Tool processing data");
    tokio::time::sleep(Duration::from_millis(50)).await;
    context.log(LoggingLevel::Info, logger, "Tool execution completed");
}

fn tools(registry: &ToolRegistry) -> Vec<Tool> {
    let dynamic_registry = registry.clone();
    let dynamic_present = Arc::new(AtomicBool::new(false));
    vec![
        Tool::text("test_simple_text", |_: NoArgs| async {
            Ok::<_, ToolError>("This is a simple text response for testing.".to_owned())
        })
        .description("Returns one text block"),
        Tool::content("test_image_content", |_: NoArgs| async {
            Ok(vec![image()?])
        })
        .description("Returns one PNG image block"),
        Tool::content("test_audio_content", |_: NoArgs| async {
            Ok(vec![block(
                json!({"type": "audio", "data": WAV_SILENCE, "mimeType": "audio/wav"}),
            )?])
        })
        .description("Returns one WAV audio block"),
        Tool::content("test_embedded_resource", |_: NoArgs| async {
            Ok(vec![block(json!({
                "type": "resource",
                "resource": {
                    "uri": "test://embedded-resource",
                    "mimeType": "text/plain",
                    "text": "This is an embedded resource content."
                }
            }))?])
        })
        .description("Returns one embedded text resource"),
        Tool::content("test_multiple_content_types", |_: NoArgs| async {
            Ok(vec![
                ContentBlock::text("Multiple content types test:"),
                image()?,
                block(json!({
                    "type": "resource",
                    "resource": {
                        "uri": "test://mixed-content-resource",
                        "mimeType": "application/json",
                        "text": "{\"test\":\"data\",\"value\":123}"
                    }
                }))?,
            ])
        })
        .description("Returns a text, an image and an embedded resource block"),
        Tool::text("test_error_handling", |_: NoArgs| async {
            Err::<String, _>(ToolError::new(
                "This tool intentionally returns an error for testing",
            ))
        })
        .description("Always fails with isError: true"),
        Tool::dynamic(
            "test_tool_with_logging",
            json!({"type": "object", "properties": {}}),
            None,
            |context: ToolContext, _: Value| async move {
                log_three(&context).await;
                Ok(ToolOutput::text("Logging tool completed"))
            },
        )
        .description("Sends three info log messages (notifications/message) while it runs"),
        Tool::dynamic(
            "test_logging_tool",
            json!({"type": "object", "properties": {}}),
            None,
            |context: ToolContext, _: Value| async move {
                log_three(&context).await;
                Ok(ToolOutput::text("Logging tool completed"))
            },
        )
        .description("Logs only when the request asked for log messages"),
        Tool::dynamic(
            "test_tool_with_progress",
            json!({"type": "object", "properties": {}}),
            None,
            |context: ToolContext, _: Value| async move {
                for (step, progress) in [0.0, 50.0, 100.0].into_iter().enumerate() {
                    if step > 0 {
                        tokio::time::sleep(Duration::from_millis(50)).await;
                    }
                    context.report_progress(progress, Some(100.0), None);
                }
                Ok(ToolOutput::text("Progress tool completed"))
            },
        )
        .description("Reports progress 0, 50 and 100 of 100, 50 ms apart"),
        Tool::dynamic(
            "json_schema_2020_12_tool",
            json_schema_2020_12(),
            None,
            |_: ToolContext, arguments: Value| async move {
                Ok(ToolOutput::text(format!("Received: {arguments}")))
            },
        )
        .description("Tool with JSON Schema 2020-12 features"),
        Tool::dynamic(
            "test_param_header",
            json!({
                "type": "object",
                "properties": {
                    "region": {"type": "string", "x-mcp-header": "Region"},
                    "note": {"type": "string"}
                },
                "required": ["region"]
            }),
            None,
            |_: ToolContext, arguments: Value| async move {
                Ok(ToolOutput::text(format!("region: {}", arguments["region"])))
            },
        )
        .description("Its region argument is mirrored in the Mcp-Param-Region header (SEP-2243)"),
        Tool::text("test_reconnection", |_: NoArgs| async {
            Ok("Reconnection test completed successfully".to_owned())
        })
        .description("Answers at once (toolshape never closes a stream before the answer)"),
        Tool::dynamic(
            "test_trigger_tool_change",
            json!({"type": "object", "properties": {}}),
            None,
            move |_: ToolContext, _: Value| {
                let registry = dynamic_registry.clone();
                let present = Arc::clone(&dynamic_present);
                async move {
                    // Adds or removes a tool: the tool list changes either way.
                    if present.swap(false, Ordering::AcqRel) {
                        registry.remove(DYNAMIC_TOOL);
                    } else {
                        registry
                            .register(
                                Tool::text(DYNAMIC_TOOL, |_: NoArgs| async {
                                    Ok("here".to_owned())
                                })
                                .description("Comes and goes with test_trigger_tool_change"),
                            )
                            .map_err(|e| ToolError::new(e.to_string()))?;
                        present.store(true, Ordering::Release);
                    }
                    Ok(ToolOutput::text("The tool list changed"))
                }
            },
        )
        .description("Adds or removes a tool, so the tool list changes"),
    ]
}

fn port() -> Result<u16, String> {
    let text = std::env::args()
        .nth(1)
        .or_else(|| std::env::var("CONFORMANCE_PORT").ok())
        .unwrap_or_else(|| "3001".to_owned());
    text.parse().map_err(|e| format!("bad port {text:?}: {e}"))
}

#[tokio::main]
async fn main() -> ExitCode {
    let stdio = std::env::args().nth(1).as_deref() == Some("--stdio");
    let port = match port() {
        Ok(port) => port,
        Err(_) if stdio => 0,
        Err(error) => {
            eprintln!("conformance_server: {error}");
            return ExitCode::FAILURE;
        }
    };
    let registry = ToolRegistry::new();
    for tool in tools(&registry) {
        if let Err(error) = registry.register(tool) {
            eprintln!("conformance_server: {error}");
            return ExitCode::FAILURE;
        }
    }
    let server = match Server::builder("toolshape-conformance", env!("CARGO_PKG_VERSION"))
        .registry(registry)
        .tools(conformance::asking_tools())
        .prompts(conformance::prompts())
        .resources(conformance::resources())
        .resource_templates(conformance::resource_templates())
        .resource_events(conformance::resource_events())
        .build()
    {
        Ok(server) => server,
        Err(error) => {
            eprintln!("conformance_server: {error}");
            return ExitCode::FAILURE;
        }
    };
    if stdio {
        return match server.serve_stdio().await {
            Ok(()) => ExitCode::SUCCESS,
            Err(error) => {
                eprintln!("conformance_server: {error}");
                ExitCode::FAILURE
            }
        };
    }
    let listener = match tokio::net::TcpListener::bind(("127.0.0.1", port)).await {
        Ok(listener) => listener,
        Err(error) => {
            eprintln!("conformance_server: cannot listen on 127.0.0.1:{port}: {error}");
            return ExitCode::FAILURE;
        }
    };
    let address = match listener.local_addr() {
        Ok(address) => address,
        Err(error) => {
            eprintln!("conformance_server: {error}");
            return ExitCode::FAILURE;
        }
    };
    println!("listening on http://{address}/mcp");
    let shutdown = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    match server
        .serve_http(listener, HttpOptions::default(), shutdown)
        .await
    {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("conformance_server: {error}");
            ExitCode::FAILURE
        }
    }
}
