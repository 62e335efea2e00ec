//! [`ClientBuilder`]: how a client is configured, and how it connects
//! (a child process, Streamable HTTP, or byte streams of the caller's),
//! negotiating a revision before it is handed over.

use super::*;

/// Configures and connects a [`Client`].
#[derive(Clone)]
pub struct ClientBuilder {
    negotiation: Negotiation,
    client_info: Implementation,
    engine: Option<SchemaEngine>,
    options: ClientOptions,
    hooks: Hooks,
    handlers: Handlers,
    #[cfg(feature = "client-http")]
    http: http::HttpExtras,
}

impl std::fmt::Debug for ClientBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientBuilder")
            .field("negotiation", &self.negotiation)
            .field("client_info", &self.client_info)
            .field("options", &self.options)
            .field("before_call", &self.hooks.before_call.is_some())
            .field("handlers", &self.handlers)
            .field("on_message", &self.hooks.on_message.is_some())
            .finish_non_exhaustive()
    }
}

impl Default for ClientBuilder {
    fn default() -> Self {
        ClientBuilder {
            negotiation: Negotiation::Auto,
            client_info: Implementation::new("toolshape", env!("CARGO_PKG_VERSION")),
            engine: None,
            options: ClientOptions::default(),
            hooks: Hooks::default(),
            handlers: Handlers::default(),
            #[cfg(feature = "client-http")]
            http: http::HttpExtras::default(),
        }
    }
}

impl ClientBuilder {
    /// Sets how the revision is chosen (automatic by default).
    #[must_use]
    pub fn negotiation(mut self, negotiation: Negotiation) -> Self {
        self.negotiation = negotiation;
        self
    }

    /// Sets how the client names itself.
    #[must_use]
    pub fn client_info(mut self, name: impl Into<String>, version: impl Into<String>) -> Self {
        self.client_info = Implementation::new(name, version);
        self
    }

    /// Sets the options, all of them (a `request_timeout` set before is
    /// replaced by theirs: set it after, or in them).
    #[must_use]
    pub fn options(mut self, options: ClientOptions) -> Self {
        self.options = options;
        self
    }

    /// Sets the request timeout (in the options: call it after
    /// [`ClientBuilder::options`]).
    #[must_use]
    pub fn request_timeout(mut self, timeout: Duration) -> Self {
        self.options.request_timeout = timeout;
        self
    }

    /// Sets the schema engine output schemas compile with (by default an
    /// untrusted engine: nothing fetched, bounds on, a time budget).
    #[must_use]
    pub fn engine(mut self, engine: SchemaEngine) -> Self {
        self.engine = Some(engine);
        self
    }

    /// Answers the server's elicitations (questions for the user) with
    /// `handler`, and declares the `elicitation` capability (form mode;
    /// `url_mode` adds URL mode).
    #[must_use]
    pub fn on_elicit<F, Fut>(mut self, url_mode: bool, handler: F) -> Self
    where
        F: Fn(ElicitParams) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ElicitResult, ErrorObject>> + Send + 'static,
    {
        self.handlers.set_elicit(url_mode, handler);
        self
    }

    /// Answers the server's sampling requests (questions for the model) with
    /// `handler`, and declares the `sampling` capability.
    #[must_use]
    pub fn on_sample<F, Fut>(mut self, handler: F) -> Self
    where
        F: Fn(CreateMessageParams) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<CreateMessageResult, ErrorObject>> + Send + 'static,
    {
        self.handlers.set_sample(handler);
        self
    }

    /// Offers these roots to the server, and declares the `roots` capability.
    #[must_use]
    pub fn roots(mut self, roots: Vec<Root>) -> Self {
        self.handlers.set_roots(roots);
        self
    }

    /// Answers the server's `roots/list` with `handler` (the roots as they
    /// are when asked), and declares the `roots` capability.
    #[must_use]
    pub fn on_roots<F, Fut>(mut self, handler: F) -> Self
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Vec<Root>, ErrorObject>> + Send + 'static,
    {
        self.handlers.set_roots_with(handler);
        self
    }

