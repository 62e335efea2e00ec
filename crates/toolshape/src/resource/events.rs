//! What peers learn when resources change (`notifications/resources/updated`
//! to the peers subscribed to a URI, `notifications/resources/list_changed`
//! to all), and what a server's owner learns when a peer subscribes.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::sync::broadcast;

/// How many changes a slow connection may fall behind by before it misses
/// some (it is then told nothing of those: each is a hint to read again).
const CHANGES_QUEUED: usize = 256;

/// Most bytes of subscribed URIs held over all the peers of the servers
/// sharing one [`ResourceEvents`] (sessions and `subscriptions/listen`
/// streams), each URI counted with [`SUBSCRIPTION_OVERHEAD`]: a session holds
/// at most 1,024 URIs of 8 KiB, and there may be 1,024 sessions.
pub(crate) const MAX_SUBSCRIBED_BYTES: usize = 64 * 1024 * 1024;

/// What one subscription is counted as beyond its URI's bytes.
const SUBSCRIPTION_OVERHEAD: usize = 64;

/// A change to a server's resources.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ResourceEvent {
    /// The resource at this URI changed.
    Updated(String),
    /// Resources were added or removed.
    ListChanged,
}

type SubscribeHook = Arc<dyn Fn(&str) + Send + Sync>;

/// Where a server's resource changes are announced: cheap to clone, and
/// shared by every server built with it ([`crate::ServerBuilder::resource_events`]),
/// so that one announcement reaches the peers of all of them.
///
/// ```
/// use toolshape::resource::ResourceEvents;
/// let events = ResourceEvents::new().on_subscribe(|uri| println!("watched: {uri}"));
/// events.updated("file:///notes.md");
/// events.list_changed();
/// ```
#[derive(Clone)]
pub struct ResourceEvents {
    changes: broadcast::Sender<ResourceEvent>,
    on_subscribe: Option<SubscribeHook>,
    on_unsubscribe: Option<SubscribeHook>,
    /// The bytes of the subscriptions held now, over every peer.
    held: Arc<AtomicUsize>,
    /// Most of them ([`MAX_SUBSCRIBED_BYTES`]).
    most_held: usize,
}

impl Default for ResourceEvents {
    fn default() -> Self {
        ResourceEvents {
            changes: broadcast::channel(CHANGES_QUEUED).0,
            on_subscribe: None,
            on_unsubscribe: None,
            held: Arc::default(),
            most_held: MAX_SUBSCRIBED_BYTES,
        }
    }
}

impl fmt::Debug for ResourceEvents {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResourceEvents")
            .field("connections", &self.changes.receiver_count())
            .field("on_subscribe", &self.on_subscribe.is_some())
            .field("on_unsubscribe", &self.on_unsubscribe.is_some())
            .field("subscribed_bytes", &self.held.load(Ordering::Relaxed))
            .finish()
    }
}

impl ResourceEvents {
    /// A new, unshared place to announce changes.
    pub fn new() -> ResourceEvents {
        ResourceEvents::default()
    }

    /// Calls `hook` with each URI a peer subscribes to
    /// (`resources/subscribe`, or one named by a 2026-07-28
    /// `subscriptions/listen`), as it arrives (a gateway subscribes to its
    /// upstream's resource then). Keep it quick: it runs on the connection's
    /// task.
    #[must_use]
    pub fn on_subscribe(mut self, hook: impl Fn(&str) + Send + Sync + 'static) -> Self {
        self.on_subscribe = Some(Arc::new(hook));
        self
    }

    /// Calls `hook` with the URI of each subscription that ends: a peer's
    /// `resources/unsubscribe`, the end of its session (once per resource it
    /// was subscribed to), or of its `subscriptions/listen` stream (once per
    /// resource named). Every call of the subscribe hook is matched by one of
    /// this hook, so a count per URI tells whether anyone still follows it.
    #[must_use]
    pub fn on_unsubscribe(mut self, hook: impl Fn(&str) + Send + Sync + 'static) -> Self {
        self.on_unsubscribe = Some(Arc::new(hook));
        self
    }

    /// Tells the peers subscribed to the resource `uri` that it changed.
    pub fn updated(&self, uri: impl Into<String>) {
        let _ = self.changes.send(ResourceEvent::Updated(uri.into()));
    }

    /// Tells every peer that listens for it that resources were added or
    /// removed.
    pub fn list_changed(&self) {
        let _ = self.changes.send(ResourceEvent::ListChanged);
    }

    /// The changes announced from now on, for one connection or stream.
    pub(crate) fn watch(&self) -> broadcast::Receiver<ResourceEvent> {
        self.changes.subscribe()
    }

    /// A peer subscribes to `uri`: taken from the budget of all peers'
    /// subscriptions, and the owner's hook called, unless that budget is
    /// spent (then `false`, nothing held, no hook called). Each `true` is
    /// to be matched by one [`ResourceEvents::unsubscribed`].
    pub(crate) fn subscribed(&self, uri: &str) -> bool {
        let cost = uri.len().saturating_add(SUBSCRIPTION_OVERHEAD);
        let taken = self
            .held
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |held| {
                held.checked_add(cost)
                    .filter(|after| *after <= self.most_held)
            });
        if taken.is_err() {
            return false;
        }
        if let Some(hook) = &self.on_subscribe {
            hook(uri);
        }
        true
    }

    /// A peer's subscription to `uri` ended: its bytes given back.
    pub(crate) fn unsubscribed(&self, uri: &str) {
        let cost = uri.len().saturating_add(SUBSCRIPTION_OVERHEAD);
        let _ = self
            .held
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |held| {
                Some(held.saturating_sub(cost))
            });
        if let Some(hook) = &self.on_unsubscribe {
            hook(uri);
        }
    }

    /// The same place, with at most `bytes` of subscriptions held (tests).
    #[cfg(test)]
    pub(crate) fn with_subscription_budget(mut self, bytes: usize) -> Self {
        self.most_held = bytes;
        self
    }
}
