//! Server-to-client requests on a handshake session: ids, the answers
//! matched back to their askers, and the cleanup when an asker goes away.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

use serde_json::Value;
use tokio::sync::oneshot;
use toolshape_protocol::asks::Ask;
use toolshape_protocol::{ErrorObject, RequestId, Response};

use super::super::outbox::Outbox;
use crate::tool::AskError;

type Answer = Result<Value, ErrorObject>;

/// The requests this server sent one peer and still waits on.
#[derive(Debug, Default)]
pub(crate) struct ServerRequests {
    next: AtomicU64,
    pending: Mutex<HashMap<RequestId, oneshot::Sender<Answer>>>,
}

/// Forgets a request whose asker went away (the call was cancelled or ended).
struct Forget<'a> {
    requests: &'a ServerRequests,
    id: RequestId,
}

impl Drop for Forget<'_> {
    fn drop(&mut self) {
        self.requests.pending().remove(&self.id);
    }
}

impl ServerRequests {
    fn pending(&self) -> MutexGuard<'_, HashMap<RequestId, oneshot::Sender<Answer>>> {
        self.pending.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Sends `ask` to the peer through `outbox` and waits for its answer.
    pub(crate) async fn ask(&self, outbox: &Outbox, ask: &Ask) -> Result<Value, AskError> {
        let n = self.next.fetch_add(1, Ordering::Relaxed) + 1;
        let id = RequestId::String(format!("toolshape-{n}"));
        let (sender, receiver) = oneshot::channel();
        self.pending().insert(id.clone(), sender);
        let _forget = Forget {
            requests: self,
            id: id.clone(),
        };
        let mut message = Vec::with_capacity(256);
        let params = ask
            .params()
            .unwrap_or_else(|| Value::Object(Default::default()));
        toolshape_protocol::write_request(&mut message, &id, ask.method(), &params).map_err(
            |e| AskError::Malformed {
                method: ask.method(),
                reason: e.to_string(),
            },
        )?;
        if !outbox.send(message).await {
            return Err(AskError::Closed);
        }
        match receiver.await {
            Ok(Ok(answer)) => Ok(answer),
            Ok(Err(error)) => Err(AskError::Refused {
                method: ask.method(),
                error,
            }),
            Err(_) => Err(AskError::Closed),
        }
    }

    /// Hands a response from the peer to the request waiting for it; false
    /// when no request of ours waits for it.
    pub(crate) fn resolve(&self, response: Response) -> bool {
        let Some(id) = response.id().cloned() else {
            return false;
        };
        let Some(waiter) = self.pending().remove(&id) else {
            return false;
        };
        let answer = match response {
            Response::Success { result, .. } => serde_json::from_str(result.get())
                .map_err(|e| ErrorObject::invalid_params(format!("the answer is not JSON: {e}"))),
            Response::Error { error, .. } => Err(error),
        };
        let _ = waiter.send(answer);
        true
    }
}