    /// Answers the server's `roots/list` with this client's own roots
    /// ([`roots`](Self::roots) or [`on_roots`](Self::on_roots)) also about a
    /// call whose questions are relayed to another client
    /// ([`CallOptions::relay_asks`](crate::CallOptions::relay_asks)), and
    /// declares those roots on it (2026-07-28) rather than the caller's: for
    /// a gateway that decides what the servers behind it may see, whatever
    /// its callers offer. Without a roots handler it changes nothing.
    #[must_use]
    pub fn keep_roots(mut self) -> Self {
        self.handlers.keep_roots();
        self
    }

    /// Declares the roots of a handler ([`on_roots`](Self::on_roots)) without
    /// `listChanged`: for a client that never tells the server of a change
    /// ([`Client::notify_roots_changed`] then sends nothing), such as a
    /// gateway whose roots are each caller's.
    #[must_use]
    pub fn unannounced_roots_changes(mut self) -> Self {
        self.handlers.tell_no_roots_changes();
        self
    }

    /// Asks `confirm` before every call; a `false` declines the call.
    #[must_use]
    pub fn before_call<F, Fut>(mut self, confirm: F) -> Self
    where
        F: Fn(&str, &Value) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = bool> + Send + 'static,
    {
        self.hooks.before_call = Some(Arc::new(move |name, arguments| {
            Box::pin(confirm(name, arguments))
        }));
        self
    }

    /// Authorizes every HTTP request with `auth` (an OAuth client, a static
    /// token...), which also answers the server's 401 and 403 challenges.
    #[cfg(feature = "client-http")]
    #[must_use]
    pub fn http_auth(mut self, auth: Arc<dyn HttpAuth>) -> Self {
        self.http.auth = Some(auth);
        self
    }

    /// Sends `headers` with every HTTP request: the fixed credential a
    /// server may want instead of OAuth (an API key header, a static
    /// `Authorization: Bearer ...`), or any header a gateway in the way
    /// needs. Their values are marked sensitive (left out of logs and
    /// debug output). The headers the transport sets itself (`Content-Type`,
    /// `Accept`, `Last-Event-ID`, every `Mcp-*` header,
    /// `MCP-Protocol-Version`, the hop-by-hop ones) cannot be given so:
    /// connecting fails naming the header, as it does for a name given
    /// twice. An [`http_auth`](Self::http_auth) hook's headers replace
    /// these where both set one. With such headers a redirect is followed
    /// only within the endpoint's origin (another would get the key).
    #[cfg(feature = "client-http")]
    #[must_use]
    pub fn http_headers(mut self, headers: reqwest::header::HeaderMap) -> Self {
        self.http.headers = headers;
        self
    }

    /// Shows `observe` the bytes of every message the server sends, as
    /// received and before the client reads them, from the handshake on:
    /// one JSON-RPC message (a line over stdio, a body or an SSE event's
    /// data over HTTP) per call, even when it is not valid JSON. A message
    /// over [`ClientOptions::max_message_bytes`] is not shown (the request it
    /// answers fails). For auditing a server's wire output (`toolshape
    /// check`); it runs on the reader task, so it must return quickly.
    #[must_use]
    pub fn on_message<F>(mut self, observe: F) -> Self
    where
        F: Fn(&[u8]) + Send + Sync + 'static,
    {
        self.hooks.on_message = Some(Arc::new(observe));
        self
    }

    /// Starts the server as a child process and connects over its stdin and stdout.
    pub async fn connect_stdio(self, command: ServerCommand) -> Result<Client, ClientError> {
        let transport = stdio::spawn(
            &command,
            self.options.max_message_bytes,
            self.handlers.clone(),
            self.hooks.on_message.clone(),
        )?;
        self.finish(
            transport.peer,
            Some(transport.child),
            transport.stderr,
            transport.stderr_reading,
        )
        .await
    }

