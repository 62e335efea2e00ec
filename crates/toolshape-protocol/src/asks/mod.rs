//! What a server may ask of the client: elicitation (the user), sampling
//! (the client's model) and roots. On the handshake revisions these are
//! server-to-client requests; on 2026-07-28 they travel inside an
//! `input_required` result and come back as `inputResponses` on the retry
//! (multi round-trip requests).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::content::Role;
use crate::meta::Meta;

mod fit;

pub use fit::FORM_FORMATS;

/// Params of `elicitation/create`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ElicitParams {
    /// `form` (the default when absent) or `url` (2025-11-25 on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    /// What the user is asked.
    pub message: String,
    /// Form mode: a flat object schema of primitive properties.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requested_schema: Option<Value>,
    /// URL mode: where the user goes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// URL mode: the id completing the elicitation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elicitation_id: Option<String>,
    /// Optional metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl ElicitParams {
    /// A form asking `message`, its answer shaped by `requested_schema`.
    pub fn form(message: impl Into<String>, requested_schema: Value) -> Self {
        Self {
            mode: Some("form".into()),
            message: message.into(),
            requested_schema: Some(requested_schema),
            url: None,
            elicitation_id: None,
            meta: None,
        }
    }

    /// The form's answer as the requested schema's defaults fill it in
    /// (SEP-1034): each property that declares a `default`, with that value.
    /// What a client shows prefilled, and what it sends for fields the user
    /// left alone.
    pub fn defaults(&self) -> Map<String, Value> {
        let properties = self
            .requested_schema
            .as_ref()
            .and_then(|schema| schema.get("properties"))
            .and_then(Value::as_object);
        properties
            .into_iter()
            .flatten()
            .filter_map(|(name, property)| {
                let default = property.get("default")?;
                Some((name.clone(), default.clone()))
            })
            .collect()
    }

    /// A request to visit `url` (2025-11-25 on).
    pub fn url(
        message: impl Into<String>,
        url: impl Into<String>,
        elicitation_id: impl Into<String>,
    ) -> Self {
        Self {
            mode: Some("url".into()),
            message: message.into(),
            requested_schema: None,
            url: Some(url.into()),
            elicitation_id: Some(elicitation_id.into()),
            meta: None,
        }
    }
}

/// Params of `notifications/elicitation/complete` (2025-11-25 only): the
/// server tells the client that the interaction a URL-mode elicitation
/// started is over. Removed in 2026-07-28, where the client learns the
/// outcome by retrying its request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ElicitationCompleteParams {
    /// The `elicitationId` of the URL-mode elicitation.
    pub elicitation_id: String,
    /// Optional metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl ElicitationCompleteParams {
    /// The elicitation `elicitation_id` is complete.
    pub fn new(elicitation_id: impl Into<String>) -> Self {
        Self {
            elicitation_id: elicitation_id.into(),
            meta: None,
        }
    }
}

/// `data` of a `URLElicitationRequiredError` (`-32042`, 2025-11-25 only):
/// the URL-mode elicitations to complete before the request is retried.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct UrlElicitationRequiredData {
    /// The elicitations, each in URL mode with an `elicitationId`.
    pub elicitations: Vec<ElicitParams>,
}

impl UrlElicitationRequiredData {
    /// The data listing `elicitations`.
    pub fn new(elicitations: Vec<ElicitParams>) -> Self {
        Self { elicitations }
    }
}

impl ElicitParams {
    /// Whether this is a URL-mode elicitation.
    pub fn is_url(&self) -> bool {
        self.mode.as_deref() == Some("url")
    }
}

/// What the user did with an elicitation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ElicitAction {
    /// Submitted (form mode: `content` holds the answer).
    Accept,
    /// Explicitly declined.
    Decline,
    /// Dismissed without a choice.
    Cancel,
}

/// The result of `elicitation/create`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ElicitResult {
    /// What the user did.
    pub action: ElicitAction,
    /// The answer (form mode, accepted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<Map<String, Value>>,
    /// Optional metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl ElicitResult {
    /// An accepted form with `content`.
    pub fn accept(content: Map<String, Value>) -> Self {
        Self {
            action: ElicitAction::Accept,
            content: Some(content),
            meta: None,
        }
    }

    /// A declined or cancelled elicitation.
    pub fn refuse(action: ElicitAction) -> Self {
        Self {
            action,
            content: None,
            meta: None,
        }
    }
}

/// One message of a sampling conversation. Its `content` is one content
/// block or (2025-11-25 on) an array of them, kept as JSON.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SamplingMessage {
    /// Who speaks.
    pub role: Role,
    /// A content block, or an array of them.
    pub content: Value,
    /// Optional metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl SamplingMessage {
    /// A text message from `role`.
    pub fn text(role: Role, text: impl Into<String>) -> Self {
        Self {
            role,
            content: serde_json::json!({"type": "text", "text": text.into()}),
            meta: None,
        }
    }
}

