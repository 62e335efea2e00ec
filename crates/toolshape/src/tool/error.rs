//! How a tool fails: [`ToolError`], the message the caller sees.

use std::fmt;
use std::sync::Arc;

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
#[derive(Clone)]
pub struct ToolError {
    message: String,
    source: Option<Arc<dyn std::error::Error + Send + Sync + 'static>>,
}

impl ToolError {
    /// A tool error with this message.
    pub fn new(message: impl Into<String>) -> Self {
        ToolError {
            message: message.into(),
            source: None,
        }
    }

    /// A tool error with this message, caused by `source`.
    pub fn with_source(message: impl Into<String>, source: impl Into<BoxError>) -> Self {
        ToolError {
            message: message.into(),
            source: Some(Arc::from(source.into())),
        }
    }

    /// The message the caller sees.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// Any error a handler failed with, as a `ToolError`: itself when it is
    /// one, otherwise one that carries its text and keeps it as the source.
    pub fn from_error(error: impl Into<BoxError>) -> Self {
        match error.into().downcast::<ToolError>() {
            Ok(tool_error) => *tool_error,
            Err(other) => ToolError {
                message: other.to_string(),
                source: Some(Arc::from(other)),
            },
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
}
