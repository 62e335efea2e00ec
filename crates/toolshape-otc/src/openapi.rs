//! The OXP 1.0 OpenAPI document, carried as data: as published, and with
//! its defects corrected (see `openapi/CORRECTIONS.md` in this crate), and
//! its component schemas as standalone JSON Schemas to validate with.

use serde_json::{Map, Value, json};

/// The published document (OpenExecProtocol/Specification, MIT).
pub const UPSTREAM: &str = include_str!("../openapi/oxp-openapi-1.0.upstream.json");

/// The corrected document.
pub const CORRECTED: &str = include_str!("../openapi/oxp-openapi-1.0.corrected.json");

/// The corrected document, parsed.
pub fn corrected_document() -> Value {
    serde_json::from_str(CORRECTED).unwrap_or_else(|_| json!({}))
}

fn point_into_defs(value: &mut Value) {
    match value {
        Value::Object(map) => {
            if let Some(Value::String(reference)) = map.get_mut("$ref")
                && let Some(name) = reference.strip_prefix("#/components/schemas/")
            {
                *reference = format!("#/$defs/{name}");
            }
            map.values_mut().for_each(point_into_defs);
        }
        Value::Array(items) => items.iter_mut().for_each(point_into_defs),
        _ => {}
    }
}

/// The component schema `name` of `document` as a standalone JSON Schema
/// (2020-12, the dialect of OpenAPI 3.1): every component under `$defs`,
/// references rewritten to point there. `None` when there is no such component.
pub fn component_schema(document: &Value, name: &str) -> Option<Value> {
    let components = document.pointer("/components/schemas")?.as_object()?;
    components.get(name)?;
    let mut defs = Value::Object(components.clone());
    point_into_defs(&mut defs);
    let mut schema = Map::new();
    schema.insert(
        "$schema".into(),
        Value::String("https://json-schema.org/draft/2020-12/schema".into()),
    );
    schema.insert("$defs".into(), defs);
    schema.insert("$ref".into(), Value::String(format!("#/$defs/{name}")));
    Some(Value::Object(schema))
}

/// The schema of the JSON body of `status` answered by the operation
/// `method path` of `document`, standalone (see [`component_schema`]).
pub fn response_schema(document: &Value, path: &str, method: &str, status: u16) -> Option<Value> {
    let pointer = format!(
        "/paths/{}/{method}/responses/{status}/content/application~1json/schema",
        path.replace('~', "~0").replace('/', "~1")
    );
    let mut body = document.pointer(&pointer)?.clone();
    point_into_defs(&mut body);
    let components = document.pointer("/components/schemas")?.as_object()?;
    let mut defs = Value::Object(components.clone());
    point_into_defs(&mut defs);
    Some(json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$defs": defs,
        "allOf": [body],
    }))
}
