//! CallToolResponse and the error bodies (400, 422), written by the server
//! and read, checked field by field, by the client.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::{Map, Value};

/// `error` of a failed call: what the tool (or the server, for it) says.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ToolCallError {
    /// A message for the user or the model.
    pub message: String,
    /// Details for developers' logs; never shown to a user or a model.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub developer_message: Option<String>,
    /// Whether the call may be retried (absent means no).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub can_retry: bool,
    /// Extra content for the prompt of a retry.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub additional_prompt_content: Option<String>,
    /// How long to wait before retrying, in milliseconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retry_after_ms: Option<u64>,
}

/// What a call produced: a value, nothing (a tool with no output), or an error.
#[derive(Debug, Clone, PartialEq)]
pub enum CallOutput {
    /// `success: true` and a `value` (which may be `null`).
    Value(Value),
    /// `success: true` and no `value`.
    Nothing,
    /// `success: false` and an `error`.
    Error(ToolCallError),
}

/// A CallToolResponse.
#[derive(Debug, Clone, PartialEq)]
pub struct CallToolResponse {
    /// The request's `call_id`, or the one the server generated.
    pub call_id: String,
    /// How long the call took, in milliseconds.
    pub duration: Option<f64>,
    /// What it produced.
    pub output: CallOutput,
}

#[derive(Serialize)]
struct Wire<'a> {
    call_id: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    duration: Option<f64>,
    success: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    value: Option<&'a Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<&'a ToolCallError>,
}

/// Why a response body is not a valid CallToolResponse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid CallToolResponse: {0}")]
pub struct InvalidResponse(pub String);

fn bad(what: impl Into<String>) -> InvalidResponse {
    InvalidResponse(what.into())
}

impl CallToolResponse {
    /// Whether the call succeeded.
    pub fn success(&self) -> bool {
        !matches!(self.output, CallOutput::Error(_))
    }

    /// The value, when the call succeeded with one.
    pub fn value(&self) -> Option<&Value> {
        match &self.output {
            CallOutput::Value(value) => Some(value),
            _ => None,
        }
    }

    /// The error, when the call failed.
    pub fn error(&self) -> Option<&ToolCallError> {
        match &self.output {
            CallOutput::Error(error) => Some(error),
            _ => None,
        }
    }

    fn wire(&self) -> Wire<'_> {
        Wire {
            call_id: &self.call_id,
            duration: self.duration,
            success: self.success(),
            value: self.value(),
            error: self.error(),
        }
    }

    /// The response as JSON.
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self.wire()).unwrap_or(Value::Null)
    }

    /// The response serialized, bare or in `{"$schema"?, "result"}`.
    pub fn to_body(&self, envelope: bool, schema: Option<&str>) -> Vec<u8> {
        #[derive(Serialize)]
        struct Enveloped<'a> {
            #[serde(rename = "$schema", skip_serializing_if = "Option::is_none")]
            schema: Option<&'a str>,
            result: Wire<'a>,
        }
        let written = if envelope {
            serde_json::to_vec(&Enveloped {
                schema,
                result: self.wire(),
            })
        } else {
            serde_json::to_vec(&self.wire())
        };
        written.unwrap_or_default()
    }

    /// Reads a response (bare, or the `result` of an envelope), checking every
    /// field: `call_id` a string, `success` a boolean that agrees with
    /// `value`/`error`, `duration` a non-negative number, `error` well formed.
    pub fn from_json(body: &Value) -> Result<CallToolResponse, InvalidResponse> {
        let object = match body.get("result") {
            Some(Value::Object(result)) => result,
            Some(_) => return Err(bad("result is not an object")),
            None => body.as_object().ok_or_else(|| bad("not an object"))?,
        };
        let call_id = object
            .get("call_id")
            .and_then(Value::as_str)
            .ok_or_else(|| bad("call_id is missing or not a string"))?
            .to_owned();
        let success = object
            .get("success")
            .and_then(Value::as_bool)
            .ok_or_else(|| bad("success is missing or not a boolean"))?;
        let duration = match object.get("duration") {
            None => None,
            Some(Value::Number(n)) => match n.as_f64() {
                Some(ms) if ms >= 0.0 => Some(ms),
                _ => return Err(bad("duration is negative")),
            },
            Some(_) => return Err(bad("duration is not a number")),
        };
        let output = match (success, object.get("value"), object.get("error")) {
            (true, _, Some(_)) => return Err(bad("success is true but an error is present")),
            (true, Some(value), None) => CallOutput::Value(value.clone()),
            (true, None, None) => CallOutput::Nothing,
            (false, Some(_), _) => return Err(bad("success is false but a value is present")),
            (false, None, None) => return Err(bad("success is false but no error is present")),
            (false, None, Some(error)) => CallOutput::Error(read_error(error)?),
        };
        Ok(CallToolResponse {
            call_id,
            duration,
            output,
        })
    }
}

