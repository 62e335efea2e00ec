//! The paginated list results of resources, resource templates and prompts:
//! one page of items, the next cursor, and on 2026-07-28 the caching hints.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::meta::Meta;
use crate::prompts::Prompt;
use crate::resources::{Resource, ResourceTemplate};
use crate::result::{CacheScope, ResultType, ttl_from_ms};

macro_rules! list_result {
    ($(#[$doc:meta])* $name:ident, $field:ident, $wire:literal, $item:ty) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
        #[serde(rename_all = "camelCase")]
        #[non_exhaustive]
        pub struct $name {
            /// `resultType` (required from 2026-07-28 on).
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub result_type: Option<ResultType>,
            /// The items of this page.
            #[serde(rename = $wire)]
            pub $field: Vec<$item>,
            /// Cursor of the next page; absent on the last page.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub next_cursor: Option<String>,
            /// Freshness hint in milliseconds (required from 2026-07-28 on).
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub ttl_ms: Option<i64>,
            /// Who may cache this page (required from 2026-07-28 on).
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub cache_scope: Option<CacheScope>,
            /// Optional metadata.
            #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
            pub meta: Option<Meta>,
        }

        impl $name {
            /// One page in the legacy shape.
            pub fn new($field: Vec<$item>) -> Self {
                Self {
                    result_type: None,
                    $field,
                    next_cursor: None,
                    ttl_ms: None,
                    cache_scope: None,
                    meta: None,
                }
            }

            /// Sets the cursor of the next page.
            #[must_use]
            pub fn with_next_cursor(mut self, cursor: Option<String>) -> Self {
                self.next_cursor = cursor;
                self
            }

            /// Adds what 2026-07-28 requires: `resultType`, `ttlMs`, `cacheScope`.
            #[must_use]
            pub fn with_cache_hints(mut self, ttl: Duration, scope: CacheScope) -> Self {
                self.result_type = Some(ResultType::Complete);
                self.ttl_ms = Some(i64::try_from(ttl.as_millis()).unwrap_or(i64::MAX));
                self.cache_scope = Some(scope);
                self
            }

            /// How long the page stays fresh.
            pub fn ttl(&self) -> Duration {
                ttl_from_ms(self.ttl_ms)
            }
        }
    };
}

list_result!(
    /// Result of `resources/list`.
    ListResourcesResult, resources, "resources", Resource
);
list_result!(
    /// Result of `resources/templates/list`.
    ListResourceTemplatesResult, resource_templates, "resourceTemplates", ResourceTemplate
);
list_result!(
    /// Result of `prompts/list`.
    ListPromptsResult, prompts, "prompts", Prompt
);
