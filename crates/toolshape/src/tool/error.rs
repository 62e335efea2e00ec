//! How a tool fails: [`ToolError`], the message the caller sees, and what
//! else a protocol can say about the failure (whether to retry and when, a
//! developer message for the logs, extra content for the retry prompt).

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

/// The `_meta` keys under which an MCP result carries a failure's retry
/// hints (MCP has no fields for them; OTC has `can_retry` and `retry_after_ms`).
pub mod meta_keys {
    /// `true` when the caller may retry the call.
    pub const CAN_RETRY: &str = "dev.toolshape/canRetry";
    /// How long to wait before retrying, in milliseconds.
    pub const RETRY_AFTER_MS: &str = "dev.toolshape/retryAfterMs";
    /// The call's id, when a bridge knows it (OTC `call_id`).
    pub const CALL_ID: &str = "dev.toolshape/callId";
    /// How long the call ran, in milliseconds, when a bridge measured it (OTC `duration`).
    pub const DURATION_MS: &str = "dev.toolshape/durationMs";
}

/// Any error a handler may fail with: everything that implements
/// [`std::error::Error`] converts into it, as do `String` and `&str`.
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// A tool's own failure: the caller sees an `isError: true` result with its
/// message, written for a model to act on. The cause, if any, stays in the
/// server (logs, [`std::error::Error::source`]).
///
/// `?` in a handler converts I/O and JSON errors, strings and any
/// [`BoxError`] into one; [`ToolError::from_error`] converts any other
/// error, keeping its text as the message and the error as the source.
///
/// A failure can say more, for the protocols that carry it:
///
/// | | OTC | MCP |
/// |---|---|---|
/// | [`message`](ToolError::message) | `error.message` | the `isError` text |
/// | [`additional_prompt_content`](ToolError::additional_prompt_content) | `error.additional_prompt_content` | a second paragraph of the `isError` text |
/// | [`retryable`](ToolError::retryable) | `error.can_retry` | result `_meta` [`meta_keys::CAN_RETRY`] |
/// | [`retry_after`](ToolError::retry_after) | `error.retry_after_ms` | result `_meta` [`meta_keys::RETRY_AFTER_MS`] |
/// | [`developer_message`](ToolError::developer_message) | `error.developer_message` (for the caller's logs) | server log only |
///
/// ```
/// use std::time::Duration;
/// use toolshape::ToolError;
///
/// let error = ToolError::new("Doorbell ID not found")
///     .developer_message("The doorbell with ID 'doorbell1' does not exist.")
///     .additional_prompt_content("ids: doorbell42,doorbell84")
///     .retry_after(Duration::from_millis(500));
/// assert!(error.is_retryable());
/// ```
#[derive(Clone)]
pub struct ToolError {
    message: String,
    developer_message: Option<String>,
    additional_prompt_content: Option<String>,
    retryable: bool,
    retry_after: Option<Duration>,
    source: Option<Arc<dyn std::error::Error + Send + Sync + 'static>>,
}

impl ToolError {
    /// A tool error with this message.
    pub fn new(message: impl Into<String>) -> Self {
        ToolError {
            message: message.into(),
            developer_message: None,
            additional_prompt_content: None,
            retryable: false,
            retry_after: None,
            source: None,
        }
    }

    /// A tool error with this message, caused by `source`.
    pub fn with_source(message: impl Into<String>, source: impl Into<BoxError>) -> Self {
        let mut error = ToolError::new(message);
        error.source = Some(Arc::from(source.into()));
        error
    }

    /// The message the caller sees.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// Adds details for developers: logged by the server, sent to OTC callers
    /// as `developer_message` (for their logs), never shown to a model, never
    /// sent over MCP.
    #[must_use]
    pub fn developer_message(mut self, message: impl Into<String>) -> Self {
        self.developer_message = Some(message.into());
        self
    }

    /// Adds content for the prompt of a retry (e.g. the valid choices).
    #[must_use]
    pub fn additional_prompt_content(mut self, content: impl Into<String>) -> Self {
        self.additional_prompt_content = Some(content.into());
        self
    }

    /// Says whether the caller may retry the call (by default it may not).
    #[must_use]
    pub fn retryable(mut self, retryable: bool) -> Self {
        self.retryable = retryable;
        self
    }

    /// Says the caller may retry the call after `delay`.
    #[must_use]
    pub fn retry_after(mut self, delay: Duration) -> Self {
        self.retryable = true;
        self.retry_after = Some(delay);
        self
    }

    /// The details for developers, if any.
    pub fn developer_details(&self) -> Option<&str> {
        self.developer_message.as_deref()
    }

