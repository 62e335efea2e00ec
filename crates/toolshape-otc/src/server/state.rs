//! What every handler of the endpoint shares, and the checks each request
//! passes first (`Host`/`Origin`, then credentials).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use tokio::sync::Semaphore;
use toolshape::ToolRegistry;

use super::idempotency::IdempotencyStore;
use super::options::OtcOptions;
use super::rendered::Rendered;
use super::reply;
use crate::auth::Principal;

pub(crate) struct OtcState {
    pub(crate) registry: ToolRegistry,
    pub(crate) options: OtcOptions,
    pub(crate) idempotency: Arc<IdempotencyStore>,
    /// Taken by each call while it runs.
    pub(crate) permits: Arc<Semaphore>,
    /// False once shutdown has begun: `/health` then answers 503.
    pub(crate) ready: AtomicBool,
    /// `GET /openapi.json`, as last rendered.
    pub(crate) openapi: Rendered,
    /// `GET /tools`, as last rendered.
    pub(crate) listing: Rendered,
}

impl OtcState {
    pub(crate) fn new(registry: ToolRegistry, options: OtcOptions) -> Self {
        OtcState {
            idempotency: Arc::new(IdempotencyStore::new(
                options.idempotency_window,
                options.idempotency_max_entries,
                options.idempotency_max_bytes,
            )),
            permits: Arc::new(Semaphore::new(options.http.max_concurrent_requests.max(1))),
            ready: AtomicBool::new(true),
            openapi: Rendered::default(),
            listing: Rendered::default(),
            registry,
            options,
        }
    }

    pub(crate) fn is_ready(&self) -> bool {
        self.ready.load(Ordering::Acquire)
    }

    pub(crate) fn begin_shutdown(&self) {
        self.ready.store(false, Ordering::Release);
    }

    /// Refuses foreign `Host`s and `Origin`s with 403.
    #[allow(clippy::result_large_err)]
    pub(crate) fn check_origin(&self, headers: &HeaderMap) -> Result<(), Response> {
        toolshape::check_host_and_origin(headers, &self.options.http)
            .map_err(|refused| reply::refuse(StatusCode::FORBIDDEN, refused.to_string()))
    }

    /// Refuses foreign `Host`s and `Origin`s (403), then missing or invalid
    /// credentials (401); says who the caller is.
    #[allow(clippy::result_large_err)]
    pub(crate) fn admit(&self, headers: &HeaderMap) -> Result<Principal, Response> {
        self.check_origin(headers)?;
        self.options.auth.authenticate(headers).map_err(|failure| {
            tracing::debug!(%failure, "OTC request refused");
            reply::unauthorized(&failure.to_string())
        })
    }
}
