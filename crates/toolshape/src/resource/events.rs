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

/// Most bytes of subscribed URIs drawn from the budget shared by all the
/// peers of the servers sharing one [`ResourceEvents`] (sessions and
/// `subscriptions/listen` streams), each URI counted with
/// [`SUBSCRIPTION_OVERHEAD`]: a session may hold 1,024 URIs of 8 KiB, and
/// there may be 1,024 sessions.
pub(crate) const MAX_SUBSCRIBED_BYTES: usize = 64 * 1024 * 1024;

/// What each session or stream holds of its own before it draws on the
/// shared budget: one peer that spends that budget leaves each other one
/// this much.
const OWN_SUBSCRIBED_BYTES: usize = 64 * 1024;

/// What one subscription is counted as beyond its URI's bytes.
const SUBSCRIPTION_OVERHEAD: usize = 64;

/// What one peer (a session, a `subscriptions/listen` stream) holds of
/// subscriptions, in bytes: its first [`OWN_SUBSCRIBED_BYTES`] are its
/// own, the rest drawn from the budget all peers share.
#[derive(Debug, Default)]
pub(crate) struct Held {
    bytes: usize,
}

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
/// so that one announcement reaches the peers of all of them. Those servers
/// share one budget for their peers' subscriptions too: past the 64 KiB of
/// URIs each session or `subscriptions/listen` stream holds of its own,
/// 64 MiB for all; a subscription past it is refused (a stream's URI left
/// out of its acknowledgement) until others end.
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
    /// The bytes of subscriptions drawn from the shared budget now.
    shared: Arc<AtomicUsize>,
    /// The shared budget ([`MAX_SUBSCRIBED_BYTES`]).
    most_shared: usize,
    /// What each peer holds of its own ([`OWN_SUBSCRIBED_BYTES`]).
    own: usize,
}

impl Default for ResourceEvents {
    fn default() -> Self {
        ResourceEvents {
            changes: broadcast::channel(CHANGES_QUEUED).0,
            on_subscribe: None,
            on_unsubscribe: None,
            shared: Arc::default(),
            most_shared: MAX_SUBSCRIBED_BYTES,
            own: OWN_SUBSCRIBED_BYTES,
        }
    }
}

impl fmt::Debug for ResourceEvents {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResourceEvents")
            .field("connections", &self.changes.receiver_count())
            .field("on_subscribe", &self.on_subscribe.is_some())
            .field("on_unsubscribe", &self.on_unsubscribe.is_some())
            .field(
                "shared_subscribed_bytes",
                &self.shared.load(Ordering::Relaxed),
            )
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

    /// A peer, which holds `held`, subscribes to `uri`: past what it holds
    /// of its own, taken from the budget all peers share, and the owner's
    /// hook called; unless that budget is spent (then `false`, nothing
    /// held, no hook called). Each `true` is to be matched by one
    /// [`ResourceEvents::unsubscribed`] with the same `held`.
    pub(crate) fn subscribed(&self, held: &mut Held, uri: &str) -> bool {
        let after = held.bytes.saturating_add(subscription_cost(uri));
        let drawn = self.past_own(after) - self.past_own(held.bytes);
        if drawn > 0 {
            let taken = self
                .shared
                .fetch_update(Ordering::AcqRel, Ordering::Acquire, |shared| {
                    shared
                        .checked_add(drawn)
                        .filter(|total| *total <= self.most_shared)
                });
            if taken.is_err() {
                return false;
            }
        }
        held.bytes = after;
        if let Some(hook) = &self.on_subscribe {
            hook(uri);
        }
        true
    }

    /// The subscription to `uri` of a peer that holds `held` ended: what it
    /// drew from the shared budget given back.
    pub(crate) fn unsubscribed(&self, held: &mut Held, uri: &str) {
        let after = held.bytes.saturating_sub(subscription_cost(uri));
        let given = self.past_own(held.bytes) - self.past_own(after);
        if given > 0 {
            let _ = self
                .shared
                .fetch_update(Ordering::AcqRel, Ordering::Acquire, |shared| {
                    Some(shared.saturating_sub(given))
                });
        }
        held.bytes = after;
        if let Some(hook) = &self.on_unsubscribe {
            hook(uri);
        }
    }

    /// What a peer holding `bytes` draws from the shared budget.
    fn past_own(&self, bytes: usize) -> usize {
        bytes.saturating_sub(self.own)
    }

    /// The same place, with a shared budget of `shared` bytes and `own`
    /// bytes of each peer's own (tests).
    #[cfg(test)]
    pub(crate) fn with_subscription_budget(mut self, shared: usize, own: usize) -> Self {
        self.most_shared = shared;
        self.own = own;
        self
    }
}

/// What one subscription to `uri` counts for.
fn subscription_cost(uri: &str) -> usize {
    uri.len().saturating_add(SUBSCRIPTION_OVERHEAD)
}
