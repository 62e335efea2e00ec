//! Accepting connections: bounded in number (below the process's descriptor
//! limit), each with a time limit on reading a request's headers (a slowloris
//! client that sends a byte a second is cut off; an idle keep-alive
//! connection is closed when its next request does not start in time), a
//! time limit on a request's body arriving whole (the same client sending
//! its body slowly, or never, gets `408`), a time limit on writes that make no progress (a client that stops reading
//! its responses or its event stream is dropped: its calls are cancelled,
//! its slot freed), and a graceful end: past the shutdown signal no connection is accepted and
//! the requests in flight finish.

use std::future::Future;
use std::io;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::extract::ConnectInfo;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tower::ServiceExt;

use super::cors::Front;
use super::deadline::DeadlineBody;
use crate::transport::stall::StallGuard;

/// Descriptors kept free for everything but connections (files, pipes, the listener).
#[cfg(unix)]
const RESERVED_DESCRIPTORS: u64 = 64;

/// The most connections to hold at once: `wanted`, but never more than the
/// process's descriptor limit allows (Unix; Windows sets no such limit on
/// sockets).
pub(crate) fn connection_limit(wanted: usize) -> usize {
    #[cfg(unix)]
    let allowed = rustix::process::getrlimit(rustix::process::Resource::Nofile)
        .current
        .map(|limit| limit.saturating_sub(RESERVED_DESCRIPTORS).max(1))
        .and_then(|limit| usize::try_from(limit).ok())
        .unwrap_or(usize::MAX);
    #[cfg(not(unix))]
    let allowed = usize::MAX;
    wanted.clamp(1, allowed)
}

/// The limits each connection is held to.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ConnectionLimits {
    /// Most connections at once.
    pub(crate) max_connections: usize,
    /// Time to send a request's headers (and to start the next one).
    pub(crate) header_read_timeout: Duration,
    /// Time for a request's body to arrive whole, from its headers on.
    pub(crate) body_read_timeout: Duration,
    /// Time a write may make no progress.
    pub(crate) write_stall_timeout: Option<Duration>,
}

/// Serves `front` (the endpoint's router behind its front: see `cors.rs`)
/// on `listener` until `shutdown` resolves.
pub(crate) async fn serve<F>(
    listener: TcpListener,
    front: Front,
    limits: ConnectionLimits,
    shutdown: F,
) -> io::Result<()>
where
    F: Future<Output = ()> + Send + 'static,
{
    let ConnectionLimits {
        max_connections,
        header_read_timeout,
        body_read_timeout,
        write_stall_timeout,
    } = limits;
    let permits = Arc::new(Semaphore::new(connection_limit(max_connections)));
    let graceful = GracefulShutdown::new();
    let mut http = http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(header_read_timeout)
        .keep_alive(true);
    tokio::pin!(shutdown);
    loop {
        // At the limit, accepting waits for a connection to end: the kernel
        // queues new ones meanwhile; the header timeout ends stalled ones.
        let permit = tokio::select! {
            permit = Arc::clone(&permits).acquire_owned() => permit,
            () = &mut shutdown => break,
        };
        let Ok(permit) = permit else { break };
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = &mut shutdown => break,
        };
        let (stream, address) = match accepted {
            Ok(accepted) => accepted,
            Err(error) => {
                // Out of descriptors or memory, or a connection reset before
                // it was accepted: wait a little, never spin.
                tracing::warn!(%error, "accepting a connection failed");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        // Handlers see who connected (`ConnectInfo`, as axum's own serve gives it).
        let service =
            front
                .clone()
                .map_request(move |mut request: hyper::Request<hyper::body::Incoming>| {
                    request.extensions_mut().insert(ConnectInfo(address));
                    request.map(|body| Body::new(DeadlineBody::new(body, body_read_timeout)))
                });
        let service = TowerToHyperService::new(service);
        let stream = TokioIo::new(StallGuard::new(stream, write_stall_timeout));
        let connection = graceful.watch(http.serve_connection(stream, service));
        tokio::spawn(async move {
            let _permit = permit;
            if let Err(error) = connection.await {
                tracing::debug!(%error, "a connection ended with an error");
            }
        });
    }
    drop(listener);
    graceful.shutdown().await;
    Ok(())
}
