//! `_meta`: reserved keys and the per-request protocol fields of
//! 2026-07-28.

use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

use crate::capabilities::ClientCapabilities;
use crate::error::ErrorObject;
use crate::jsonrpc::{ProgressToken, Request};
use crate::lifecycle::Implementation;
use crate::notifications::LoggingLevel;
use crate::version::ProtocolVersion;

/// The contents of a `_meta` field: a JSON object with
/// reverse-DNS-prefixed keys (see [`keys`]).
pub type Meta = serde_json::Map<String, Value>;

/// Reserved `_meta` keys.
pub mod keys {
    /// Opts a request into progress notifications (all revisions).
    pub const PROGRESS_TOKEN: &str = "progressToken";
    /// Protocol version of a request (2026-07-28, required).
    pub const PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
    /// Client capabilities for a request (2026-07-28, required).
    pub const CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
    /// Client name and version (2026-07-28, recommended on every request).
    pub const CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
    /// Minimum log level for a request (2026-07-28, optional; without it the
    /// server must not send `notifications/message` for the request).
    pub const LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";
    /// Server name and version in a result (2026-07-28, recommended).
    pub const SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
    /// Ties a notification to its `subscriptions/listen` request
    /// (2026-07-28).
    pub const SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";
    /// Marks a `tools/call` result (and a tool definition) whose structured
    /// output is wrapped as `{"result": value}` for a revision that needs an
    /// object; its value names the property. toolshape's own key.
    pub const WRAPPED_OUTPUT: &str = "dev.toolshape/wrappedOutput";
    /// OpenTelemetry trace context.
    pub const TRACEPARENT: &str = "traceparent";
    /// OpenTelemetry trace state.
    pub const TRACESTATE: &str = "tracestate";
    /// W3C baggage.
    pub const BAGGAGE: &str = "baggage";
}

/// The protocol fields of a request's `params._meta`, typed.
///
/// Every field is optional here so the same reader serves legacy requests
/// (which have none of the `io.modelcontextprotocol/*` keys); use
/// [`RequestMeta::require_modern`] to enforce the 2026-07-28 rules.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[non_exhaustive]
pub struct RequestMeta {
    /// `io.modelcontextprotocol/protocolVersion`, verbatim.
    #[serde(rename = "io.modelcontextprotocol/protocolVersion", default)]
    pub protocol_version: Option<String>,
    /// `io.modelcontextprotocol/clientCapabilities`.
    #[serde(rename = "io.modelcontextprotocol/clientCapabilities", default)]
    pub client_capabilities: Option<ClientCapabilities>,
    /// `io.modelcontextprotocol/clientInfo`.
    #[serde(rename = "io.modelcontextprotocol/clientInfo", default)]
    pub client_info: Option<Implementation>,
    /// `io.modelcontextprotocol/logLevel`.
    #[serde(rename = "io.modelcontextprotocol/logLevel", default)]
    pub log_level: Option<LoggingLevel>,
    /// `progressToken`.
    #[serde(rename = "progressToken", default)]
    pub progress_token: Option<ProgressToken>,
}

/// The required per-request fields of a 2026-07-28 request.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ModernRequestMeta<'a> {
    /// The requested protocol version, verbatim (may be unknown to this
    /// crate: check it with [`crate::version::check_request_version`]).
    pub protocol_version: &'a str,
    /// The client's capabilities for this request.
    pub client_capabilities: &'a ClientCapabilities,
}

/// A request's `_meta` is malformed or lacks a required field. Every case
/// is answered with `-32602 Invalid params` ([`MetaError::to_error_object`]).
#[derive(Debug, thiserror::Error)]
pub enum MetaError {
    /// `params._meta` (or a known key in it) does not have the expected
    /// shape.
    #[error("malformed `_meta`: {0}")]
    Malformed(#[source] serde_json::Error),
    /// `io.modelcontextprotocol/protocolVersion` is missing.
    #[error("`_meta` lacks the required `io.modelcontextprotocol/protocolVersion`")]
    MissingProtocolVersion,
    /// `io.modelcontextprotocol/clientCapabilities` is missing.
    #[error("`_meta` lacks the required `io.modelcontextprotocol/clientCapabilities`")]
    MissingClientCapabilities,
}

impl MetaError {
    /// The `-32602 Invalid params` error to send back.
    pub fn to_error_object(&self) -> ErrorObject {
        ErrorObject::invalid_params(self)
    }
}

#[derive(Deserialize)]
struct ParamsWithMeta {
    #[serde(rename = "_meta", default)]
    meta: Option<RequestMeta>,
}

impl RequestMeta {
    /// Reads `_meta` out of raw request params, skipping everything else
    /// (absent params or `_meta` give an empty `RequestMeta`).
    pub fn from_params(params: Option<&RawValue>) -> Result<Self, MetaError> {
        let Some(params) = params else {
            return Ok(Self::default());
        };
        let parsed: ParamsWithMeta =
            serde_json::from_str(params.get()).map_err(MetaError::Malformed)?;
        Ok(parsed.meta.unwrap_or_default())
    }

    /// Reads the protocol fields out of an already-parsed `_meta` map.
    pub fn from_meta(meta: &Meta) -> Result<Self, MetaError> {
        Self::deserialize(meta).map_err(MetaError::Malformed)
    }

    /// The 2026-07-28 required fields, or which one is missing.
    pub fn require_modern(&self) -> Result<ModernRequestMeta<'_>, MetaError> {
        let protocol_version = self
            .protocol_version
            .as_deref()
            .ok_or(MetaError::MissingProtocolVersion)?;
        let client_capabilities = self
            .client_capabilities
            .as_ref()
            .ok_or(MetaError::MissingClientCapabilities)?;
        Ok(ModernRequestMeta {
            protocol_version,
            client_capabilities,
        })
    }

    /// The requested protocol version, if present and known.
    pub fn known_protocol_version(&self) -> Option<ProtocolVersion> {
        self.protocol_version
            .as_deref()
            .and_then(ProtocolVersion::parse)
    }
}

impl Request {
    /// The protocol fields of this request's `params._meta`; see
    /// [`RequestMeta::from_params`].
    pub fn request_meta(&self) -> Result<RequestMeta, MetaError> {
        RequestMeta::from_params(self.params.as_deref())
    }
}
