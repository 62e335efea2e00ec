//! The MCP server: serves a [`ToolRegistry`] over a transport, shaping every
//! response for the revision each peer speaks.

mod asking;
mod builder;
mod call;
mod connected_client;
mod connection;
mod dispatch;
#[cfg(feature = "server-http")]
mod http;
mod identity;
mod in_flight;
mod listens;
mod methods;
mod notices;
mod options;
mod outbox;
pub(crate) mod pages;
mod request;
mod session;
mod shape;
mod url_required;
mod work;

use std::io;
use std::sync::Arc;

use tokio::io::{AsyncRead, AsyncWrite};
use toolshape_protocol::{Implementation, ProtocolVersion};

use crate::tool::ToolRegistry;

pub use builder::{BuildError, ServerBuilder};
pub use connected_client::ConnectedClient;
#[cfg(feature = "server-http")]
pub use http::{
    HttpOptions, RefusedOrigin, allow_cross_origin, check_host_and_origin, is_body_timeout,
    serve_router,
};
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
    /// What 2026-07-28 results name this server by, unless configured off.
    pub(crate) identity: Option<identity::Identity>,
    /// Protects the `requestState` of 2026-07-28 rounds.
    pub(crate) state_key: asking::StateKey,
    pub(crate) resources: crate::resource::ResourceRegistry,
    pub(crate) prompts: crate::prompt::PromptRegistry,
    /// Where resource changes are announced, for the peers that asked.
    pub(crate) resource_events: crate::resource::ResourceEvents,
    /// Where the completions of URL-mode elicitations are announced.
    pub(crate) url_elicitations: crate::tool::UrlElicitations,
    /// Told when a byte-stream connection's client can be asked outside
    /// its requests ([`ServerBuilder::connected_client`]).
    pub(crate) connected_client: Option<ConnectedClient>,
    /// Whether its resources capability says `listChanged` (the builder was
    /// given [`ServerBuilder::resource_events`]).
    pub(crate) announces_resource_changes: bool,
    /// Whether its prompts may change while it serves (the builder was
    /// given [`ServerBuilder::prompt_registry`]): it then offers prompts
    /// even while it has none, and declares `listChanged`.
    pub(crate) announces_prompt_changes: bool,
}

impl Shared {
    /// Names this server in `answer`'s result (an encoded response) when it
    /// answers a 2026-07-28 request.
    pub(crate) fn identify(&self, version: ProtocolVersion, answer: &mut Vec<u8>) {
        if let Some(identity) = &self.identity
            && version.is_stateless()
        {
            identity.stamp(answer);
        }
    }

    /// Whether this server offers prompts: it has some, or they may come.
    pub(crate) fn offers_prompts(&self) -> bool {
        self.announces_prompt_changes || !self.prompts.is_empty()
    }

    /// Whether this server offers `method` (resources, prompts and
    /// completion only when it has some; everything else it knows).
    #[cfg(feature = "server-http")]
    pub(crate) fn offers(&self, method: &str) -> bool {
        use toolshape_protocol::methods as m;
        match method {
            m::RESOURCES_LIST
            | m::RESOURCES_TEMPLATES_LIST
            | m::RESOURCES_READ
            | m::RESOURCES_SUBSCRIBE
            | m::RESOURCES_UNSUBSCRIBE => !self.resources.is_empty(),
            m::PROMPTS_LIST | m::PROMPTS_GET => self.offers_prompts(),
            m::COMPLETION_COMPLETE => !self.resources.is_empty() || self.offers_prompts(),
            _ => true,
        }
    }
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

    /// The prompts it serves (change them while serving when the builder
    /// was given [`ServerBuilder::prompt_registry`]: the change is announced).
    pub fn prompts(&self) -> &crate::prompt::PromptRegistry {
        &self.shared.prompts
    }

    /// Tells the peers subscribed to the resource `uri` that it changed
    /// (`notifications/resources/updated`: handshake sessions that called
    /// `resources/subscribe`, and 2026-07-28 `subscriptions/listen` streams
    /// that named it).
    pub fn resource_updated(&self, uri: impl Into<String>) {
        self.shared.resource_events.updated(uri);
    }

    /// Tells the peers that resources were added or removed
    /// (`notifications/resources/list_changed`: handshake sessions, and
    /// 2026-07-28 `subscriptions/listen` streams that asked for it). Only a
    /// server built with [`ServerBuilder::resource_events`] declares
    /// `listChanged` and so announces it; on any other this does nothing
    /// (updates of single resources, [`Server::resource_updated`], go out
    /// either way).
    pub fn resource_list_changed(&self) {
        self.shared.resource_events.list_changed();
    }

    /// Where this server's resource changes are announced (shareable:
    /// [`ServerBuilder::resource_events`]).
    pub fn resource_events(&self) -> &crate::resource::ResourceEvents {
        &self.shared.resource_events
    }

    /// Where this server announces that URL-mode elicitations are complete
    /// (`notifications/elicitation/complete` to the session each was sent
    /// to; shareable: [`ServerBuilder::url_elicitations`]).
    pub fn url_elicitations(&self) -> &crate::tool::UrlElicitations {
        &self.shared.url_elicitations
    }

    /// Serves one peer over this process's stdin and stdout until stdin ends
    /// and every call in flight has finished, or until writing to stdout
    /// fails (an error then).
    ///
    /// Works whatever stdin and stdout are (pipes, files, a terminal,
    /// sockets); pipes are read and written on the runtime's reactor, so it
    /// needs a runtime with I/O enabled (as `#[tokio::main]` builds).
    pub async fn serve_stdio(&self) -> io::Result<()> {
        self.serve_stdio_until(std::future::pending()).await
    }

    /// As [`serve_stdio`](Self::serve_stdio), and stops when `stop`
    /// resolves (a signal, say) as [`serve_until`](Self::serve_until) does.
    ///
    /// When stdin is not a pipe (a terminal, a file), it is read on a
    /// blocking thread, whose last read may still wait for a line after
    /// this returns: end the runtime with `Runtime::shutdown_timeout` (or
    /// the process) rather than waiting for it.
    pub async fn serve_stdio_until<S>(&self, stop: S) -> io::Result<()>
    where
        S: Future<Output = ()> + Send,
    {
        let input = crate::transport::stdio::input();
        let output = crate::transport::stdio::output();
        let caller = Some(Arc::from("stdio"));
        connection::serve(Arc::clone(&self.shared), input, output, caller, stop).await
    }

    /// Serves one peer over any byte streams of newline-delimited JSON.
    pub async fn serve<R, W>(&self, reader: R, writer: W) -> io::Result<()>
    where
        R: AsyncRead + Unpin + Send,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        self.serve_until(reader, writer, std::future::pending())
            .await
    }

    /// As [`serve`](Self::serve), and stops when `stop` resolves: it reads
    /// no more requests, answers each call it had started and has not
    /// finished with an error that says the server is stopping (`-32603`;
    /// its handler is dropped, as on a cancellation), ends each open
    /// 2026-07-28 `subscriptions/listen` stream with the result that says
    /// so, writes what is queued, and returns `Ok`. A request sent but not
    /// started (waiting behind the in-flight limit, or ready on the input)
    /// gets the same error, up to 1,024 messages; what comes later, none.
    pub async fn serve_until<R, W, S>(&self, reader: R, writer: W, stop: S) -> io::Result<()>
    where
        R: AsyncRead + Unpin + Send,
        W: AsyncWrite + Unpin + Send + 'static,
        S: Future<Output = ()> + Send,
    {
        connection::serve(Arc::clone(&self.shared), reader, writer, None, stop).await
    }
}
