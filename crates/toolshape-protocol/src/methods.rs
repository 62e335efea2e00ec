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
