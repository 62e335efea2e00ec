//! Building HTTP responses: JSON bodies, JSON-RPC errors, SSE streams.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use axum::body::{Body, Bytes};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use tokio::sync::{mpsc, oneshot};
use tokio_stream::Stream;
use tokio_stream::wrappers::ReceiverStream;
use toolshape_protocol::{ErrorObject, RequestId};

use super::super::outbox::{Frame, encode_error};
use super::super::work::Answer;
use crate::transport::sse;

/// A JSON body with `status`.
pub(crate) fn json(status: StatusCode, body: Vec<u8>) -> Response {
    (
        status,
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        body,
    )
        .into_response()
}

/// A JSON-RPC error with `status`.
pub(crate) fn error(status: StatusCode, id: Option<&RequestId>, error: &ErrorObject) -> Response {
    json(status, encode_error(id, error))
}

/// A stream of SSE events, one per message. When it is dropped (the client
/// went away, or the stream ended), `on_drop` fires.
pub(crate) fn event_stream(
    frames: mpsc::Receiver<Frame>,
    on_drop: Option<oneshot::Sender<()>>,
) -> Response {
    sse_response(Events {
        first: None,
        frames: ReceiverStream::new(frames),
        answer: None,
        _on_drop: on_drop.map(FireOnDrop),
    })
}

/// The event stream of one request: `first` (if any), the messages that follow it
/// until their channel closes, then the request's `answer`. When it is
/// dropped (the client went away, or the stream ended), `on_drop` fires: for
/// 2026-07-28 that is the request's cancellation.
pub(crate) fn answer_stream(
    first: Option<Frame>,
    frames: mpsc::Receiver<Frame>,
    answer: oneshot::Receiver<Answer>,
    on_drop: Option<oneshot::Sender<()>>,
) -> Response {
    sse_response(Events {
        first,
        frames: ReceiverStream::new(frames),
        answer: Some(answer),
        _on_drop: on_drop.map(FireOnDrop),
    })
}

/// The answer to a request cancelled before it was answered: an event
/// stream that ends with no event. A request's POST gets JSON or an event
/// stream (the spec's MUST), and a cancelled request no response.
pub(crate) fn unanswered() -> Response {
    let (_, closed) = mpsc::channel(1);
    event_stream(closed, None)
}

fn sse_response(events: Events) -> Response {
    let headers = [
        (
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/event-stream"),
        ),
        (header::CACHE_CONTROL, HeaderValue::from_static("no-cache")),
        // Asks reverse proxies (nginx) not to buffer the stream.
        (
            header::HeaderName::from_static("x-accel-buffering"),
            HeaderValue::from_static("no"),
        ),
    ];
    (StatusCode::OK, headers, Body::from_stream(events)).into_response()
}

struct FireOnDrop(oneshot::Sender<()>);

impl Drop for FireOnDrop {
    fn drop(&mut self) {
        // A send on a dropped oneshot cannot be done by value here: swap it out.
        let (sender, _) = oneshot::channel();
        let _ = std::mem::replace(&mut self.0, sender).send(());
    }
}

struct Events {
    first: Option<Frame>,
    frames: ReceiverStream<Frame>,
    /// The answer that ends the stream, once `frames` has closed.
    answer: Option<oneshot::Receiver<Answer>>,
    _on_drop: Option<FireOnDrop>,
}

fn encode(frame: Frame) -> Bytes {
    match frame {
        Frame::KeepAlive => Bytes::from_static(b": keep-alive\n\n"),
        Frame::Message(message) => Bytes::from(sse::message_event(None, &message)),
    }
}

impl Stream for Events {
    type Item = Result<Bytes, Infallible>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        if let Some(first) = self.first.take() {
            return Poll::Ready(Some(Ok(encode(first))));
        }
        match Pin::new(&mut self.frames).poll_next(cx) {
            Poll::Ready(Some(frame)) => return Poll::Ready(Some(Ok(encode(frame)))),
            Poll::Pending => return Poll::Pending,
            Poll::Ready(None) => {}
        }
        let Some(answer) = self.answer.as_mut() else {
            return Poll::Ready(None);
        };
        match Pin::new(answer).poll(cx) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(answer) => {
                self.answer = None;
                Poll::Ready(
                    answer
                        .ok()
                        .map(|answer| Ok(encode(Frame::Message(answer.body)))),
                )
            }
        }
    }
}
