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

/// The range of each Rust integer format schemars emits: a derived schema
/// states it (as `minimum` and `maximum`), so that a value the type cannot
/// hold is refused by validation, with the violation named, rather than by
/// deserialization after it. (128-bit ones: no JSON number reaches past
/// 64 bits in practice, so they get none.)
fn integer_range(format: &str) -> Option<(i128, i128)> {
    Some(match format {
        "int8" => (i8::MIN.into(), i8::MAX.into()),
        "int16" => (i16::MIN.into(), i16::MAX.into()),
        "int32" => (i32::MIN.into(), i32::MAX.into()),
        "int64" => (i64::MIN.into(), i64::MAX.into()),
        // isize and usize: as wide as the target's pointers.
        "int" => (
            i128::try_from(isize::MIN).unwrap_or(i64::MIN.into()),
            i128::try_from(isize::MAX).unwrap_or(i64::MAX.into()),
        ),
        "uint" => (0, i128::try_from(usize::MAX).unwrap_or(u64::MAX.into())),
        "uint8" => (0, u8::MAX.into()),
        "uint16" => (0, u16::MAX.into()),
        "uint32" => (0, u32::MAX.into()),
        "uint64" => (0, u64::MAX.into()),
        _ => return None,
    })
}

/// A JSON number of `bound` (within 64 bits, signed or not).
fn bound_number(bound: i128) -> Option<Value> {
    if let Ok(small) = i64::try_from(bound) {
        return Some(Value::from(small));
    }
    u64::try_from(bound).ok().map(Value::from)
}

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
            let format = map.get("format").and_then(Value::as_str);
            if let Some(format) = format.filter(|format| RUST_NUMBER_FORMATS.contains(format)) {
                if let Some((low, high)) = integer_range(format) {
                    // A range given with the type (`#[schemars(range(..))]`) stays.
                    for (keyword, bound) in [("minimum", low), ("maximum", high)] {
                        if !map.contains_key(keyword)
                            && let Some(bound) = bound_number(bound)
                        {
                            map.insert(keyword.to_owned(), bound);
                        }
                    }
                }
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
            json!({"type": "integer", "minimum": 0, "maximum": u64::MAX, "description": "Bytes."})
        );
    }
}
