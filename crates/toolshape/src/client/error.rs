//! What can go wrong on the client side, told apart by kind, each keeping
//! its cause.

use std::time::Duration;

use toolshape_protocol::ErrorObject;
use toolshape_schema::{SchemaError, ValidationError};

use super::pages::ListingBound;

/// A failed client operation. [`ClientError::kind`] tells the cases apart;
/// [`std::error::Error::source`] reaches the cause.
#[derive(Debug)]
pub struct ClientError {
    kind: ClientErrorKind,
    /// The result a validation failure refused, kept for whoever must still
    /// show or log it.
    rejected: Option<Box<super::ToolResult>>,
    /// How a server process that connecting to failed ended: the last
    /// lines of its captured stderr, its exit status.
    ended: Option<Box<Ended>>,
}

/// What a failed connection knows of its server process (boxed: the error
/// stays small).
#[derive(Debug, Default)]
struct Ended {
    stderr: Vec<String>,
    status: Option<std::process::ExitStatus>,
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
    #[error("tool {tool} returned output that does not fit the requested type: {source}")]
    Decode {
        /// The tool.
        tool: String,
        /// Why.
        #[source]
        source: serde_json::Error,
    },
    /// The arguments of a typed call do not serialize to a JSON object.
    #[error("the arguments do not serialize to a JSON object")]
    Arguments(#[source] Option<serde_json::Error>),
    /// The server answered with a JSON-RPC error.
    #[error("the server answered with an error: {0}")]
    Protocol(#[source] ErrorObject),
    /// The server sent something that is not valid for the protocol.
    #[error("the server sent an invalid message: {0}")]
    InvalidResponse(String),
    /// A paginated listing went past a bound the client keeps; it stopped there.
    #[error("{method} went past the client's bound of {bound}")]
    ListingOverBounds {
        /// The listing's method (`tools/list`, ...).
        method: &'static str,
        /// The bound.
        bound: ListingBound,
    },
    /// The connection failed or closed.
    #[error("transport failure: {0}")]
    Transport(#[source] TransportError),
    /// No answer came in time; the request was cancelled.
    #[error("no answer within {} ms", .0.as_millis())]
    Timeout(Duration),
    /// The caller cancelled the call (the server was told).
    #[error("the call was cancelled")]
    Cancelled,
    /// The host application declined the call (human-in-the-loop confirmation).
    #[error("the call to {0} was declined")]
    Declined(String),
    /// A relayed call ([`CallOptions::relay`](crate::CallOptions::relay)) of
    /// a tool the server's current listing lacks (it was dropped since the
    /// gateway listed it): its result could not be checked, so it is not
    /// sent.
    #[error("tool {0} is not in the server's current listing, so its result could not be checked")]
    Unlisted(String),
}

/// How the connection to a server failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TransportError {
    /// The connection is closed (the server exited, or the client closed it).
    #[error("the connection to the server is closed")]
    Closed,
    /// The server process could not be started.
    #[error("cannot start {program}: {source}")]
    Spawn {
        /// The program.
        program: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The child process has no stdin or stdout pipe.
    #[error("the server process's pipes are missing")]
    Pipes,
    /// A request could not be serialized.
    #[error("cannot serialize the request: {0}")]
    Serialize(#[source] serde_json::Error),
    /// The URL is not usable.
    #[error("bad URL {url:?}: {reason}")]
    Url {
        /// The URL as given.
        url: String,
        /// Why.
        reason: String,
    },
    /// An HTTP exchange failed.
    #[cfg(feature = "client-http")]
    #[error("HTTP request failed: {0}")]
    Http(#[source] reqwest::Error),
    /// The server answered with an HTTP status and no usable JSON-RPC message.
    #[error("HTTP {status}{}", if .detail.is_empty() { String::new() } else { format!(": {}", .detail) })]
    Status {
        /// The status code.
        status: u16,
        /// The start of the body, when it was text.
        detail: String,
    },
    /// The authorization hook failed (no credentials could be had).
    #[error("authorization failed: {0}")]
    Auth(#[source] crate::tool::BoxError),
    /// A stream ended before the answer arrived.
    #[error("{0}")]
    Interrupted(&'static str),
    /// A header given for every HTTP request is one the transport sets itself.
    #[error("the header {name} cannot be given: {reason}")]
    Header {
        /// The header's name.
        name: String,
        /// Why.
        reason: &'static str,
    },
}

impl TransportError {
    /// Whether this is an HTTP status with no JSON-RPC error that tells of
    /// a server of another era (the spec's HTTP backward compatibility): a
    /// client error, but not one about credentials, the request's size,
    /// time or rate, which a request of the other era would meet again.
    pub fn is_era_refusal(&self) -> bool {
        match self {
            TransportError::Status { status, .. } => {
                (400..500).contains(status) && !matches!(status, 401 | 403 | 407 | 408 | 413 | 429)
            }
            _ => false,
        }
    }

    /// Whether the server could not be reached: the connection closed, a
    /// connection that could not be made or broke (or timed out) before an
    /// answer, or a gateway in front of it answering `502`, `503` or `504`.
    pub fn is_unreachable(&self) -> bool {
        match self {
            TransportError::Closed => true,
            #[cfg(feature = "client-http")]
            TransportError::Http(error) => {
                error.is_connect() || error.is_timeout() || error.is_request()
            }
            TransportError::Status { status, .. } => matches!(status, 502..=504),
            _ => false,
        }
    }
}

impl ClientError {
    /// What kind of failure this is.
    pub fn kind(&self) -> &ClientErrorKind {
        &self.kind
    }

    /// The result behind the error: the one a failed output check refused
    /// (its `structuredContent` unchecked, as the server sent it: for a
    /// gateway that is told to strip or pass invalid output rather than
    /// refuse it), or, from [`Client::call`](super::Client::call), a tool's
    /// `isError` result or a result that did not fit the type asked for.
    /// `None` for any other failure.
    pub fn rejected_result(&self) -> Option<&super::ToolResult> {
        self.rejected.as_deref()
    }

    /// The [`ToolError`](crate::ToolError) a tool's `isError` result stands
    /// for, with the retry hints it carries (see
    /// [`ToolResult::tool_error`](super::ToolResult::tool_error)), when this
    /// is a tool error from [`Client::call`](super::Client::call).
    pub fn tool_error(&self) -> Option<crate::ToolError> {
        match (&self.kind, self.rejected.as_deref()) {
            (ClientErrorKind::Tool { tool, .. }, Some(result)) => Some(result.tool_error(tool)),
            _ => None,
        }
    }

    /// The last lines the server wrote to its stderr when connecting to it
    /// failed, if its stderr was captured
    /// ([`StderrMode::Capture`](super::StderrMode::Capture)); empty
    /// otherwise. The error's message ends with the last of them.
    pub fn stderr_tail(&self) -> &[String] {
        self.ended.as_deref().map_or(&[], |ended| &ended.stderr)
    }

    /// How the server process exited, when it had exited by the time
    /// connecting to it failed (it quit during the handshake); `None`
    /// otherwise. The error's message says it.
    pub fn server_exit_status(&self) -> Option<std::process::ExitStatus> {
        self.ended.as_deref().and_then(|ended| ended.status)
    }

    pub(crate) fn with_server_end(
        mut self,
        stderr: Vec<String>,
        status: Option<std::process::ExitStatus>,
    ) -> Self {
        if !stderr.is_empty() || status.is_some() {
            self.ended = Some(Box::new(Ended { stderr, status }));
        }
        self
    }

    pub(crate) fn rejecting(mut self, result: super::ToolResult) -> Self {
        self.rejected = Some(Box::new(result));
        self
    }

    /// The URL-mode elicitations the server needs completed before the
    /// request is retried, when it answered `-32042` (2025-11-25); their
    /// completions come on [`Client::elicitation_completions`](super::Client::elicitation_completions).
    pub fn url_elicitation_required(
        &self,
    ) -> Option<toolshape_protocol::asks::UrlElicitationRequiredData> {
        match &self.kind {
            ClientErrorKind::Protocol(error) => error.url_elicitation_required_data(),
            _ => None,
        }
    }

    /// Whether the tool itself reported the error.
    pub fn is_tool_error(&self) -> bool {
        matches!(self.kind, ClientErrorKind::Tool { .. })
    }

    /// Whether the output failed validation: it broke the tool's
    /// `outputSchema`, lacked the `structuredContent` it declares, the
    /// schema was unusable, or (`Client::call::<T>`) it did not fit `T`.
    pub fn is_validation_error(&self) -> bool {
        matches!(
            self.kind,
            ClientErrorKind::Validation { .. }
                | ClientErrorKind::MissingStructuredContent { .. }
                | ClientErrorKind::UnusableSchema { .. }
                | ClientErrorKind::Decode { .. }
        )
    }

    pub(crate) fn invalid(message: impl std::fmt::Display) -> Self {
        ClientErrorKind::InvalidResponse(toolshape_protocol::text::excerpt(
            &message.to_string(),
            300,
        ))
        .into()
    }

    /// A response over the client's size limit of `limit` bytes.
    pub(crate) fn too_large(limit: usize) -> Self {
        Self::invalid(format!("response larger than {limit} bytes"))
    }
}

impl std::fmt::Display for ClientError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.kind.fmt(f)?;
        if let Some(status) = self.server_exit_status() {
            write!(f, "; the server exited ({status})")?;
        }
        let tail = self.stderr_tail();
        if !tail.is_empty() {
            let start = tail.len().saturating_sub(STDERR_LINES_SHOWN);
            let lines = tail.get(start..).unwrap_or_default().join(" | ");
            let lines = toolshape_protocol::text::excerpt(&lines, 400);
            write!(f, "; the server's stderr ends: {lines}")?;
        }
        Ok(())
    }
}

/// The server's stderr lines a failed connection's message ends with.
const STDERR_LINES_SHOWN: usize = 5;

impl std::error::Error for ClientError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        std::error::Error::source(&self.kind)
    }
}

impl From<ClientErrorKind> for ClientError {
    fn from(kind: ClientErrorKind) -> Self {
        ClientError {
            kind,
            rejected: None,
            ended: None,
        }
    }
}

impl From<TransportError> for ClientError {
    fn from(error: TransportError) -> Self {
        ClientErrorKind::Transport(error).into()
    }
}

#[cfg(test)]
mod tests {
    use std::error::Error as _;

    use super::*;

    #[test]
    fn the_source_reaches_the_cause() {
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "no such program");
        let error = ClientError::from(TransportError::Spawn {
            program: "x".into(),
            source: io,
        });
        let transport = error.source().expect("the transport error");
        let cause = transport.source().expect("the I/O error");
        assert_eq!(cause.to_string(), "no such program");
    }

    #[test]
    fn a_bare_client_error_status_tells_of_another_era_but_credentials_and_limits_do_not() {
        let status = |status| TransportError::Status {
            status,
            detail: String::new(),
        };
        for era in [400, 404, 405, 406, 415] {
            assert!(status(era).is_era_refusal(), "{era}");
        }
        for other in [401, 403, 407, 408, 413, 429, 500, 502, 200] {
            assert!(!status(other).is_era_refusal(), "{other}");
        }
        assert!(!TransportError::Closed.is_era_refusal());
    }
}
