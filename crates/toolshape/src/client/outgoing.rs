//! A message for the server, built once and typed: its body and what a
//! transport needs to know about it (HTTP headers, cancellation), so that no
//! transport parses its own bytes back.

// Only the HTTP transport reads the routing facts; stdio writes the body.
#![cfg_attr(not(feature = "client-http"), allow(dead_code))]

use std::sync::Arc;

use tokio::sync::mpsc;
use toolshape_protocol::{LoggingLevel, ProtocolVersion, RequestId};

use crate::tool::{LogMessage, ToolContext};

/// What goes to the server's writer.
#[derive(Debug)]
pub(crate) enum Outbound {
    /// A message.
    Message(Outgoing),
    /// Close the connection: end the child's stdin, or the HTTP session.
    Close,
}

/// One message, serialized once.
#[derive(Debug)]
pub(crate) struct Outgoing {
    /// The request's id (none for a notification or a response).
    pub(crate) id: Option<RequestId>,
    /// The method (empty for a response).
    pub(crate) method: &'static str,
    /// The serialized JSON-RPC message, without a line ending.
    pub(crate) body: Vec<u8>,
    pub(crate) route: Route,
}

impl Outgoing {
    /// The channel the answer to this message arrives on over HTTP: the
    /// response to its POST.
    #[cfg(feature = "client-http")]
    pub(crate) fn channel(&self) -> super::peer::Channel<'_> {
        match &self.id {
            Some(id) => super::peer::Channel::RequestStream(id),
            None => super::peer::Channel::Standalone,
        }
    }
}

/// What an HTTP transport adds to a message.
#[derive(Debug, Clone, Default)]
pub(crate) struct Route {
    /// The revision the message is sent under (none before the handshake ends).
    pub(crate) version: Option<ProtocolVersion>,
    /// The tool a `tools/call` names (`Mcp-Name`).
    pub(crate) name: Option<String>,
    /// `Mcp-Param-*` headers: (lower-case name, encoded value).
    pub(crate) param_headers: Vec<(String, String)>,
    /// For `notifications/cancelled`: the request it cancels.
    pub(crate) cancels: Option<RequestId>,
    /// For a request: where the server's log messages about it go, and the
    /// least severe level wanted.
    pub(crate) log: Option<(LoggingLevel, mpsc::Sender<LogMessage>)>,
    /// For a request: the client of the call a gateway serves, asked the
    /// server's questions about it (see `CallOptions::relay_asks`).
    pub(crate) asks: Option<Arc<ToolContext>>,
}

impl Route {
    /// A message under `version`.
    pub(crate) fn under(version: Option<ProtocolVersion>) -> Route {
        Route {
            version,
            ..Route::default()
        }
    }

    /// Whether the message carries its revision itself (2026-07-28): it is
    /// stateless and gets the request-metadata headers.
    pub(crate) fn is_stateless(&self) -> bool {
        self.version.is_some_and(ProtocolVersion::is_stateless)
    }
}
