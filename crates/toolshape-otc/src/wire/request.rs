//! `POST /tools/call` bodies: the envelope `{"$schema"?, "request"}` or a
//! bare CallToolRequest, `input` or its older spelling `inputs`, decoded
//! once, bounded, every field type-checked.

use serde_json::{Map, Value};
use toolshape::Credentials;

/// The `$schema` values this implementation speaks: OXP 1.0 and its OTC-era name.
pub const PROTOCOL_VERSIONS: [&str; 2] = ["urn:oxp:1.0", "otc://1.0"];

/// Most characters of `call_id` and `trace_id`.
pub const MAX_ID_CHARS: usize = 256;

/// Most entries of `context.authorization` and of `context.secrets`.
pub const MAX_CONTEXT_ITEMS: usize = 64;

/// How the request came: enveloped (answered `{"result": …}`) or bare
/// (answered with a bare CallToolResponse).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Envelope {
    /// `{"$schema"?, "request": CallToolRequest}`.
    Wrapped,
    /// A CallToolRequest on its own.
    Bare,
}

/// What a call hands the tool (`context`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CallContext {
    /// `authorization`: `(provider id, token)`.
    pub authorization: Vec<(String, String)>,
    /// `secrets`: `(id, value)`.
    pub secrets: Vec<(String, String)>,
    /// `user_id`.
    pub user_id: Option<String>,
}

impl CallContext {
    /// Whether it carries nothing.
    pub fn is_empty(&self) -> bool {
        self.authorization.is_empty() && self.secrets.is_empty() && self.user_id.is_none()
    }

    /// As the credentials a toolshape call takes.
    pub fn credentials(&self) -> Credentials {
        let mut credentials = Credentials::new();
        for (id, token) in &self.authorization {
            credentials = credentials.token(id, token);
        }
        for (id, value) in &self.secrets {
            credentials = credentials.secret(id, value);
        }
        if let Some(user_id) = &self.user_id {
            credentials = credentials.user_id(user_id);
        }
        credentials
    }

    fn to_json(&self) -> Value {
        let pairs = |items: &[(String, String)], value_key: &str| {
            Value::Array(
                items
                    .iter()
                    .map(|(id, value)| {
                        let mut item = Map::new();
                        item.insert("id".into(), Value::String(id.clone()));
                        item.insert(value_key.into(), Value::String(value.clone()));
                        Value::Object(item)
                    })
                    .collect(),
            )
        };
        let mut context = Map::new();
        if !self.authorization.is_empty() {
            context.insert("authorization".into(), pairs(&self.authorization, "token"));
        }
        if !self.secrets.is_empty() {
            context.insert("secrets".into(), pairs(&self.secrets, "value"));
        }
        if let Some(user_id) = &self.user_id {
            context.insert("user_id".into(), Value::String(user_id.clone()));
        }
        Value::Object(context)
    }
}

/// A CallToolRequest.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CallToolRequest {
    /// The tool: `Toolkit.Tool[@version]`.
    pub tool_id: String,
    /// The idempotency key; the server generates one when absent.
    pub call_id: Option<String>,
    /// A trace id, logged with the call.
    pub trace_id: Option<String>,
    /// The input (`input`, or `inputs`); absent means `{}`.
    pub input: Option<Map<String, Value>>,
    /// The context.
    pub context: CallContext,
}

impl CallToolRequest {
    /// A request to call `tool_id` with `input`.
    pub fn new(tool_id: impl Into<String>, input: Map<String, Value>) -> Self {
        CallToolRequest {
            tool_id: tool_id.into(),
            input: Some(input),
            ..CallToolRequest::default()
        }
    }

    /// The request as JSON (`input` spelled the OXP way).
    pub fn to_json(&self) -> Value {
        let mut request = Map::new();
        request.insert("tool_id".into(), Value::String(self.tool_id.clone()));
        if let Some(call_id) = &self.call_id {
            request.insert("call_id".into(), Value::String(call_id.clone()));
        }
        if let Some(trace_id) = &self.trace_id {
            request.insert("trace_id".into(), Value::String(trace_id.clone()));
        }
        if let Some(input) = &self.input {
            request.insert("input".into(), Value::Object(input.clone()));
        }
        if !self.context.is_empty() {
            request.insert("context".into(), self.context.to_json());
        }
        Value::Object(request)
    }

    /// The enveloped body, `{"request": …}`: without `$schema`, which means
    /// the latest to every server (an OTC-era one knows only `otc://1.0` and
    /// refuses `urn:oxp:1.0`; an OXP one may not know `otc://1.0`).
    pub fn to_envelope(&self) -> Value {
        let mut body = Map::new();
        body.insert("request".into(), self.to_json());
        Value::Object(body)
    }
}

