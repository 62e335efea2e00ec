//! The OTC ToolDefinition, written from a registered tool and read (checked)
//! from a server's listing.

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Value, json};
use toolshape::tool::{OutputShape, RegisteredTool, Requirements};

/// One tool as `GET /tools` lists it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolDefinition {
    /// `Toolkit.Tool@x.y.z`.
    pub id: String,
    /// `Toolkit_Tool` (`^[A-Za-z0-9_-]{1,64}$`).
    pub name: String,
    /// When and how to use the tool.
    #[serde(default)]
    pub description: String,
    /// `x.y.z` (OTC-era listings leave it out: the id's `@x.y.z` then says it).
    #[serde(default)]
    pub version: String,
    /// The JSON Schema of the input (older servers wrap it as `{"parameters": schema}`).
    #[serde(default = "any_object")]
    pub input_schema: Value,
    /// The output schema: `Some(null)` for a tool that returns nothing, `None`
    /// (absent) when not said, any value; see [`ToolDefinition::output`].
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub output_schema: Option<Value>,
    /// What the tool needs from its caller.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requirements: Option<Value>,
}

/// What a tool's `output_schema` says it returns.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum DeclaredOutput<'a> {
    /// Nothing (`output_schema: null`).
    Nothing,
    /// A value matching this schema (`{}`, or no `output_schema` at all, means any value).
    Schema(&'a Value),
    /// No `output_schema`: any value.
    Unknown,
}

fn any_object() -> Value {
    json!({"type": "object"})
}

/// A field that is present deserializes to `Some`, even when it is `null`.
fn present<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(deserializer).map(Some)
}

fn requirements_json(requirements: &Requirements) -> Option<Value> {
    if requirements.is_empty() {
        return None;
    }
    let mut body = serde_json::Map::new();
    if !requirements.authorization.is_empty() {
        let items: Vec<Value> = requirements
            .authorization
            .iter()
            .map(|a| json!({"id": a.id, "oauth2": {"scopes": a.scopes}}))
            .collect();
        body.insert("authorization".into(), Value::Array(items));
    }
    if !requirements.secrets.is_empty() {
        let items: Vec<Value> = requirements
            .secrets
            .iter()
            .map(|id| json!({"id": id}))
            .collect();
        body.insert("secrets".into(), Value::Array(items));
    }
    if requirements.user_id {
        body.insert("user_id".into(), Value::Bool(true));
    }
    Some(Value::Object(body))
}

/// A schema as served: local references inlined where that is faithful and
/// bounded (the spec's schemas "exclude `$ref` and definitions"); a
/// recursive schema, or one that would grow past the bounds, as it is.
fn served_schema(schema: &Value) -> Value {
    toolshape::schema::inline::inline_local_refs(schema).unwrap_or_else(|| schema.clone())
}

/// The OTC `output_schema` of a registered tool: its output schema;
/// `{"type":"string"}` for a text tool; `{}` (any value) for a content tool;
/// `null` for a tool that returns nothing.
pub fn output_schema_of(tool: &RegisteredTool) -> Value {
    match tool.output_shape() {
        OutputShape::Nothing => Value::Null,
        OutputShape::Text => json!({"type": "string"}),
        OutputShape::Structured => tool
            .definition()
            .output_schema
            .as_ref()
            .map_or_else(|| json!({}), served_schema),
        _ => json!({}),
    }
}

impl ToolDefinition {
    /// The definition of a registered tool, as `GET /tools` serves it (its
    /// schemas' local references inlined where faithful and bounded).
    pub fn of(tool: &RegisteredTool) -> ToolDefinition {
        let definition = tool.definition();
        ToolDefinition {
            id: tool.otc_id(),
            name: tool.qualified_name().underscored(),
            description: definition.description.clone().unwrap_or_default(),
            version: tool.version().to_string(),
            input_schema: served_schema(&definition.input_schema),
            output_schema: Some(output_schema_of(tool)),
            requirements: requirements_json(tool.requirements()),
        }
    }

    /// What the definition says the tool returns.
    pub fn output(&self) -> DeclaredOutput<'_> {
        match &self.output_schema {
            None => DeclaredOutput::Unknown,
            Some(Value::Null) => DeclaredOutput::Nothing,
            Some(schema) => DeclaredOutput::Schema(schema),
        }
    }

    /// The input schema, unwrapped from the older `{"parameters": schema}` form.
    pub fn input(&self) -> &Value {
        match self.input_schema.get("parameters") {
            Some(inner) if inner.is_object() && self.input_schema.get("type").is_none() => inner,
            _ => &self.input_schema,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_output_schema_left_out_stays_out_and_null_stays_null() -> serde_json::Result<()> {
        let read = |json: Value| serde_json::from_value::<ToolDefinition>(json);
        let base = json!({"id": "A.B@1.0.0", "name": "A_B", "version": "1.0.0"});
        let unknown = read(base.clone())?;
        assert_eq!(unknown.output(), DeclaredOutput::Unknown);
        assert!(
            serde_json::to_value(&unknown)?
                .get("output_schema")
                .is_none()
        );
        let mut nothing = base;
        nothing["output_schema"] = Value::Null;
        let nothing = read(nothing)?;
        assert_eq!(nothing.output(), DeclaredOutput::Nothing);
        assert_eq!(
            serde_json::to_value(&nothing)?.get("output_schema"),
            Some(&Value::Null)
        );
        Ok(())
    }
}
