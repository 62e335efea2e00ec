//! The form an elicitation asks for, derived from a Rust type.
//!
//! MCP's `requestedSchema` is a flat object whose properties are each a
//! string, a number, an integer, a boolean or an enum of strings (the
//! `PrimitiveSchemaDefinition` of every revision's `schema.json`). What
//! schemars derives for a type says more: an `Option<T>` field is
//! `type: [T, "null"]` (or an `anyOf` with `null`), an enum field refers to
//! a definition, a documented enum is a `oneOf` of `const`s. Each is written
//! here as the primitive it means (an absent answer is the `None`), and a
//! field no form can ask for (an object, a list) is refused by name, so a
//! client is never sent a schema its revision rejects.

use serde_json::{Map, Value, json};
use toolshape_protocol::asks::FORM_FORMATS;

/// Keywords a form property keeps (what `PrimitiveSchemaDefinition` defines).
const KEPT: [&str; 11] = [
    "type",
    "title",
    "description",
    "default",
    "minimum",
    "maximum",
    "minLength",
    "maxLength",
    "format",
    "enum",
    "enumNames",
];

/// `derived` (a type's input schema) as an elicitation form; the error says
/// which field cannot be asked for, and why.
pub(crate) fn form_schema(derived: &Value) -> Result<Value, String> {
    let root = derived
        .as_object()
        .filter(|root| root.get("type").and_then(Value::as_str) == Some("object"))
        .ok_or("a form is an object of named fields")?;
    // A union of objects (a tagged enum), or fields a form cannot list
    // (flattened maps): no one flat form says them.
    let combined = ["oneOf", "anyOf", "allOf", "$ref"]
        .iter()
        .any(|keyword| root.contains_key(*keyword));
    if combined
        || root
            .get("additionalProperties")
            .is_some_and(Value::is_object)
    {
        return Err("a form is one flat object of named fields, not a union or a map".to_owned());
    }
    let definitions = root.get("$defs").and_then(Value::as_object);
    let mut properties = Map::new();
    if let Some(fields) = root.get("properties").and_then(Value::as_object) {
        for (name, field) in fields {
            let primitive = primitive(field, definitions)
                .ok_or_else(|| format!("field {name} is not a string, number, boolean or enum"))?;
            properties.insert(name.clone(), primitive);
        }
    }
    let mut form = json!({"type": "object", "properties": properties});
    if let Some(required) = root.get("required") {
        form["required"] = required.clone();
    }
    if let Some(description) = root.get("description") {
        form["description"] = description.clone();
    }
    Ok(form)
}

/// The primitive `field` means, or `None`.
fn primitive(field: &Value, definitions: Option<&Map<String, Value>>) -> Option<Value> {
    let field = field.as_object()?;
    // A reference (an enum's definition), with what the field says beside it.
    if let Some(target) = field.get("$ref").and_then(Value::as_str) {
        let name = target.strip_prefix("#/$defs/")?;
        let mut resolved = primitive(definitions?.get(name)?, None)?;
        copy_annotations(field, &mut resolved);
        return Some(resolved);
    }
    // `Option<T>`: T, or null.
    for keyword in ["anyOf", "oneOf"] {
        if let Some(branches) = field.get(keyword).and_then(Value::as_array) {
            let not_null: Vec<&Value> = branches.iter().filter(|b| !is_null(b)).collect();
            if let [only] = not_null.as_slice()
                && not_null.len() < branches.len()
            {
                let mut resolved = primitive(only, definitions)?;
                copy_annotations(field, &mut resolved);
                return Some(resolved);
            }
            // A documented enum: each variant a `const` string (the
            // undocumented ones, if any, together in an `enum`).
            let mut values = Vec::new();
            for branch in &not_null {
                match (branch.get("const"), branch.get("enum")) {
                    (Some(Value::String(_)), _) => values.push(branch["const"].clone()),
                    (None, Some(Value::Array(names))) if names.iter().all(Value::is_string) => {
                        values.extend(names.iter().cloned());
                    }
                    _ => return None,
                }
            }
            if values.is_empty() {
                return None;
            }
            let mut resolved = json!({"type": "string", "enum": values});
            copy_annotations(field, &mut resolved);
            return Some(resolved);
        }
    }
    let kind: &str = match field.get("type") {
        Some(Value::String(kind)) => kind,
        Some(Value::Array(kinds)) => {
            let mut not_null = kinds
                .iter()
                .filter_map(Value::as_str)
                .filter(|k| *k != "null");
            match (not_null.next(), not_null.next()) {
                (Some(only), None) => only,
                _ => return None,
            }
        }
        // An enum without a type: of strings only.
        None if field
            .get("enum")
            .and_then(Value::as_array)
            .is_some_and(|values| values.iter().all(Value::is_string)) =>
        {
            "string"
        }
        _ => return None,
    };
    if !matches!(kind, "string" | "number" | "integer" | "boolean") {
        return None;
    }
    let mut out = Map::new();
    for keyword in KEPT {
        if let Some(value) = field.get(keyword) {
            out.insert(keyword.to_owned(), value.clone());
        }
    }
    out.insert("type".into(), Value::String(kind.to_owned()));
    if let Some(values) = out.get_mut("enum").and_then(Value::as_array_mut) {
        values.retain(|value| !value.is_null());
        if kind != "string" || !values.iter().all(Value::is_string) {
            return None;
        }
    }
    if out
        .get("format")
        .and_then(Value::as_str)
        .is_some_and(|format| !FORM_FORMATS.contains(&format))
    {
        out.remove("format");
    }
    if out.get("default").is_some_and(Value::is_null) {
        out.remove("default");
    }
    Some(Value::Object(out))
}

