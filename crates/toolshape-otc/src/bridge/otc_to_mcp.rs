//! An OTC server's tools, reached through an [`OtcClient`], as a registry:
//! served over MCP each is its OTC `name` (`Toolkit_Tool`), every version
//! registered (MCP peers see the latest). The call's `call_id` and
//! `duration` go in the result's `_meta`; retry hints too.

use std::time::Duration;

use serde_json::{Value, json};
use toolshape::protocol::Meta;
use toolshape::schema::SchemaEngine;
use toolshape::tool::{ToolContext, ToolOutput, meta_keys};
use toolshape::{Tool, ToolError, ToolRegistry};

use super::{Bridged, register_listing};
use crate::client::{OtcCallOptions, OtcClient, OtcError};
use crate::wire::{CallContext, CallOutput, CallToolResponse, DeclaredOutput, ToolCallError};

/// How an OTC server's tools are called over MCP.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct OtcBridgeOptions {
    /// The context every call carries (MCP callers have no way to hand
    /// over secrets or tokens: the bridge supplies them).
    pub context: CallContext,
}

fn call_meta(response: &CallToolResponse) -> Meta {
    let mut meta = Meta::new();
    meta.insert(
        meta_keys::CALL_ID.into(),
        Value::String(response.call_id.clone()),
    );
    if let Some(duration) = response.duration {
        meta.insert(meta_keys::DURATION_MS.into(), json!(duration));
    }
    meta
}

fn tool_error(error: &ToolCallError) -> ToolError {
    let mut converted = ToolError::new(error.message.clone()).retryable(error.can_retry);
    if let Some(details) = &error.developer_message {
        converted = converted.developer_message(details.clone());
    }
    if let Some(extra) = &error.additional_prompt_content {
        converted = converted.additional_prompt_content(extra.clone());
    }
    if let (true, Some(ms)) = (error.can_retry, error.retry_after_ms) {
        converted = converted.retry_after(Duration::from_millis(ms));
    }
    converted
}

fn client_error(tool: &str, error: OtcError) -> ToolError {
    let message = format!("the OTC server could not run {tool}: {error}");
    ToolError::with_source(message, error)
}

/// An OTC input schema as MCP requires it, rooted in `type: "object"`. An
/// OTC call's input is always an object, so a root that leaves the type
/// open (`{}`, `true`, `{"properties": …}`) or admits objects among others
/// (`["object", "null"]`) says the same of every input a call can carry. A
/// root that admits no object is left as it is: such a tool cannot be
/// called, and the registry leaves it out with the reason.
fn object_rooted(schema: &Value) -> Value {
    let mut schema = match schema {
        Value::Bool(true) => json!({}),
        other => other.clone(),
    };
    if let Value::Object(root) = &mut schema {
        let admits_object = match root.get("type") {
            None => true,
            Some(Value::Array(types)) => types.iter().any(|t| t == "object"),
            Some(_) => false,
        };
        if admits_object {
            root.insert("type".into(), Value::String("object".into()));
        }
    }
    schema
}

/// Lists the OTC server's tools and registers each version in a new
/// registry, forwarding its calls through `client`.
pub async fn registry_from_otc(
    client: OtcClient,
    options: OtcBridgeOptions,
) -> Result<Bridged, OtcError> {
    let definitions = client.list_tools().await?;
    let mut tools = Vec::with_capacity(definitions.len());
    for definition in definitions {
        let Ok(listed) = client.resolve(&definition.id).await else {
            continue;
        };
        let id = definition.id.clone();
        let declared = definition.output();
        let nothing = declared == DeclaredOutput::Nothing;
        let (forward, context) = (client.clone(), options.context.clone());
        let handler = move |_context: ToolContext, arguments: Value| {
            let (client, id, context) = (forward.clone(), id.clone(), context.clone());
            async move {
                let input = match arguments {
                    Value::Object(map) => map,
                    _ => serde_json::Map::new(),
                };
                let options = OtcCallOptions {
                    context,
                    ..OtcCallOptions::default()
                };
                let response = client
                    .call_tool_with(&id, input, options)
                    .await
                    .map_err(|error| client_error(&id, error))?;
                let meta = call_meta(&response);
                match response.output {
                    // `value: null` from a tool declaring no output (the OTC
                    // seed's own example): nothing, as MCP shows it.
                    CallOutput::Value(Value::Null) if nothing => {
                        Ok(ToolOutput::default().with_meta(meta))
                    }
                    CallOutput::Value(value) => Ok(ToolOutput::structured(value).with_meta(meta)),
                    // No value from a tool that declared none, or declared
                    // any: `null` is the value its `{}` schema admits.
                    CallOutput::Nothing if nothing => Ok(ToolOutput::default().with_meta(meta)),
                    CallOutput::Nothing => Ok(ToolOutput::structured(Value::Null).with_meta(meta)),
                    CallOutput::Error(error) => Err(tool_error(&error)),
                }
            }
        };
        let output_schema = match declared {
            DeclaredOutput::Nothing => None,
            DeclaredOutput::Schema(schema) => Some(schema.clone()),
            DeclaredOutput::Unknown => Some(json!({})),
        };
        let mut tool = Tool::dynamic(
            definition.name.clone(),
            object_rooted(definition.input()),
            output_schema,
            handler,
        )
        .toolkit(listed.id.toolkit())
        .version(definition.version.clone())
        .description(definition.description.clone());
        if nothing {
            tool = tool.returns_nothing();
        }
        tools.push(tool);
    }
    let registry = ToolRegistry::with_engine(SchemaEngine::default());
    let skipped = register_listing(&registry, tools);
    Ok(Bridged { registry, skipped })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn input_schemas_are_rooted_in_an_object_when_they_admit_one() {
        assert_eq!(object_rooted(&json!({})), json!({"type": "object"}));
        assert_eq!(object_rooted(&json!(true)), json!({"type": "object"}));
        assert_eq!(
            object_rooted(&json!({"properties": {"a": {"type": "integer"}}})),
            json!({"type": "object", "properties": {"a": {"type": "integer"}}})
        );
        assert_eq!(
            object_rooted(&json!({"type": ["object", "null"]})),
            json!({"type": "object"})
        );
        // Admitting no object: left for the registry to refuse.
        assert_eq!(
            object_rooted(&json!({"type": "string"})),
            json!({"type": "string"})
        );
        assert_eq!(object_rooted(&json!(false)), json!(false));
    }
}
