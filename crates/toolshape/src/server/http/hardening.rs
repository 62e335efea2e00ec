//! The endpoint's hardening, for other HTTP bindings of the same tools (the
//! OTC endpoint of `toolshape-otc`): the accept loop with its limits, and
//! the `Host` / `Origin` checks against DNS rebinding.

use std::future::Future;
use std::io;

use axum::Router;
use axum::http::{HeaderMap, header};
use tokio::net::TcpListener;

use super::options::HttpOptions;
use super::{listen, origin};

/// Serves `router` on `listener` as [`Server::serve_http`](crate::Server::serve_http)
/// serves the MCP endpoint: at most [`HttpOptions::max_connections`]
/// connections, each sending its headers within
/// [`HttpOptions::header_read_timeout`] and a request's body within
/// [`HttpOptions::body_read_timeout`]; once `shutdown` resolves no
/// connection is accepted and the requests in flight finish. Body size,
/// concurrency and `Host`/`Origin` checks belong to the router (see
/// [`check_host_and_origin`]); CORS for the same origins is added in front of
/// it (see [`allow_cross_origin`](crate::allow_cross_origin)).
pub async fn serve_router<F>(
    listener: TcpListener,
    router: Router,
    options: &HttpOptions,
    shutdown: F,
) -> io::Result<()>
where
    F: Future<Output = ()> + Send + 'static,
{
    let limits = listen::ConnectionLimits {
        max_connections: options.max_connections,
        header_read_timeout: options.header_read_timeout,
        body_read_timeout: options.body_read_timeout,
        write_stall_timeout: crate::ServerOptions::default().write_stall_timeout,
    };
    let front = super::cors::Front::new(router, options.clone());
    listen::serve(listener, front, limits, shutdown).await
}

/// Whether `error` (or one of its causes) is a request body that did not
/// arrive whole within [`HttpOptions::body_read_timeout`]: for a binding
/// that reads bodies itself, to answer `408` (an `io::Error` of kind
/// `TimedOut` to those that do not depend on this crate).
pub fn is_body_timeout(error: &(dyn std::error::Error + 'static)) -> bool {
    super::deadline::timed_out(error)
}

/// Which header a request was refused for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RefusedOrigin {
    /// `Host` names neither a loopback name nor an allowed host.
    #[error("this Host may not use the endpoint")]
    Host,
    /// `Origin` is neither a loopback origin nor an allowed one.
    #[error("this Origin may not use the endpoint")]
    Origin,
}

/// Checks a request's `Host` and `Origin` as the MCP endpoint does:
/// loopback names and origins pass, others only when listed in
/// [`HttpOptions::allowed_hosts`] / [`HttpOptions::allowed_origins`].
pub fn check_host_and_origin(
    headers: &HeaderMap,
    options: &HttpOptions,
) -> Result<(), RefusedOrigin> {
    match headers.get(header::HOST).map(|v| v.to_str()) {
        None => {}
        Some(Ok(host)) if origin::is_allowed_host(host, &options.allowed_hosts) => {}
        Some(_) => return Err(RefusedOrigin::Host),
    }
    match headers.get(header::ORIGIN).map(|v| v.to_str()) {
        None => Ok(()),
        Some(Ok(value)) if origin::is_allowed(value, &options.allowed_origins) => Ok(()),
        Some(_) => Err(RefusedOrigin::Origin),
    }
}
