//! JSON-RPC error objects and the error codes JSON-RPC 2.0 and MCP define.

use std::fmt;

use crate::text::excerpt;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::capabilities::ClientCapabilities;
use crate::serde_util::deserialize_present;

/// Error codes defined by JSON-RPC 2.0 and by MCP.
pub mod error_code {
    /// Invalid JSON was received (JSON-RPC 2.0).
    pub const PARSE_ERROR: i64 = -32700;
    /// The JSON sent is not a valid request object (JSON-RPC 2.0).
    pub const INVALID_REQUEST: i64 = -32600;
    /// The method does not exist or is not available (JSON-RPC 2.0).
    pub const METHOD_NOT_FOUND: i64 = -32601;
    /// Invalid method parameters (JSON-RPC 2.0). MCP also uses it for
    /// unknown tools, bad cursors, missing per-request `_meta` fields and,
    /// from 2026-07-28 on, unknown resources.
    pub const INVALID_PARAMS: i64 = -32602;
    /// Internal JSON-RPC error (JSON-RPC 2.0).
    pub const INTERNAL_ERROR: i64 = -32603;

    /// Lowest code of the range MCP 2026-07-28 reserves for itself.
    pub const MCP_RESERVED_MIN: i64 = -32099;
    /// Highest code of the range MCP 2026-07-28 reserves for itself.
    pub const MCP_RESERVED_MAX: i64 = -32020;

    /// An HTTP header does not match the request body (MCP 2026-07-28).
    pub const HEADER_MISMATCH: i64 = -32020;
    /// The request needs a client capability the client did not declare in
    /// `_meta` (MCP 2026-07-28).
    pub const MISSING_REQUIRED_CLIENT_CAPABILITY: i64 = -32021;
    /// The server does not support the requested protocol version
    /// (MCP 2026-07-28).
    pub const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;

    /// Resource not found, MCP 2025-11-25 and earlier. Reserved from
    /// 2026-07-28 on (replaced by [`INVALID_PARAMS`]); clients should still
    /// accept it from older servers.
    pub const LEGACY_RESOURCE_NOT_FOUND: i64 = -32002;
    /// URL elicitation required, MCP 2025-11-25 only. Reserved from
    /// 2026-07-28 on.
    pub const LEGACY_URL_ELICITATION_REQUIRED: i64 = -32042;
}

/// The `error` member of a JSON-RPC error response.
///
/// Also usable as a Rust error: it implements [`std::error::Error`] and
/// displays as `message (code N)`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorObject {
    /// The error code (see [`error_code`]).
    pub code: i64,
    /// A short, single-sentence description.
    pub message: String,
    /// Optional extra information. An explicit `null` is kept as
    /// `Some(Value::Null)`.
    #[serde(
        default,
        deserialize_with = "deserialize_present",
        skip_serializing_if = "Option::is_none"
    )]
    pub data: Option<Value>,
}

/// Most characters of a detail in an error message.
const MAX_DETAIL_CHARS: usize = 300;
/// Most characters of a name (method, tool) in an error message.
const MAX_NAME_CHARS: usize = 100;

