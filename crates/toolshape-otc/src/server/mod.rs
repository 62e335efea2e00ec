//! The OTC endpoint: `GET /health`, `GET /tools`, `POST /tools/call` and
//! `GET /openapi.json`, serving every tool of a [`ToolRegistry`] with no
//! change to the tool.

mod call;
mod idempotency;
mod openapi;
mod options;
mod rendered;
mod reply;
mod routes;
mod state;

use std::future::Future;
use std::io;
use std::sync::Arc;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::routing::{get, post};
use tokio::net::TcpListener;
use toolshape::{Server, ToolRegistry};

pub use call::new_call_id;
pub use options::{OtcOptions, Readiness};
use state::OtcState;

/// The OTC endpoint of a registry. Cheap to clone; clones share the endpoint
/// (its idempotency store, its readiness).
///
/// ```no_run
/// # async fn run(server: toolshape::Server) -> std::io::Result<()> {
/// use toolshape_otc::{OtcOptions, OtcServer};
/// let otc = OtcServer::new(server.registry().clone(), OtcOptions::default());
/// let app = axum::Router::new().merge(otc.router());
/// # let _ = app; Ok(()) }
/// ```
#[derive(Clone)]
pub struct OtcServer {
    state: Arc<OtcState>,
}

impl std::fmt::Debug for OtcServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OtcServer")
            .field("registry", &self.state.registry)
            .field("options", &self.state.options)
            .finish_non_exhaustive()
    }
}

impl OtcServer {
    /// The endpoint of `registry` (shared: tools added or removed later are
    /// served too).
    pub fn new(registry: ToolRegistry, options: OtcOptions) -> Self {
        OtcServer {
            state: Arc::new(OtcState::new(registry, options)),
        }
    }

    /// The endpoint as an axum [`Router`], to serve or to merge into an app.
    pub fn router(&self) -> Router {
        Router::new()
            .route("/health", get(routes::health))
            .route("/tools", get(routes::tools))
            .route("/tools/call", post(call::post))
            .route("/openapi.json", get(routes::openapi))
            .method_not_allowed_fallback(routes::method_not_allowed)
            .layer(DefaultBodyLimit::max(
                self.state.options.http.max_body_bytes,
            ))
            .with_state(Arc::clone(&self.state))
    }

    /// Whether calls are taken (`GET /health` answers 200).
    pub fn is_ready(&self) -> bool {
        self.state.is_ready()
    }

    /// Begins shutting down: `GET /health` answers 503 from now on (a router
    /// mounted in an app of your own calls this when the app begins to stop).
    pub fn begin_shutdown(&self) {
        self.state.begin_shutdown();
    }
}

/// The OTC endpoint of `registry` as an axum [`Router`].
pub fn router(registry: &ToolRegistry, options: OtcOptions) -> Router {
    OtcServer::new(registry.clone(), options).router()
}

/// Serves the OTC endpoint of `registry` on `listener` with the MCP
/// endpoint's hardening ([`toolshape::serve_router`]: connection limit,
/// header-read timeout, graceful shutdown) until `shutdown` resolves; then
/// `/health` answers 503 for [`OtcOptions::drain`] while calls are still
/// taken, the listener closes, and the calls in flight finish. The address
/// the listener is bound to is an allowed `Host`.
pub async fn serve<F>(
    registry: &ToolRegistry,
    listener: TcpListener,
    options: OtcOptions,
    shutdown: F,
) -> io::Result<()>
where
    F: Future<Output = ()> + Send + 'static,
{
    serve_with(registry, listener, options, |router| router, shutdown).await
}

/// [`serve`], with the endpoint's router passed through `wrap` first: to
/// add routes of your own (say `/metrics`) served with the same hardening.
pub async fn serve_with<F, W>(
    registry: &ToolRegistry,
    listener: TcpListener,
    mut options: OtcOptions,
    wrap: W,
    shutdown: F,
) -> io::Result<()>
where
    F: Future<Output = ()> + Send + 'static,
    W: FnOnce(Router) -> Router,
{
    if let Ok(address) = listener.local_addr() {
        options.http.allow_bound_address(address);
    }
    let drain = options.drain;
    let http = options.http.clone();
    let server = OtcServer::new(registry.clone(), options);
    // Routes `wrap` added answer a method they do not take as the endpoint's do.
    let router = wrap(server.router()).method_not_allowed_fallback(routes::method_not_allowed);
    let shutdown = async move {
        shutdown.await;
        server.begin_shutdown();
        tokio::time::sleep(drain).await;
    };
    toolshape::serve_router(listener, router, &http, shutdown).await
}

/// The OTC endpoint of a [`Server`]'s tools, as methods of the server.
///
/// `Server::otc_router()` lives here, not in `toolshape`, because the
/// dependency goes one way: `toolshape-otc` builds on `toolshape`, which
/// knows nothing of OTC.
pub trait OtcExt {
    /// The OTC endpoint as an axum [`Router`], serving the server's registry.
    fn otc_router(&self, options: OtcOptions) -> Router;

    /// Serves the OTC endpoint on `listener` (see [`serve`]).
    fn serve_otc<F>(
        &self,
        listener: TcpListener,
        options: OtcOptions,
        shutdown: F,
    ) -> impl Future<Output = io::Result<()>> + Send
    where
        F: Future<Output = ()> + Send + 'static;
}

impl OtcExt for Server {
    fn otc_router(&self, options: OtcOptions) -> Router {
        router(self.registry(), options)
    }

    fn serve_otc<F>(
        &self,
        listener: TcpListener,
        options: OtcOptions,
        shutdown: F,
    ) -> impl Future<Output = io::Result<()>> + Send
    where
        F: Future<Output = ()> + Send + 'static,
    {
        let registry = self.registry().clone();
        async move { serve(&registry, listener, options, shutdown).await }
    }
}
