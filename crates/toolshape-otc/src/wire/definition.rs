//! The OTC ToolDefinition, written from a registered tool and read (checked)
//! from a server's listing.

use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Value, json};
use toolshape::schema::inline::inline_local_refs;
use toolshape::tool::{OutputShape, RegisteredTool, Requirements};

use super::MAX_LISTING_BYTES;

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
    inline_local_refs(schema).unwrap_or_else(|| schema.clone())
}

/// The OTC `output_schema` of a registered tool: its output schema;
/// `{"type":"string"}` for a text tool; `{}` (any value) for a content tool;
/// `null` for a tool that returns nothing.
pub fn output_schema_of(tool: &RegisteredTool) -> Value {
    output_schema_with(tool, served_schema)
}

/// [`output_schema_of`], a declared schema given as `serve` makes it.
fn output_schema_with(tool: &RegisteredTool, serve: fn(&Value) -> Value) -> Value {
    match tool.output_shape() {
        OutputShape::Nothing => Value::Null,
        OutputShape::Text => json!({"type": "string"}),
        OutputShape::Structured => tool
            .definition()
            .output_schema
            .as_ref()
            .map_or_else(|| json!({}), serve),
        _ => json!({}),
    }
}

/// Every tool's definition (but those served over MCP only), as `GET /tools` lists them (each under `items`
/// and again under `tools`): schemas inlined as [`ToolDefinition::of`]
/// inlines them, in order, while the listing stays within
/// [`MAX_LISTING_BYTES`] (what this crate's client reads); past that, as
/// written. Each schema's own bound lets it grow fourfold (8 KiB at
/// least), so 10,000 small schemas could otherwise grow a listing many
/// times over, past what a client takes where the written one was within.
pub(crate) fn listing(tools: &[Arc<RegisteredTool>]) -> Vec<ToolDefinition> {
    let mut items: Vec<ToolDefinition> = tools
        .iter()
        .filter_map(|tool| ToolDefinition::with_schemas(tool, Value::clone))
        .collect();
    // Room for growth in one copy of the items (the body holds two, and a
    // few members around them).
    let mut room = (MAX_LISTING_BYTES / 2)
        .saturating_sub(1024)
        .saturating_sub(json_len(&items));
    for item in &mut items {
        let schemas = std::iter::once(&mut item.input_schema).chain(item.output_schema.as_mut());
        for schema in schemas {
            let Some(inlined) = inline_local_refs(schema) else {
                continue;
            };
            let (before, after) = (json_len(schema), json_len(&inlined));
            if after > before.saturating_add(room) {
                // Served as written; a smaller one later may still fit.
                continue;
            }
            room = room.saturating_add(before) - after;
            *schema = inlined;
        }
    }
    items
}

/// The length of `value` as compact JSON, counted without writing it.
pub(crate) fn json_len<T: Serialize + ?Sized>(value: &T) -> usize {
    struct Counter(usize);
    impl std::io::Write for Counter {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0 = self.0.saturating_add(bytes.len());
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut counter = Counter(0);
    // Writing to a counter fails only for a value JSON cannot hold, which
    // then counts as no room at all.
    match serde_json::to_writer(&mut counter, value) {
        Ok(()) => counter.0,
        Err(_) => usize::MAX,
    }
}

impl ToolDefinition {
    /// The definition of a registered tool, as `GET /tools` serves it (its
    /// schemas' local references inlined where faithful and bounded);
    /// `None` for a tool served over MCP only (no OTC id: see
    /// [`RegisteredTool::qualified_name`]).
    pub fn of(tool: &RegisteredTool) -> Option<ToolDefinition> {
        Self::with_schemas(tool, served_schema)
    }

    /// The definition of a registered tool, its declared schemas as
    /// `serve` makes them.
    fn with_schemas(tool: &RegisteredTool, serve: fn(&Value) -> Value) -> Option<ToolDefinition> {
        let definition = tool.definition();
        let qualified = tool.qualified_name()?;
        Some(ToolDefinition {
            id: format!("{}@{}", qualified.dotted(), tool.version()),
            name: qualified.underscored(),
            description: definition.description.clone().unwrap_or_default(),
            version: tool.version().to_string(),
            input_schema: serve(&definition.input_schema),
            output_schema: Some(output_schema_with(tool, serve)),
            requirements: requirements_json(tool.requirements()),
        })
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