    /// The content for a retry's prompt, if any.
    pub fn prompt_content(&self) -> Option<&str> {
        self.additional_prompt_content.as_deref()
    }

    /// Whether the caller may retry the call.
    pub fn is_retryable(&self) -> bool {
        self.retryable
    }

    /// How long to wait before a retry, if the tool said.
    pub fn retry_delay(&self) -> Option<Duration> {
        self.retry_after
    }

    /// The text a model sees: the message, then the additional prompt
    /// content (if any) after a blank line.
    pub fn model_text(&self) -> String {
        match &self.additional_prompt_content {
            Some(extra) => format!("{}\n\n{extra}", self.message),
            None => self.message.clone(),
        }
    }

    /// The retry hints as MCP result `_meta` entries (none when the call may
    /// not be retried).
    pub fn retry_meta(&self) -> Option<toolshape_protocol::Meta> {
        if !self.retryable {
            return None;
        }
        let mut meta = toolshape_protocol::Meta::new();
        meta.insert(meta_keys::CAN_RETRY.into(), serde_json::Value::Bool(true));
        if let Some(delay) = self.retry_after {
            let millis = u64::try_from(delay.as_millis()).unwrap_or(u64::MAX);
            meta.insert(meta_keys::RETRY_AFTER_MS.into(), millis.into());
        }
        Some(meta)
    }

    /// Any error a handler failed with, as a `ToolError`: itself when it is
    /// one, otherwise one that carries its text and keeps it as the source.
    pub fn from_error(error: impl Into<BoxError>) -> Self {
        match error.into().downcast::<ToolError>() {
            Ok(tool_error) => *tool_error,
            Err(other) => {
                let mut error = ToolError::new(other.to_string());
                error.source = Some(Arc::from(other));
                error
            }
        }
    }
}

/// `?` on I/O errors in a handler.
impl From<std::io::Error> for ToolError {
    fn from(error: std::io::Error) -> Self {
        ToolError::from_error(error)
    }
}

/// `?` on JSON errors in a handler.
impl From<serde_json::Error> for ToolError {
    fn from(error: serde_json::Error) -> Self {
        ToolError::from_error(error)
    }
}

/// `?` on any boxed error (and so, with `.map_err(BoxError::from)` or
/// [`ToolError::from_error`], on any error at all).
impl From<BoxError> for ToolError {
    fn from(error: BoxError) -> Self {
        ToolError::from_error(error)
    }
}

impl From<String> for ToolError {
    fn from(message: String) -> Self {
        ToolError::new(message)
    }
}

impl From<&str> for ToolError {
    fn from(message: &str) -> Self {
        ToolError::new(message)
    }
}

impl fmt::Debug for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolError")
            .field("message", &self.message)
            .field("developer_message", &self.developer_message)
            .field("additional_prompt_content", &self.additional_prompt_content)
            .field("retryable", &self.retryable)
            .field("retry_after", &self.retry_after)
            .field("source", &self.source)
            .finish()
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ToolError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source
            .as_deref()
            .map(|source| source as &(dyn std::error::Error + 'static))
    }
}

#[cfg(test)]
mod tests {
    use std::error::Error as _;

    use super::*;

    #[test]
    fn other_errors_keep_their_text_and_become_the_source() {
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "no such file");
        let error = ToolError::from_error(io);
        assert_eq!(error.message(), "no such file");
        assert!(
            error
                .source()
                .is_some_and(|s| s.to_string() == "no such file")
        );
    }

    #[test]
    fn a_tool_error_stays_itself() {
        let error = ToolError::from_error(ToolError::new("bad input"));
        assert_eq!(error.message(), "bad input");
        assert!(error.source().is_none());
        assert_eq!(ToolError::from_error("plain text").message(), "plain text");
    }

    #[test]
    fn retry_hints_become_meta_and_prompt_content_joins_the_text() {
        let error = ToolError::new("busy")
            .additional_prompt_content("try later")
            .retry_after(Duration::from_millis(250));
        assert_eq!(error.model_text(), "busy\n\ntry later");
        let meta = error.retry_meta().unwrap_or_default();
        assert_eq!(
            meta.get(meta_keys::CAN_RETRY),
            Some(&serde_json::json!(true))
        );
        assert_eq!(
            meta.get(meta_keys::RETRY_AFTER_MS),
            Some(&serde_json::json!(250))
        );
        assert!(ToolError::new("final").retry_meta().is_none());
        assert!(ToolError::new("x").retryable(true).retry_meta().is_some());
    }
}
