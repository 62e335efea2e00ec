//! The hostile server's planted defects for `toolshape check`
//! (`--check-defects`): one tool per rule the base tools do not break, each
//! breaking exactly that rule (and what necessarily follows from it). Listed
//! after the base tools, read-only, so that `--call read-only` calls them.
//! `crates/toolshape-harness/tests/check_hostile.rs` holds the expected
//! findings of each.

use serde_json::{Value, json};

/// The planted tools, in listing order (`crash` last: it ends the process).
pub(crate) const DEFECT_TOOLS: [&str; 21] = [
    "input_not_object",
    "output_not_object",
    "format_int64",
    "items_false",
    "tuple_2020",
    "wrap_closed",
    "text_mismatch",
    "no_text",
    "accepts_anything",
    "invalid_code",
    "error_empty",
    "bad name!",
    "notify_change",
    "rejects_valid",
    "output_format",
    "drift",
    "legacy_only",
    "unknown_dialect",
    "invalid_schema",
    "crash",
    "result_and_error",
];

fn object(properties: Value, required: &[&str]) -> Value {
    json!({"type": "object", "properties": properties, "required": required})
}

/// The `q`-string input of the tools that test argument validation.
fn q_input() -> Value {
    object(json!({"q": {"type": "string"}}), &["q"])
}

/// The definition of planted tool `tool` for a peer that speaks 2026-07-28
/// (`modern`) or an older revision; `None` when it is not listed to it.
pub(crate) fn definition(tool: &str, modern: bool) -> Option<Value> {
    let v_output = object(json!({"v": {"type": "integer"}}), &["v"]);
    let (input, output) = match tool {
        "input_not_object" => (json!({"type": "array"}), None),
        "output_not_object" => (
            json!({"type": "object"}),
            Some(json!({"type": "array", "items": {"type": "integer"}})),
        ),
        "format_int64" => (
            object(json!({"n": {"type": "integer", "format": "int64"}}), &["n"]),
            None,
        ),
        "items_false" => (
            json!({"type": "object"}),
            Some(object(
                json!({"empty": {"type": "array", "items": false}}),
                &["empty"],
            )),
        ),
        "tuple_2020" => (
            object(
                json!({"pair": {"type": "array", "items": [{"type": "string"}, {"type": "integer"}]}}),
                &["pair"],
            ),
            None,
        ),
        "wrap_closed" => (
            json!({"type": "object"}),
            Some(json!({
                "type": "object",
                "x-fastmcp-wrap-result": true,
                "properties": {"value": {"type": "integer"}},
                "additionalProperties": false
            })),
        ),
        "text_mismatch" | "no_text" => (json!({"type": "object"}), Some(v_output)),
        "accepts_anything" | "invalid_code" => (q_input(), None),
        "rejects_valid" => (object(json!({"n": {"type": "integer"}}), &["n"]), None),
        "output_format" => (
            json!({"type": "object"}),
            Some(object(
                json!({"when": {"type": "string", "format": "date"}}),
                &["when"],
            )),
        ),
        "drift" => {
            let name = if modern { "a" } else { "b" };
            (object(json!({ name: {"type": "string"} }), &[]), None)
        }
        "legacy_only" if modern => return None,
        "unknown_dialect" => (
            json!({"$schema": "https://example.com/my-dialect", "type": "object"}),
            None,
        ),
        "invalid_schema" => (
            json!({"type": "object"}),
            Some(object(json!({"a": {"type": "strung"}}), &[])),
        ),
        _ => (json!({"type": "object"}), None),
    };
    let mut definition = json!({
        "name": tool,
        "description": format!("planted defect: {tool}"),
        "inputSchema": input,
        "annotations": {"readOnlyHint": true}
    });
    if let Some(output) = output {
        definition["outputSchema"] = output;
    }
    Some(definition)
}

/// What a planted tool answers to `arguments`.
pub(crate) enum Answer {
    /// A result (`resultType` is added for modern peers).
    Result(Value),
    /// A JSON-RPC error.
    Error(i64, &'static str),
    /// A notification, then a result.
    NotifyThenResult(Value, Value),
    /// The process exits without answering.
    Exit,
    /// A response with both this result and an error (JSON-RPC allows one).
    ResultAndError(Value),
}

fn structured(value: Value) -> Value {
    json!({"content": [{"type": "text", "text": value.to_string()}], "structuredContent": value})
}

/// Why the arguments break the tool's inputSchema, for the tools that
/// validate them (all but `accepts_anything`, whose defect is not to).
fn refused(tool: &str, arguments: &Value) -> Option<&'static str> {
    let is = |key: &str, check: fn(&Value) -> bool| arguments.get(key).is_some_and(check);
    let absent_or = |key: &str, check: fn(&Value) -> bool| arguments.get(key).is_none_or(check);
    match tool {
        "format_int64" if !is("n", |n| n.is_i64()) => Some("n must be an integer"),
        "drift" if !absent_or("a", Value::is_string) || !absent_or("b", Value::is_string) => {
            Some("a and b must be strings")
        }
        _ => None,
    }
}

/// The answer of planted tool `tool`, if it is one.
pub(crate) fn call(tool: &str, arguments: &Value) -> Option<Answer> {
    let q_is_string = arguments.get("q").is_some_and(Value::is_string);
    if let Some(reason) = refused(tool, arguments) {
        return Some(Answer::Result(json!({
            "content": [{"type": "text", "text": reason}],
            "isError": true
        })));
    }
    Some(match tool {
        "output_not_object" => Answer::Result(structured(json!([1, 2]))),
        "items_false" => Answer::Result(structured(json!({"empty": []}))),
        "wrap_closed" => Answer::Result(structured(json!({"result": 1}))),
        "text_mismatch" => Answer::Result(json!({
            "content": [{"type": "text", "text": "{\"v\":2}"}],
            "structuredContent": {"v": 1}
        })),
        "no_text" => Answer::Result(json!({"content": [], "structuredContent": {"v": 1}})),
        "accepts_anything" => Answer::Result(structured(json!({"ok": true}))),
        "invalid_code" if !q_is_string => Answer::Error(-32603, "Internal error"),
        "error_empty" => Answer::Result(json!({"content": [], "isError": true})),
        "notify_change" => Answer::NotifyThenResult(
            json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}),
            structured(json!({"ok": true})),
        ),
        "rejects_valid" => Answer::Error(-32602, "Invalid params: rejected"),
        "output_format" => Answer::Result(structured(json!({"when": "yesterday"}))),
        "crash" => Answer::Exit,
        "result_and_error" => Answer::ResultAndError(structured(json!({"ok": true}))),
        name if DEFECT_TOOLS.contains(&name) => Answer::Result(structured(json!({"ok": true}))),
        _ => return None,
    })
}
