//! The calls running for one peer, by request id, so that they can be cancelled.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError};

use tokio::sync::oneshot;
use toolshape_protocol::{ErrorObject, RequestId};

/// One peer's calls in flight.
#[derive(Debug, Default)]
pub(crate) struct InFlight {
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    calls: HashMap<RequestId, oneshot::Sender<()>>,
    /// The connection is stopping: it answered the calls it took.
    stopping: bool,
}

impl InFlight {
    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Registers a call; its receiver resolves when it is cancelled. A second
    /// call with the same id while the first runs is refused.
    pub(crate) fn begin(&self, id: &RequestId) -> Result<oneshot::Receiver<()>, ErrorObject> {
        let calls = &mut self.state().calls;
        if calls.contains_key(id) {
            return Err(ErrorObject::invalid_request(
                "a request with this id is already in flight",
            ));
        }
        let (cancel, cancelled) = oneshot::channel();
        calls.insert(id.clone(), cancel);
        Ok(cancelled)
    }

    /// Forgets a finished call: whether its answer is still for it to send
    /// (not when [`stop_all`](Self::stop_all) took it, and answered it).
    pub(crate) fn finish(&self, id: &RequestId) -> bool {
        let mut state = self.state();
        state.calls.remove(id).is_some() || !state.stopping
    }

    /// Cancels a call, if it is still running.
    pub(crate) fn cancel(&self, id: &RequestId) {
        if let Some(cancel) = self.state().calls.remove(id) {
            tracing::debug!(%id, "call cancelled");
            let _ = cancel.send(());
        }
    }

    /// Takes every call still running, for the connection to answer as
    /// it stops: each ends as if cancelled, and no longer sends its own
    /// answer, should it have one by then.
    pub(crate) fn stop_all(&self) -> Vec<RequestId> {
        let mut state = self.state();
        state.stopping = true;
        state.calls.drain().map(|(id, _)| id).collect()
    }

    /// How many calls are running.
    pub(crate) fn len(&self) -> usize {
        self.state().calls.len()
    }
}
