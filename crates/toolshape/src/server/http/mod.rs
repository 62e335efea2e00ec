//! The Streamable HTTP binding: one endpoint (`/mcp`), stateless 2026-07-28
//! requests that any instance can answer, and handshake sessions for the
//! older revisions. Foreign Origins are refused, bodies and concurrency are
//! bounded, sessions expire (the least recently used idle one makes room
//! when the table is full), and shutdown is graceful.

mod app;
mod body;
mod cors;
mod deadline;
mod hardening;
mod header_rules;
mod legacy;
mod listen;
mod modern;
mod options;
mod origin;
mod response;
mod routes;
mod run;
mod sessions;
mod streams;

use std::future::Future;
use std::io;
use std::sync::{Arc, Weak};

use axum::Router;
use axum::routing::post;
use tokio::net::TcpListener;
use tokio::sync::{Semaphore, watch};

pub use cors::allow_cross_origin;
pub use hardening::{RefusedOrigin, check_host_and_origin, is_body_timeout, serve_router};
pub use options::HttpOptions;

use super::Server;
use app::App;
use sessions::Sessions;

impl Server {
    /// The endpoint as an axum [`Router`] with default [`HttpOptions`]
    /// (serving `/mcp`), to merge into an app of your own with your own
    /// middleware (auth, TLS, tracing):
    ///
    /// ```no_run
    /// # async fn run(server: toolshape::Server) -> std::io::Result<()> {
    /// let app = axum::Router::new()
    ///     .route("/health", axum::routing::get(|| async { "ok" }))
    ///     .merge(server.into_router());
    /// let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
    /// axum::serve(listener, app).await
    /// # }
    /// ```
    pub fn into_router(self) -> Router {
        self.router(HttpOptions::default())
    }

    /// The endpoint as an axum [`Router`] with these options. Served by
    /// your own `axum::serve`, the connection bounds and time limits of
    /// [`Server::serve_http`] (headers, stalled writes) are yours to set,
    /// and so is CORS for browser pages
    /// ([`allow_cross_origin`](crate::allow_cross_origin), outermost).
    pub fn router(&self, options: HttpOptions) -> Router {
        let (close, closing) = watch::channel(false);
        build_router(self, options, closing, close)
    }

    /// Serves the endpoint on `listener` until `shutdown` resolves, then lets
    /// the requests in flight finish. Connections are bounded
    /// ([`HttpOptions::max_connections`]) and must send their headers in time
    /// ([`HttpOptions::header_read_timeout`]); a client that stops reading
    /// its responses is dropped ([`ServerOptions::write_stall_timeout`](crate::ServerOptions::write_stall_timeout));
    /// the address the listener is bound to is an allowed `Host`.
    pub async fn serve_http<F>(
        &self,
        listener: TcpListener,
        options: HttpOptions,
        shutdown: F,
    ) -> io::Result<()>
    where
        F: Future<Output = ()> + Send + 'static,
    {
        self.serve_http_with(listener, options, |router| router, shutdown)
            .await
    }

    /// [`Server::serve_http`] with the endpoint's router passed through
    /// `wrap` first: add middleware (authorization) or routes (metadata
    /// documents) and keep the same bounded, graceful serving. CORS
    /// ([`allow_cross_origin`](crate::allow_cross_origin)) stays in front of
    /// what `wrap` adds, so that browsers' preflights reach no authorization.
    pub async fn serve_http_with<F, W>(
        &self,
        listener: TcpListener,
        mut options: HttpOptions,
        wrap: W,
        shutdown: F,
    ) -> io::Result<()>
    where
        F: Future<Output = ()> + Send + 'static,
        W: FnOnce(Router) -> Router,
    {
        if let Ok(address) = listener.local_addr() {
            options.allow_bound_address(address);
        }
        let limits = listen::ConnectionLimits {
            max_connections: options.max_connections,
            header_read_timeout: options.header_read_timeout,
            body_read_timeout: options.body_read_timeout,
            write_stall_timeout: self.shared.options.write_stall_timeout,
        };
        let (close, closing) = watch::channel(false);
        let cross_origin = options.clone();
        let router = wrap(build_router(self, options, closing, close.clone()));
        let front = cors::Front::new(router, cross_origin);
        // Past the signal, the long-lived streams end (they would otherwise
        // hold the shutdown forever); calls in flight still finish.
        let shutdown = async move {
            shutdown.await;
            let _ = close.send(true);
        };
        listen::serve(listener, front, limits, shutdown).await
    }
}

fn build_router(
    server: &Server,
    options: HttpOptions,
    closing: watch::Receiver<bool>,
    close: watch::Sender<bool>,
) -> Router {
    let app = Arc::new(App {
        shared: Arc::clone(&server.shared),
        sessions: Sessions::new(options.max_sessions, options.session_idle_timeout),
        permits: Arc::new(Semaphore::new(options.max_concurrent_requests.max(1))),
        streams: Arc::new(Semaphore::new(stream_limit(&options))),
        closing,
        _close: close,
        options,
    });
    // Expired sessions are dropped as they are met; a background sweep (when
    // a runtime is at hand) also frees the ones nobody comes back to.
    if let Ok(runtime) = tokio::runtime::Handle::try_current() {
        runtime.spawn(expire_sessions(Arc::downgrade(&app)));
    }
    Router::new()
        .route(
            &app.options.path,
            post(routes::post).get(routes::get).delete(routes::delete),
        )
        .with_state(app)
}

/// The most notification streams open at once: `max_streams`, and never
/// more than half the connections the server holds, so that calls always
/// find one.
fn stream_limit(options: &HttpOptions) -> usize {
    let connections = listen::connection_limit(options.max_connections);
    options.max_streams.min(connections / 2).max(1)
}

/// Sweeps expired sessions until the endpoint is gone.
async fn expire_sessions(app: Weak<App>) {
    let every = match app.upgrade() {
        Some(app) => (app.sessions.idle_timeout() / 4).max(std::time::Duration::from_secs(1)),
        None => return,
    };
    let mut ticks = tokio::time::interval(every);
    loop {
        ticks.tick().await;
        match app.upgrade() {
            Some(app) if !*app.closing.borrow() => app.sessions.expire(),
            _ => return,
        }
    }
}
