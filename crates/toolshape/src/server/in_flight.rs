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
    calls: HashMap<RequestId, (Ticket, oneshot::Sender<()>)>,
    /// The number of the next call to begin.
    next: u64,
    /// The connection is stopping: it answered the calls it took.
    stopping: bool,
}

/// Which call of an id a [`InFlight::finish`] is about: a client may send an
/// id again once it cancelled the call that had it, while that call winds
/// down.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Ticket(u64);

impl InFlight {
    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Registers a call; its receiver resolves when it is cancelled. A second
    /// call with the same id while the first runs is refused.
    pub(crate) fn begin(
        &self,
        id: &RequestId,
    ) -> Result<(oneshot::Receiver<()>, Ticket), ErrorObject> {
        let mut state = self.state();
        if state.calls.contains_key(id) {
            return Err(ErrorObject::invalid_request(
                "a request with this id is already in flight",
            ));
        }
        let ticket = Ticket(state.next);
        state.next += 1;
        let (cancel, cancelled) = oneshot::channel();
        state.calls.insert(id.clone(), (ticket, cancel));
        Ok((cancelled, ticket))
    }

    /// Forgets a finished call (the one of `ticket`: not a later call that
    /// took its id after it was cancelled): whether its answer is still for
    /// it to send (not when [`stop_all`](Self::stop_all) took it, and
    /// answered it).
    pub(crate) fn finish(&self, id: &RequestId, ticket: Ticket) -> bool {
        let mut state = self.state();
        if state.calls.get(id).is_some_and(|(own, _)| *own == ticket) {
            state.calls.remove(id);
            return true;
        }
        !state.stopping
    }

    /// Cancels a call, if it is still running.
    pub(crate) fn cancel(&self, id: &RequestId) {
        if let Some((_, cancel)) = self.state().calls.remove(id) {
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
