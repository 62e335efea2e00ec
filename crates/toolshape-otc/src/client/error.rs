//! What can go wrong calling an OTC server, told apart by kind.

use std::collections::BTreeMap;
use std::time::Duration;

use toolshape::schema::{SchemaError, ValidationError};

use crate::auth::JwtError;
use crate::wire::ToolCallError;

/// A failed OTC client operation; [`OtcError::kind`] tells the cases apart.
#[derive(Debug, thiserror::Error)]
#[error(transparent)]
pub struct OtcError {
    kind: Box<OtcErrorKind>,
}

/// What kind of failure an [`OtcError`] is.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OtcErrorKind {
    /// The tool ran and failed (`success: false`).
    #[error("tool {tool} reported an error: {}", .error.message)]
    Tool {
        /// The tool id.
        tool: String,
        /// What it said.
        error: ToolCallError,
    },
    /// The `value` does not match the tool's `output_schema`.
    #[error("tool {tool} returned a value that does not match its output_schema: {source}")]
    Validation {
        /// The tool id.
        tool: String,
        /// The violations.
        #[source]
        source: ValidationError,
    },
    /// The tool declares it returns nothing (`output_schema: null`) but sent a value.
    #[error("tool {0} declares no output (output_schema null) but returned a value")]
    UnexpectedValue(String),
    /// The tool's `output_schema` cannot be used.
    #[error("tool {tool} has an unusable output_schema: {source}")]
    UnusableSchema {
        /// The tool id.
        tool: String,
        /// Why.
        #[source]
        source: SchemaError,
    },
    /// The value does not deserialize into the requested type.
    #[error("tool {tool} returned a value that does not fit the requested type: {source}")]
    Decode {
        /// The tool id.
        tool: String,
        /// Why.
        #[source]
        source: serde_json::Error,
    },
    /// The input of a typed call does not serialize to a JSON object.
    #[error("the input does not serialize to a JSON object")]
    Input,
    /// No listed tool has this id or name.
    #[error("no tool {0:?} on the server")]
    UnknownTool(String),
    /// Several listed tools answer to this name.
    #[error("{name:?} names several tools: {}", .candidates.join(", "))]
    AmbiguousTool {
        /// The name.
        name: String,
        /// The tools it could mean.
        candidates: Vec<String>,
    },
    /// The input does not match the tool's `input_schema` (HTTP 422).
    #[error("{message}: {}", parameter_list(.parameter_errors))]
    InvalidInput {
        /// The server's message.
        message: String,
        /// Each parameter and what is wrong with it.
        parameter_errors: BTreeMap<String, String>,
    },
    /// The call lacks what its tool requires (HTTP 400 with
    /// `missing_requirements`): credentials to send in its context.
    #[error("{message}")]
    MissingRequirements {
        /// The server's message.
        message: String,
        /// Authorization providers whose token is missing, with where a
        /// user grants it (the server lists only the providers it knows a
        /// URL for; its message names them all).
        authorization: Vec<AuthorizationChallenge>,
        /// Secrets missing, by id.
        secrets: Vec<String>,
        /// Whether the user id is missing.
        user_id: bool,
    },
    /// The server refused the request (400, 403, 409, 413, 503...).
    #[error("HTTP {status}: {message}")]
    Refused {
        /// The status.
        status: u16,
        /// The server's message.
        message: String,
    },
    /// Credentials missing or refused (401).
    #[error("unauthorized (HTTP 401): {0}")]
    Unauthorized(String),
    /// The server sent something that is not valid OTC.
    #[error("the server sent an invalid response: {0}")]
    InvalidResponse(String),
    /// The HTTP exchange failed.
    #[error("HTTP request failed: {0}")]
    Transport(#[source] reqwest::Error),
    /// No answer in time.
    #[error("no answer within {} ms", .0.as_millis())]
    Timeout(Duration),
    /// The base URL is not usable.
    #[error("bad URL {0:?}")]
    Url(String),
    /// A token could not be minted.
    #[error("{0}")]
    Token(#[source] JwtError),
}

/// A provider whose token a call lacks, and where a user grants it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct AuthorizationChallenge {
    /// The provider's id.
    pub id: String,
    /// Where the user grants the token (the spec requires it; a server
    /// that leaves it out still names the provider).
    pub url: Option<String>,
}

fn parameter_list(errors: &BTreeMap<String, String>) -> String {
    errors
        .iter()
        .map(|(name, message)| format!("{name}: {message}"))
        .collect::<Vec<_>>()
        .join("; ")
}

impl OtcError {
    /// What kind of failure this is.
    pub fn kind(&self) -> &OtcErrorKind {
        &self.kind
    }

    /// Whether the output broke the tool's schema (or the schema is unusable).
    pub fn is_validation_error(&self) -> bool {
        matches!(
            *self.kind,
            OtcErrorKind::Validation { .. }
                | OtcErrorKind::UnusableSchema { .. }
                | OtcErrorKind::UnexpectedValue(_)
                | OtcErrorKind::Decode { .. }
        )
    }
}

impl From<OtcErrorKind> for OtcError {
    fn from(kind: OtcErrorKind) -> Self {
        OtcError {
            kind: Box::new(kind),
        }
    }
}

impl From<reqwest::Error> for OtcError {
    fn from(error: reqwest::Error) -> Self {
        OtcErrorKind::Transport(error).into()
    }
}
