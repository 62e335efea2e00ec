//! Answering a request at once as JSON, or as an SSE stream when its call may
//! send progress or log messages before its answer.

use std::sync::Arc;

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use tokio::sync::{mpsc, oneshot};
use toolshape_protocol::RequestId;

use super::super::dispatch::{self, Step};
use super::super::outbox::Outbox;
use super::super::request::ParsedRequest;
use super::super::session::Session;
use super::app::App;
use super::response;
use super::sessions::HttpSession;

/// Runs a request under `session` (a handshake session's, or a fresh one for
/// a stateless request).
pub(crate) async fn run(
    app: &Arc<App>,
    session: &Session,
    http_session: Option<Arc<HttpSession>>,
    request: ParsedRequest,
    cancel_on_disconnect: bool,
) -> Response {
    let Ok(permit) = Arc::clone(&app.permits).acquire_owned().await else {
        return StatusCode::SERVICE_UNAVAILABLE.into_response();
    };
    let call = match dispatch::route(&app.shared, session, request) {
        Step::Answer(answer) => return response::json(StatusCode::OK, answer),
        Step::Call(call) => call,
    };
    let (cancel, cancelled) = oneshot::channel();
    let (cancelled, in_flight) = match http_session {
        Some(session) => match session.in_flight.begin(&call.id) {
            Ok(cancelled) => {
                let id = call.id.clone();
                (cancelled, Some(InFlightCall { session, id }))
            }
            Err(error) => return response::error(StatusCode::OK, Some(&call.id), &error),
        },
        None => (cancelled, None),
    };
    if call.wants_notifications() {
        let (sender, receiver) = mpsc::channel(64);
        let shared = Arc::clone(&app.shared);
        tokio::spawn(async move {
            // The call counts against the limit until it ends, not just
            // until its stream's headers are sent.
            let _permit = permit;
            let _in_flight = in_flight;
            let outbox = Outbox(sender);
            if let Some(answer) = call.run(&shared, Some(&outbox), cancelled).await {
                outbox.send(answer.body).await;
            }
        });
        return response::event_stream(receiver, cancel_on_disconnect.then_some(cancel));
    }
    let answer = call.run(&app.shared, None, cancelled).await;
    drop(in_flight);
    drop(permit);
    drop(cancel);
    match answer {
        Some(answer) if answer.refused => response::json(StatusCode::BAD_REQUEST, answer.body),
        Some(answer) => response::json(StatusCode::OK, answer.body),
        // Cancelled: there is nothing to answer.
        None => StatusCode::NO_CONTENT.into_response(),
    }
}

/// A session's call in flight; forgotten when its request ends, however it
/// ends (a client that goes away drops the handler mid-call), so that its id
/// can be used again.
struct InFlightCall {
    session: Arc<HttpSession>,
    id: RequestId,
}

impl Drop for InFlightCall {
    fn drop(&mut self) {
        self.session.in_flight.finish(&self.id);
    }
}
