//! `tools/list`: paginated listing with caching hints.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::definition::ToolDefinition;
use crate::meta::Meta;
use crate::result::{CacheScope, ResultType, ttl_from_ms};

/// Params of a paginated request such as `tools/list`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct PaginatedRequestParams {
    /// Opaque position returned as `nextCursor` by the previous page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
    /// Request metadata (from 2026-07-28 on it must carry the protocol
    /// version and client capabilities, see [`crate::meta::RequestMeta`]).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// Params of `tools/list`.
pub type ListToolsParams = PaginatedRequestParams;

/// Result of `tools/list`.
///
/// `T` is how each tool is held: a [`ToolDefinition`] by default, or a
/// definition serialized ahead of time (`&RawValue`) by a server that
/// writes its listings from definitions it serialized once.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ListToolsResult<T = ToolDefinition> {
    /// `resultType` (required from 2026-07-28 on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// The tools of this page.
    pub tools: Vec<T>,
    /// Cursor of the next page; absent on the last page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
    /// Freshness hint in milliseconds (required from 2026-07-28 on). Kept
    /// signed so a misbehaving negative value still parses; see
    /// [`ListToolsResult::ttl`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_ms: Option<i64>,
    /// Who may cache this page (required from 2026-07-28 on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_scope: Option<CacheScope>,
    /// Optional metadata (`io.modelcontextprotocol/serverInfo`, ...).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl<T> ListToolsResult<T> {
    /// A single-page result in the legacy shape (no 2026-07-28 fields).
    pub fn new(tools: Vec<T>) -> Self {
        Self {
            result_type: None,
            tools,
            next_cursor: None,
            ttl_ms: None,
            cache_scope: None,
            meta: None,
        }
    }

    /// Adds the fields 2026-07-28 requires: `resultType: "complete"`,
    /// `ttlMs` (saturating at `i64::MAX` milliseconds) and `cacheScope`.
    #[must_use]
    pub fn with_cache_hints(mut self, ttl: Duration, scope: CacheScope) -> Self {
        self.result_type = Some(ResultType::Complete);
        self.ttl_ms = Some(i64::try_from(ttl.as_millis()).unwrap_or(i64::MAX));
        self.cache_scope = Some(scope);
        self
    }

    /// Sets the cursor of the next page.
    #[must_use]
    pub fn with_next_cursor(mut self, cursor: Option<String>) -> Self {
        self.next_cursor = cursor;
        self
    }

    /// How long the page stays fresh (zero when `ttlMs` is absent or
    /// negative).
    pub fn ttl(&self) -> Duration {
        ttl_from_ms(self.ttl_ms)
    }
}
