//! The Streamable HTTP binding: one endpoint (`/mcp`), stateless 2026-07-28
//! requests that any instance can answer, and handshake sessions for the
//! older revisions. Foreign Origins are refused, bodies and concurrency are
//! bounded, sessions expire, and shutdown is graceful.

mod header_rules;
mod options;
mod origin;
mod response;
mod routes;
mod sessions;

use std::future::Future;
use std::io;
use std::sync::Arc;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::routing::post;
use tokio::net::TcpListener;
use tokio::sync::{Semaphore, watch};

pub use options::HttpOptions;

use super::Server;
use routes::App;
use sessions::Sessions;

impl Server {
    /// Serves the endpoint on `listener` until `shutdown` resolves, then lets
    /// the requests in flight finish.
    pub async fn serve_http<F>(
        &self,
        listener: TcpListener,
        options: HttpOptions,
        shutdown: F,
    ) -> io::Result<()>
    where
        F: Future<Output = ()> + Send + 'static,
    {
        let (close, closing) = watch::channel(false);
        let app = Arc::new(App {
            shared: Arc::clone(&self.shared),
            sessions: Sessions::new(options.max_sessions, options.session_idle_timeout),
            permits: Arc::new(Semaphore::new(options.max_concurrent_requests.max(1))),
            closing,
            options,
        });
        let expiry = tokio::spawn(expire_sessions(Arc::clone(&app)));
        let router = Router::new()
            .route(
                &app.options.path,
                post(routes::post).get(routes::get).delete(routes::delete),
            )
            .layer(DefaultBodyLimit::max(app.options.max_body_bytes))
            .with_state(Arc::clone(&app));
        // Past the signal, the long-lived streams end (they would otherwise
        // hold the shutdown forever); calls in flight still finish.
        let shutdown = async move {
            shutdown.await;
            let _ = close.send(true);
        };
        let served = axum::serve(listener, router)
            .with_graceful_shutdown(shutdown)
            .await;
        expiry.abort();
        served
    }
}

async fn expire_sessions(app: Arc<App>) {
    let every = (app.sessions.idle_timeout() / 4).max(std::time::Duration::from_secs(1));
    let mut ticks = tokio::time::interval(every);
    loop {
        ticks.tick().await;
        app.sessions.expire();
    }
}
