//! The bridges over real HTTP on loopback: an MCP server's tools served as
//! OTC, and an OTC server's tools served as MCP (every leg a real socket).

mod common;

use std::time::Duration;

use common::{TestResult, start, tools};
use serde_json::{Value, json};
use tokio::net::TcpListener;
use toolshape::client::Client;
use toolshape::tool::meta_keys;
use toolshape::{HttpOptions, Server, Tool, ToolError};
use toolshape_otc::bridge::{
    McpBridgeOptions, OtcBridgeOptions, registry_from_mcp, registry_from_otc,
};
use toolshape_otc::{OtcClient, OtcOptions};

/// Serves `server` over Streamable HTTP; the MCP endpoint's URL.
async fn serve_mcp(server: Server) -> std::io::Result<(String, tokio::sync::oneshot::Sender<()>)> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("http://{}/mcp", listener.local_addr()?);
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(async move {
        server
            .serve_http(listener, HttpOptions::default(), async {
                let _ = stopped.await;
            })
            .await
    });
    Ok((url, stop))
}

/// The OTC server at `base` bridged (every tool: none may be left out),
/// served over MCP, and an MCP client of it; the sender stops the server.
async fn bridged_to_mcp(
    base: String,
) -> Result<(Client, tokio::sync::oneshot::Sender<()>), Box<dyn std::error::Error + Send + Sync>> {
    let otc = OtcClient::builder(base).build()?;
    let bridged = registry_from_otc(otc, OtcBridgeOptions::default()).await?;
    assert!(bridged.skipped.is_empty(), "{:?}", bridged.skipped);
    let server = Server::builder("bridge", "1.0.0")
        .registry(bridged.registry)
        .build()?;
    let (url, stop) = serve_mcp(server).await?;
    let mcp = Client::builder().connect_http(&url).await?;
    Ok((mcp, stop))
}

#[tokio::test]
async fn an_mcp_server_served_as_otc() -> TestResult {
    let mcp = Server::builder("peer server", "2.3.4")
        .tool(
            Tool::typed("add", |i: tools::AddInput| async move {
                Ok::<_, ToolError>(i.a + i.b)
            })
            .description("Add"),
        )
        .tool(Tool::text("busy", |_: tools::Nothing| async move {
            Err::<String, _>(ToolError::new("busy now").retry_after(Duration::from_millis(75)))
        }))
        .build()?;
    let (url, _stop_mcp) = serve_mcp(mcp).await?;
    let client = Client::builder().connect_http(&url).await?;
    let bridged = registry_from_mcp(client, McpBridgeOptions::default()).await?;
    assert!(bridged.skipped.is_empty(), "{:?}", bridged.skipped);
    let running = start(&bridged.registry, OtcOptions::default()).await?;
    let otc = OtcClient::builder(running.base.clone()).build()?;
    let listed = otc.list_tools().await?;
    let ids: Vec<&str> = listed.iter().map(|t| t.id.as_str()).collect();
    assert_eq!(ids, ["peer_server.add@2.3.4", "peer_server.busy@2.3.4"]);
    let sum: i64 = otc
        .call("peer_server.add", json!({"a": 40, "b": 2}))
        .await?;
    assert_eq!(sum, 42);
    // Input is checked on the OTC side before the MCP server is reached.
    let invalid = otc.call::<i64>("add", json!({"a": 1})).await;
    assert!(invalid.is_err_and(|e| e.to_string().contains("b")));
    // The MCP result's retry hints (`_meta`) become OTC's.
    let busy = otc.call_tool("busy", serde_json::Map::new()).await?;
    let error = busy.error().ok_or("no error")?;
    assert_eq!(
        (
            error.message.as_str(),
            error.can_retry,
            error.retry_after_ms
        ),
        ("busy now", true, Some(75))
    );
    Ok(())
}