/// A decoded `POST /tools/call` body.
#[derive(Debug, Clone, PartialEq)]
pub struct ParsedCall {
    /// The `$schema` it named, if any (one of [`PROTOCOL_VERSIONS`]).
    pub schema: Option<String>,
    /// Enveloped or bare.
    pub envelope: Envelope,
    /// The request.
    pub request: CallToolRequest,
}

/// Why a body is not a CallToolRequest this server can take (HTTP 400).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RequestError {
    /// Not JSON.
    #[error("the body is not JSON: {0}")]
    NotJson(String),
    /// JSON, but not an object.
    #[error("the body is not a JSON object")]
    NotObject,
    /// A `$schema` other than [`PROTOCOL_VERSIONS`].
    #[error("unsupported $schema {0:?}: this server speaks urn:oxp:1.0 (also written otc://1.0)")]
    UnsupportedSchema(String),
    /// A field is missing, of the wrong type, too long, or unknown.
    #[error("invalid request: {0}")]
    Invalid(String),
}

fn invalid(what: impl Into<String>) -> RequestError {
    RequestError::Invalid(what.into())
}

fn string_field(
    object: &Map<String, Value>,
    key: &str,
    max_chars: usize,
) -> Result<Option<String>, RequestError> {
    match object.get(key) {
        None => Ok(None),
        Some(Value::String(text)) if text.chars().count() <= max_chars => Ok(Some(text.clone())),
        Some(Value::String(_)) => Err(invalid(format!(
            "{key} is longer than {max_chars} characters"
        ))),
        Some(_) => Err(invalid(format!("{key} must be a string"))),
    }
}

fn schema_version(object: &Map<String, Value>) -> Result<Option<String>, RequestError> {
    match object.get("$schema") {
        None => Ok(None),
        Some(Value::String(text)) if PROTOCOL_VERSIONS.contains(&text.as_str()) => {
            Ok(Some(text.clone()))
        }
        Some(Value::String(text)) => Err(RequestError::UnsupportedSchema(
            toolshape_protocol::text::excerpt(text, 80),
        )),
        Some(_) => Err(RequestError::UnsupportedSchema("(not a string)".into())),
    }
}

fn pairs(
    context: &Map<String, Value>,
    key: &str,
    value_key: &str,
) -> Result<Vec<(String, String)>, RequestError> {
    let Some(items) = context.get(key) else {
        return Ok(Vec::new());
    };
    let Value::Array(items) = items else {
        return Err(invalid(format!("context.{key} must be an array")));
    };
    if items.len() > MAX_CONTEXT_ITEMS {
        return Err(invalid(format!(
            "context.{key} has more than {MAX_CONTEXT_ITEMS} items"
        )));
    }
    items
        .iter()
        .map(|item| {
            let id = item.get("id").and_then(Value::as_str);
            let value = item.get(value_key).and_then(Value::as_str);
            match (item.is_object(), id, value) {
                (true, Some(id), Some(value)) => Ok((id.to_owned(), value.to_owned())),
                _ => Err(invalid(format!(
                    "each context.{key} item must be an object with string id and {value_key}"
                ))),
            }
        })
        .collect()
}

fn context(value: Option<&Value>) -> Result<CallContext, RequestError> {
    let Some(value) = value else {
        return Ok(CallContext::default());
    };
    let Value::Object(context) = value else {
        return Err(invalid("context must be an object"));
    };
    Ok(CallContext {
        authorization: pairs(context, "authorization", "token")?,
        secrets: pairs(context, "secrets", "value")?,
        user_id: string_field(context, "user_id", 1024)?,
    })
}

/// The fields a CallToolRequest may have (the schema closes it), and `$schema`
/// for a bare one.
const REQUEST_FIELDS: [&str; 6] = [
    "tool_id", "call_id", "trace_id", "input", "inputs", "context",
];