fn is_null(branch: &Value) -> bool {
    branch.get("type").and_then(Value::as_str) == Some("null")
        || branch.get("const").is_some_and(Value::is_null)
}

/// The field's own title, description and default, over the definition's.
fn copy_annotations(field: &Map<String, Value>, resolved: &mut Value) {
    for keyword in ["title", "description", "default"] {
        if let Some(value) = field.get(keyword).filter(|value| !value.is_null()) {
            resolved[keyword] = value.clone();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use schemars::JsonSchema;

    #[derive(JsonSchema)]
    #[allow(dead_code)]
    enum Colour {
        Red,
        Green,
    }

    #[derive(JsonSchema)]
    #[allow(dead_code)]
    enum Documented {
        /// The first.
        First,
        /// The second.
        Second,
    }

    #[derive(JsonSchema)]
    #[allow(dead_code)]
    enum PartlyDocumented {
        /// The first.
        First,
        Second,
        Third,
    }

    #[derive(JsonSchema)]
    #[allow(dead_code)]
    #[serde(tag = "kind")]
    enum Tagged {
        One { a: String },
        Two { b: String },
    }

    #[derive(JsonSchema)]
    #[allow(dead_code)]
    struct Everything {
        /// Your name.
        name: String,
        nickname: Option<String>,
        age: Option<u32>,
        subscribe: bool,
        colour: Colour,
        maybe_colour: Option<Colour>,
        documented: Documented,
        partly: PartlyDocumented,
        email: Option<String>,
    }

    #[derive(JsonSchema)]
    #[allow(dead_code)]
    struct Nested {
        inner: Vec<String>,
    }

    fn form_of<T: JsonSchema>() -> Result<Value, String> {
        form_schema(&crate::tool::schema::derive_input::<T>())
    }

    #[test]
    fn options_enums_and_documented_enums_become_primitives() {
        let form = form_of::<Everything>().unwrap();
        let properties = &form["properties"];
        assert_eq!(properties["name"]["type"], "string");
        assert_eq!(properties["name"]["description"], "Your name.");
        assert_eq!(properties["nickname"], json!({"type": "string"}));
        assert_eq!(properties["age"]["type"], "integer");
        assert_eq!(properties["subscribe"], json!({"type": "boolean"}));
        assert_eq!(
            properties["colour"],
            json!({"type": "string", "enum": ["Red", "Green"]})
        );
        assert_eq!(
            properties["maybe_colour"],
            json!({"type": "string", "enum": ["Red", "Green"]})
        );
        assert_eq!(
            properties["documented"],
            json!({"type": "string", "enum": ["First", "Second"]})
        );
        let mut partly: Vec<&str> = properties["partly"]["enum"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(Value::as_str)
            .collect();
        partly.sort_unstable();
        assert_eq!(partly, ["First", "Second", "Third"]);
        let required: Vec<&str> = form["required"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(Value::as_str)
            .collect();
        assert!(required.contains(&"name") && !required.contains(&"nickname"));
        assert!(form.get("$defs").is_none(), "{form}");
    }

    #[test]
    fn a_field_no_form_can_ask_for_is_named() {
        let refused = form_of::<Nested>().unwrap_err();
        assert!(refused.contains("field inner"), "{refused}");
    }

    #[derive(Debug, serde::Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct NestedAnswer {
        inner: Vec<String>,
    }

    /// `elicit::<T>` of a `T` no form can ask for fails before anything is
    /// sent, with the ask errors' type, naming the field.
    #[tokio::test]
    async fn eliciting_what_no_form_can_ask_for_is_an_ask_error() {
        let context = crate::ToolContext::default();
        let refused = context.elicit::<NestedAnswer>("Which?").await.unwrap_err();
        match refused {
            crate::tool::AskError::NotAForm { type_name, reason } => {
                assert!(type_name.ends_with("NestedAnswer"), "{type_name}");
                assert!(reason.contains("field inner"), "{reason}");
            }
            other => panic!("not NotAForm: {other}"),
        }
    }

    #[test]
    fn a_union_is_no_form() {
        let refused = form_of::<Tagged>().unwrap_err();
        assert!(refused.contains("not a union"), "{refused}");
    }
}
