//! `GET /openapi.json`: the corrected OXP document (carried as data, see
//! `openapi/CORRECTIONS.md`), narrowed to this server: its tools' ids and
//! input schemas, and the authentication it is configured with. Rendered
//! only when the set of tools changes (`rendered.rs`).

use serde_json::{Map, Value, json};
use toolshape::tool::{QualifiedName, RegisteredTool};

use super::state::OtcState;
use crate::openapi::corrected_document;

fn security(state: &OtcState) -> Value {
    let auth = &state.options.auth;
    if !auth.is_required() {
        return json!([{}]);
    }
    let mut schemes = Vec::new();
    if auth.accepts_jwt() {
        schemes.push(json!({"bearerAuth": []}));
    }
    if auth.accepts_api_keys() {
        schemes.push(json!({"oxpApiKey": []}));
        schemes.push(json!({"otcApiKey": []}));
    }
    Value::Array(schemes)
}

/// A component name made of the characters OpenAPI allows.
fn component_name(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Rewrites a tool schema's local references to point into the document's
/// components, where its `$defs` / `definitions` are hoisted.
fn rewrite_refs(value: &mut Value, root: &str, depth: usize) {
    if depth > 128 {
        return;
    }
    match value {
        Value::Object(map) => {
            if let Some(Value::String(reference)) = map.get_mut("$ref")
                && let Some(pointer) = reference.strip_prefix('#')
            {
                *reference = rewritten(pointer, root);
            }
            for child in map.values_mut() {
                rewrite_refs(child, root, depth + 1);
            }
        }
        Value::Array(items) => items
            .iter_mut()
            .for_each(|item| rewrite_refs(item, root, depth + 1)),
        _ => {}
    }
}

fn rewritten(pointer: &str, root: &str) -> String {
    for defs in ["/$defs/", "/definitions/"] {
        if let Some(rest) = pointer.strip_prefix(defs) {
            let (name, tail) = rest.split_once('/').map_or((rest, ""), |(n, t)| (n, t));
            let name = name.replace("~1", "/").replace("~0", "~");
            let tail = if tail.is_empty() {
                String::new()
            } else {
                format!("/{tail}")
            };
            return format!(
                "#/components/schemas/{}{tail}",
                component_name(&format!("{root}.{name}"))
            );
        }
    }
    format!("#/components/schemas/{root}{pointer}")
}

/// Adds a tool's input schema (and its definitions) to `schemas` as `root`.
fn add_input(schemas: &mut Map<String, Value>, root: &str, input: &Value) {
    let mut input = input.clone();
    if let Value::Object(map) = &mut input {
        map.remove("$schema");
        map.remove("$id");
        for defs in ["$defs", "definitions"] {
            if let Some(Value::Object(definitions)) = map.remove(defs) {
                for (name, mut definition) in definitions {
                    rewrite_refs(&mut definition, root, 0);
                    schemas.insert(component_name(&format!("{root}.{name}")), definition);
                }
            }
        }
    }
    rewrite_refs(&mut input, root, 0);
    schemas.insert(root.to_owned(), input);
}

/// The ids a call may name a version by: `Toolkit.Tool@x.y.z`, `@x` for
/// `x.0.0`, and the bare `Toolkit.Tool` for the latest.
fn ids(tool: &RegisteredTool, qualified: &QualifiedName, latest: bool) -> Vec<Value> {
    let qualified = qualified.dotted();
    let version = tool.version();
    let mut ids = vec![Value::String(format!("{qualified}@{version}"))];
    if version.minor == 0 && version.patch == 0 {
        ids.push(Value::String(format!("{qualified}@{}", version.major)));
    }
    if latest {
        ids.push(Value::String(qualified));
    }
    ids
}

/// A request for the tool with these ids; `input` (or `inputs`) is
/// required when the tool's schema refuses `{}` (what an absent input means).
fn variant(ids: Vec<Value>, input_ref: &str, bare: bool, input_required: bool) -> Value {
    let input = json!({"$ref": format!("#/components/schemas/{input_ref}")});
    let mut properties = Map::new();
    if bare {
        properties.insert(
            "$schema".into(),
            json!({"$ref": "#/components/schemas/SchemaVersion"}),
        );
    }
    properties.insert("tool_id".into(), json!({"enum": ids}));
    properties.insert(
        "call_id".into(),
        json!({"type": "string", "maxLength": 256}),
    );
    properties.insert(
        "trace_id".into(),
        json!({"type": "string", "maxLength": 256}),
    );
    properties.insert("input".into(), input.clone());
    properties.insert(
        "inputs".into(),
        json!({"allOf": [input], "deprecated": true}),
    );
    properties.insert(
        "context".into(),
        json!({"$ref": "#/components/schemas/CallToolContext"}),
    );
    let mut variant = json!({
        "type": "object",
        "properties": properties,
        "required": ["tool_id"],
        "additionalProperties": false,
        "not": {"required": ["input", "inputs"]},
    });
    if input_required {
        variant["anyOf"] = json!([{"required": ["input"]}, {"required": ["inputs"]}]);
    }
    variant
}

pub(crate) fn render(state: &OtcState) -> Value {
    let mut document = corrected_document();
    let security = security(state);
    for (path, method) in [
        ("/tools", "get"),
        ("/tools/call", "post"),
        ("/openapi.json", "get"),
    ] {
        if let Some(operation) =
            document.pointer_mut(&format!("/paths/{}/{method}", path.replace('/', "~1")))
        {
            operation["security"] = security.clone();
        }
    }
    // A tool served over MCP only has no qualified name.
    let all = state.registry.tools();
    let tools: Vec<(&RegisteredTool, &QualifiedName)> = all
        .iter()
        .filter_map(|tool| Some((&**tool, tool.qualified_name()?)))
        .collect();
    if tools.is_empty() {
        return document;
    }
    let Some(Value::Object(schemas)) = document.pointer_mut("/components/schemas") else {
        return document;
    };
    let (mut enveloped, mut bare) = (Vec::new(), Vec::new());
    for (index, &(tool, qualified)) in tools.iter().enumerate() {
        let latest = tools
            .get(index + 1)
            .is_none_or(|(next, _)| next.name() != tool.name());
        let id = format!("{}@{}", qualified.dotted(), tool.version());
        let root = component_name(&format!("Input.{id}"));
        add_input(schemas, &root, &tool.definition().input_schema);
        let input_required = tool.input().validate(&json!({})).is_err();
        let ids = ids(tool, qualified, latest);
        enveloped.push(variant(ids.clone(), &root, false, input_required));
        bare.push(variant(ids, &root, true, input_required));
    }
    schemas.insert("CallToolRequest".into(), json!({"oneOf": enveloped}));
    schemas.insert("BareCallToolRequest".into(), json!({"oneOf": bare}));
    document
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_are_moved_into_the_components() {
        let mut schema = json!({
            "$defs": {"Unit": {"enum": ["c", "f"]}},
            "properties": {"unit": {"$ref": "#/$defs/Unit"}, "again": {"$ref": "#"}, "p": {"$ref": "#/properties/unit"}}
        });
        let mut schemas = Map::new();
        add_input(&mut schemas, "Input.T", &schema);
        rewrite_refs(&mut schema, "Input.T", 0);
        let root = &schemas["Input.T"];
        assert_eq!(
            root["properties"]["unit"]["$ref"],
            "#/components/schemas/Input.T.Unit"
        );
        assert_eq!(
            root["properties"]["again"]["$ref"],
            "#/components/schemas/Input.T"
        );
        assert_eq!(
            root["properties"]["p"]["$ref"],
            "#/components/schemas/Input.T/properties/unit"
        );
        assert_eq!(schemas["Input.T.Unit"], json!({"enum": ["c", "f"]}));
        assert!(root.get("$defs").is_none());
    }
}
