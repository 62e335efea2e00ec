//! Whether a question fits the revision of the client it would go to:
//! what each revision's `schema.json` lets a server ask.

use serde_json::Value;

use super::{Ask, CreateMessageParams, ElicitParams};
use crate::version::ProtocolVersion;

impl Ask {
    /// Whether a client on `version` can be sent this question, and if not,
    /// what its revision lacks: elicitation came with 2025-06-18 and its URL
    /// mode with 2025-11-25; a form's fields are strings (of the four
    /// formats), numbers, booleans and enums of strings, with titled and
    /// multi-select enums from 2025-11-25; a sampling message holds one text,
    /// image or audio block (audio from 2025-03-26), with several blocks,
    /// tool use and `tools` from 2025-11-25.
    pub fn check_fit(&self, version: ProtocolVersion) -> Result<(), &'static str> {
        match self {
            Ask::Elicit(params) => elicitation_fit(params, version),
            Ask::Sample(params) => sampling_fit(params, version),
            Ask::Roots => Ok(()),
        }
    }
}

/// The string formats a form's text field may declare (`StringSchema`).
pub const FORM_FORMATS: [&str; 4] = ["date", "date-time", "email", "uri"];

fn elicitation_fit(params: &ElicitParams, version: ProtocolVersion) -> Result<(), &'static str> {
    if !version.has_elicitation() {
        return Err("elicitation came with 2025-06-18");
    }
    if params.is_url() {
        return if version.has_url_elicitation() {
            Ok(())
        } else {
            Err("URL-mode elicitation came with 2025-11-25")
        };
    }
    let fields = params
        .requested_schema
        .as_ref()
        .and_then(|schema| schema.get("properties"))
        .and_then(Value::as_object);
    fields
        .into_iter()
        .flat_map(|fields| fields.values())
        .try_for_each(|field| field_fit(field, version))
}

fn field_fit(field: &Value, version: ProtocolVersion) -> Result<(), &'static str> {
    let rich = version.has_rich_forms();
    let titled = field.get("oneOf").is_some() || field.get("anyOf").is_some();
    if titled && !rich {
        return Err("titled enum form fields came with 2025-11-25");
    }
    match field.get("type").and_then(Value::as_str) {
        Some("string") => {
            let known = |format: &Value| format.as_str().is_some_and(|f| FORM_FORMATS.contains(&f));
            match field.get("format") {
                Some(format) if !known(format) => {
                    Err("a form's text field may only be a date, date-time, email or uri")
                }
                _ => Ok(()),
            }
        }
        Some("number" | "integer" | "boolean") => Ok(()),
        Some("array") if rich => {
            let items = field.get("items");
            let choices = items
                .is_some_and(|items| items.get("enum").is_some() || items.get("anyOf").is_some());
            if choices {
                Ok(())
            } else {
                Err("a form's list field is a multi-select of given choices")
            }
        }
        Some("array") => Err("multi-select form fields came with 2025-11-25"),
        _ => Err("a form field is a string, a number, a boolean or an enum"),
    }
}

fn sampling_fit(
    params: &CreateMessageParams,
    version: ProtocolVersion,
) -> Result<(), &'static str> {
    let rich = version.has_rich_sampling();
    if !rich && (params.other.contains_key("tools") || params.other.contains_key("toolChoice")) {
        return Err("tools in sampling came with 2025-11-25");
    }
    for message in &params.messages {
        let blocks = match &message.content {
            Value::Array(_) if !rich => {
                return Err("several blocks in a sampling message came with 2025-11-25");
            }
            Value::Array(blocks) => blocks.as_slice(),
            block => std::slice::from_ref(block),
        };
        for block in blocks {
            match block.get("type").and_then(Value::as_str) {
                Some("text" | "image") => {}
                Some("audio") if version.has_audio_content() => {}
                Some("audio") => return Err("audio came with 2025-03-26"),
                Some("tool_use" | "tool_result") if rich => {}
                Some("tool_use" | "tool_result") => {
                    return Err("tool use in sampling came with 2025-11-25");
                }
                _ => return Err("a sampling message holds text, images, audio or tool use"),
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::asks::SamplingMessage;
    use crate::content::Role;
    use crate::version::ProtocolVersion::{V2024_11_05, V2025_03_26, V2025_06_18, V2025_11_25};

    fn form(field: Value) -> Ask {
        let schema = json!({"type": "object", "properties": {"field": field}});
        Ask::Elicit(ElicitParams::form("?", schema))
    }

    fn sample(content: Value) -> Ask {
        let message = SamplingMessage {
            role: Role::User,
            content,
            meta: None,
        };
        Ask::Sample(CreateMessageParams::new(vec![message], 10))
    }

    #[test]
    fn forms_fit_from_2025_06_18_and_multi_select_from_2025_11_25() {
        let text = form(json!({"type": "string"}));
        assert!(text.check_fit(V2025_03_26).is_err());
        assert_eq!(text.check_fit(V2025_06_18), Ok(()));
        let many = form(json!({"type": "array", "items": {"type": "string", "enum": ["a"]}}));
        assert!(many.check_fit(V2025_06_18).is_err());
        assert_eq!(many.check_fit(V2025_11_25), Ok(()));
        let nested = form(json!({"type": "object"}));
        assert!(nested.check_fit(V2025_11_25).is_err());
        let uuid = form(json!({"type": "string", "format": "uuid"}));
        assert!(uuid.check_fit(V2025_11_25).is_err());
        let email = form(json!({"type": "string", "format": "email"}));
        assert_eq!(email.check_fit(V2025_06_18), Ok(()));
        let titled = form(json!({"type": "string", "oneOf": [{"const": "a", "title": "A"}]}));
        assert!(titled.check_fit(V2025_06_18).is_err());
        assert_eq!(titled.check_fit(V2025_11_25), Ok(()));
        let free_list = form(json!({"type": "array", "items": {"type": "string"}}));
        assert!(free_list.check_fit(V2025_11_25).is_err());
    }

    #[test]
    fn sampling_content_fits_its_revision() {
        let audio = sample(json!({"type": "audio", "data": "", "mimeType": "audio/wav"}));
        assert!(audio.check_fit(V2024_11_05).is_err());
        assert_eq!(audio.check_fit(V2025_03_26), Ok(()));
        let several = sample(json!([{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]));
        assert!(several.check_fit(V2025_06_18).is_err());
        assert_eq!(several.check_fit(V2025_11_25), Ok(()));
        let mut tools = CreateMessageParams::new(Vec::new(), 10);
        tools.other.insert("tools".into(), json!([]));
        assert!(Ask::Sample(tools.clone()).check_fit(V2025_06_18).is_err());
        assert_eq!(Ask::Sample(tools).check_fit(V2025_11_25), Ok(()));
        assert_eq!(Ask::Roots.check_fit(V2024_11_05), Ok(()));
        let resource = sample(json!({"type": "resource_link", "uri": "x:", "name": "x"}));
        assert!(resource.check_fit(V2025_11_25).is_err());
        assert_eq!(
            sample(json!({"type": "text", "text": "hi"})).check_fit(V2024_11_05),
            Ok(())
        );
    }
}
