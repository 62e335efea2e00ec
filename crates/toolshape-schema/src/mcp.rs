//! MCP's rules on tool schemas, and the legacy wrapping of non-object outputs.
//!
//! 2025-06-18 and 2025-11-25 require an object-rooted `outputSchema` and object
//! `structuredContent`; 2026-07-28 (SEP-2106) allows any schema and any value.
//! For the older revisions, a non-object output is sent as `{"result": value}`
//! under the wrapped schema [`wrap_output_schema`] builds.

use std::borrow::Cow;

use serde_json::Value;

mod wrap;

pub use wrap::{WRAPPED_RESOURCE_ID, unwrap_output_schema, wrap_output_schema};

/// The property a wrapped output is carried in.
pub const WRAPPED_RESULT_KEY: &str = "result";

/// Why a schema breaks an MCP rule.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum McpSchemaError {
    /// An `inputSchema` whose root is not `type: "object"`.
    #[error(
        "inputSchema must have root type \"object\" (tool arguments are always an object); found {found}"
    )]
    InputNotObject {
        /// What the root declares instead.
        found: String,
    },
}

/// Whether a schema's root declares `type: "object"`.
pub fn is_object_rooted(schema: &Value) -> bool {
    schema.get("type").and_then(Value::as_str) == Some("object")
}

/// Checks the one MCP rule on `inputSchema`: its root is `type: "object"`.
pub fn check_input_schema(schema: &Value) -> Result<(), McpSchemaError> {
    if is_object_rooted(schema) {
        return Ok(());
    }
    let found = match schema {
        Value::Object(map) => match map.get("type") {
            None => "no root type".to_owned(),
            Some(other) => format!("type {}", crate::report::excerpt(&other.to_string(), 60)),
        },
        Value::Bool(b) => format!("the boolean schema {b}"),
        _ => "a value that is not a schema".to_owned(),
    };
    Err(McpSchemaError::InputNotObject { found })
}

/// `schema` as the revisions before 2026-07-28 take it: their `schema.json`
/// requires each of a tool schema's top-level `properties` to be an object,
/// so a boolean one is written as the object schema that means the same
/// (`true` as `{}`, `false` as `{"not": {}}`; schemars derives `true` for a
/// `serde_json::Value` field). Borrowed when nothing needs changing.
pub fn with_object_property_schemas(schema: &Value) -> Cow<'_, Value> {
    let boolean =
        |properties: &serde_json::Map<String, Value>| properties.values().any(Value::is_boolean);
    match schema.get("properties").and_then(Value::as_object) {
        Some(properties) if boolean(properties) => {
            let mut schema = schema.clone();
            if let Some(Value::Object(properties)) = schema.get_mut("properties") {
                for property in properties.values_mut() {
                    match property {
                        Value::Bool(true) => *property = Value::Object(serde_json::Map::new()),
                        Value::Bool(false) => *property = serde_json::json!({"not": {}}),
                        _ => {}
                    }
                }
            }
            Cow::Owned(schema)
        }
        _ => Cow::Borrowed(schema),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn boolean_property_schemas_become_objects() {
        let schema = json!({"type": "object", "properties": {"any": true, "none": false, "n": {"type": "integer"}}});
        assert_eq!(
            with_object_property_schemas(&schema).into_owned(),
            json!({"type": "object", "properties": {"any": {}, "none": {"not": {}}, "n": {"type": "integer"}}})
        );
        let plain = json!({"type": "object", "properties": {"n": {"type": "integer"}}});
        assert!(matches!(
            with_object_property_schemas(&plain),
            Cow::Borrowed(_)
        ));
    }

    #[test]
    fn input_schema_must_be_object_rooted() {
        assert!(check_input_schema(&json!({"type": "object"})).is_ok());
        let error = check_input_schema(&json!({"type": "array"}))
            .err()
            .map(|e| e.to_string());
        assert!(error.is_some_and(|e| e.contains("\"array\"")));
        assert!(check_input_schema(&json!({"oneOf": []})).is_err());
    }
}
