//! A handler that panics: the panic is caught where it happens, its message
//! goes to the log (clipped) under an incident id, and the caller is told
//! only that the tool failed, with that id.

use std::future::Future;
use std::hash::{BuildHasher, RandomState};
use std::pin::Pin;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};

use super::error::ToolError;
use super::handler::BoxFuture;

/// Most characters of a panic message written to the log.
const MAX_LOGGED_CHARS: usize = 500;

/// An incident: the id the caller sees and the log line carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Incident(pub(crate) String);

impl std::fmt::Display for Incident {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// A fresh incident id: a per-process random prefix and a counter.
fn next_incident() -> Incident {
    static PREFIX: OnceLock<u32> = OnceLock::new();
    static COUNTER: AtomicU64 = AtomicU64::new(1);
    let prefix = PREFIX.get_or_init(|| RandomState::new().hash_one(std::process::id()) as u32);
    Incident(format!(
        "{prefix:08x}-{}",
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ))
}

/// The text of a panic's payload, when it is text.
fn payload_text(payload: &(dyn std::any::Any + Send)) -> &str {
    payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("(a non-text panic payload)")
}

/// Logs a caught panic of `tool` and returns its incident.
pub(crate) fn record(tool: &str, payload: &(dyn std::any::Any + Send)) -> Incident {
    let incident = next_incident();
    let message = toolshape_protocol::text::excerpt(payload_text(payload), MAX_LOGGED_CHARS);
    tracing::error!(tool, %incident, panic = %message, "tool handler panicked");
    incident
}

/// Polls a handler, turning a panic into an [`Incident`]; it is not polled again after.
pub(crate) struct CatchPanic<T> {
    future: BoxFuture<Result<T, ToolError>>,
    tool: std::sync::Arc<str>,
}

impl<T> CatchPanic<T> {
    pub(crate) fn new(tool: std::sync::Arc<str>, future: BoxFuture<Result<T, ToolError>>) -> Self {
        CatchPanic { future, tool }
    }
}

impl<T> Future for CatchPanic<T> {
    type Output = Result<Result<T, ToolError>, Incident>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let polled = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            self.future.as_mut().poll(cx)
        }));
        match polled {
            Ok(Poll::Ready(output)) => Poll::Ready(Ok(output)),
            Ok(Poll::Pending) => Poll::Pending,
            Err(payload) => Poll::Ready(Err(record(&self.tool, payload.as_ref()))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn incidents_are_distinct() {
        assert_ne!(next_incident(), next_incident());
    }

    #[test]
    fn payloads_are_read_as_text() {
        assert_eq!(payload_text(&"boom"), "boom");
        assert_eq!(payload_text(&String::from("bang")), "bang");
        assert_eq!(payload_text(&7_u8), "(a non-text panic payload)");
    }
}
