//! CORS for browser clients: a page whose origin may use the endpoint (a
//! loopback origin, or one of [`HttpOptions::allowed_origins`]) is told so,
//! its preflight answered, and the MCP headers a client reads made visible
//! to it. Origins the endpoint refuses get no CORS headers (and `403` from
//! the `Origin` check when they post anyway).

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::http::{HeaderName, HeaderValue, Method, header};
use toolshape_protocol::http::names;
use tower_http::cors::{AllowHeaders, AllowOrigin, AllowPrivateNetwork, CorsLayer};

use super::options::HttpOptions;
use super::origin;

/// How long a browser may keep a preflight's answer.
const PREFLIGHT_MAX_AGE: Duration = Duration::from_secs(10 * 60);

/// `router` with CORS in front of everything it serves, so that a
/// preflight (`OPTIONS`, no credentials) is answered before any
/// authorization layer sees it. [`Server::serve_http`](crate::Server::serve_http)
/// and [`serve_router`](crate::serve_router) add it themselves; a router
/// mounted into an application of one's own takes it from here.
///
/// Allowed: the origins the endpoint serves, the methods `GET`, `POST`,
/// `DELETE`, any request header the page asks for (MCP's `Mcp-Param-*`
/// headers are named by each tool). Exposed to the page: `Mcp-Session-Id`,
/// `MCP-Protocol-Version`, `WWW-Authenticate` (OAuth discovery) and
/// `Retry-After`. A public page reaching a private address is allowed too
/// (Private Network Access), for the same origins.
pub fn allow_cross_origin(router: Router, options: &HttpOptions) -> Router {
    router.layer(layer(&options.allowed_origins))
}

pub(super) fn layer(allowed_origins: &[String]) -> CorsLayer {
    let allowed: Arc<[String]> = allowed_origins.into();
    let private = Arc::clone(&allowed);
    let serves = move |origin: &HeaderValue, allowed: &[String]| {
        origin
            .to_str()
            .is_ok_and(|origin| origin::is_allowed(origin, allowed))
    };
    CorsLayer::new()
        .allow_origin(AllowOrigin::predicate(move |origin, _| {
            serves(origin, &allowed)
        }))
        .allow_private_network(AllowPrivateNetwork::predicate(move |origin, _| {
            serves(origin, &private)
        }))
        .allow_methods([Method::GET, Method::POST, Method::DELETE])
        .allow_headers(AllowHeaders::mirror_request())
        .expose_headers([
            HeaderName::from_static(names::SESSION_ID),
            HeaderName::from_static(names::PROTOCOL_VERSION),
            header::WWW_AUTHENTICATE,
            header::RETRY_AFTER,
        ])
        .max_age(PREFLIGHT_MAX_AGE)
}