#[tokio::test]
async fn an_otc_server_served_as_mcp() -> TestResult {
    let (registry, _) = tools::registry();
    let running = start(&registry, OtcOptions::default()).await?;
    let (mcp, _stop) = bridged_to_mcp(running.base.clone()).await?;
    let names: Vec<String> = mcp
        .list_tools()
        .await?
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert!(names.contains(&"Calculator_Add".to_owned()));
    assert_eq!(
        names.iter().filter(|n| *n == "Test_Versioned").count(),
        1,
        "MCP sees one version"
    );
    // The latest version answers.
    let versioned = mcp.call_tool("Test_Versioned", None).await?;
    assert_eq!(versioned.structured, Some(json!("two")));
    // A value: structuredContent, with the OTC call's id and duration in `_meta`.
    let added = mcp
        .call_tool(
            "Calculator_Add",
            json!({"a": 1, "b": 2}).as_object().cloned(),
        )
        .await?;
    assert_eq!(added.structured, Some(json!(3)));
    let meta = added.meta.clone().unwrap_or_default();
    assert!(
        meta.get(meta_keys::CALL_ID)
            .and_then(Value::as_str)
            .is_some_and(|id| id.len() == 36)
    );
    assert!(
        meta.get(meta_keys::DURATION_MS)
            .and_then(Value::as_f64)
            .is_some()
    );
    // Nothing: empty content, no structuredContent.
    let chimed = mcp.call_tool("Doorbell_Chime", None).await?;
    assert!(!chimed.is_error && chimed.content.is_empty() && chimed.structured.is_none());
    // An error: isError with the message and the prompt content; retry hints
    // in `_meta`; the developer message is not sent over MCP.
    let found = mcp
        .call_tool(
            "Doorbell_Find",
            json!({"doorbell_id": "doorbell1"}).as_object().cloned(),
        )
        .await?;
    assert!(found.is_error);
    assert_eq!(
        found.text(),
        "Doorbell ID not found\n\nids: doorbell42,doorbell84"
    );
    let meta = found.meta.clone().unwrap_or_default();
    assert_eq!(meta.get(meta_keys::CAN_RETRY), Some(&json!(true)));
    assert_eq!(meta.get(meta_keys::RETRY_AFTER_MS), Some(&json!(500)));
    assert!(!serde_json::to_string(&found.content)?.contains("does not exist"));
    Ok(())
}

/// An OTC server written by someone else: a tool whose input schema leaves
/// the root's type open and whose output is undeclared (answering with no
/// value), and one declaring no output that answers `value: null` (as the
/// OTC seed's own example does). Both bridge, and call as MCP shows them.
#[tokio::test]
async fn a_foreign_otc_servers_loose_declarations_bridge() -> TestResult {
    use axum::body::Bytes;
    use axum::routing::{get, post};
    let json_reply = |value: Value| {
        (
            [(axum::http::header::CONTENT_TYPE, "application/json")],
            value.to_string(),
        )
    };
    let listing = json!({"items": [
        {"id": "Loose.Note@1.0.0", "name": "Loose_Note", "description": "Notes a line",
         "version": "1.0.0", "input_schema": {"properties": {"line": {"type": "string"}}}},
        {"id": "Loose.Ring@1.0.0", "name": "Loose_Ring", "description": "Rings",
         "version": "1.0.0", "input_schema": {}, "output_schema": null},
        {"id": "Loose.Echo@1.0.0", "name": "Loose_Echo", "description": "Echoes",
         "version": "1.0.0", "input_schema": {"type": "object"}}
    ]});
    let app = axum::Router::new()
        .route("/tools", get(move || async move { json_reply(listing) }))
        .route(
            "/tools/call",
            post(move |body: Bytes| async move {
                let body: Value = serde_json::from_slice(&body).unwrap_or_default();
                let request = body.get("request").unwrap_or(&body);
                let call_id = request
                    .get("call_id")
                    .cloned()
                    .unwrap_or_else(|| json!("made-here"));
                let result = match request["tool_id"].as_str().unwrap_or("") {
                    id if id.starts_with("Loose.Note") => {
                        json!({"call_id": call_id, "success": true})
                    }
                    id if id.starts_with("Loose.Ring") => {
                        json!({"call_id": call_id, "success": true, "value": null})
                    }
                    _ => json!({"call_id": call_id, "success": true, "value": request["input"]}),
                };
                json_reply(json!({"result": result}))
            }),
        );
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let base = format!("http://{}", listener.local_addr()?);
    tokio::spawn(async move { axum::serve(listener, app).await });
    let (mcp, _stop) = bridged_to_mcp(base).await?;
    let listed = mcp.list_tools().await?;
    assert_eq!(listed.len(), 3, "{listed:?}");
    let note = mcp
        .call_tool("Loose_Note", json!({"line": "hi"}).as_object().cloned())
        .await?;
    assert!(!note.is_error, "{note:?}");
    assert_eq!(note.structured, Some(Value::Null), "{note:?}");
    let rung = mcp.call_tool("Loose_Ring", None).await?;
    assert!(!rung.is_error, "{rung:?}");
    assert_eq!(rung.structured, None, "{rung:?}");
    assert!(rung.content.is_empty(), "{rung:?}");
    let echoed = mcp
        .call_tool("Loose_Echo", json!({"x": [1]}).as_object().cloned())
        .await?;
    assert_eq!(echoed.structured, Some(json!({"x": [1]})), "{echoed:?}");
    Ok(())
}
