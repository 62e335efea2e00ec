//! The hostile server's tools: their names and the schemas each declares.

use serde_json::{Map, Value, json};

use super::Config;

/// Levels of the `exponential` schema: 2^30 paths.
const EXPONENTIAL_LEVELS: usize = 30;

/// Every tool this server lists, in listing order.
pub(super) const TOOLS: [&str; 24] = [
    "ok",
    "pair",
    "mismatch",
    "no_structured",
    "tuple",
    "tuple_bad",
    "unevaluated",
    "draft07",
    "remote_ref",
    "exponential",
    "deep",
    "huge",
    "huge_id_last",
    "malformed_error",
    "bad_result",
    "tool_error",
    "hang",
    "received",
    "echo",
    "twice",
    "unknown_id",
    "flood",
    "die",
    "deaf",
];

/// The tools `--foreign-names` lists after the others: names outside MCP's
/// naming guidance (a SHOULD), and one within it but too long for an OTC
/// name (70 characters), each answering `{"value": NAME}` as `ok`
/// does, then [`ESCAPING_NAME`] and `too_deep`, whose inputSchema nests past
/// what a JSON parser reads (serde_json stops at 128 levels).
pub(super) const FOREIGN_TOOLS: [&str; 5] = [
    "github/create_issue",
    "ns:tool",
    "get weather",
    "café",
    "get_repos_owner_repo_actions_runs_run_id_attempts_attempt_number_logs_",
];

/// A name with a terminal escape sequence, listed by `--foreign-names`
/// after [`FOREIGN_TOOLS`]: no terminal may be sent it as written, and no
/// gateway may relay it.
pub(super) const ESCAPING_NAME: &str = "esc\u{1b}[31mred";

/// Levels of `too_deep`'s inputSchema (two JSON levels each).
const TOO_DEEP_LEVELS: usize = 80;

/// What `--foreign-names` adds to the listing.
pub(super) fn foreign_definitions() -> Vec<Value> {
    let mut deep = json!({"type": "string"});
    for _ in 0..TOO_DEEP_LEVELS {
        deep = json!({"type": "object", "properties": {"a": deep}});
    }
    let mut definitions: Vec<Value> = FOREIGN_TOOLS
        .iter()
        .map(|name| {
            json!({
                "name": name,
                "inputSchema": {"type": "object"},
                "outputSchema": object_schema(json!({"value": {"type": "string"}}), &["value"]),
            })
        })
        .collect();
    definitions.push(json!({"name": ESCAPING_NAME, "inputSchema": {"type": "object"}}));
    definitions.push(json!({"name": "too_deep", "inputSchema": deep}));
    definitions
}

pub(super) fn object_schema(properties: Value, required: &[&str]) -> Value {
    json!({"type": "object", "properties": properties, "required": required})
}

/// The output schema of each tool (`None`: no outputSchema).
fn output_schema(tool: &str, config: &Config) -> Option<Value> {
    let tuple = json!({
        "type": "object",
        "properties": {"pair": {
            "type": "array",
            "prefixItems": [{"type": "string"}, {"type": "integer"}],
            "items": false
        }},
        "required": ["pair"]
    });
    Some(match tool {
        "ok" | "hang" | "twice" | "unknown_id" | "flood" | "die" | "deaf" => {
            object_schema(json!({"value": {"type": "string"}}), &["value"])
        }
        "pair" => object_schema(json!({"n": {"type": "integer"}}), &["n"]),
        "mismatch" => object_schema(
            json!({"count": {"type": "integer"}, "label": {"type": "string"}}),
            &["count", "label"],
        ),
        "no_structured" => object_schema(json!({"value": {"type": "string"}}), &["value"]),
        "tuple" | "tuple_bad" => tuple,
        "unevaluated" => json!({
            "type": "object",
            "allOf": [{"properties": {"a": {"type": "integer"}}}],
            "unevaluatedProperties": false
        }),
        "draft07" => json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "type": "object",
            "properties": {"pair": {
                "type": "array",
                "items": [{"type": "string"}, {"type": "integer"}],
                "additionalItems": false
            }},
            "required": ["pair"],
            "additionalProperties": false
        }),
        "remote_ref" => json!({
            "$ref": format!("http://127.0.0.1:{}/schema.json", config.canary_port)
        }),
        "exponential" => {
            let mut defs = Map::new();
            defs.insert("l0".into(), json!({"type": "integer"}));
            for level in 1..=EXPONENTIAL_LEVELS {
                let lower = format!("#/$defs/l{}", level - 1);
                defs.insert(
                    format!("l{level}"),
                    json!({"anyOf": [{"$ref": lower}, {"$ref": lower}]}),
                );
            }
            json!({
                "$defs": defs,
                "type": "object",
                "properties": {"v": {"$ref": format!("#/$defs/l{EXPONENTIAL_LEVELS}")}},
                "required": ["v"]
            })
        }
        "deep" => json!({"type": "object"}),
        "received" => object_schema(
            json!({"notifications": {"type": "array", "items": {"type": "object"}}}),
            &["notifications"],
        ),
        _ => return None,
    })
}

pub(super) fn tool_definition(tool: &str, config: &Config) -> Value {
    let mut definition = json!({
        "name": tool,
        "description": format!("hostile: {tool}"),
        "inputSchema": {"type": "object"},
    });
    if let Some(schema) = output_schema(tool, config) {
        definition["outputSchema"] = schema;
    }
    definition
}
