//! What can go wrong on the client side, told apart by kind.

use std::time::Duration;

use toolshape_protocol::ErrorObject;
use toolshape_schema::{SchemaError, ValidationError};

/// A failed client operation. [`ClientError::kind`] tells the cases apart.
#[derive(Debug, thiserror::Error)]
#[error("{kind}")]
pub struct ClientError {
    kind: ClientErrorKind,
}

/// What kind of failure a [`ClientError`] is.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClientErrorKind {
    /// The tool ran and reported an error (`isError: true`), with its text.
    #[error("tool {tool} reported an error: {message}")]
    Tool {
        /// The tool.
        tool: String,
        /// What it said.
        message: String,
    },
    /// The result does not match the tool's `outputSchema`.
    #[error("tool {tool} returned output that does not match its outputSchema: {source}")]
    Validation {
        /// The tool.
        tool: String,
        /// The violations.
        #[source]
        source: ValidationError,
    },
    /// The tool declares an `outputSchema` but its result has no `structuredContent`.
    #[error("tool {tool} declares an outputSchema but returned no structuredContent")]
    MissingStructuredContent {
        /// The tool.
        tool: String,
    },
    /// The tool's `outputSchema` cannot be used (it does not compile, or breaks a bound).
    #[error("tool {tool} has an unusable outputSchema: {source}")]
    UnusableSchema {
        /// The tool.
        tool: String,
        /// Why.
        #[source]
        source: SchemaError,
    },
    /// The structured result does not deserialize into the requested type.
    #[error("tool {tool} returned output that does not fit the requested type: {message}")]
    Decode {
        /// The tool.
        tool: String,
        /// Why.
        message: String,
    },
    /// The server answered with a JSON-RPC error.
    #[error("the server answered with an error: {0}")]
    Protocol(ErrorObject),
    /// The server sent something that is not valid for the protocol.
    #[error("the server sent an invalid message: {0}")]
    InvalidResponse(String),
    /// The connection failed or closed.
    #[error("transport failure: {0}")]
    Transport(String),
    /// No answer came in time; the request was cancelled.
    #[error("no answer within {} ms", .0.as_millis())]
    Timeout(Duration),
    /// The host application declined the call (human-in-the-loop confirmation).
    #[error("the call to {0} was declined")]
    Declined(String),
}

impl ClientError {
    /// What kind of failure this is.
    pub fn kind(&self) -> &ClientErrorKind {
        &self.kind
    }

    /// Whether the tool itself reported the error.
    pub fn is_tool_error(&self) -> bool {
        matches!(self.kind, ClientErrorKind::Tool { .. })
    }

    /// Whether the output failed validation (or its schema was unusable).
    pub fn is_validation_error(&self) -> bool {
        matches!(
            self.kind,
            ClientErrorKind::Validation { .. }
                | ClientErrorKind::MissingStructuredContent { .. }
                | ClientErrorKind::UnusableSchema { .. }
                | ClientErrorKind::Decode { .. }
        )
    }

    pub(crate) fn transport(message: impl std::fmt::Display) -> Self {
        ClientErrorKind::Transport(message.to_string()).into()
    }

    pub(crate) fn invalid(message: impl std::fmt::Display) -> Self {
        ClientErrorKind::InvalidResponse(crate::text::excerpt(&message.to_string(), 300)).into()
    }
}

impl From<ClientErrorKind> for ClientError {
    fn from(kind: ClientErrorKind) -> Self {
        ClientError { kind }
    }
}
