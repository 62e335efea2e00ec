//! What every handler of the endpoint shares, and the checks every request
//! passes first.

// A refusal is an axum `Response`, returned by value as axum handlers do.
#![allow(clippy::result_large_err)]

use std::sync::Arc;

use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use tokio::sync::{OwnedSemaphorePermit, Semaphore, watch};
use toolshape_protocol::{ErrorObject, RequestId};

use super::super::Shared;
use super::options::HttpOptions;
use super::response;
use super::sessions::Sessions;

/// What every handler shares.
pub(crate) struct App {
    pub(crate) shared: Arc<Shared>,
    pub(crate) options: HttpOptions,
    pub(crate) sessions: Sessions,
    /// Taken by each request answered (for a streamed call, until its stream
    /// ends); never by notifications, so a cancellation is never queued
    /// behind the calls it would cancel.
    pub(crate) permits: Arc<Semaphore>,
    /// Taken by each long-lived notification stream while it is open.
    pub(crate) streams: Arc<Semaphore>,
    /// Turns true when the server shuts down: the long-lived streams (GET,
    /// `subscriptions/listen`) then end, so that shutdown does not wait on them.
    pub(crate) closing: watch::Receiver<bool>,
    /// Keeps `closing` open when nobody will ever close it (a router mounted
    /// in a user's app).
    pub(crate) _close: watch::Sender<bool>,
}

impl App {
    /// Resolves once the server is shutting down.
    pub(crate) fn closing(&self) -> impl std::future::Future<Output = ()> + Send + 'static {
        let mut closing = self.closing.clone();
        async move {
            let _ = closing.wait_for(|closing| *closing).await;
        }
    }

    /// A place for one more notification stream, or the `503` that refuses
    /// it (answering the request `id`, if the stream is one's answer).
    pub(crate) fn stream_permit(
        &self,
        id: Option<&RequestId>,
    ) -> Result<OwnedSemaphorePermit, Response> {
        Arc::clone(&self.streams).try_acquire_owned().map_err(|_| {
            let error =
                ErrorObject::server_busy("too many notification streams open; try again later");
            response::error(StatusCode::SERVICE_UNAVAILABLE, id, &error)
        })
    }

    /// Refuses foreign origins and hosts (DNS rebinding) with 403.
    pub(crate) fn check_origin(&self, headers: &HeaderMap) -> Result<(), Response> {
        super::hardening::check_host_and_origin(headers, &self.options).map_err(|refused| {
            response::error(
                StatusCode::FORBIDDEN,
                None,
                &ErrorObject::invalid_request(refused.to_string()),
            )
        })
    }
}

/// A header's value, when it is visible ASCII.
pub(crate) fn header<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}
