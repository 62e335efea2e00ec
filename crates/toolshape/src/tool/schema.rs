//! Deriving tool schemas from Rust types, once, at registration.

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde_json::{Map, Value};

/// Formats schemars emits for Rust number types; no standard defines them and
/// most validators ignore them, so derived schemas leave them out.
const RUST_NUMBER_FORMATS: &[&str] = &[
    "int", "int8", "int16", "int32", "int64", "int128", "uint", "uint8", "uint16", "uint32",
    "uint64", "uint128", "float", "double",
];

/// The JSON Schema 2020-12 of `T` as it serializes: a portable output schema.
pub(crate) fn derive<T: JsonSchema + ?Sized>() -> Value {
    derive_with::<T>(SchemaSettings::draft2020_12().for_serialize())
}

fn derive_with<T: JsonSchema + ?Sized>(settings: SchemaSettings) -> Value {
    let schema = settings
        .into_generator()
        .into_root_schema_for::<T>()
        .to_value();
    let mut schema = schema;
    strip_rust_number_formats(&mut schema, 0);
    schema
}

/// The input schema of `T`: as derived, with root `type: "object"` added when
/// the root is a `oneOf`/`anyOf` whose every branch is an object (a Rust enum
/// of struct-like or newtype variants).
pub(crate) fn derive_input<T: JsonSchema + ?Sized>() -> Value {
    let mut schema = derive_with::<T>(SchemaSettings::draft2020_12().for_deserialize());
    add_object_root_to_object_unions(&mut schema);
    schema
}

/// Adds `type: "object"` to a root without `type` whose `oneOf`/`anyOf`
/// branches are all objects.
pub(crate) fn add_object_root_to_object_unions(schema: &mut Value) {
    let Value::Object(root) = schema else {
        return;
    };
    if root.contains_key("type") {
        return;
    }
    let all_objects = ["oneOf", "anyOf"].iter().any(|keyword| {
        root.get(*keyword)
            .and_then(Value::as_array)
            .is_some_and(|branches| {
                !branches.is_empty() && branches.iter().all(|b| is_object_branch(b, root))
            })
    });
    if all_objects {
        root.insert("type".into(), Value::String("object".into()));
    }
}

/// Whether a union branch only admits objects: it says so, or refers to a local definition that does.
fn is_object_branch(branch: &Value, root: &Map<String, Value>) -> bool {
    if branch.get("type").and_then(Value::as_str) == Some("object") {
        return true;
    }
    let Some(reference) = branch.get("$ref").and_then(Value::as_str) else {
        return false;
    };
    let Some(name) = reference.strip_prefix("#/$defs/") else {
        return false;
    };
    root.get("$defs")
        .and_then(|defs| defs.get(name))
        .and_then(|def| def.get("type"))
        .and_then(Value::as_str)
        == Some("object")
}

fn strip_rust_number_formats(value: &mut Value, depth: usize) {
    if depth > 256 {
        return;
    }
    match value {
        Value::Object(map) => {
            if map
                .get("format")
                .and_then(Value::as_str)
                .is_some_and(|format| RUST_NUMBER_FORMATS.contains(&format))
            {
                map.remove("format");
            }
            for child in map.values_mut() {
                strip_rust_number_formats(child, depth + 1);
            }
        }
        Value::Array(items) => {
            for child in items {
                strip_rust_number_formats(child, depth + 1);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use serde_json::json;

    #[allow(dead_code)]
    #[derive(Deserialize, JsonSchema)]
    enum Find {
        #[serde(rename = "path")]
        Path(String),
        #[serde(rename = "glob")]
        Glob(String),
    }

    #[allow(dead_code)]
    #[derive(Deserialize, JsonSchema)]
    struct Sized {
        /// Bytes.
        size: u64,
    }

    #[test]
    fn enum_of_objects_gets_an_object_root() {
        let schema = derive_input::<Find>();
        assert_eq!(schema["type"], "object");
        assert_eq!(schema["oneOf"].as_array().map(Vec::len), Some(2));
    }

    #[test]
    fn rust_number_formats_are_left_out() {
        let schema = derive::<Sized>();
        assert_eq!(
            schema["properties"]["size"],
            json!({"type": "integer", "minimum": 0, "description": "Bytes."})
        );
    }
}