impl ErrorObject {
    /// An error with the given code and message and no data.
    pub fn new(code: i64, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            data: None,
        }
    }

    /// Replaces the `data` member.
    #[must_use]
    pub fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }

    /// `-32700`: the input was not valid JSON.
    pub fn parse_error(message: impl Into<String>) -> Self {
        Self::new(error_code::PARSE_ERROR, message)
    }

    /// `-32600`: valid JSON, but not a valid JSON-RPC message. The message
    /// reads `Invalid Request: {detail}` (the detail cut to a few hundred
    /// characters, so that no caller input is echoed back in full).
    pub fn invalid_request(detail: impl std::fmt::Display) -> Self {
        Self::new(
            error_code::INVALID_REQUEST,
            format!(
                "Invalid Request: {}",
                excerpt(&detail.to_string(), MAX_DETAIL_CHARS)
            ),
        )
    }

    /// `-32601`: the method is unknown; the message names it (cut short
    /// when long).
    pub fn method_not_found(method: &str) -> Self {
        Self::new(
            error_code::METHOD_NOT_FOUND,
            format!("Method not found: {}", excerpt(method, MAX_NAME_CHARS)),
        )
    }

    /// `-32602`: the parameters are invalid. The message reads
    /// `Invalid params: {detail}` (the detail cut short when long).
    pub fn invalid_params(detail: impl std::fmt::Display) -> Self {
        Self::new(
            error_code::INVALID_PARAMS,
            format!(
                "Invalid params: {}",
                excerpt(&detail.to_string(), MAX_DETAIL_CHARS)
            ),
        )
    }

    /// `-32603` with a message reading `Server busy: {detail}`: the server
    /// is at a capacity bound (too many sessions, subscriptions over all
    /// peers); the request was fine and a later one may succeed. Not
    /// `-32000`: MCP 2026-07-28 asks new implementations not to use
    /// `-32000` to `-32019`, and the TypeScript SDK 1.x reads `-32000` as
    /// its connection closed.
    pub fn server_busy(detail: impl std::fmt::Display) -> Self {
        Self::new(
            error_code::INTERNAL_ERROR,
            format!(
                "Server busy: {}",
                excerpt(&detail.to_string(), MAX_DETAIL_CHARS)
            ),
        )
    }

    /// `-32603`: an internal error.
    pub fn internal_error(message: impl Into<String>) -> Self {
        Self::new(error_code::INTERNAL_ERROR, message)
    }

    /// `-32020`: an HTTP header does not match the body (2026-07-28). The
    /// message reads `Header mismatch: {detail}`.
    pub fn header_mismatch(detail: impl std::fmt::Display) -> Self {
        Self::new(
            error_code::HEADER_MISMATCH,
            format!(
                "Header mismatch: {}",
                excerpt(&detail.to_string(), MAX_DETAIL_CHARS)
            ),
        )
    }

    /// `-32021` with `data.requiredCapabilities` (2026-07-28).
    pub fn missing_required_client_capability(
        message: impl Into<String>,
        required: &ClientCapabilities,
    ) -> Self {
        let data = MissingRequiredClientCapabilityData {
            required_capabilities: required.clone(),
        };
        Self::new(error_code::MISSING_REQUIRED_CLIENT_CAPABILITY, message)
            .with_data(to_value(&data))
    }

    /// `-32042` with `data.elicitations` (2025-11-25 only): the request
    /// can go on once the user has completed these URL-mode elicitations.
    pub fn url_elicitation_required(
        message: impl Into<String>,
        elicitations: Vec<crate::asks::ElicitParams>,
    ) -> Self {
        let data = crate::asks::UrlElicitationRequiredData::new(elicitations);
        Self::new(error_code::LEGACY_URL_ELICITATION_REQUIRED, message).with_data(to_value(&data))
    }

    /// The typed `data` of a `URLElicitationRequiredError`, if this is one
    /// (code `-32042` with well-formed data, every elicitation in URL mode
    /// with an `elicitationId`).
    pub fn url_elicitation_required_data(&self) -> Option<crate::asks::UrlElicitationRequiredData> {
        if self.code != error_code::LEGACY_URL_ELICITATION_REQUIRED {
            return None;
        }
        let data =
            crate::asks::UrlElicitationRequiredData::deserialize(self.data.as_ref()?).ok()?;
        data.elicitations
            .iter()
            .all(|elicitation| {
                elicitation.is_url()
                    && elicitation.elicitation_id.is_some()
                    && elicitation.url.is_some()
            })
            .then_some(data)
    }

    /// `-32022` with `data.supported` and `data.requested` (2026-07-28).
    ///
    /// The message is `"Unsupported protocol version"`, as in the
    /// specification's example.
    pub fn unsupported_protocol_version<S: AsRef<str>>(requested: &str, supported: &[S]) -> Self {
        let data = UnsupportedProtocolVersionData {
            supported: supported
                .iter()
                .map(|version| version.as_ref().to_owned())
                .collect(),
            requested: requested.to_owned(),
        };
        Self::new(
            error_code::UNSUPPORTED_PROTOCOL_VERSION,
            "Unsupported protocol version",
        )
        .with_data(to_value(&data))
    }

    /// The typed `data` of an `UnsupportedProtocolVersionError`, if this is
    /// one (code `-32022` with well-formed data).
    pub fn unsupported_protocol_version_data(&self) -> Option<UnsupportedProtocolVersionData> {
        if self.code != error_code::UNSUPPORTED_PROTOCOL_VERSION {
            return None;
        }
        UnsupportedProtocolVersionData::deserialize(self.data.as_ref()?).ok()
    }

    /// The typed `data` of a `MissingRequiredClientCapabilityError`, if this
    /// is one (code `-32021` with well-formed data).
    pub fn missing_required_client_capability_data(
        &self,
    ) -> Option<MissingRequiredClientCapabilityData> {
        if self.code != error_code::MISSING_REQUIRED_CLIENT_CAPABILITY {
            return None;
        }
        MissingRequiredClientCapabilityData::deserialize(self.data.as_ref()?).ok()
    }

    /// Whether the code is one MCP 2026-07-28 defines in its reserved range
    /// (`-32020..=-32022`): receiving one identifies a modern server.
    pub fn is_modern_mcp_error(&self) -> bool {
        matches!(
            self.code,
            error_code::HEADER_MISMATCH
                | error_code::MISSING_REQUIRED_CLIENT_CAPABILITY
                | error_code::UNSUPPORTED_PROTOCOL_VERSION
        )
    }
}

impl fmt::Display for ErrorObject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (code {})", self.message, self.code)
    }
}

impl std::error::Error for ErrorObject {}

/// `data` of an `UnsupportedProtocolVersionError` (`-32022`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UnsupportedProtocolVersionData {
    /// Protocol versions the server supports.
    pub supported: Vec<String>,
    /// The version the client asked for.
    pub requested: String,
}

/// `data` of a `MissingRequiredClientCapabilityError` (`-32021`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MissingRequiredClientCapabilityData {
    /// The capabilities the request needs but the client did not declare.
    #[serde(rename = "requiredCapabilities")]
    pub required_capabilities: ClientCapabilities,
}

/// Serializes plain data structs that cannot fail (string keys, no custom
/// serializers that error); falls back to `null` rather than panicking.
fn to_value<T: Serialize>(data: &T) -> Value {
    serde_json::to_value(data).unwrap_or(Value::Null)
}
