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
/// `elicitation/create`: the server asks the user, through the client.
pub const ELICITATION_CREATE: &str = "elicitation/create";
/// `notifications/elicitation/complete` (2025-11-25 only): the out-of-band
/// interaction a URL-mode elicitation started is over.
pub const ELICITATION_COMPLETE: &str = "notifications/elicitation/complete";
/// `sampling/createMessage`: the server asks the client's model.
pub const SAMPLING_CREATE_MESSAGE: &str = "sampling/createMessage";
/// `roots/list`: the server asks for the client's roots.
pub const ROOTS_LIST: &str = "roots/list";
/// `notifications/roots/list_changed` (2025-11-25 and earlier).
pub const ROOTS_LIST_CHANGED: &str = "notifications/roots/list_changed";
/// `resources/list`.
pub const RESOURCES_LIST: &str = "resources/list";
/// `resources/templates/list`.
pub const RESOURCES_TEMPLATES_LIST: &str = "resources/templates/list";
/// `resources/read`.
pub const RESOURCES_READ: &str = "resources/read";
/// `resources/subscribe` (2025-11-25 and earlier; `subscriptions/listen` after).
pub const RESOURCES_SUBSCRIBE: &str = "resources/subscribe";
/// `resources/unsubscribe` (2025-11-25 and earlier).
pub const RESOURCES_UNSUBSCRIBE: &str = "resources/unsubscribe";
/// `notifications/resources/updated`.
pub const RESOURCES_UPDATED: &str = "notifications/resources/updated";
/// `notifications/resources/list_changed`.
pub const RESOURCES_LIST_CHANGED: &str = "notifications/resources/list_changed";
/// `prompts/list`.
pub const PROMPTS_LIST: &str = "prompts/list";
/// `prompts/get`.
pub const PROMPTS_GET: &str = "prompts/get";
/// `notifications/prompts/list_changed`.
pub const PROMPTS_LIST_CHANGED: &str = "notifications/prompts/list_changed";
/// `completion/complete`.
pub const COMPLETION_COMPLETE: &str = "completion/complete";
