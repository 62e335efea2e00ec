//! JSON-RPC 2.0 requests, notifications and responses.
//!
//! `params` and `result` are kept as raw JSON text ([`RawValue`]): routing a
//! message never re-walks its payload, and the handler deserializes it once,
//! straight into its typed parameter struct (see [`Request::parse_params`]).

use serde::ser::SerializeMap;
use serde::{Deserialize, Serialize, Serializer};
use serde_json::value::RawValue;

use super::id::RequestId;
use crate::error::ErrorObject;

/// The value of the `jsonrpc` member of every message.
pub const JSONRPC_VERSION: &str = "2.0";

/// A request: a message with an `id` that expects exactly one response.
#[derive(Debug, Clone)]
pub struct Request {
    /// The request id, echoed by the response.
    pub id: RequestId,
    /// The method name, e.g. `tools/call`.
    pub method: String,
    /// The parameters as raw JSON text (an object or an array), if present.
    pub params: Option<Box<RawValue>>,
}

/// A notification: a message without an `id`; it must not be answered.
#[derive(Debug, Clone)]
pub struct Notification {
    /// The method name, e.g. `notifications/cancelled`.
    pub method: String,
    /// The parameters as raw JSON text (an object or an array), if present.
    pub params: Option<Box<RawValue>>,
}

/// A response to a request: either a result or an error.
#[derive(Debug, Clone)]
pub enum Response {
    /// A successful response.
    Success {
        /// The id of the request this answers.
        id: RequestId,
        /// The result as raw JSON text.
        result: Box<RawValue>,
    },
    /// An error response.
    Error {
        /// The id of the request this answers; `None` when the request's id
        /// could not be determined (serialized without an `id`, as MCP's
        /// `schema.json` allows since 2025-11-25; it allows no `null`).
        id: Option<RequestId>,
        /// What went wrong.
        error: ErrorObject,
    },
}

/// Parameters (or a result) that do not match the expected type.
#[derive(Debug, thiserror::Error)]
#[error("invalid params: {source}")]
pub struct ParamsError {
    /// Why deserialization failed.
    #[source]
    pub source: serde_json::Error,
}

impl ParamsError {
    /// The `-32602 Invalid params` error to send back.
    pub fn to_error_object(&self) -> ErrorObject {
        ErrorObject::invalid_params(&self.source)
    }
}

/// Why [`Response::parse_result`] produced no result.
#[derive(Debug, thiserror::Error)]
pub enum ResultError {
    /// The peer answered with an error response.
    #[error("the peer returned an error: {0}")]
    Remote(ErrorObject),
    /// The result does not match the expected type.
    #[error("the result does not match the expected type: {0}")]
    Malformed(#[source] serde_json::Error),
}

/// Deserializes optional raw params; absent params read as `{}`, so structs
/// whose fields are all optional accept a message without `params`.
pub(crate) fn parse_raw_params<'a, T: Deserialize<'a>>(
    params: Option<&'a RawValue>,
) -> Result<T, ParamsError> {
    let text = params.map_or("{}", RawValue::get);
    serde_json::from_str(text).map_err(|source| ParamsError { source })
}

impl Request {
    /// A request whose params are `params` serialized to JSON.
    pub fn new<P: Serialize + ?Sized>(
        id: impl Into<RequestId>,
        method: impl Into<String>,
        params: &P,
    ) -> Result<Self, serde_json::Error> {
        Ok(Self {
            id: id.into(),
            method: method.into(),
            params: Some(serde_json::value::to_raw_value(params)?),
        })
    }

    /// A request without `params`.
    pub fn without_params(id: impl Into<RequestId>, method: impl Into<String>) -> Self {
        Self {
            id: id.into(),
            method: method.into(),
            params: None,
        }
    }

    /// Deserializes the params into `T` (absent params read as `{}`).
    /// `T` may borrow from the request.
    pub fn parse_params<'a, T: Deserialize<'a>>(&'a self) -> Result<T, ParamsError> {
        parse_raw_params(self.params.as_deref())
    }
}

impl Notification {
    /// A notification whose params are `params` serialized to JSON.
    pub fn new<P: Serialize + ?Sized>(
        method: impl Into<String>,
        params: &P,
    ) -> Result<Self, serde_json::Error> {
        Ok(Self {
            method: method.into(),
            params: Some(serde_json::value::to_raw_value(params)?),
        })
    }

    /// A notification without `params`.
    pub fn without_params(method: impl Into<String>) -> Self {
        Self {
            method: method.into(),
            params: None,
        }
    }

    /// Deserializes the params into `T` (absent params read as `{}`).
    pub fn parse_params<'a, T: Deserialize<'a>>(&'a self) -> Result<T, ParamsError> {
        parse_raw_params(self.params.as_deref())
    }
}

impl Response {
    /// A success response whose result is `result` serialized to JSON.
    pub fn success<R: Serialize + ?Sized>(
        id: RequestId,
        result: &R,
    ) -> Result<Self, serde_json::Error> {
        Ok(Self::Success {
            id,
            result: serde_json::value::to_raw_value(result)?,
        })
    }

    /// An error response.
    pub fn error(id: Option<RequestId>, error: ErrorObject) -> Self {
        Self::Error { id, error }
    }

    /// The id of the request this answers (`None` only for error responses
    /// to unreadable requests).
    pub fn id(&self) -> Option<&RequestId> {
        match self {
            Self::Success { id, .. } => Some(id),
            Self::Error { id, .. } => id.as_ref(),
        }
    }

    /// Whether this is an error response.
    pub fn is_error(&self) -> bool {
        matches!(self, Self::Error { .. })
    }

    /// Deserializes a success result into `R`; an error response becomes
    /// [`ResultError::Remote`].
    pub fn parse_result<'a, R: Deserialize<'a>>(&'a self) -> Result<R, ResultError> {
        match self {
            Self::Success { result, .. } => {
                serde_json::from_str(result.get()).map_err(ResultError::Malformed)
            }
            Self::Error { error, .. } => Err(ResultError::Remote(error.clone())),
        }
    }
}

impl Serialize for Request {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(if self.params.is_some() { 4 } else { 3 }))?;
        map.serialize_entry("jsonrpc", JSONRPC_VERSION)?;
        map.serialize_entry("id", &self.id)?;
        map.serialize_entry("method", &self.method)?;
        if let Some(params) = &self.params {
            map.serialize_entry("params", params)?;
        }
        map.end()
    }
}

impl Serialize for Notification {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(if self.params.is_some() { 3 } else { 2 }))?;
        map.serialize_entry("jsonrpc", JSONRPC_VERSION)?;
        map.serialize_entry("method", &self.method)?;
        if let Some(params) = &self.params {
            map.serialize_entry("params", params)?;
        }
        map.end()
    }
}

impl Serialize for Response {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(3))?;
        map.serialize_entry("jsonrpc", JSONRPC_VERSION)?;
        match self {
            Self::Success { id, result } => {
                map.serialize_entry("id", id)?;
                map.serialize_entry("result", result)?;
            }
            Self::Error { id, error } => {
                if let Some(id) = id {
                    map.serialize_entry("id", id)?;
                }
                map.serialize_entry("error", error)?;
            }
        }
        map.end()
    }
}
