//! 2026-07-28 `subscriptions/listen` over stdio: each stream is a task that
//! sends the notifications it asked for, tagged with its id, on the
//! connection's one output, until the peer cancels it
//! (`notifications/cancelled`) or the connection ends (when the server
//! stops, with a `SubscriptionsListenResult` saying it ended). (Over Streamable
//! HTTP each stream is the response to its POST: `http/modern.rs`.)

use std::collections::HashMap;
use std::sync::Arc;

use tokio::task::JoinHandle;
use toolshape_protocol::subscriptions::ListenParams;
use toolshape_protocol::{ErrorObject, RequestId};

use super::Shared;
use super::notices::{Listen, Notice, next_change};
use super::outbox::Outbox;

/// Most `subscriptions/listen` streams open at once on one connection.
pub(crate) const MAX_LISTENS: usize = 16;

/// The streams open on one stdio connection.
#[derive(Debug, Default)]
pub(crate) struct Listens {
    running: HashMap<RequestId, JoinHandle<()>>,
}

impl Listens {
    /// Opens the stream `id`: its acknowledgement is queued before this
    /// returns (so it comes first), then a task follows the changes. An
    /// error when the peer has [`MAX_LISTENS`] open, or one with this id.
    pub(crate) async fn open(
        &mut self,
        shared: &Arc<Shared>,
        id: RequestId,
        params: &ListenParams,
        outbox: &Outbox,
    ) -> Result<bool, ErrorObject> {
        self.running.retain(|_, task| !task.is_finished());
        if self.running.contains_key(&id) {
            return Err(ErrorObject::invalid_request(format!(
                "a subscription with the id {id} is already open"
            )));
        }
        if self.running.len() >= MAX_LISTENS {
            return Err(ErrorObject::invalid_request(format!(
                "at most {MAX_LISTENS} subscriptions may be open at once"
            )));
        }
        // Watching before the acknowledgement: nothing after it is missed.
        let mut tools = shared.registry.watch_changes();
        let mut prompts = shared.prompts.watch_changes();
        let mut resources = shared.resource_events.watch();
        let listen = Listen::new(shared, &id, params);
        let (method, acknowledged) = listen.acknowledgement();
        if !outbox.notification(method, &acknowledged).await {
            return Ok(false);
        }
        let outbox = outbox.clone();
        let task = tokio::spawn(async move {
            loop {
                let notices: Vec<Notice> = tokio::select! {
                    changed = tools.changed() => match changed {
                        Ok(()) => listen.tools_changed().into_iter().collect(),
                        Err(_) => return,
                    },
                    changed = prompts.changed() => match changed {
                        Ok(()) => listen.prompts_changed().into_iter().collect(),
                        Err(_) => return,
                    },
                    change = next_change(&mut resources) => match change {
                        Some(change) => listen.resource_changed(&change),
                        None => return,
                    },
                };
                for (method, params) in notices {
                    if !outbox.notification(method, &params).await {
                        return;
                    }
                }
            }
        });
        self.running.insert(id, task);
        Ok(true)
    }

    /// Ends the stream `id`, if it is one.
    pub(crate) fn cancel(&mut self, id: &RequestId) {
        if let Some(task) = self.running.remove(id) {
            task.abort();
        }
    }

    /// Ends every stream (the connection ends), returning their ids once
    /// each task has stopped (none sends anything after this).
    pub(crate) async fn end_all(&mut self) -> Vec<RequestId> {
        let mut ended = Vec::with_capacity(self.running.len());
        for (id, task) in self.running.drain() {
            task.abort();
            let _ = task.await;
            ended.push(id);
        }
        ended
    }
}

/// The answer that ends the stream `id` gracefully (the server stops): a
/// `SubscriptionsListenResult`, complete, naming the subscription (and the
/// server: a 2026-07-28 result).
pub(crate) fn ended(shared: &super::Shared, id: &RequestId) -> Vec<u8> {
    let subscription = serde_json::to_value(id).unwrap_or(serde_json::Value::Null);
    let result = serde_json::json!({
        "resultType": "complete",
        "_meta": { toolshape_protocol::meta::keys::SUBSCRIPTION_ID: subscription },
    });
    let mut answer = super::outbox::encode_result(id, &result);
    shared.identify(
        toolshape_protocol::ProtocolVersion::V2026_07_28,
        &mut answer,
    );
    answer
}