fn optional_string(
    object: &Map<String, Value>,
    key: &str,
) -> Result<Option<String>, InvalidResponse> {
    match object.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(text)) => Ok(Some(text.clone())),
        Some(_) => Err(bad(format!("error.{key} is not a string"))),
    }
}

fn read_error(error: &Value) -> Result<ToolCallError, InvalidResponse> {
    let object = error
        .as_object()
        .ok_or_else(|| bad("error is not an object"))?;
    let message = object
        .get("message")
        .and_then(Value::as_str)
        .ok_or_else(|| bad("error.message is missing or not a string"))?
        .to_owned();
    let can_retry = match object.get("can_retry") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(can_retry)) => *can_retry,
        Some(_) => return Err(bad("error.can_retry is not a boolean")),
    };
    let retry_after_ms = match object.get("retry_after_ms") {
        None | Some(Value::Null) => None,
        Some(Value::Number(n)) => Some(
            n.as_u64()
                .or_else(|| n.as_f64().filter(|ms| *ms >= 0.0).map(|ms| ms as u64))
                .ok_or_else(|| bad("error.retry_after_ms is negative"))?,
        ),
        Some(_) => return Err(bad("error.retry_after_ms is not a number")),
    };
    Ok(ToolCallError {
        message,
        developer_message: optional_string(object, "developer_message")?,
        can_retry,
        additional_prompt_content: optional_string(object, "additional_prompt_content")?,
        retry_after_ms,
    })
}

/// What the server lists as missing when a call lacks what its tool requires.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct MissingRequirementsBody {
    /// Authorization challenges `{id, url}`: the providers whose token is
    /// missing and whose URL the server knows (`OtcOptions::authorization_urls`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub authorization: Vec<Value>,
    /// Secrets missing, as `{id}`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub secrets: Vec<Value>,
    /// Whether the user id is missing.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub user_id: bool,
}

/// The body of a 400 (and of 401, 403, 409, 413, 503).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ServerErrorBody {
    /// What went wrong.
    pub message: String,
    /// Details for developers' logs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub developer_message: Option<String>,
    /// What the call lacks of its tool's requirements.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub missing_requirements: Option<MissingRequirementsBody>,
}

/// The body of a 422: the input does not match the tool's `input_schema`.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ValidationErrorBody {
    /// What went wrong.
    pub message: String,
    /// Each parameter and what is wrong with it.
    pub parameter_errors: BTreeMap<String, String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn responses_round_trip_and_keep_a_null_value_apart_from_none() -> Result<(), InvalidResponse> {
        for output in [
            CallOutput::Value(json!(15)),
            CallOutput::Value(Value::Null),
            CallOutput::Nothing,
            CallOutput::Error(ToolCallError {
                message: "m".into(),
                can_retry: true,
                retry_after_ms: Some(5),
                ..ToolCallError::default()
            }),
        ] {
            let response = CallToolResponse {
                call_id: "c".into(),
                duration: Some(1.5),
                output,
            };
            let body: Value = serde_json::from_slice(&response.to_body(true, Some("urn:oxp:1.0")))
                .unwrap_or_default();
            assert_eq!(CallToolResponse::from_json(&body)?, response);
        }
        let nothing = CallToolResponse {
            call_id: "c".into(),
            duration: None,
            output: CallOutput::Nothing,
        };
        assert_eq!(nothing.to_json(), json!({"call_id": "c", "success": true}));
        Ok(())
    }

    #[test]
    fn inconsistent_responses_are_refused() {
        for body in [
            json!({"call_id": "c", "success": true, "error": {"message": "m"}}),
            json!({"call_id": "c", "success": false}),
            json!({"call_id": "c", "success": false, "value": 1, "error": {"message": "m"}}),
            json!({"call_id": 1, "success": true}),
            json!({"call_id": "c", "success": "yes"}),
            json!({"call_id": "c", "success": true, "duration": -1}),
            json!({"call_id": "c", "success": false, "error": {"message": "m", "can_retry": "no"}}),
            json!({"result": []}),
        ] {
            assert!(CallToolResponse::from_json(&body).is_err(), "{body}");
        }
    }
}
