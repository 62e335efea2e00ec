//! The calls running for one peer, by request id, so that they can be cancelled.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError};

use tokio::sync::oneshot;
use toolshape_protocol::{ErrorObject, RequestId};

/// One peer's calls in flight.
#[derive(Debug, Default)]
pub(crate) struct InFlight {
    calls: Mutex<HashMap<RequestId, oneshot::Sender<()>>>,
}

impl InFlight {
    fn calls(&self) -> MutexGuard<'_, HashMap<RequestId, oneshot::Sender<()>>> {
        self.calls.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Registers a call; its receiver resolves when it is cancelled. A second
    /// call with the same id while the first runs is refused.
    pub(crate) fn begin(&self, id: &RequestId) -> Result<oneshot::Receiver<()>, ErrorObject> {
        let mut calls = self.calls();
        if calls.contains_key(id) {
            return Err(ErrorObject::invalid_request(
                "a request with this id is already in flight",
            ));
        }
        let (cancel, cancelled) = oneshot::channel();
        calls.insert(id.clone(), cancel);
        Ok(cancelled)
    }

    /// Forgets a finished call.
    pub(crate) fn finish(&self, id: &RequestId) {
        self.calls().remove(id);
    }

    /// Cancels a call, if it is still running.
    pub(crate) fn cancel(&self, id: &RequestId) {
        if let Some(cancel) = self.calls().remove(id) {
            tracing::debug!(%id, "call cancelled");
            let _ = cancel.send(());
        }
    }

    /// How many calls are running.
    pub(crate) fn len(&self) -> usize {
        self.calls().len()
    }
}
