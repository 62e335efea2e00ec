//! A request body that must arrive whole by a deadline: a client that sends
//! its headers and then its body slowly (or never) holds a connection only
//! that long.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Bytes, HttpBody};
use hyper::body::{Frame, Incoming, SizeHint};
use tokio::time::{Instant, Sleep};

/// The body did not arrive whole within its time.
#[derive(Debug, thiserror::Error)]
#[error("the request body did not arrive within {0:?}")]
pub(crate) struct BodyTimedOut(Duration);

/// `inner`, failing with [`BodyTimedOut`] if it has not ended by the deadline.
pub(crate) struct DeadlineBody {
    inner: Incoming,
    /// When the body must have ended.
    until: Instant,
    /// Armed only when the body first makes its reader wait: a body that
    /// came with its headers (the usual small request) arms no timer.
    deadline: Option<Pin<Box<Sleep>>>,
    limit: Duration,
}

impl DeadlineBody {
    /// `inner`, which must end within `limit` from now.
    pub(crate) fn new(inner: Incoming, limit: Duration) -> DeadlineBody {
        DeadlineBody {
            inner,
            until: crate::transport::deadline_after(limit),
            deadline: None,
            limit,
        }
    }
}

impl HttpBody for DeadlineBody {
    type Data = Bytes;
    type Error = Box<dyn std::error::Error + Send + Sync>;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        let this = self.get_mut();
        if let Poll::Ready(frame) = Pin::new(&mut this.inner).poll_frame(cx) {
            return Poll::Ready(frame.map(|frame| frame.map_err(Into::into)));
        }
        let until = this.until;
        let deadline = this
            .deadline
            .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(until)));
        match deadline.as_mut().poll(cx) {
            // An I/O time-out, which layers that know nothing of this type
            // (an authorization layer reading the body first) can tell.
            Poll::Ready(()) => Poll::Ready(Some(Err(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                BodyTimedOut(this.limit),
            )
            .into()))),
            Poll::Pending => Poll::Pending,
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// Whether `error` (or one of its causes) is a body's deadline passing.
pub(crate) fn timed_out(error: &(dyn std::error::Error + 'static)) -> bool {
    std::iter::successors(Some(error), |error| error.source()).any(|error| {
        error
            .downcast_ref::<std::io::Error>()
            .and_then(std::io::Error::get_ref)
            .is_some_and(|inner| inner.is::<BodyTimedOut>())
    })
}
