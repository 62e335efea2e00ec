//! Establishing what both sides speak: the legacy `initialize` handshake
//! (2025-11-25 and earlier), `server/discover` (2026-07-28) and `ping`.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::capabilities::{ClientCapabilities, ServerCapabilities};
use crate::meta::Meta;
use crate::result::{CacheScope, ResultType, ttl_from_ms};
use crate::tools::Icon;
use crate::version::{ProtocolVersion, highest_common_version};

/// Name and version of a client or server implementation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Implementation {
    /// Programmatic name.
    pub name: String,
    /// Display name (2025-06-18 on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Version of the implementation.
    pub version: String,
    /// What the implementation does (2025-11-25 on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Icons (2025-11-25 on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// Website (2025-11-25 on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub website_url: Option<String>,
}

impl Implementation {
    /// An implementation with just a name and a version.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            title: None,
            version: version.into(),
            description: None,
            icons: None,
            website_url: None,
        }
    }
}

/// Params of `initialize` (legacy revisions).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct InitializeParams {
    /// The version the client wants, verbatim (may be unknown to us).
    pub protocol_version: String,
    /// What the client supports.
    pub capabilities: ClientCapabilities,
    /// Who the client is.
    pub client_info: Implementation,
    /// Optional metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl InitializeParams {
    /// An `initialize` asking for `protocol_version`.
    pub fn new(
        protocol_version: impl Into<String>,
        capabilities: ClientCapabilities,
        client_info: Implementation,
    ) -> Self {
        Self {
            protocol_version: protocol_version.into(),
            capabilities,
            client_info,
            meta: None,
        }
    }
}

/// Result of `initialize` (legacy revisions).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct InitializeResult {
    /// The version the server chose (see
    /// [`crate::version::negotiate_initialize_version`]).
    pub protocol_version: String,
    /// What the server supports.
    pub capabilities: ServerCapabilities,
    /// Who the server is.
    pub server_info: Implementation,
    /// Guidance for the model on using this server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// Optional metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl InitializeResult {
    /// A result for the negotiated `version`.
    pub fn new(
        version: ProtocolVersion,
        capabilities: ServerCapabilities,
        server_info: Implementation,
    ) -> Self {
        Self {
            protocol_version: version.as_str().to_owned(),
            capabilities,
            server_info,
            instructions: None,
            meta: None,
        }
    }
}

/// Params that are only `_meta`: `server/discover`, `ping`, and any request
/// without parameters of its own.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct RequestParams {
    /// Request metadata (in 2026-07-28: protocol version, client
    /// capabilities, client info).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// Params of `server/discover` (2026-07-28).
pub type DiscoverParams = RequestParams;

/// Result of `server/discover` (2026-07-28).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct DiscoverResult {
    /// `resultType` (required).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// Protocol versions the server supports, verbatim.
    pub supported_versions: Vec<String>,
    /// What the server supports.
    pub capabilities: ServerCapabilities,
    /// Guidance for the model on using this server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// Freshness hint in milliseconds (required).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_ms: Option<i64>,
    /// Who may cache this result (required).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_scope: Option<CacheScope>,
    /// Metadata; servers should put `io.modelcontextprotocol/serverInfo`
    /// here.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl DiscoverResult {
    /// A complete result advertising `versions` and `capabilities`, with
    /// the required caching hints.
    pub fn new(
        versions: &[ProtocolVersion],
        capabilities: ServerCapabilities,
        ttl: Duration,
        scope: CacheScope,
    ) -> Self {
        Self {
            result_type: Some(ResultType::Complete),
            supported_versions: versions
                .iter()
                .map(|version| version.as_str().to_owned())
                .collect(),
            capabilities,
            instructions: None,
            ttl_ms: Some(i64::try_from(ttl.as_millis()).unwrap_or(i64::MAX)),
            cache_scope: Some(scope),
            meta: None,
        }
    }

    /// The newest version both this server and a client supporting
    /// `client_supported` speak.
    pub fn select_version(&self, client_supported: &[ProtocolVersion]) -> Option<ProtocolVersion> {
        highest_common_version(&self.supported_versions, client_supported)
    }

    /// How long the result stays fresh.
    pub fn ttl(&self) -> Duration {
        ttl_from_ms(self.ttl_ms)
    }
}
