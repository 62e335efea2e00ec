//! Running any handler (a tool's, a prompt's, a resource reader's) the same
//! way: panics caught where they happen, bounded in time, cancellable, and,
//! on 2026-07-28, ended with the questions it asked when it asked some.

use std::future::Future as _;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::oneshot;
use toolshape_protocol::asks::Ask;

use super::call::ToolFailure;
use super::error::ToolError;
use super::handler::BoxFuture;
use super::panic::{CatchPanic, Incident};
use super::round::Round;

/// How a handler's run ended.
#[derive(Debug)]
pub(crate) enum Ran<T> {
    Done(T),
    Failed(ToolFailure),
    Cancelled,
    /// It asked the client these questions, by key (2026-07-28).
    InputRequired(Vec<(String, Ask)>),
}

/// How a run is bounded.
#[derive(Debug, Default)]
pub(crate) struct Bounds {
    pub(crate) cancel: Option<oneshot::Receiver<()>>,
    pub(crate) timeout: Option<Duration>,
    pub(crate) round: Option<Arc<Round>>,
}

/// Resolves when the call is cancelled: a cancel, or the canceller going
/// away; never without one.
pub(crate) async fn cancelled(cancel: Option<oneshot::Receiver<()>>) {
    match cancel {
        Some(cancel) => {
            let _ = cancel.await;
        }
        None => std::future::pending().await,
    }
}

/// Resolves at the time limit; never without one.
pub(crate) async fn deadline(limit: Option<Duration>) {
    match limit {
        Some(limit) => tokio::time::sleep(limit).await,
        None => std::future::pending().await,
    }
}

/// Runs `future` (the handler of `name`) within `bounds`.
pub(crate) async fn drive<T>(
    name: Arc<str>,
    future: BoxFuture<Result<T, ToolError>>,
    bounds: Bounds,
) -> Ran<T> {
    let Bounds {
        cancel,
        timeout,
        round,
    } = bounds;
    // The handler runs within this call: dropping the call (its caller went
    // away) drops the handler too, and a panic is caught where it happens.
    let mut task = CatchPanic::new(Arc::clone(&name), future);
    let (cancelled, deadline) = (cancelled(cancel), deadline(timeout));
    let asked = async {
        match &round {
            Some(round) => round.asked().await,
            None => std::future::pending().await,
        }
    };
    // A cancellation comes first: a handler whose wait ended as the call was
    // cancelled (a question given up as the connection stops) is not run on.
    let joined = tokio::select! {
        biased;
        () = cancelled => return Ran::Cancelled,
        joined = &mut task => joined,
        () = asked => {
            // Questions asked side by side (`join!`) are all recorded
            // before the handler waits: one more poll gathers them.
            let polled = std::future::poll_fn(|cx| {
                std::task::Poll::Ready(std::pin::Pin::new(&mut task).poll(cx))
            })
            .await;
            match (polled, &round) {
                (std::task::Poll::Ready(joined), _) => joined,
                (std::task::Poll::Pending, Some(round)) => {
                    return Ran::InputRequired(round.take_questions());
                }
                (std::task::Poll::Pending, None) => return Ran::Cancelled,
            }
        }
        () = deadline => {
            let limit = timeout.unwrap_or_default();
            tracing::warn!(handler = %name, limit_ms = limit.as_millis(), "handler timed out");
            return Ran::Failed(ToolFailure::TimedOut(limit));
        }
    };
    match joined {
        Ok(Ok(value)) => Ran::Done(value),
        Ok(Err(error)) => {
            if let Some(details) = error.developer_details() {
                tracing::warn!(handler = %name, message = %error.message(), developer_message = %details, "handler failed");
            }
            Ran::Failed(ToolFailure::Tool(error))
        }
        Err(Incident(incident)) => Ran::Failed(ToolFailure::Panicked(incident)),
    }
}
