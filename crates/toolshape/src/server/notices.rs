//! Which change notifications a peer gets, whatever carries them: a
//! handshake session (stdio, or its HTTP GET stream) gets list changes once
//! initialized and updates of the resources it subscribed to; a 2026-07-28
//! `subscriptions/listen` stream gets what it asked for and the server
//! honours, each tagged with the stream's id.

use std::collections::BTreeSet;
use std::sync::Arc;

use serde_json::{Map, Value, json};
use tokio::sync::broadcast;
use tokio::sync::broadcast::error::RecvError;
use toolshape_protocol::meta::keys;
use toolshape_protocol::methods;
use toolshape_protocol::subscriptions::{ListenParams, SubscriptionFilter};
use toolshape_protocol::{ProtocolVersion, RequestId};

use super::Shared;
use super::session::{MAX_SUBSCRIPTIONS, Session};
use crate::resource::{Held, MAX_URI_BYTES, ResourceEvent, ResourceEvents};

/// A notification to send: its method and params.
pub(crate) type Notice = (&'static str, Value);

/// A resource change as one connection or stream sees it.
#[derive(Debug)]
pub(crate) enum Change {
    /// What was announced.
    Event(ResourceEvent),
    /// It fell behind and missed changes it cannot name.
    Missed,
}

/// The next resource change, `None` once no more can come.
pub(crate) async fn next_change(
    changes: &mut broadcast::Receiver<ResourceEvent>,
) -> Option<Change> {
    match changes.recv().await {
        Ok(event) => Some(Change::Event(event)),
        Err(RecvError::Lagged(_)) => Some(Change::Missed),
        Err(RecvError::Closed) => None,
    }
}

/// Whether the server says `listChanged` for its resources, and so may
/// send `resources/list_changed`.
fn announces_list_changes(shared: &Shared) -> bool {
    shared.announces_resource_changes && !shared.resources.is_empty()
}

/// What a handshake session is told of a resource change. Missed changes
/// are told as a list change when the session gets those, and as an update
/// of each resource it follows (any may have changed).
pub(crate) fn for_session(shared: &Shared, session: &Session, change: &Change) -> Vec<Notice> {
    let lists = session.is_initialized() && announces_list_changes(shared);
    let list_changed = || (methods::RESOURCES_LIST_CHANGED, json!({}));
    match change {
        Change::Event(ResourceEvent::Updated(uri)) if session.is_subscribed(uri) => {
            vec![(methods::RESOURCES_UPDATED, json!({ "uri": uri }))]
        }
        Change::Event(ResourceEvent::ListChanged) if lists => vec![list_changed()],
        Change::Missed => {
            let updates = session
                .subscribed()
                .into_iter()
                .map(|uri| (methods::RESOURCES_UPDATED, json!({ "uri": uri })));
            lists
                .then(list_changed)
                .into_iter()
                .chain(updates)
                .collect()
        }
        _ => Vec::new(),
    }
}

/// The next completed URL-mode elicitation, for a peer that may be told;
/// without a receiver (a peer never told), never. A receiver that fell
/// behind goes on with the next one (the completions it missed are hints
/// the client can do without).
pub(crate) async fn next_completion(
    completions: &mut Option<broadcast::Receiver<Arc<str>>>,
) -> Arc<str> {
    let Some(receiver) = completions else {
        return std::future::pending().await;
    };
    loop {
        match receiver.recv().await {
            Ok(elicitation_id) => return elicitation_id,
            Err(RecvError::Lagged(_)) => {}
            Err(RecvError::Closed) => {
                *completions = None;
                return std::future::pending().await;
            }
        }
    }
}

/// What a handshake session is told when a URL-mode elicitation is
/// complete: `notifications/elicitation/complete` on 2025-11-25, once, if
/// it was sent that elicitation; nothing otherwise.
pub(crate) fn elicitation_completed(session: &Session, elicitation_id: &str) -> Option<Notice> {
    (session
        .handshake()
        .is_some_and(ProtocolVersion::has_url_elicitation_completion)
        && session.requests.take_elicitation(elicitation_id))
    .then(|| {
        (
            methods::ELICITATION_COMPLETE,
            json!({ "elicitationId": elicitation_id }),
        )
    })
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
    /// What `uris` hold.
    held: Held,
}

impl Drop for Listen {
    fn drop(&mut self) {
        for uri in &self.uris {
            self.events.unsubscribed(&mut self.held, uri);
        }
    }
}

impl Listen {
    /// The stream `id` asks for with `params`: tool list changes always
    /// honoured; resource and prompt list changes when the server declares
    /// them; updates when the server has resources (at most
    /// [`MAX_SUBSCRIPTIONS`] URIs, none longer than a resource URI may be).
    /// Tells the server's owner of each URI subscribed to.
    pub(crate) fn new(shared: &Shared, id: &RequestId, params: &ListenParams) -> Listen {
        let asked = &params.notifications;
        let has_resources = !shared.resources.is_empty();
        let mut uris = BTreeSet::new();
        let mut held = Held::default();
        if has_resources {
            // No resource has a longer URI: not kept, not honoured; nor is
            // one past the server's budget for all peers' subscriptions.
            let wanted = asked.resource_subscriptions.iter();
            for uri in wanted.filter(|uri| uri.len() <= MAX_URI_BYTES) {
                if uris.len() >= MAX_SUBSCRIPTIONS {
                    break;
                }
                if !uris.contains(uri) && shared.resource_events.subscribed(&mut held, uri) {
                    uris.insert(uri.clone());
                }
            }
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
            held,
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

    /// What the stream is told of a resource change (missed changes: as
    /// for a session, a list change if it asked for those, and an update of
    /// each resource it names).
    pub(crate) fn resource_changed(&self, change: &Change) -> Vec<Notice> {
        let updated = |uri: &String| {
            (
                methods::RESOURCES_UPDATED,
                json!({ "uri": uri, "_meta": self.meta }),
            )
        };
        let lists = self.honoured.resources_list_changed;
        let list_changed = || {
            (
                methods::RESOURCES_LIST_CHANGED,
                json!({ "_meta": self.meta }),
            )
        };
        match change {
            Change::Event(ResourceEvent::Updated(uri)) if self.uris.contains(uri) => {
                vec![updated(uri)]
            }
            Change::Event(ResourceEvent::ListChanged) if lists => vec![list_changed()],
            Change::Missed => lists
                .then(list_changed)
                .into_iter()
                .chain(self.uris.iter().map(updated))
                .collect(),
            _ => Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use toolshape_protocol::RequestId;
    use toolshape_protocol::subscriptions::ListenParams;

    use super::{Change, Listen};
    use crate::resource::{Resource, ResourceEvents};

    fn listen(lists: bool) -> Listen {
        let server = crate::Server::builder("t", "1")
            .resource(Resource::text("mem://a", "a", "text/plain", "a"))
            .resource_events(ResourceEvents::new())
            .build()
            .unwrap();
        let params: ListenParams = serde_json::from_value(json!({
            "notifications": {"resourcesListChanged": lists, "resourceSubscriptions": ["mem://a"]}
        }))
        .unwrap();
        Listen::new(&server.shared, &RequestId::Number(7), &params)
    }

    #[test]
    fn a_stream_past_the_shared_subscription_budget_leaves_uris_out_of_its_acknowledgement() {
        // Each stream holds one URI of its own; all share room for one more.
        let one = "mem://0".len() + 64;
        let server = crate::Server::builder("t", "1")
            .resource(Resource::text("mem://0", "a", "text/plain", "a"))
            .resource_events(ResourceEvents::new().with_subscription_budget(one, one))
            .build()
            .unwrap();
        let params: ListenParams = serde_json::from_value(json!({
            "notifications": {"resourceSubscriptions": ["mem://0", "mem://1", "mem://2"]}
        }))
        .unwrap();
        let open = |id| Listen::new(&server.shared, &RequestId::Number(id), &params);
        let honoured = |listen: &Listen| listen.honoured.resource_subscriptions.clone();
        let first = open(1);
        assert_eq!(honoured(&first), ["mem://0", "mem://1"]);
        let second = open(2);
        assert_eq!(honoured(&second), ["mem://0"]);
        // A stream's end gives back what it drew.
        drop(first);
        assert_eq!(honoured(&open(3)), ["mem://0", "mem://1"]);
    }

    #[test]
    fn a_uri_longer_than_any_resource_uri_is_neither_followed_nor_kept() {
        let long = format!("mem://{}", "a".repeat(crate::resource::MAX_URI_BYTES));
        let server = crate::Server::builder("t", "1")
            .resource(Resource::text("mem://a", "a", "text/plain", "a"))
            .build()
            .unwrap();
        let params: ListenParams = serde_json::from_value(json!({
            "notifications": {"resourceSubscriptions": [long.clone(), "mem://a"]}
        }))
        .unwrap();
        let listen = Listen::new(&server.shared, &RequestId::Number(7), &params);
        assert_eq!(
            listen.honoured.resource_subscriptions,
            vec!["mem://a".to_owned()]
        );

        let session = super::super::session::Session::of_caller(None);
        let events = ResourceEvents::new();
        let refused = session.subscribe(long, &events).unwrap_err();
        assert!(refused.message.contains("longer than"), "{refused:?}");
        assert!(session.subscribe("mem://a".into(), &events).is_ok());
    }

    #[test]
    fn missed_changes_come_as_a_list_change_if_asked_and_as_updates_of_what_is_followed() {
        let methods = |listen: &Listen| -> Vec<(String, serde_json::Value)> {
            listen
                .resource_changed(&Change::Missed)
                .into_iter()
                .map(|(method, params)| (method.to_owned(), params["uri"].clone()))
                .collect()
        };
        assert_eq!(
            methods(&listen(true)),
            [
                (
                    "notifications/resources/list_changed".into(),
                    serde_json::Value::Null
                ),
                ("notifications/resources/updated".into(), json!("mem://a"))
            ]
        );
        assert_eq!(
            methods(&listen(false)),
            [("notifications/resources/updated".into(), json!("mem://a"))]
        );
    }

    #[test]
    fn a_completion_goes_once_to_each_2025_11_25_session_sent_the_elicitation() {
        use toolshape_protocol::ProtocolVersion;

        use super::super::session::Session;
        use super::elicitation_completed;
        let session = |version| {
            let session = Session::of_caller(None);
            session.set_handshake(version);
            session
        };
        let (sent, other) = (
            session(ProtocolVersion::V2025_11_25),
            session(ProtocolVersion::V2025_11_25),
        );
        let older = session(ProtocolVersion::V2025_06_18);
        sent.requests.sent_elicitation("e-1");
        older.requests.sent_elicitation("e-1");
        assert_eq!(elicitation_completed(&other, "e-1"), None);
        assert_eq!(elicitation_completed(&older, "e-1"), None);
        let told = elicitation_completed(&sent, "e-1");
        assert_eq!(
            told,
            Some((
                "notifications/elicitation/complete",
                json!({"elicitationId": "e-1"})
            ))
        );
        assert_eq!(elicitation_completed(&sent, "e-1"), None, "told once");
        // The last 64 are remembered; ids over 256 bytes never are.
        for n in 0..65 {
            sent.requests.sent_elicitation(&format!("n-{n}"));
        }
        assert_eq!(elicitation_completed(&sent, "n-0"), None);
        assert!(elicitation_completed(&sent, "n-64").is_some());
        let long = "x".repeat(257);
        sent.requests.sent_elicitation(&long);
        assert_eq!(elicitation_completed(&sent, &long), None);
    }
}
