//! MCP protocol revisions and version negotiation.
//!
//! Two eras exist. *Legacy* revisions (2025-11-25 and earlier) agree on a
//! version once, in the `initialize` handshake. *Modern* revisions
//! (2026-07-28 on) are stateless: every request names its version in
//! `_meta`, and the server accepts it or answers
//! `UnsupportedProtocolVersionError` (`-32022`).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::error::ErrorObject;

/// A revision of the Model Context Protocol. Ordered by release date.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ProtocolVersion {
    /// `2024-11-05`, the first revision.
    V2024_11_05,
    /// `2025-03-26`: tool annotations, audio content, JSON-RPC batching.
    V2025_03_26,
    /// `2025-06-18`: structured tool output, resource links, titles; no
    /// batching.
    V2025_06_18,
    /// `2025-11-25`: icons, tool `execution` (experimental tasks).
    V2025_11_25,
    /// `2026-07-28`: stateless (no `initialize`), `server/discover`,
    /// `resultType`, caching hints, any JSON as `structuredContent`.
    V2026_07_28,
}

impl ProtocolVersion {
    /// Every known revision, oldest first.
    pub const ALL: [Self; 5] = [
        Self::V2024_11_05,
        Self::V2025_03_26,
        Self::V2025_06_18,
        Self::V2025_11_25,
        Self::V2026_07_28,
    ];

    /// The newest known revision.
    pub const fn latest() -> Self {
        Self::V2026_07_28
    }

    /// The wire spelling, e.g. `"2025-06-18"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::V2024_11_05 => "2024-11-05",
            Self::V2025_03_26 => "2025-03-26",
            Self::V2025_06_18 => "2025-06-18",
            Self::V2025_11_25 => "2025-11-25",
            Self::V2026_07_28 => "2026-07-28",
        }
    }

    /// The revision spelled `text`, if known.
    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|version| version.as_str() == text)
    }

    /// Tools may declare `outputSchema` and return `structuredContent`
    /// (2025-06-18 on).
    pub fn supports_structured_output(self) -> bool {
        self >= Self::V2025_06_18
    }

    /// No `initialize` handshake: version and client capabilities travel in
    /// every request's `_meta` (2026-07-28 on).
    pub fn is_stateless(self) -> bool {
        self >= Self::V2026_07_28
    }

    /// The version is agreed in an `initialize` handshake (2025-11-25 and
    /// earlier); the opposite of [`is_stateless`](Self::is_stateless).
    pub fn uses_initialize_handshake(self) -> bool {
        !self.is_stateless()
    }

    /// `structuredContent` may be any JSON value and schemas any JSON Schema
    /// 2020-12 (2026-07-28 on, SEP-2106); before, it had to be an object.
    pub fn allows_any_structured_content(self) -> bool {
        self >= Self::V2026_07_28
    }

    /// `Tool` has the `execution` field (`taskSupport`): 2025-11-25 only;
    /// 2026-07-28 moved tasks to the `io.modelcontextprotocol/tasks`
    /// extension.
    pub fn has_tool_execution_field(self) -> bool {
        self == Self::V2025_11_25
    }

    /// Content may be audio (`"type": "audio"`, 2025-03-26 on).
    pub fn has_audio_content(self) -> bool {
        self >= Self::V2025_03_26
    }

    /// Content may link to a resource (`"type": "resource_link"`,
    /// 2025-06-18 on).
    pub fn has_resource_links(self) -> bool {
        self >= Self::V2025_06_18
    }

    /// Tools may carry `annotations` (2025-03-26 on).
    pub fn has_tool_annotations(self) -> bool {
        self >= Self::V2025_03_26
    }

    /// Tools and implementations may carry `icons` (2025-11-25 on).
    pub fn has_icons(self) -> bool {
        self >= Self::V2025_11_25
    }

    /// The server may ask the client to fill in a form
    /// (`elicitation/create`, 2025-06-18 on).
    pub fn has_elicitation(self) -> bool {
        self >= Self::V2025_06_18
    }

    /// A form may have titled and multi-select enum fields (2025-11-25 on).
    pub fn has_rich_forms(self) -> bool {
        self >= Self::V2025_11_25
    }

    /// A sampling request may offer tools, and its messages hold several
    /// blocks, tool uses and tool results (2025-11-25 on).
    pub fn has_rich_sampling(self) -> bool {
        self >= Self::V2025_11_25
    }

    /// Each top-level property of a tool's schemas must be an object
    /// schema (`schema.json` before 2026-07-28), not `true` or `false`.
    pub fn wants_object_property_schemas(self) -> bool {
        self < Self::V2026_07_28
    }

    /// Elicitation has a URL mode (2025-11-25 on).
    pub fn has_url_elicitation(self) -> bool {
        self >= Self::V2025_11_25
    }

    /// A URL-mode elicitation has an id, whose completion the server may
    /// announce (`notifications/elicitation/complete`), and a request may
    /// be refused until one is done (`-32042`): 2025-11-25 only (2026-07-28
    /// has the client retry instead).
    pub fn has_url_elicitation_completion(self) -> bool {
        self == Self::V2025_11_25
    }

    /// JSON-RPC batches (arrays of messages) are allowed: 2025-03-26 only.
    pub fn allows_batches(self) -> bool {
        self == Self::V2025_03_26
    }

    /// Results carry `resultType`, list results carry `ttlMs` and
    /// `cacheScope` (2026-07-28 on).
    pub fn has_result_type(self) -> bool {
        self >= Self::V2026_07_28
    }

    /// Servers must implement `server/discover` (2026-07-28 on).
    pub fn has_server_discover(self) -> bool {
        self >= Self::V2026_07_28
    }

    /// Whether a client on this revision may send the request `method`
    /// (of those this crate knows): 2026-07-28 has `server/discover` and
    /// `subscriptions/listen` and no longer `initialize`, `ping`,
    /// `logging/setLevel` or resource subscriptions.
    pub fn has_request(self, method: &str) -> bool {
        use crate::methods::{
            COMPLETION_COMPLETE, PROMPTS_GET, PROMPTS_LIST, RESOURCES_LIST, RESOURCES_READ,
            RESOURCES_TEMPLATES_LIST, SERVER_DISCOVER, SUBSCRIPTIONS_LISTEN, TOOLS_CALL,
            TOOLS_LIST,
        };
        if self.is_stateless() {
            [
                SERVER_DISCOVER,
                TOOLS_LIST,
                TOOLS_CALL,
                SUBSCRIPTIONS_LISTEN,
                RESOURCES_LIST,
                RESOURCES_TEMPLATES_LIST,
                RESOURCES_READ,
                PROMPTS_LIST,
                PROMPTS_GET,
                COMPLETION_COMPLETE,
            ]
            .contains(&method)
        } else {
            // `server/discover` is answered on every revision: it is how a
            // client finds out which it may speak.
            method != SUBSCRIPTIONS_LISTEN
        }
    }

    /// `ping` exists (removed in 2026-07-28).
    pub fn has_ping(self) -> bool {
        self < Self::V2026_07_28
    }
}

