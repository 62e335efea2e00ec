//! The MCP server: serves a [`ToolRegistry`] over a transport, shaping every
//! response for the revision each peer speaks.

mod asking;
mod builder;
mod call;
mod connection;
mod dispatch;
#[cfg(feature = "server-http")]
mod http;
mod in_flight;
mod methods;
mod options;
mod outbox;
mod request;
mod session;
mod shape;

use std::io;
use std::sync::Arc;

use tokio::io::{AsyncRead, AsyncWrite};
use toolshape_protocol::Implementation;

use crate::tool::ToolRegistry;

pub use builder::{BuildError, ServerBuilder};
#[cfg(feature = "server-http")]
pub use http::{HttpOptions, RefusedOrigin, check_host_and_origin, serve_router};
pub use options::ServerOptions;

/// An MCP tools server. Cheap to clone; clones serve the same tools.
///
/// ```no_run
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// use toolshape::{Server, Tool, ToolError};
/// # #[derive(serde::Deserialize, schemars::JsonSchema)] struct Input { a: i64 }
/// let server = Server::builder("example", "1.0.0")
///     .tool(Tool::typed("double", |i: Input| async move { Ok::<_, ToolError>(i.a * 2) }))
///     .build()?;
/// server.serve_stdio().await?;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Server {
    shared: Arc<Shared>,
}

pub(crate) struct Shared {
    pub(crate) registry: ToolRegistry,
    pub(crate) options: ServerOptions,
    pub(crate) info: Implementation,
    /// Protects the `requestState` of 2026-07-28 rounds.
    pub(crate) state_key: asking::StateKey,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("info", &self.shared.info)
            .field("registry", &self.shared.registry)
            .finish_non_exhaustive()
    }
}

impl Server {
    /// Starts building a server that names itself `name` at `version`.
    pub fn builder(name: impl Into<String>, version: impl Into<String>) -> ServerBuilder {
        ServerBuilder::new(Implementation::new(name, version))
    }

    /// The tools it serves; add or remove tools here while serving.
    pub fn registry(&self) -> &ToolRegistry {
        &self.shared.registry
    }

    /// Serves one peer over this process's stdin and stdout until stdin ends
    /// and every call in flight has finished, or until writing to stdout
    /// fails (an error then).
    ///
    /// Works whatever stdin and stdout are (pipes, files, a terminal,
    /// sockets); pipes are read and written on the runtime's reactor, so it
    /// needs a runtime with I/O enabled (as `#[tokio::main]` builds).
    pub async fn serve_stdio(&self) -> io::Result<()> {
        let input = crate::transport::stdio::input();
        let output = crate::transport::stdio::output();
        self.serve(input, output).await
    }

    /// Serves one peer over any byte streams of newline-delimited JSON.
    pub async fn serve<R, W>(&self, reader: R, writer: W) -> io::Result<()>
    where
        R: AsyncRead + Unpin + Send,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        connection::serve(Arc::clone(&self.shared), reader, writer).await
    }
}
