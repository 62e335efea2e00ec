//! `tools/call`: invoking a tool and its result.

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use crate::content::ContentBlock;
use crate::meta::Meta;
use crate::result::{InputRequiredResult, ResultType};
use crate::serde_util::deserialize_present;

/// Params of `tools/call`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
#[serde(rename_all = "camelCase")]
pub struct CallToolParams {
    /// The tool to call.
    pub name: String,
    /// The arguments (a JSON object), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<serde_json::Map<String, Value>>,
    /// Answers to an earlier `input_required` result, keyed like its
    /// `inputRequests` (2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_responses: Option<serde_json::Map<String, Value>>,
    /// `requestState` echoed from an earlier `input_required` result
    /// (2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_state: Option<String>,
    /// Task augmentation request, e.g. `{"ttl": 60000}` (2025-11-25 only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<Value>,
    /// Request metadata (required from 2026-07-28 on).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl CallToolParams {
    /// A call of `name` with `arguments`.
    pub fn new(name: impl Into<String>, arguments: Option<serde_json::Map<String, Value>>) -> Self {
        Self {
            name: name.into(),
            arguments,
            input_responses: None,
            request_state: None,
            task: None,
            meta: None,
        }
    }
}

/// The result of `tools/call`.
///
/// `S` is how the structured content is held: a [`Value`] by default, or
/// JSON serialized ahead of time (`Box<RawValue>`) by a server that writes
/// the same text into `structuredContent` and the text block. `C` is how each
/// content block is held: a [`ContentBlock`] by default, or its raw JSON
/// (`&RawValue`) for a reader that decides block by block how to read it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[serde(bound(deserialize = "S: Deserialize<'de>, C: Deserialize<'de>"))]
#[non_exhaustive]
pub struct CallToolResult<S = Value, C = ContentBlock> {
    /// `resultType` (required from 2026-07-28 on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// Unstructured content.
    pub content: Vec<C>,
    /// Structured content (2025-06-18 on): any JSON value from 2026-07-28
    /// on, an object before. An explicit `null` is kept as
    /// `Some(Value::Null)`.
    #[serde(
        default,
        deserialize_with = "deserialize_present",
        skip_serializing_if = "Option::is_none"
    )]
    pub structured_content: Option<S>,
    /// Whether the tool failed (a tool execution error, shown to the model
    /// so it can correct itself). Absent means `false`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
    /// Optional metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl<S, C> CallToolResult<S, C> {
    /// A result with these content blocks and structured content.
    pub fn from_parts(content: Vec<C>, structured_content: Option<S>) -> Self {
        Self {
            result_type: None,
            content,
            structured_content,
            is_error: None,
            meta: None,
        }
    }

    /// Sets `resultType: "complete"` (required from 2026-07-28 on).
    #[must_use]
    pub fn complete(mut self) -> Self {
        self.result_type = Some(ResultType::Complete);
        self
    }

    /// Marks the result a tool execution error (`isError: true`).
    #[must_use]
    pub fn into_error(mut self) -> Self {
        self.is_error = Some(true);
        self
    }

    /// `isError`, defaulting to `false`.
    pub fn is_error(&self) -> bool {
        self.is_error.unwrap_or(false)
    }
}

impl CallToolResult {
    /// A result with the given content blocks.
    pub fn new(content: Vec<ContentBlock>) -> Self {
        Self::from_parts(content, None)
    }

    /// A successful result with one text block.
    pub fn text(text: impl Into<String>) -> Self {
        Self::new(vec![ContentBlock::text(text)])
    }

    /// A tool execution error (`isError: true`) with one text block.
    pub fn error_text(text: impl Into<String>) -> Self {
        Self::text(text).into_error()
    }

    /// A structured result. For clients that ignore `structuredContent`
    /// it also carries the serialized JSON as a text block, as the
    /// specification recommends.
    pub fn structured(value: Value) -> Self {
        let text = value.to_string();
        Self::from_parts(vec![ContentBlock::text(text)], Some(value))
    }
}

/// What `tools/call` can return from 2026-07-28 on: the final result, or an
/// interim request for more input. Told apart by `resultType`; an absent
/// `resultType` (older servers) means complete.
#[derive(Debug, Clone, PartialEq)]
pub enum CallToolOutcome {
    /// The final result.
    Complete(CallToolResult),
    /// More input is needed; retry with `inputResponses`.
    InputRequired(InputRequiredResult),
}

impl Serialize for CallToolOutcome {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Complete(result) => result.serialize(serializer),
            Self::InputRequired(result) => result.serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for CallToolOutcome {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        let outcome = match value.get("resultType").and_then(Value::as_str) {
            Some("input_required") => {
                InputRequiredResult::deserialize(value).map(Self::InputRequired)
            }
            None | Some("complete") => CallToolResult::deserialize(value).map(Self::Complete),
            Some(other) => {
                return Err(D::Error::custom(format!(
                    "unrecognised resultType {other:?}"
                )));
            }
        };
        outcome.map_err(D::Error::custom)
    }
}