impl fmt::Display for ProtocolVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A string that names no known protocol revision.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown MCP protocol version {0:?}")]
pub struct UnknownProtocolVersion(pub String);

impl FromStr for ProtocolVersion {
    type Err = UnknownProtocolVersion;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Self::parse(text).ok_or_else(|| UnknownProtocolVersion(text.to_owned()))
    }
}

impl Serialize for ProtocolVersion {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for ProtocolVersion {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

/// The server cannot serve the protocol version the client asked for.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unsupported protocol version {requested:?} (supported: {})",
    list(supported)
)]
pub struct UnsupportedProtocolVersion {
    /// The version the client asked for, verbatim.
    pub requested: String,
    /// The versions the server supports.
    pub supported: Vec<ProtocolVersion>,
}

fn list(versions: &[ProtocolVersion]) -> String {
    versions
        .iter()
        .map(|version| version.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

impl UnsupportedProtocolVersion {
    /// The `-32022 Unsupported protocol version` error, listing the
    /// supported versions newest first.
    pub fn to_error_object(&self) -> ErrorObject {
        let mut supported: Vec<&str> = self
            .supported
            .iter()
            .map(|version| version.as_str())
            .collect();
        supported.sort_unstable_by(|a, b| b.cmp(a));
        supported.dedup();
        ErrorObject::unsupported_protocol_version(&self.requested, &supported)
    }
}

/// The version a server answers an `initialize` request with
/// (legacy revisions, lifecycle "Version Negotiation").
///
/// If the server supports `requested`, it must answer with it; otherwise it
/// answers with the latest version it supports. Only revisions that have an
/// `initialize` handshake qualify (2026-07-28 has none). `Err` means the
/// server supports no handshake revision at all: it should reject the
/// request, naming the versions it supports
/// ([`UnsupportedProtocolVersion::to_error_object`]).
pub fn negotiate_initialize_version(
    requested: &str,
    server_supported: &[ProtocolVersion],
) -> Result<ProtocolVersion, UnsupportedProtocolVersion> {
    let handshake_versions = || {
        server_supported
            .iter()
            .copied()
            .filter(|version| version.uses_initialize_handshake())
    };
    handshake_versions()
        .find(|version| version.as_str() == requested)
        .or_else(|| handshake_versions().max())
        .ok_or_else(|| UnsupportedProtocolVersion {
            requested: requested.to_owned(),
            supported: server_supported.to_vec(),
        })
}

/// Checks the `io.modelcontextprotocol/protocolVersion` of a modern
/// (per-request) request: there is no fallback, the version must be one the
/// server supports, else the answer is `UnsupportedProtocolVersionError`.
pub fn check_request_version(
    requested: &str,
    server_supported: &[ProtocolVersion],
) -> Result<ProtocolVersion, UnsupportedProtocolVersion> {
    server_supported
        .iter()
        .copied()
        .find(|version| version.as_str() == requested)
        .ok_or_else(|| UnsupportedProtocolVersion {
            requested: requested.to_owned(),
            supported: server_supported.to_vec(),
        })
}

/// The newest version both sides support, for a client choosing from a
/// server's `supportedVersions` (from `server/discover` or an
/// `UnsupportedProtocolVersionError`). Unknown strings are skipped.
pub fn highest_common_version<S: AsRef<str>>(
    server_supported: &[S],
    client_supported: &[ProtocolVersion],
) -> Option<ProtocolVersion> {
    server_supported
        .iter()
        .filter_map(|text| ProtocolVersion::parse(text.as_ref()))
        .filter(|version| client_supported.contains(version))
        .max()
}