fn request(object: &Map<String, Value>, bare: bool) -> Result<CallToolRequest, RequestError> {
    if let Some(unknown) = object
        .keys()
        .find(|key| !(REQUEST_FIELDS.contains(&key.as_str()) || bare && *key == "$schema"))
    {
        return Err(invalid(format!(
            "unknown field {:?}",
            toolshape_protocol::text::excerpt(unknown, 40)
        )));
    }
    let tool_id = match object.get("tool_id") {
        Some(Value::String(tool_id)) => tool_id.clone(),
        Some(_) => return Err(invalid("tool_id must be a string")),
        None => return Err(invalid("tool_id is required")),
    };
    let input = match (object.get("input"), object.get("inputs")) {
        (Some(_), Some(_)) => return Err(invalid("give input or inputs, not both")),
        (Some(Value::Object(input)), None) | (None, Some(Value::Object(input))) => {
            Some(input.clone())
        }
        (Some(_), None) => return Err(invalid("input must be an object")),
        (None, Some(_)) => return Err(invalid("inputs must be an object")),
        (None, None) => None,
    };
    Ok(CallToolRequest {
        tool_id,
        call_id: string_field(object, "call_id", MAX_ID_CHARS)?,
        trace_id: string_field(object, "trace_id", MAX_ID_CHARS)?,
        input,
        context: context(object.get("context"))?,
    })
}

/// Decodes a `POST /tools/call` body.
pub fn parse_call(body: &[u8]) -> Result<ParsedCall, RequestError> {
    let value: Value = serde_json::from_slice(body).map_err(|e| {
        RequestError::NotJson(toolshape_protocol::text::excerpt(&e.to_string(), 200))
    })?;
    let Value::Object(object) = value else {
        return Err(RequestError::NotObject);
    };
    let schema = schema_version(&object)?;
    match object.get("request") {
        Some(Value::Object(inner)) => Ok(ParsedCall {
            schema,
            envelope: Envelope::Wrapped,
            request: request(inner, false)?,
        }),
        Some(_) => Err(invalid("request must be an object")),
        None => Ok(ParsedCall {
            schema,
            envelope: Envelope::Bare,
            request: request(&object, true)?,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_envelopes_and_both_spellings_decode_alike() -> Result<(), RequestError> {
        let wrapped = parse_call(
            br#"{"$schema":"urn:oxp:1.0","request":{"tool_id":"Calculator.Add","call_id":"c1","input":{"a":1}}}"#,
        )?;
        let bare = parse_call(br#"{"$schema":"otc://1.0","tool_id":"Calculator.Add","call_id":"c1","inputs":{"a":1}}"#)?;
        assert_eq!(wrapped.envelope, Envelope::Wrapped);
        assert_eq!(bare.envelope, Envelope::Bare);
        assert_eq!(wrapped.request, bare.request);
        assert_eq!(bare.schema.as_deref(), Some("otc://1.0"));
        Ok(())
    }

    #[test]
    fn bad_bodies_say_why() {
        let cases: [(&[u8], &str); 10] = [
            (b"{", "not JSON"),
            (b"[]", "not a JSON object"),
            (
                br#"{"$schema":"urn:oxp:2.0","request":{"tool_id":"A.B"}}"#,
                "unsupported $schema",
            ),
            (br#"{"request":{"call_id":"x"}}"#, "tool_id is required"),
            (br#"{"request":{"tool_id":1}}"#, "tool_id must be a string"),
            (
                br#"{"request":{"tool_id":"A.B","input":{},"inputs":{}}}"#,
                "not both",
            ),
            (
                br#"{"request":{"tool_id":"A.B","input":[]}}"#,
                "input must be an object",
            ),
            (
                br#"{"request":{"tool_id":"A.B","extra":1}}"#,
                "unknown field",
            ),
            (
                br#"{"request":{"tool_id":"A.B","context":{"secrets":[{"id":"k"}]}}}"#,
                "context.secrets",
            ),
            (br#"{"request":"A.B"}"#, "request must be an object"),
        ];
        for (body, expected) in cases {
            match parse_call(body) {
                Ok(parsed) => panic!("{expected}: accepted {parsed:?}"),
                Err(error) => assert!(error.to_string().contains(expected), "{error} / {expected}"),
            }
        }
    }

    #[test]
    fn context_becomes_credentials_and_round_trips() -> Result<(), RequestError> {
        let body = br#"{"request":{"tool_id":"A.B","context":{"authorization":[{"id":"google","token":"t"}],"secrets":[{"id":"K","value":"v"}],"user_id":"u"}}}"#;
        let parsed = parse_call(body)?;
        let credentials = parsed.request.context.credentials();
        assert_eq!(credentials.secrets.get("K").map(String::as_str), Some("v"));
        assert_eq!(credentials.user_id.as_deref(), Some("u"));
        let again = serde_json::to_vec(&parsed.request.to_envelope()).unwrap_or_default();
        let reparsed = parse_call(&again)?;
        assert_eq!(reparsed.request, parsed.request);
        // No `$schema`: any server reads it as its latest.
        assert_eq!(reparsed.schema, None);
        Ok(())
    }
}
