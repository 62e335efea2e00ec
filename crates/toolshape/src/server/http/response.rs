//! Building HTTP responses: JSON bodies, JSON-RPC errors, SSE streams.

use std::convert::Infallible;
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
/// went away, or the stream ended), `on_drop` fires: for 2026-07-28 that is
/// the request's cancellation.
pub(crate) fn event_stream(
    frames: mpsc::Receiver<Frame>,
    on_drop: Option<oneshot::Sender<()>>,
) -> Response {
    let stream = Events {
        frames: ReceiverStream::new(frames),
        _on_drop: on_drop.map(FireOnDrop),
    };
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
    (StatusCode::OK, headers, Body::from_stream(stream)).into_response()
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
    frames: ReceiverStream<Frame>,
    _on_drop: Option<FireOnDrop>,
}

impl Stream for Events {
    type Item = Result<Bytes, Infallible>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        Pin::new(&mut self.frames).poll_next(cx).map(|frame| {
            frame.map(|frame| match frame {
                Frame::KeepAlive => Ok(Bytes::from_static(b": keep-alive\n\n")),
                Frame::Message(message) => Ok(Bytes::from(sse::message_event(None, &message))),
            })
        })
    }
}
