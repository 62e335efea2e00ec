//! Which change notifications a peer gets, whatever carries them: a
//! handshake session (stdio, or its HTTP GET stream) gets list changes once
//! initialized and updates of the resources it subscribed to; a 2026-07-28
//! `subscriptions/listen` stream gets what it asked for and the server
//! honours, each tagged with the stream's id.

use std::collections::BTreeSet;

use serde_json::{Map, Value, json};
use tokio::sync::broadcast;
use tokio::sync::broadcast::error::RecvError;
use toolshape_protocol::RequestId;
use toolshape_protocol::meta::keys;
use toolshape_protocol::methods;
use toolshape_protocol::subscriptions::{ListenParams, SubscriptionFilter};

use super::Shared;
use super::session::{MAX_SUBSCRIPTIONS, Session};
use crate::resource::{ResourceEvent, ResourceEvents};

/// A notification to send: its method and params.
pub(crate) type Notice = (&'static str, Value);

/// The next resource change, `None` once no more can come. A receiver
/// that fell behind missed changes it cannot name: they come as a list
/// change, so that whoever gets those reads the resources again.
pub(crate) async fn next_change(
    changes: &mut broadcast::Receiver<ResourceEvent>,
) -> Option<ResourceEvent> {
    match changes.recv().await {
        Ok(event) => Some(event),
        Err(RecvError::Lagged(_)) => Some(ResourceEvent::ListChanged),
        Err(RecvError::Closed) => None,
    }
}

/// Whether the server says `listChanged` for its resources, and so may
/// send `resources/list_changed`.
fn announces_list_changes(shared: &Shared) -> bool {
    shared.announces_resource_changes && !shared.resources.is_empty()
}

/// What a handshake session is told of a resource change.
pub(crate) fn for_session(
    shared: &Shared,
    session: &Session,
    event: &ResourceEvent,
) -> Option<Notice> {
    match event {
        ResourceEvent::Updated(uri) if session.is_subscribed(uri) => {
            Some((methods::RESOURCES_UPDATED, json!({ "uri": uri })))
        }
        ResourceEvent::ListChanged
            if session.is_initialized() && announces_list_changes(shared) =>
        {
            Some((methods::RESOURCES_LIST_CHANGED, json!({})))
        }
        _ => None,
    }
}

/// One `subscriptions/listen` stream: what it gets, tagged with its id.
#[derive(Debug)]
pub(crate) struct Listen {
    honoured: SubscriptionFilter,
    uris: BTreeSet<String>,
    /// `{"io.modelcontextprotocol/subscriptionId": id}`.
    meta: Map<String, Value>,
    /// Told when the stream ends (each of `uris` unsubscribed).
    events: ResourceEvents,
}

impl Drop for Listen {
    fn drop(&mut self) {
        for uri in &self.uris {
            self.events.unsubscribed(uri);
        }
    }
}

impl Listen {
    /// The stream `id` asks for with `params`: tool list changes always
    /// honoured; resource and prompt list changes when the server declares
    /// them; updates when the server has resources (at most
    /// [`MAX_SUBSCRIPTIONS`] URIs). Tells the server's owner of each URI
    /// subscribed to.
    pub(crate) fn new(shared: &Shared, id: &RequestId, params: &ListenParams) -> Listen {
        let asked = &params.notifications;
        let has_resources = !shared.resources.is_empty();
        let uris: BTreeSet<String> = if has_resources {
            asked
                .resource_subscriptions
                .iter()
                .take(MAX_SUBSCRIPTIONS)
                .cloned()
                .collect()
        } else {
            BTreeSet::new()
        };
        for uri in &uris {
            shared.resource_events.subscribed(uri);
        }
        let mut honoured = SubscriptionFilter::default();
        honoured.tools_list_changed = asked.tools_list_changed;
        honoured.prompts_list_changed =
            asked.prompts_list_changed && shared.announces_prompt_changes;
        honoured.resources_list_changed =
            asked.resources_list_changed && announces_list_changes(shared);
        honoured.resource_subscriptions = uris.iter().cloned().collect();
        let mut meta = Map::new();
        let id = serde_json::to_value(id).unwrap_or(Value::Null);
        meta.insert(keys::SUBSCRIPTION_ID.into(), id);
        Listen {
            honoured,
            uris,
            meta,
            events: shared.resource_events.clone(),
        }
    }

    /// The first message: `notifications/subscriptions/acknowledged`.
    pub(crate) fn acknowledgement(&self) -> Notice {
        (
            methods::SUBSCRIPTIONS_ACKNOWLEDGED,
            json!({ "notifications": self.honoured, "_meta": self.meta }),
        )
    }

    /// What the stream is told when the tool list changes.
    pub(crate) fn tools_changed(&self) -> Option<Notice> {
        self.honoured
            .tools_list_changed
            .then(|| (methods::TOOLS_LIST_CHANGED, json!({ "_meta": self.meta })))
    }

    /// What the stream is told when the prompts change.
    pub(crate) fn prompts_changed(&self) -> Option<Notice> {
        self.honoured
            .prompts_list_changed
            .then(|| (methods::PROMPTS_LIST_CHANGED, json!({ "_meta": self.meta })))
    }

    /// What the stream is told of a resource change.
    pub(crate) fn resource_changed(&self, event: &ResourceEvent) -> Option<Notice> {
        match event {
            ResourceEvent::Updated(uri) if self.uris.contains(uri) => Some((
                methods::RESOURCES_UPDATED,
                json!({ "uri": uri, "_meta": self.meta }),
            )),
            ResourceEvent::ListChanged if self.honoured.resources_list_changed => Some((
                methods::RESOURCES_LIST_CHANGED,
                json!({ "_meta": self.meta }),
            )),
            _ => None,
        }
    }
}