/// Params of `sampling/createMessage`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CreateMessageParams {
    /// The conversation so far.
    pub messages: Vec<SamplingMessage>,
    /// The most tokens to generate.
    pub max_tokens: u64,
    /// A system prompt the client may use.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
    /// Model preferences (hints, priorities), kept as JSON.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_preferences: Option<Value>,
    /// `none`, `thisServer` or `allServers`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include_context: Option<String>,
    /// Sampling temperature.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// Stop sequences.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_sequences: Option<Vec<String>>,
    /// Provider-specific metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Value>,
    /// Everything else (tools, toolChoice...), kept verbatim.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

impl CreateMessageParams {
    /// A request to continue `messages` with at most `max_tokens` tokens.
    pub fn new(messages: Vec<SamplingMessage>, max_tokens: u64) -> Self {
        Self {
            messages,
            max_tokens,
            system_prompt: None,
            model_preferences: None,
            include_context: None,
            temperature: None,
            stop_sequences: None,
            metadata: None,
            other: Map::new(),
        }
    }
}

/// The result of `sampling/createMessage`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CreateMessageResult {
    /// Who speaks (the assistant).
    pub role: Role,
    /// A content block, or an array of them.
    pub content: Value,
    /// The model that answered.
    pub model: String,
    /// Why generation stopped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
    /// Optional metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl CreateMessageResult {
    /// A text answer from `model`.
    pub fn text(model: impl Into<String>, text: impl Into<String>) -> Self {
        Self {
            role: Role::Assistant,
            content: serde_json::json!({"type": "text", "text": text.into()}),
            model: model.into(),
            stop_reason: Some("endTurn".into()),
            meta: None,
        }
    }

    /// The text of the answer's text blocks, joined.
    pub fn text_content(&self) -> String {
        let blocks: Vec<&Value> = match &self.content {
            Value::Array(items) => items.iter().collect(),
            one => vec![one],
        };
        blocks
            .iter()
            .filter_map(|block| block.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// A root: a folder or other URI the client lets the server work in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Root {
    /// Its URI (`file://` for folders).
    pub uri: String,
    /// A display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Optional metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl Root {
    /// A root at `uri`.
    pub fn new(uri: impl Into<String>, name: Option<String>) -> Self {
        Self {
            uri: uri.into(),
            name,
            meta: None,
        }
    }
}

/// The result of `roots/list`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ListRootsResult {
    /// The roots.
    pub roots: Vec<Root>,
    /// Optional metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl ListRootsResult {
    /// These roots.
    pub fn new(roots: Vec<Root>) -> Self {
        Self { roots, meta: None }
    }
}

/// One thing a server asks of the client.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Ask {
    /// `elicitation/create`.
    Elicit(ElicitParams),
    /// `sampling/createMessage`.
    Sample(CreateMessageParams),
    /// `roots/list`.
    Roots,
}

impl Ask {
    /// The method of the request.
    pub fn method(&self) -> &'static str {
        match self {
            Ask::Elicit(_) => crate::methods::ELICITATION_CREATE,
            Ask::Sample(_) => crate::methods::SAMPLING_CREATE_MESSAGE,
            Ask::Roots => crate::methods::ROOTS_LIST,
        }
    }

    /// The request's params as JSON (`None` for `roots/list`).
    pub fn params(&self) -> Option<Value> {
        match self {
            Ask::Elicit(params) => serde_json::to_value(params).ok(),
            Ask::Sample(params) => serde_json::to_value(params).ok(),
            Ask::Roots => None,
        }
    }

    /// The request as an `inputRequests` entry: `{"method", "params"}`.
    pub fn to_input_request(&self) -> Value {
        let mut request = Map::new();
        request.insert("method".into(), Value::String(self.method().into()));
        request.insert(
            "params".into(),
            self.params().unwrap_or_else(|| Value::Object(Map::new())),
        );
        Value::Object(request)
    }

    /// The request an `inputRequests` entry holds.
    pub fn from_input_request(value: &Value) -> Option<Ask> {
        let method = value.get("method")?.as_str()?;
        let params = value.get("params").cloned().unwrap_or(Value::Null);
        match method {
            crate::methods::ELICITATION_CREATE => {
                serde_json::from_value(params).ok().map(Ask::Elicit)
            }
            crate::methods::SAMPLING_CREATE_MESSAGE => {
                serde_json::from_value(params).ok().map(Ask::Sample)
            }
            crate::methods::ROOTS_LIST => Some(Ask::Roots),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::ElicitParams;

    #[test]
    fn defaults_fill_only_the_properties_that_declare_one() {
        let form = ElicitParams::form(
            "Who?",
            json!({"type": "object", "properties": {
                "name": {"type": "string", "default": "Ada"},
                "age": {"type": "integer"},
                "tier": {"type": "string", "enum": ["a", "b"], "default": "b"},
            }}),
        );
        let defaults = form.defaults();
        assert_eq!(defaults.len(), 2);
        assert_eq!(defaults["name"], "Ada");
        assert_eq!(defaults["tier"], "b");
        assert!(
            ElicitParams::url("Go", "https://example.com", "e1")
                .defaults()
                .is_empty()
        );
    }
}
