//! Whether a question fits the revision of the client it would go to:
//! what each revision's `schema.json` lets a server ask.

use serde_json::Value;

use super::{Ask, CreateMessageParams, ElicitParams};
use crate::version::ProtocolVersion;

impl Ask {
    /// Why a client on `version` cannot be sent this question, if it
    /// cannot: elicitation came with 2025-06-18 and its URL mode with
    /// 2025-11-25; a form's fields are strings, numbers, booleans and single
    /// enums, with multi-select enums from 2025-11-25; a sampling message
    /// holds one text, image or audio block (audio from 2025-03-26), with
    /// several blocks, tool use and `tools` from 2025-11-25.
    pub fn unfit_for(&self, version: ProtocolVersion) -> Option<&'static str> {
        match self {
            Ask::Elicit(params) => elicitation_unfit(params, version),
            Ask::Sample(params) => sampling_unfit(params, version),
            Ask::Roots => None,
        }
    }
}

fn elicitation_unfit(params: &ElicitParams, version: ProtocolVersion) -> Option<&'static str> {
    if !version.has_elicitation() {
        return Some("elicitation came with 2025-06-18");
    }
    if params.is_url() {
        return (!version.has_url_elicitation())
            .then_some("URL-mode elicitation came with 2025-11-25");
    }
    let fields = params
        .requested_schema
        .as_ref()
        .and_then(|schema| schema.get("properties"))
        .and_then(Value::as_object);
    for field in fields.into_iter().flat_map(|fields| fields.values()) {
        match field.get("type").and_then(Value::as_str) {
            Some("string" | "number" | "integer" | "boolean") => {}
            Some("array") if version.has_multi_select_forms() => {}
            Some("array") => return Some("multi-select form fields came with 2025-11-25"),
            _ => return Some("a form field is a string, a number, a boolean or an enum"),
        }
    }
    None
}

fn sampling_unfit(params: &CreateMessageParams, version: ProtocolVersion) -> Option<&'static str> {
    let rich = version.has_sampling_tools();
    if !rich && (params.other.contains_key("tools") || params.other.contains_key("toolChoice")) {
        return Some("tools in sampling came with 2025-11-25");
    }
    for message in &params.messages {
        let blocks = match &message.content {
            Value::Array(_) if !rich => {
                return Some("several blocks in a sampling message came with 2025-11-25");
            }
            Value::Array(blocks) => blocks.as_slice(),
            block => std::slice::from_ref(block),
        };
        for block in blocks {
            match block.get("type").and_then(Value::as_str) {
                Some("audio") if !version.has_audio_content() => {
                    return Some("audio came with 2025-03-26");
                }
                Some("tool_use" | "tool_result") if !rich => {
                    return Some("tool use in sampling came with 2025-11-25");
                }
                _ => {}
            }
        }
    }
    None
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
        assert!(text.unfit_for(V2025_03_26).is_some());
        assert_eq!(text.unfit_for(V2025_06_18), None);
        let many = form(json!({"type": "array", "items": {"type": "string", "enum": ["a"]}}));
        assert!(many.unfit_for(V2025_06_18).is_some());
        assert_eq!(many.unfit_for(V2025_11_25), None);
        let nested = form(json!({"type": "object"}));
        assert!(nested.unfit_for(V2025_11_25).is_some());
    }

    #[test]
    fn sampling_content_fits_its_revision() {
        let audio = sample(json!({"type": "audio", "data": "", "mimeType": "audio/wav"}));
        assert!(audio.unfit_for(V2024_11_05).is_some());
        assert_eq!(audio.unfit_for(V2025_03_26), None);
        let several = sample(json!([{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]));
        assert!(several.unfit_for(V2025_06_18).is_some());
        assert_eq!(several.unfit_for(V2025_11_25), None);
        let mut tools = CreateMessageParams::new(Vec::new(), 10);
        tools.other.insert("tools".into(), json!([]));
        assert!(Ask::Sample(tools.clone()).unfit_for(V2025_06_18).is_some());
        assert_eq!(Ask::Sample(tools).unfit_for(V2025_11_25), None);
        assert_eq!(Ask::Roots.unfit_for(V2024_11_05), None);
    }
}
