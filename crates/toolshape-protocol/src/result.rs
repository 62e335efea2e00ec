//! Fields and shapes shared by results: `resultType` and the caching hints
//! of 2026-07-28, the empty result, and the multi-round-trip interim result.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::meta::Meta;
use crate::serde_util::open_string_enum;
use crate::version::ProtocolVersion;

open_string_enum! {
    /// What kind of result a 2026-07-28 result is (`resultType`).
    ///
    /// Results from older servers have no `resultType`; clients must treat
    /// that as [`ResultType::Complete`] (see [`result_type_or_complete`]).
    /// The specification says clients must reject values they do not
    /// recognise; [`ResultType::Other`] keeps such values so the caller can.
    pub enum ResultType {
        /// `"complete"`: the final result.
        Complete => "complete",
        /// `"input_required"`: an interim [`InputRequiredResult`]; retry the
        /// request with the requested input.
        InputRequired => "input_required",
    }
}

impl ResultType {
    /// The `resultType` a complete result carries under `version`:
    /// `Some(Complete)` from 2026-07-28 on, `None` (field absent) before.
    pub fn complete_for(version: ProtocolVersion) -> Option<Self> {
        version.has_result_type().then_some(Self::Complete)
    }
}

/// The effective result type of an optional `resultType` field: absent means
/// [`ResultType::Complete`].
pub fn result_type_or_complete(result_type: Option<&ResultType>) -> ResultType {
    result_type.cloned().unwrap_or(ResultType::Complete)
}

/// Who may cache a result (`cacheScope`, 2026-07-28).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CacheScope {
    /// No user-specific data: shared caches may serve it to anyone.
    Public,
    /// Reusable only within the same authorization context.
    Private,
}

/// How long a cached result stays fresh, from its `ttlMs`: absent or
/// negative values mean "immediately stale" (zero), as the caching rules
/// require of clients.
pub fn ttl_from_ms(ttl_ms: Option<i64>) -> Duration {
    Duration::from_millis(ttl_ms.and_then(|ms| u64::try_from(ms).ok()).unwrap_or(0))
}

/// A result with no content: the answer to `ping`, and the generic
/// acknowledgement shape.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct EmptyResult {
    /// `resultType` (required from 2026-07-28 on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// Optional metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// An interim result (`resultType: "input_required"`, 2026-07-28): the
/// server needs more input; the client retries the original request with
/// `inputResponses` (and `requestState`, if given) under a new request id.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct InputRequiredResult {
    /// Always `"input_required"` on the wire.
    pub result_type: ResultType,
    /// The input the server needs, keyed by names the server chose; each
    /// value is an elicitation, sampling or roots request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_requests: Option<serde_json::Map<String, Value>>,
    /// Opaque state to echo in the retry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_state: Option<String>,
    /// Optional metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl InputRequiredResult {
    /// An interim result asking `input_requests` (omitted when empty), with
    /// `request_state` to echo.
    pub fn new(
        input_requests: serde_json::Map<String, Value>,
        request_state: Option<String>,
    ) -> Self {
        Self {
            result_type: ResultType::InputRequired,
            input_requests: (!input_requests.is_empty()).then_some(input_requests),
            request_state,
            meta: None,
        }
    }
}