    /// Connects to a server over byte streams of the caller's: JSON-RPC
    /// messages, one per line, written to `writer` and read from `reader`,
    /// as over stdio (a socket, an SSH channel, `tokio::io::duplex` to a
    /// [`Server::serve`](crate::Server::serve) in the same process). The
    /// connection ends when `reader` does, or on [`Client::close`].
    pub async fn connect<R, W>(self, reader: R, writer: W) -> Result<Client, ClientError>
    where
        R: tokio::io::AsyncRead + Unpin + Send + 'static,
        W: tokio::io::AsyncWrite + Unpin + Send + 'static,
    {
        let peer = stdio::over_streams(
            reader,
            writer,
            self.options.max_message_bytes,
            self.handlers.clone(),
            self.hooks.on_message.clone(),
        );
        self.finish(peer, None, stdio::StderrTail::default(), None)
            .await
    }

    /// Connects to an MCP endpoint over Streamable HTTP (`http://host:port/mcp`).
    #[cfg(feature = "client-http")]
    pub async fn connect_http(self, url: &str) -> Result<Client, ClientError> {
        let parsed = reqwest::Url::parse(url).map_err(|e| TransportError::Url {
            url: toolshape_protocol::text::excerpt(url, 200),
            reason: e.to_string(),
        })?;
        let peer = http::connect(
            parsed,
            self.options.max_message_bytes,
            self.http.clone(),
            self.handlers.clone(),
            self.hooks.on_message.clone(),
        )?;
        self.finish(peer, None, stdio::StderrTail::default(), None)
            .await
    }

    async fn finish(
        self,
        peer: Arc<Peer>,
        child: Option<super::process::ServerProcess>,
        stderr: stdio::StderrTail,
        stderr_reading: Option<tokio::task::JoinHandle<()>>,
    ) -> Result<Client, ClientError> {
        let negotiated = negotiate::negotiate(
            &peer,
            self.negotiation,
            &self.client_info,
            self.options.request_timeout,
            self.options.probe_timeout.min(self.options.request_timeout),
        )
        .await;
        let negotiated = match negotiated {
            Ok(negotiated) => negotiated,
            Err(error) => {
                peer.close_output().await;
                let mut status = None;
                if let Some(mut child) = child {
                    // A server whose output ended is exiting: how it did
                    // says why (a moment's wait); one still running is
                    // stopped.
                    if peer.is_closed() {
                        status = tokio::time::timeout(STDERR_DRAIN, child.wait())
                            .await
                            .ok()
                            .and_then(Result::ok);
                    }
                    let _ = child.kill().await;
                }
                // What the server said before it failed, once its stderr
                // has been read to its end (a moment: the child is gone).
                if let Some(reading) = stderr_reading {
                    let _ = tokio::time::timeout(STDERR_DRAIN, reading).await;
                }
                let tail: Vec<String> = stderr
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .iter()
                    .cloned()
                    .collect();
                return Err(error.with_server_end(tail, status));
            }
        };
        tracing::debug!(version = %negotiated.version, server = ?negotiated.server_info, "connected");
        if negotiated.version.allows_batches() {
            peer.take_batches();
        }
        let stateless = negotiated.version.is_stateless();
        let request_meta = stateless
            .then(|| negotiate::modern_meta(&self.client_info, &peer.handlers.capabilities()));
        let relay_meta = stateless.then(|| {
            let mut own = peer.handlers.capabilities();
            (own.elicitation, own.sampling) = (None, None);
            if !peer.handlers.keeps_roots() {
                own.roots = None;
            }
            negotiate::modern_meta(&self.client_info, &own)
        });
        Ok(Client {
            inner: Arc::new(Inner {
                peer,
                negotiated,
                engine: self.engine.unwrap_or_default(),
                options: self.options,
                hooks: self.hooks,
                tools: tokio::sync::Mutex::new(None),
                child: Mutex::new(child),
                stderr,
                request_meta,
                relay_meta,
            }),
        })
    }
}
