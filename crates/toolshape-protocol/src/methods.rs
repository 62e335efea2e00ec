//! Method names of the requests and notifications this crate models.

/// `initialize` request (2025-11-25 and earlier).
pub const INITIALIZE: &str = "initialize";
/// `notifications/initialized` notification (2025-11-25 and earlier).
pub const INITIALIZED: &str = "notifications/initialized";
/// `server/discover` request (2026-07-28).
pub const SERVER_DISCOVER: &str = "server/discover";
/// `ping` request (2025-11-25 and earlier).
pub const PING: &str = "ping";
/// `tools/list` request.
pub const TOOLS_LIST: &str = "tools/list";
/// `tools/call` request.
pub const TOOLS_CALL: &str = "tools/call";
/// `notifications/cancelled` notification.
pub const CANCELLED: &str = "notifications/cancelled";
/// `notifications/progress` notification.
pub const PROGRESS: &str = "notifications/progress";
/// `notifications/tools/list_changed` notification.
pub const TOOLS_LIST_CHANGED: &str = "notifications/tools/list_changed";
/// `notifications/message` notification (logging).
pub const LOGGING_MESSAGE: &str = "notifications/message";
/// `logging/setLevel` (2024-11-05 through 2025-11-25; removed in 2026-07-28,
/// where a request carries its level in `_meta`).
pub const LOGGING_SET_LEVEL: &str = "logging/setLevel";
/// `subscriptions/listen` (2026-07-28): a long-lived stream of the
/// notifications the client opts in to.
pub const SUBSCRIPTIONS_LISTEN: &str = "subscriptions/listen";
/// `notifications/subscriptions/acknowledged` (2026-07-28): the first message
/// of a `subscriptions/listen` stream.
pub const SUBSCRIPTIONS_ACKNOWLEDGED: &str = "notifications/subscriptions/acknowledged";
