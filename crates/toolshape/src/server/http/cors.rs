//! CORS for browser clients: a page whose origin is listed in
//! [`HttpOptions::allowed_origins`] is told it may read the endpoint's
//! answers, its preflight answered, and the MCP headers a client reads made
//! visible to it. Loopback origins, which the `Origin` check lets through
//! (DNS rebinding is about foreign sites), get no CORS unless listed: a page
//! of any local web app could read tool results otherwise.
//!
//! Only preflights (`OPTIONS` with `Access-Control-Request-Method`) are
//! answered here, after the `Host`/`Origin` check (`403` for a refused
//! one); any other `OPTIONS` goes to the router as before. In front of it
//! all, a request target in absolute form is checked by the host it names.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::http::{HeaderName, HeaderValue, Method, Request, StatusCode, header};
use axum::response::{IntoResponse, Response};
use toolshape_protocol::http::names;
use tower::{Layer, Service, ServiceExt};
use tower_http::cors::{AllowHeaders, AllowOrigin, AllowPrivateNetwork, Cors, CorsLayer};

use super::hardening::{RefusedOrigin, check_host_and_origin};
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
/// Allowed: the origins listed in [`HttpOptions::allowed_origins`] (exactly
/// as written there, e.g. `http://localhost:6274` for the MCP Inspector), the
/// methods `GET`, `POST`, `DELETE`, any request header the page asks for
/// (MCP's `Mcp-Param-*` headers are named by each tool). Exposed to the
/// page: `Mcp-Session-Id`, `MCP-Protocol-Version`, `WWW-Authenticate`
/// (OAuth discovery) and `Retry-After`. A public page reaching a private
/// address is allowed too (Private Network Access), for the same origins.
///
/// A request whose target is in absolute form (`POST http://host/mcp`, as
/// sent to a forward proxy) is checked by the host it names, as its `Host`
/// header would be, and refused (`403`) when the endpoint does not serve it.
pub fn allow_cross_origin(router: Router, options: &HttpOptions) -> Router {
    Router::new().fallback_service(Front::new(router, options.clone()))
}

fn layer(allowed_origins: &[String]) -> CorsLayer {
    let allowed: Arc<[String]> = allowed_origins.into();
    let private = Arc::clone(&allowed);
    let listed = |origin: &HeaderValue, allowed: &[String]| {
        origin
            .to_str()
            .is_ok_and(|origin| allowed.iter().any(|a| a.eq_ignore_ascii_case(origin)))
    };
    CorsLayer::new()
        .allow_origin(AllowOrigin::predicate(move |origin, _| {
            listed(origin, &allowed)
        }))
        .allow_private_network(AllowPrivateNetwork::predicate(move |origin, _| {
            listed(origin, &private)
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

/// What every request meets first: an absolute-form target's host
/// checked; preflights through the `Host`/`Origin` check to CORS, other
/// `OPTIONS` requests and requests no page sent (no `Origin`) to the router
/// alone, and the rest to the router with CORS headers added. Served as it
/// is by [`Server::serve_http`](crate::Server::serve_http) and
/// [`serve_router`](crate::serve_router) (no router around it).
#[derive(Clone)]
pub(crate) struct Front {
    plain: Router,
    /// Cloned only for the requests pages send: hyper clones the front for
    /// every request.
    with_cors: Arc<Cors<Router>>,
    options: Arc<HttpOptions>,
}

impl Front {
    /// `router` behind its front, for `options`' origins and hosts.
    pub(crate) fn new(router: Router, options: HttpOptions) -> Front {
        Front {
            with_cors: Arc::new(layer(&options.allowed_origins).layer(router.clone())),
            plain: router,
            options: Arc::new(options),
        }
    }
}

type Answering = Pin<Box<dyn Future<Output = Result<Response, Infallible>> + Send>>;

impl Service<Request<Body>> for Front {
    type Response = Response;
    type Error = Infallible;
    type Future = Answering;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<Body>) -> Answering {
        // An absolute-form target (`POST http://host/mcp`) names the host
        // the request is for; its `Host` header is to be ignored (RFC 9112
        // 3.2.2), so the target's is checked as a `Host` would be.
        if let Some(authority) = request.uri().authority()
            && !origin::is_allowed_host(authority.as_str(), &self.options.allowed_hosts)
        {
            let refused = RefusedOrigin::Host.to_string();
            return Box::pin(std::future::ready(Ok(
                (StatusCode::FORBIDDEN, refused).into_response()
            )));
        }
        let options = request.method() == Method::OPTIONS;
        let preflight = options
            && request
                .headers()
                .contains_key(header::ACCESS_CONTROL_REQUEST_METHOD);
        if preflight && let Err(refused) = check_host_and_origin(request.headers(), &self.options) {
            let refused = (StatusCode::FORBIDDEN, refused.to_string()).into_response();
            return Box::pin(std::future::ready(Ok(refused)));
        }
        // No page sent it (no `Origin`), or it is no preflight: the router's.
        if !request.headers().contains_key(header::ORIGIN) || options && !preflight {
            return Box::pin(self.plain.clone().oneshot(request));
        }
        let answering = Cors::clone(&self.with_cors).oneshot(request);
        Box::pin(async move { answering.await.map(IntoResponse::into_response) })
    }
}
