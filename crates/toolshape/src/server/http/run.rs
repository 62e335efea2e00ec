//! Answering a request as JSON, or as an SSE stream when its call sends
//! progress, log messages or requests of its own before its answer; a
//! batch's requests, answered alone.

use std::sync::Arc;

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use tokio::sync::{mpsc, oneshot};
use toolshape_protocol::{ErrorObject, RequestId};

use super::super::dispatch::{self, Step};
use super::super::in_flight::Ticket;
use super::super::outbox::{Outbox, encode_error};
use super::super::request::ParsedRequest;
use super::super::session::Session;
use super::super::work::Answer;
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
            Ok((cancelled, ticket)) => {
                let id = call.id.clone();
                (
                    cancelled,
                    Some(InFlightCall {
                        session,
                        id,
                        ticket,
                    }),
                )
            }
            Err(error) => return response::error(StatusCode::OK, Some(&call.id), &error),
        },
        None => (cancelled, None),
    };
    if call.wants_notifications() {
        // Messages may precede the answer. The response's kind is decided by
        // what comes first: the answer alone goes back as JSON; a message
        // before it opens an event stream, which ends with the answer.
        let (sender, mut receiver) = mpsc::channel(64);
        let (answered, mut answer) = oneshot::channel();
        let shared = Arc::clone(&app.shared);
        tokio::spawn(async move {
            // The call counts against the limit until it ends, not just
            // until its stream's headers are sent.
            let _permit = permit;
            let _in_flight = in_flight;
            let outbox = Outbox(sender);
            if let Some(answer) = call.run(&shared, Some(&outbox), cancelled).await {
                let _ = answered.send(answer);
            }
        });
        // Until then, a client that goes away drops this handler and with
        // it `cancel`: a stateless call is cancelled (hyper drops a pending
        // handler when it reads the connection's end; a client that only
        // half-closes it, or sends more bytes on it, is not seen before
        // the call's first message). Nothing is sent before the first message,
        // so that a refusal before any (a capability the client lacks,
        // -32021) still gets its `400`.
        let first = tokio::select! {
            biased;
            frame = receiver.recv() => frame,
            done = &mut answer => {
                drop(cancel);
                return match done {
                    // A message sent just before the answer, after the
                    // channel was looked at: it still goes first.
                    Ok(answer) => match receiver.try_recv() {
                        Ok(first) => {
                            let (resend, answer_again) = oneshot::channel();
                            let _ = resend.send(answer);
                            response::answer_stream(Some(first), receiver, answer_again, None)
                        }
                        Err(_) => json_answer(answer),
                    },
                    Err(_) => response::unanswered(),
                };
            }
        };
        let Some(first) = first else {
            // The call ended without a message: only its answer is left.
            drop(cancel);
            return match answer.await {
                Ok(answer) => json_answer(answer),
                Err(_) => response::unanswered(),
            };
        };
        // From here, closing the stream is a stateless call's cancellation.
        let on_close = cancel_on_disconnect.then_some(cancel);
        return response::answer_stream(Some(first), receiver, answer, on_close);
    }
    // Boxed: the call's future is large (the tool's whole state machine),
    // and this handler's future is moved and boxed by the router per request.
    let answer = Box::pin(call.run(&app.shared, None, cancelled)).await;
    drop(in_flight);
    drop(permit);
    drop(cancel);
    match answer {
        Some(answer) => json_answer(answer),
        // Cancelled: there is nothing to answer.
        None => response::unanswered(),
    }
}

/// A handshake session's request answered alone, without the messages a
/// call may send before its answer (progress, log messages, questions go
/// nowhere): a request of a JSON-RPC batch, whose answers go back together
/// as one JSON array. `None` when the call was cancelled.
pub(crate) async fn answer_alone(
    app: &Arc<App>,
    http_session: &Arc<HttpSession>,
    request: ParsedRequest,
) -> Option<Vec<u8>> {
    let Ok(_permit) = Arc::clone(&app.permits).acquire_owned().await else {
        let error = ErrorObject::server_busy("the server is stopping");
        return Some(encode_error(Some(&request.id), &error));
    };
    let call = match dispatch::route(&app.shared, &http_session.session, request) {
        Step::Answer(answer) => return Some(answer),
        Step::Call(call) => call,
    };
    let (cancelled, ticket) = match http_session.in_flight.begin(&call.id) {
        Ok(begun) => begun,
        Err(error) => return Some(encode_error(Some(&call.id), &error)),
    };
    let _in_flight = InFlightCall {
        session: Arc::clone(http_session),
        id: call.id.clone(),
        ticket,
    };
    let answer = Box::pin(call.run(&app.shared, None, cancelled)).await;
    answer.map(|answer| answer.body)
}

/// The answer as a JSON body (400 when the request was refused).
fn json_answer(answer: Answer) -> Response {
    let status = if answer.refused {
        StatusCode::BAD_REQUEST
    } else {
        StatusCode::OK
    };
    response::json(status, answer.body)
}

/// A session's call in flight; forgotten when its request ends, however it
/// ends (a client that goes away drops the handler mid-call), so that its id
/// can be used again.
struct InFlightCall {
    session: Arc<HttpSession>,
    id: RequestId,
    ticket: Ticket,
}

impl Drop for InFlightCall {
    fn drop(&mut self) {
        self.session.in_flight.finish(&self.id, self.ticket);
    }
}
