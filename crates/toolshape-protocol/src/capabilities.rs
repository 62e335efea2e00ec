//! Client and server capabilities.
//!
//! Both are open sets ("any client/server can define its own, additional
//! capabilities"): capabilities this crate does not model are kept in
//! `other` and written back unchanged.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::version::ProtocolVersion;

/// A JSON object (capability settings, extension settings).
pub type JsonObject = serde_json::Map<String, Value>;

/// A capability whose only setting is `listChanged`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ListChangedCapability {
    /// Whether the list-changed notification is supported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list_changed: Option<bool>,
}

/// The `tools` server capability.
pub type ToolsCapability = ListChangedCapability;
/// The `prompts` server capability.
pub type PromptsCapability = ListChangedCapability;
/// The `roots` client capability (legacy revisions also had `listChanged`).
pub type RootsCapability = ListChangedCapability;

/// The `resources` server capability.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ResourcesCapability {
    /// Whether subscribing to resource updates is supported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subscribe: Option<bool>,
    /// Whether the list-changed notification is supported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list_changed: Option<bool>,
}

/// What a server supports.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ServerCapabilities {
    /// Present if the server offers tools.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<ToolsCapability>,
    /// Present if the server offers prompts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompts: Option<PromptsCapability>,
    /// Present if the server offers resources.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<ResourcesCapability>,
    /// Present if the server can send log messages.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logging: Option<JsonObject>,
    /// Present if the server offers argument completion.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completions: Option<JsonObject>,
    /// Task-augmented requests (2025-11-25 only; an extension afterwards).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tasks: Option<JsonObject>,
    /// Extensions by identifier, e.g. `io.modelcontextprotocol/tasks`
    /// (2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extensions: Option<serde_json::Map<String, Value>>,
    /// Experimental, non-standard capabilities.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub experimental: Option<serde_json::Map<String, Value>>,
    /// Capabilities this crate does not model, kept verbatim.
    #[serde(flatten)]
    pub other: JsonObject,
}

impl ServerCapabilities {
    /// Capabilities announcing tools (with or without list-changed
    /// notifications) and nothing else.
    pub fn with_tools(list_changed: Option<bool>) -> Self {
        Self {
            tools: Some(ToolsCapability { list_changed }),
            ..Self::default()
        }
    }

    /// Whether the server announces the extension `id`.
    pub fn has_extension(&self, id: &str) -> bool {
        self.extensions
            .as_ref()
            .is_some_and(|extensions| extensions.contains_key(id))
    }
}

/// What a client supports. In 2026-07-28 it is sent with every request in
/// `_meta["io.modelcontextprotocol/clientCapabilities"]`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ClientCapabilities {
    /// Present if the client can list roots.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub roots: Option<RootsCapability>,
    /// Present if the client can sample from an LLM (`context`, `tools`
    /// sub-capabilities).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sampling: Option<JsonObject>,
    /// Present if the client supports elicitation (`form`, `url` modes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elicitation: Option<JsonObject>,
    /// Task-augmented requests (2025-11-25 only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tasks: Option<JsonObject>,
    /// Extensions by identifier (2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extensions: Option<serde_json::Map<String, Value>>,
    /// Experimental, non-standard capabilities.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub experimental: Option<serde_json::Map<String, Value>>,
    /// Capabilities this crate does not model, kept verbatim.
    #[serde(flatten)]
    pub other: JsonObject,
}

impl ClientCapabilities {
    /// Whether the client supports elicitation. An empty `elicitation`
    /// object means form mode only (2025-11-25 on).
    pub fn supports_elicitation(&self) -> bool {
        self.elicitation.is_some()
    }

    /// Whether the client supports URL-mode elicitation (2025-11-25 on:
    /// `elicitation.url` declared).
    pub fn supports_url_elicitation(&self) -> bool {
        self.elicitation
            .as_ref()
            .is_some_and(|modes| modes.contains_key("url"))
    }

    /// What of these a client on `version` may be asked for: elicitation
    /// only from 2025-06-18 and its URL mode only from 2025-11-25, whatever
    /// the client declared (a server asking it otherwise would send what
    /// its revision does not define).
    #[must_use]
    pub fn for_revision(mut self, version: ProtocolVersion) -> Self {
        if !version.has_elicitation() {
            self.elicitation = None;
        } else if !version.has_url_elicitation()
            && let Some(modes) = self.elicitation.as_mut()
        {
            modes.remove("url");
        }
        self
    }

    /// Whether the client supports sampling.
    pub fn supports_sampling(&self) -> bool {
        self.sampling.is_some()
    }

    /// Whether the client announces the extension `id`.
    pub fn has_extension(&self, id: &str) -> bool {
        self.extensions
            .as_ref()
            .is_some_and(|extensions| extensions.contains_key(id))
    }
}
