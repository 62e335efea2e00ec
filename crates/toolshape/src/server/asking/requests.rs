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
use crate::tool::{AskError, SentElicitations};
use crate::transport::lines::{Leading, LeadingKind};

type Answer = Result<Value, ErrorObject>;

/// The requests this server sent one peer and still waits on, and the
/// URL-mode elicitations it sent that peer, whose completion it may tell.
#[derive(Debug, Default)]
pub(crate) struct ServerRequests {
    /// Set when the peer's input ended: no answer can come, nothing more
    /// is asked.
    closed: std::sync::atomic::AtomicBool,
    next: AtomicU64,
    pending: Mutex<HashMap<RequestId, oneshot::Sender<Answer>>>,
    elicitations: Mutex<SentElicitations>,
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

    fn elicitations(&self) -> MutexGuard<'_, SentElicitations> {
        self.elicitations
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Remembers that the peer was sent the URL-mode elicitation
    /// `elicitation_id`, so that its completion is told to it.
    pub(crate) fn sent_elicitation(&self, elicitation_id: &str) {
        self.elicitations().remember(elicitation_id);
    }

    /// Whether the peer was sent the URL-mode elicitation `elicitation_id`
    /// and not yet told of its completion; it is forgotten then.
    pub(crate) fn take_elicitation(&self, elicitation_id: &str) -> bool {
        self.elicitations().take(elicitation_id)
    }

    /// `ask` as a handshake session takes it: a URL-mode elicitation
    /// carries an `elicitationId` there (one relayed from a 2026-07-28
    /// server has none: it gets one nobody completes, and which is not
    /// remembered).
    fn with_elicitation_id<'a>(&self, ask: &'a Ask) -> std::borrow::Cow<'a, Ask> {
        match ask {
            Ask::Elicit(params) if params.is_url() && params.elicitation_id.is_none() => {
                let n = self.next.fetch_add(1, Ordering::Relaxed) + 1;
                let mut params = params.clone();
                params.elicitation_id = Some(format!("toolshape-elicitation-{n}"));
                std::borrow::Cow::Owned(Ask::Elicit(params))
            }
            _ => std::borrow::Cow::Borrowed(ask),
        }
    }

    /// Gives up every request still waiting on the peer (its input ended:
    /// no answer can come): each asker gets an error at once.
    pub(crate) fn abandon_all(&self) {
        let mut pending = self.pending();
        self.closed.store(true, Ordering::Release);
        pending.clear();
    }

    /// Sends `ask` to the peer through `outbox` and waits for its answer.
    pub(crate) async fn ask(&self, outbox: &Outbox, ask: &Ask) -> Result<Value, AskError> {
        let n = self.next.fetch_add(1, Ordering::Relaxed) + 1;
        let id = RequestId::String(format!("toolshape-{n}"));
        let (sender, receiver) = oneshot::channel();
        {
            // Checked under the lock `abandon_all` takes: an ask after it
            // fails at once rather than wait for an answer that cannot come.
            let mut pending = self.pending();
            if self.closed.load(Ordering::Acquire) {
                return Err(AskError::Closed);
            }
            pending.insert(id.clone(), sender);
        }
        let _forget = Forget {
            requests: self,
            id: id.clone(),
        };
        let mut message = Vec::with_capacity(256);
        // Remembered for its completion when it has an id of its own.
        if let Ask::Elicit(params) = ask
            && params.is_url()
            && let Some(elicitation_id) = &params.elicitation_id
        {
            self.sent_elicitation(elicitation_id);
        }
        let ask = self.with_elicitation_id(ask);
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

    /// Fails our request `id` with `error` (its answer could not be read);
    /// false when no request of ours waits on that id.
    fn fail(&self, id: &RequestId, error: ErrorObject) -> bool {
        match self.pending().remove(id) {
            Some(waiter) => {
                let _ = waiter.send(Err(error));
                true
            }
            None => false,
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

/// A message from the peer over the size limit of `limit` bytes, skipped
/// unread, as its first bytes tell of it: when it is (or may be) an answer
/// to one of `requests` (the peer's session's, when known), that request
/// fails at once. True when the message is an answer, ours or one by its
/// members, which gets no reply; false when it is to be refused.
pub(crate) fn over_long_answer(
    requests: Option<&ServerRequests>,
    leading: &Leading,
    limit: usize,
) -> bool {
    if leading.kind == LeadingKind::Request {
        return false;
    }
    let failed = match (requests, &leading.id) {
        (Some(requests), Some(id)) => {
            let error = ErrorObject::invalid_request(format!("answer larger than {limit} bytes"));
            requests.fail(id, error)
        }
        _ => false,
    };
    failed || leading.kind == LeadingKind::Response
}
