//! An MCP server's tools, reached through a [`Client`] (a stdio command or
//! a URL), as a registry: served over OTC they are `Toolkit.name@version`.

use serde_json::Value;
use toolshape::client::{Client, ClientError};
use toolshape::schema::SchemaEngine;
use toolshape::tool::{ToolContext, ToolOutput};
use toolshape::{Tool, ToolError, ToolRegistry};

use super::{Bridged, register_listing};

/// How an MCP server's tools are named over OTC.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct McpBridgeOptions {
    /// The toolkit (`A-Z a-z 0-9 _`); by default the server's name with
    /// other characters written `_`, or `Tools`.
    pub toolkit: Option<String>,
    /// The version of every tool; by default the server's version when it
    /// is `x.y.z`, else `1.0.0`.
    pub version: Option<String>,
}

fn toolkit_of(client: &Client) -> String {
    let name = client
        .server_info()
        .map(|info| info.name.as_str())
        .unwrap_or_default();
    let toolkit: String = name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .take(32)
        .collect();
    if toolkit.trim_matches('_').is_empty() {
        toolshape::tool::identity::DEFAULT_TOOLKIT.to_owned()
    } else {
        toolkit
    }
}

fn version_of(client: &Client) -> String {
    client
        .server_info()
        .map(|info| info.version.clone())
        .filter(|v| v.split('.').count() == 3 && v.parse::<toolshape::tool::ToolVersion>().is_ok())
        .unwrap_or_else(|| "1.0.0".to_owned())
}

fn client_error(tool: &str, error: ClientError) -> ToolError {
    let message = format!("the MCP server could not run {tool}: {error}");
    ToolError::with_source(message, error)
}

/// The toolkit and version an MCP server's tools get over OTC: the
/// options' when set, else derived from the server's name and version.
pub fn otc_identity(client: &Client, options: &McpBridgeOptions) -> (String, String) {
    (
        options
            .toolkit
            .clone()
            .unwrap_or_else(|| toolkit_of(client)),
        options
            .version
            .clone()
            .unwrap_or_else(|| version_of(client)),
    )
}

/// Lists the MCP server's tools and registers each in a new registry,
/// forwarding its calls through `client`.
pub async fn registry_from_mcp(
    client: Client,
    options: McpBridgeOptions,
) -> Result<Bridged, ClientError> {
    let definitions = client.list_tools().await?;
    let (toolkit, version) = otc_identity(&client, &options);
    let tools = definitions
        .into_iter()
        .map(|definition| {
            let name = definition.name.clone();
            let forward = client.clone();
            let handler = move |_context: ToolContext, arguments: Value| {
                let (client, name) = (forward.clone(), name.clone());
                async move {
                    let arguments = match arguments {
                        Value::Object(map) => Some(map),
                        _ => None,
                    };
                    match client.call_tool(&name, arguments).await {
                        Ok(result) if result.is_error => Err(result.tool_error(&name)),
                        Ok(result) => {
                            let mut output = ToolOutput::content(result.content);
                            output.structured = result.structured;
                            Ok(output)
                        }
                        Err(error) => Err(client_error(&name, error)),
                    }
                }
            };
            let mut tool = Tool::dynamic(
                definition.name.clone(),
                definition.input_schema.clone(),
                // The value a call hands back: unwrapped when the server
                // wraps it for an older revision.
                toolshape::client::unwrapped_output_schema(&definition),
                handler,
            )
            .toolkit(toolkit.clone())
            .version(version.clone());
            if let Some(description) = definition.description {
                tool = tool.description(description);
            }
            if let Some(title) = definition.title {
                tool = tool.title(title);
            }
            if let Some(annotations) = definition.annotations {
                tool = tool.annotations(annotations);
            }
            tool
        })
        .collect();
    // The server's schemas are not ours: compile them as untrusted.
    let registry = ToolRegistry::with_engine(SchemaEngine::default());
    let skipped = register_listing(&registry, tools);
    Ok(Bridged { registry, skipped })
}
