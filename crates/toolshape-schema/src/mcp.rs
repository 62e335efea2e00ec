//! MCP's rules on tool schemas, and the legacy wrapping of non-object outputs.
//!
//! 2025-06-18 and 2025-11-25 require an object-rooted `outputSchema` and object
//! `structuredContent`; 2026-07-28 (SEP-2106) allows any schema and any value.
//! For the older revisions, a non-object output is sent as `{"result": value}`
//! under the wrapped schema [`wrap_output_schema`] builds.

use serde_json::{Map, Value, json};

use crate::dialect::Dialect;
use crate::walk;

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

/// The `$id` given to a wrapped schema that refers to its own root in a way
/// no pointer rewriting can express (a 2019-09 `$recursiveRef`, which may
/// only be `#`). Relative, so that relative references resolve as before.
pub const WRAPPED_RESOURCE_ID: &str = "dev.toolshape.wrapped-output";

/// The wrapped form of an output schema for revisions that need an object root:
/// `{"type":"object","properties":{"result": schema},"required":["result"]}`.
///
/// It accepts `{"result": v}` exactly when `schema` accepts `v`. Same-document
/// pointers (`#`, `#/...`) are rewritten to point into `/properties/result`;
/// `$schema` moves to the new root. A schema with its own `$id` (`id` in
/// draft-04) keeps its references unchanged, being its own resource; so does
/// one using 2019-09's `$recursiveRef` or `$recursiveAnchor` anywhere, which
/// is given the `$id` [`WRAPPED_RESOURCE_ID`]. Anchors and embedded resources keep working.
pub fn wrap_output_schema(schema: &Value) -> Value {
    let mut inner = schema.clone();
    let dialect = inner.as_object_mut().and_then(|map| map.remove("$schema"));
    let declared = dialect
        .as_ref()
        .and_then(Value::as_str)
        .and_then(Dialect::from_uri);
    let rules = IdRules::of(declared);
    let mut own_resource = rules.is_resource(&inner);
    // Before 2019-09 `$recursiveRef` means nothing (and an `$id` beside a
    // root `$ref` would be ignored).
    if !own_resource
        && !rules.ref_hides_siblings
        && uses_recursive_keywords(&inner)
        && let Some(map) = inner.as_object_mut()
    {
        map.insert("$id".into(), json!(WRAPPED_RESOURCE_ID));
        own_resource = true;
    }
    if own_resource {
        // Its pointers are relative to its own resource, which it keeps.
        if let (Some(map), Some(dialect)) = (inner.as_object_mut(), dialect.clone()) {
            map.insert("$schema".into(), dialect);
        }
    } else {
        rewrite_pointers(
            &mut inner,
            &format!("#/properties/{WRAPPED_RESULT_KEY}"),
            rules,
        );
    }
    let mut root = Map::new();
    if let Some(dialect) = dialect {
        root.insert("$schema".into(), dialect);
    }
    root.insert("type".into(), json!("object"));
    root.insert("properties".into(), json!({ WRAPPED_RESULT_KEY: inner }));
    root.insert("required".into(), json!([WRAPPED_RESULT_KEY]));
    Value::Object(root)
}

/// How a dialect names a resource.
#[derive(Debug, Clone, Copy)]
struct IdRules {
    /// `id` in draft-04, `$id` after.
    keyword: &'static str,
    /// Draft-04 to draft-07: beside `$ref`, every other keyword (its id
    /// too) is ignored.
    ref_hides_siblings: bool,
}

impl IdRules {
    fn of(dialect: Option<Dialect>) -> IdRules {
        IdRules {
            keyword: if dialect == Some(Dialect::Draft4) {
                "id"
            } else {
                "$id"
            },
            ref_hides_siblings: matches!(
                dialect,
                Some(Dialect::Draft4 | Dialect::Draft6 | Dialect::Draft7)
            ),
        }
    }

    /// Whether `schema` starts a resource of its own: an id that is more
    /// than a fragment, and not hidden by a `$ref`.
    fn is_resource(self, schema: &Value) -> bool {
        if self.ref_hides_siblings && schema.get("$ref").is_some() {
            return false;
        }
        schema
            .get(self.keyword)
            .and_then(Value::as_str)
            .is_some_and(|id| !id.starts_with('#'))
    }
}

/// Whether `schema` or anything below it, embedded resources included,
/// uses 2019-09's `$recursiveRef` or `$recursiveAnchor`: their meaning
/// depends on which schema is a resource's root, so the wrapped schema must
/// stay one.
fn uses_recursive_keywords(schema: &Value) -> bool {
    let Value::Object(map) = schema else {
        return false;
    };
    if map.contains_key("$recursiveRef") || map.contains_key("$recursiveAnchor") {
        return true;
    }
    let mut found = false;
    walk::for_each_subschema(map, |edge| {
        found = found || uses_recursive_keywords(edge.schema);
    });
    found
}

/// Prefixes every same-document pointer reference below `schema` with `prefix`,
/// not descending into embedded resources (which have their own `$id`).
fn rewrite_pointers(schema: &mut Value, prefix: &str, rules: IdRules) {
    let Value::Object(map) = schema else {
        return;
    };
    for keyword in ["$ref", "$dynamicRef"] {
        if let Some(Value::String(reference)) = map.get_mut(keyword)
            && (reference == "#" || reference.starts_with("#/"))
        {
            *reference = format!("{prefix}{}", &reference[1..]);
        }
    }
    // Collect the paths first: the walker borrows immutably.
    let mut paths: Vec<(String, Option<String>, Option<usize>)> = Vec::new();
    walk::for_each_subschema(map, |edge| {
        if rules.is_resource(edge.schema) {
            return;
        }
        let (name, index) = match edge.key {
            Some(walk::Key::Name(name)) => (Some(name.to_owned()), None),
            Some(walk::Key::Index(index)) => (None, Some(index)),
            None => (None, None),
        };
        paths.push((edge.keyword.to_owned(), name, index));
    });
    for (keyword, name, index) in paths {
        let Some(holder) = map.get_mut(&keyword) else {
            continue;
        };
        let child = match (name, index) {
            (Some(name), _) => holder.get_mut(&name),
            (None, Some(index)) => holder.get_mut(index),
            (None, None) => Some(holder),
        };
        if let Some(child) = child {
            rewrite_pointers(child, prefix, rules);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn input_schema_must_be_object_rooted() {
        assert!(check_input_schema(&json!({"type": "object"})).is_ok());
        let error = check_input_schema(&json!({"type": "array"}))
            .err()
            .map(|e| e.to_string());
        assert!(error.is_some_and(|e| e.contains("\"array\"")));
        assert!(check_input_schema(&json!({"oneOf": []})).is_err());
    }

    #[test]
    fn wrapping_rewrites_pointers_but_not_data() {
        let schema = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "array",
            "items": {"$ref": "#/$defs/entry"},
            "$defs": {"entry": {"type": "object", "properties": {"next": {"$ref": "#"}}}},
            "examples": [{"$ref": "#/not/a/schema"}]
        });
        let wrapped = wrap_output_schema(&schema);
        assert_eq!(wrapped["$schema"], schema["$schema"]);
        assert_eq!(wrapped["required"], json!(["result"]));
        let inner = &wrapped["properties"]["result"];
        assert_eq!(inner["items"]["$ref"], "#/properties/result/$defs/entry");
        assert_eq!(
            inner["$defs"]["entry"]["properties"]["next"]["$ref"],
            "#/properties/result"
        );
        assert_eq!(inner["examples"][0]["$ref"], "#/not/a/schema");
        assert!(inner.get("$schema").is_none());
    }
}
