//! The MCP server: serves a [`ToolRegistry`] over a transport, shaping every
//! response for the revision each peer speaks.

mod connection;
mod dispatch;
mod http;
mod methods;
mod options;
mod outbox;
mod session;
mod shape;

use std::io;
use std::sync::Arc;

use tokio::io::{AsyncRead, AsyncWrite};
use toolshape_protocol::Implementation;

use crate::tool::{RegistrationError, Tool, ToolRegistry};

pub use http::HttpOptions;
pub use options::ServerOptions;

/// An MCP tools server.
///
/// ```no_run
/// # async fn run() -> std::io::Result<()> {
/// use toolshape::{Server, Tool, ToolError};
/// # #[derive(serde::Deserialize, schemars::JsonSchema)] struct Input { a: i64 }
/// let server = Server::builder("example", "1.0.0")
///     .tool(Tool::typed("double", |i: Input| async move { Ok::<_, ToolError>(i.a * 2) }))
///     .map_err(std::io::Error::other)?
///     .build();
/// server.serve_stdio().await
/// # }
/// ```
#[derive(Clone)]
pub struct Server {
    shared: Arc<Shared>,
}

pub(crate) struct Shared {
    pub(crate) registry: ToolRegistry,
    pub(crate) options: ServerOptions,
    pub(crate) info: Implementation,
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
        ServerBuilder {
            registry: ToolRegistry::new(),
            options: ServerOptions::default(),
            info: Implementation::new(name, version),
        }
    }

    /// The tools it serves; add or remove tools here while serving.
    pub fn registry(&self) -> &ToolRegistry {
        &self.shared.registry
    }

    /// Serves one peer over this process's stdin and stdout until stdin ends
    /// and every call in flight has finished.
    ///
    /// Needs a runtime with I/O enabled (as `#[tokio::main]` builds): when
    /// stdin and stdout are pipes, they are read and written on the reactor.
    pub async fn serve_stdio(&self) -> io::Result<()> {
        let (input, output) = crate::transport::stdio::streams();
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

/// Configures a [`Server`].
#[derive(Debug)]
pub struct ServerBuilder {
    registry: ToolRegistry,
    options: ServerOptions,
    info: Implementation,
}

impl ServerBuilder {
    /// Registers a tool.
    pub fn tool(self, tool: Tool) -> Result<Self, RegistrationError> {
        self.registry.register(tool)?;
        Ok(self)
    }

    /// Serves the tools of an existing registry instead (shared with other bindings).
    #[must_use]
    pub fn registry(mut self, registry: ToolRegistry) -> Self {
        self.registry = registry;
        self
    }

    /// Sets the options.
    #[must_use]
    pub fn options(mut self, options: ServerOptions) -> Self {
        self.options = options;
        self
    }

    /// Sets the server's human-readable title.
    #[must_use]
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.info.title = Some(title.into());
        self
    }

    /// Builds the server.
    pub fn build(self) -> Server {
        Server {
            shared: Arc::new(Shared {
                registry: self.registry,
                options: self.options,
                info: self.info,
            }),
        }
    }
}
