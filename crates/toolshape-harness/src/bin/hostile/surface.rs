//! `--surface`: resources and prompts as a careless server lists them, a
//! prompt and a resource template each listed twice.

use serde_json::{Value, json};

/// The one resource.
pub(crate) const RESOURCE: &str = "hostile://note";

/// The answer to a resources or prompts request, `None` for another method;
/// `Err((code, message))` for an error.
pub(crate) fn answer(method: &str, params: &Value) -> Option<Result<Value, (i64, String)>> {
    let prompt = json!({"name": "greet", "arguments": [{"name": "who", "required": true}]});
    let template = json!({"uriTemplate": "hostile://notes/{id}", "name": "notes"});
    Some(match method {
        "resources/list" => Ok(json!({"resources": [{"uri": RESOURCE, "name": "note"}]})),
        "resources/templates/list" => {
            let again = json!({"uriTemplate": "hostile://notes/{id}", "name": "notes, again"});
            Ok(json!({"resourceTemplates": [template, again]}))
        }
        "resources/read" => {
            let uri = params
                .get("uri")
                .and_then(Value::as_str)
                .unwrap_or_default();
            if uri == RESOURCE || uri.starts_with("hostile://notes/") {
                Ok(json!({"contents": [{"uri": uri, "text": format!("the note at {uri}")}]}))
            } else if uri.starts_with("hostile://gone") {
                // As the TypeScript SDK's 1.x servers answer: invalid params,
                // no `data`.
                Err((-32602, format!("Resource {uri} not found")))
            } else {
                Err((-32002, format!("Resource not found: {uri}")))
            }
        }
        "prompts/list" => Ok(json!({"prompts": [prompt.clone(), prompt]})),
        "prompts/get" => {
            let who = params
                .pointer("/arguments/who")
                .and_then(Value::as_str)
                .unwrap_or("nobody");
            if who.is_empty() {
                return Some(Err((
                    -32602,
                    "Invalid params: who must name someone".to_owned(),
                )));
            }
            Ok(
                json!({"messages": [{"role": "user", "content": {"type": "text", "text": format!("hello, {who}")}}]}),
            )
        }
        _ => return None,
    })
}
