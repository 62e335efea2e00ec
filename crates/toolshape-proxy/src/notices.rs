//! The upstream's change notifications, passed on: its resource updates to
//! the proxy's clients subscribed to them, its resource list changes to all
//! (and the proxy's own listing of its resources forgotten), and its prompt
//! list changes as a new listing of its prompts. The proxy
//! subscribes upstream to each resource some client of its follows, and
//! unsubscribes when none does any more (on the first connection; again
//! after it is made anew, or its HTTP session is), and to a 2026-07-28
//! upstream it keeps a `subscriptions/listen` stream open for its tool,
//! resource and prompt list changes and those resources (the tools
//! themselves are followed by `mirror.rs`).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use tokio::sync::Notify;
use tokio::sync::broadcast::error::RecvError;
use toolshape::PromptRegistry;
use toolshape::client::{Client, ClientError, ClientErrorKind, Listening};
use toolshape::protocol::subscriptions::SubscriptionFilter;
use toolshape::resource::{ResourceEvents, ResourceTemplateRegistry};

use crate::forward::Forwarder;
use crate::mirror::RELISTING_GAP;
use crate::surface::{self, LastListing};

/// Most resources the proxy subscribes to upstream at once (past it, the
/// others, in URI order, get no updates until some are let go; with a
/// warning).
pub(crate) const MAX_FOLLOWED: usize = 1024;
/// The pause before trying again after the upstream refused or ended a
/// subscription stream, or could not be reached; doubled after each
/// failure in a row, up to [`MAX_RETRY`].
const RETRY: Duration = Duration::from_secs(1);
const MAX_RETRY: Duration = Duration::from_secs(60);

/// The resources the proxy's clients follow, each with how many
/// subscriptions name it, for the upstream. Every subscription is counted
/// (as many as the proxy's own server bounds allow); at most
/// [`MAX_FOLLOWED`] of them are followed upstream at once.
#[derive(Debug, Default)]
pub(crate) struct Wanted {
    uris: Mutex<BTreeMap<String, usize>>,
    changed: Notify,
    /// Whether the bound was met (warned of once).
    full: AtomicBool,
}

impl Wanted {
    fn uris(&self) -> MutexGuard<'_, BTreeMap<String, usize>> {
        self.uris.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A client subscribed to `uri`.
    pub(crate) fn add(&self, uri: &str) {
        let mut uris = self.uris();
        if let Some(count) = uris.get_mut(uri) {
            *count += 1;
            return;
        }
        uris.insert(uri.to_owned(), 1);
        drop(uris);
        self.changed.notify_one();
    }

    /// A client's subscription to `uri` ended.
    pub(crate) fn remove(&self, uri: &str) {
        let mut uris = self.uris();
        let Some(count) = uris.get_mut(uri) else {
            return;
        };
        *count -= 1;
        if *count == 0 {
            uris.remove(uri);
            drop(uris);
            self.changed.notify_one();
        }
    }

    /// The resources to follow upstream: the first [`MAX_FOLLOWED`].
    fn snapshot(&self) -> BTreeSet<String> {
        let uris = self.uris();
        if uris.len() > MAX_FOLLOWED && !self.full.swap(true, Ordering::Relaxed) {
            tracing::warn!(
                "clients follow more than {MAX_FOLLOWED} resources: the others get no updates until some are let go"
            );
        }
        uris.keys().take(MAX_FOLLOWED).cloned().collect()
    }
}

/// Who is told of the upstream's changes.
pub(crate) struct Followers {
    /// Resource updates and list changes, for the proxy's clients.
    pub(crate) events: ResourceEvents,
    /// The resources the proxy's clients follow.
    pub(crate) wanted: Arc<Wanted>,
    /// The proxy's reused listing of the upstream's resources.
    pub(crate) listing: Arc<LastListing>,
    /// The upstream's prompts, listed again when they change.
    pub(crate) prompts: Option<PromptRegistry>,
    /// The upstream's resource templates, listed again when its resources
    /// change.
    pub(crate) templates: Option<ResourceTemplateRegistry>,
}

/// What is to be listed again, and when.
struct Relisting {
    prompts: bool,
    templates: bool,
    /// Failed listings in a row.
    failures: u32,
    /// When (at least [`RELISTING_GAP`] after the last listing).
    due: Option<tokio::time::Instant>,
    last: tokio::time::Instant,
}

impl Relisting {
    fn ask(&mut self) {
        self.due.get_or_insert(self.last + RELISTING_GAP);
    }

    /// After a listing: one that failed is tried again after
    /// [`RELISTING_RETRY`], up to [`MAX_RELISTING_RETRIES`] times in a row.
    fn retry(&mut self, listed: bool) {
        if listed {
            self.failures = 0;
            return;
        }
        self.failures += 1;
        if self.failures > MAX_RELISTING_RETRIES {
            tracing::warn!(
                "listing the upstream's prompts or templates keeps failing: left until its next change"
            );
            (self.prompts, self.templates, self.failures) = (false, false, 0);
            return;
        }
        self.due = Some(tokio::time::Instant::now() + RELISTING_RETRY);
    }
}

/// The pause before listing again prompts or templates whose listing failed.
const RELISTING_RETRY: Duration = Duration::from_secs(5);
/// How many times in a row a failed listing is tried again.
const MAX_RELISTING_RETRIES: u32 = 3;

/// Passes the upstream's changes on to `followers`, for good (aborted with
/// the proxy), following each connection the upstream's first slot makes.
pub(crate) async fn follow(forwarder: Arc<Forwarder>, followers: Followers) {
    // The first connection's prompts and templates were just listed (the
    // proxy's start); each later one's are listed again.
    let mut listed = true;
    loop {
        match forwarder.upstream.primary().await {
            Ok(client) => {
                follow_connection(&forwarder, &client, &followers, !listed).await;
                listed = false;
            }
            Err(error) => tracing::warn!(%error, "the upstream server is unavailable"),
        }
        tokio::time::sleep(RETRY).await;
    }
}

/// Follows one connection until it closes; `relist`: list its prompts and
/// templates again first (what changed while there was none).
async fn follow_connection(
    forwarder: &Arc<Forwarder>,
    client: &Client,
    followers: &Followers,
    relist: bool,
) {
    let Followers {
        events,
        wanted,
        listing,
        prompts,
        templates,
    } = followers;
    let mut updates = client.resource_updates();
    let mut list_changes = client.resource_list_changes();
    let mut prompt_changes = client.prompt_list_changes();
    let mut renewals = client.session_renewals();
    // Listings start at least `RELISTING_GAP` apart, as the tools'.
    let mut relisting = Relisting {
        prompts: relist,
        templates: relist,
        failures: 0,
        due: relist.then(tokio::time::Instant::now),
        last: tokio::time::Instant::now(),
    };
    let resources = client.negotiated().capabilities.resources.clone();
    let has_resources = resources.is_some();
    let subscribable = resources.and_then(|r| r.subscribe) == Some(true);
    let stateless = client.protocol_version().is_stateless();
    let mut followed: BTreeSet<String> = BTreeSet::new();
    let mut listening: Option<Listening> = None;
    // When the subscriptions are next made to match what clients follow:
    // now, then at least `RELISTING_GAP` after the last time (a client
    // subscribing and letting go without pause costs the upstream one
    // change a gap), or after a pause when the upstream failed.
    let mut sync_at = Some(tokio::time::Instant::now());
    let mut synced_at = tokio::time::Instant::now();
    let mut pause = RETRY;
    // An upstream that answers `subscriptions/listen` with an error (it
    // has no such method) is not asked again on this connection.
    let mut refused = false;
    loop {
        let now = tokio::time::Instant::now();
        if sync_at.is_some_and(|at| now >= at) {
            sync_at = None;
            synced_at = now;
            let uris = wanted.snapshot();
            if stateless && !refused {
                let has_prompts = prompts.is_some();
                match relisten(
                    client,
                    (has_resources, has_prompts),
                    &uris,
                    &followed,
                    &mut listening,
                )
                .await
                {
                    Ok(()) => {
                        followed = uris;
                        pause = RETRY;
                    }
                    Err(error) if is_method_not_found(&error) => {
                        tracing::warn!(%error, "the upstream refused a subscription stream: its changes are not followed");
                        refused = true;
                    }
                    Err(error) => {
                        tracing::warn!(%error, "cannot open a subscription stream to the upstream; trying again");
                        sync_at = Some(tokio::time::Instant::now() + pause);
                        pause = (pause * 2).min(MAX_RETRY);
                    }
                }
            } else if !stateless {
                if subscribable {
                    resubscribe(client, &uris, &followed).await;
                }
                followed = uris;
            }
        }
        let ended = async {
            match listening.as_mut() {
                Some(stream) => stream.ended().await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            () = wanted.changed.notified() => {
                let earliest = synced_at + RELISTING_GAP;
                sync_at.get_or_insert(earliest.max(tokio::time::Instant::now()));
            }
            renewed = renewals.changed() => {
                if renewed.is_err() {
                    return;
                }
                // A new HTTP session: nothing is subscribed on it yet.
                followed.clear();
                sync_at = Some(tokio::time::Instant::now());
            }
            () = until(sync_at) => {}
            () = ended => {
                tracing::warn!("the upstream ended its subscription stream; opening another");
                listening = None;
                followed.clear();
                sync_at = Some(tokio::time::Instant::now() + pause);
                pause = (pause * 2).min(MAX_RETRY);
            }
            update = updates.recv() => match update {
                Ok(uri) => events.updated(uri),
                Err(RecvError::Lagged(missed)) => {
                    // Which resources changed is lost: clients read again.
                    tracing::warn!(missed, "resource updates from the upstream came too fast; announced as a list change");
                    events.list_changed();
                }
                Err(RecvError::Closed) => return,
            },
            changed = prompt_changes.changed() => {
                if changed.is_err() {
                    return;
                }
                relisting.prompts = true;
                relisting.ask();
            }
            () = until(relisting.due) => {
                relisting.due = None;
                relisting.last = tokio::time::Instant::now();
                let mut listed = true;
                if std::mem::take(&mut relisting.prompts) && let Some(prompts) = prompts {
                    let done = surface::relist_prompts(forwarder, client, prompts).await;
                    relisting.prompts = !done;
                    listed &= done;
                }
                if std::mem::take(&mut relisting.templates) {
                    if let Some(templates) = templates {
                        let done = surface::relist_templates(forwarder, client, templates).await;
                        relisting.templates = !done;
                        listed &= done;
                    }
                    // Told after the templates are listed again (a client
                    // listing them then sees the new ones), and when that
                    // failed (the resources changed all the same).
                    events.list_changed();
                }
                relisting.retry(listed);
            }
            changed = list_changes.changed() => {
                if changed.is_err() {
                    return;
                }
                listing.changed();
                relisting.templates = true;
                relisting.ask();
            }
            () = client.closed() => return,
        }
    }
}

/// Resolves at `at`; never without one.
async fn until(at: Option<tokio::time::Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// 2026-07-28: opens a stream for the list changes and `uris` unless one
/// for exactly them is open (the new one opened before the old is
/// dropped, so nothing falls between).
async fn relisten(
    client: &Client,
    (has_resources, has_prompts): (bool, bool),
    uris: &BTreeSet<String>,
    followed: &BTreeSet<String>,
    listening: &mut Option<Listening>,
) -> Result<(), ClientError> {
    if listening.is_some() && uris == followed {
        return Ok(());
    }
    let mut filter = SubscriptionFilter::default();
    filter.tools_list_changed = true;
    filter.resources_list_changed = has_resources;
    filter.prompts_list_changed = has_prompts;
    filter.resource_subscriptions = if has_resources {
        uris.iter().cloned().collect()
    } else {
        Vec::new()
    };
    *listening = Some(client.listen(filter).await?);
    Ok(())
}

/// Whether the upstream answered that it has no such method.
fn is_method_not_found(error: &ClientError) -> bool {
    matches!(error.kind(), ClientErrorKind::Protocol(object) if object.code == toolshape::protocol::error_code::METHOD_NOT_FOUND)
}

/// Handshake revisions: subscribes upstream to each of `uris` not yet
/// `followed` (one it refuses gets no updates, with a warning), and
/// unsubscribes from each followed no more.
async fn resubscribe(client: &Client, uris: &BTreeSet<String>, followed: &BTreeSet<String>) {
    for uri in uris.difference(followed) {
        if let Err(error) = client.subscribe(uri).await {
            let uri = toolshape::protocol::text::excerpt(uri, 200);
            tracing::warn!(%error, %uri, "the upstream refused a subscription");
        }
    }
    for uri in followed.difference(uris) {
        if let Err(error) = client.unsubscribe(uri).await {
            let uri = toolshape::protocol::text::excerpt(uri, 200);
            tracing::debug!(%error, %uri, "the upstream refused to end a subscription");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_resource_is_followed_while_any_subscription_names_it() {
        let wanted = Wanted::default();
        wanted.add("a");
        wanted.add("a");
        wanted.add("b");
        assert_eq!(wanted.snapshot(), ["a", "b"].map(String::from).into());
        wanted.remove("a");
        assert_eq!(wanted.snapshot(), ["a", "b"].map(String::from).into());
        wanted.remove("a");
        wanted.remove("c");
        assert_eq!(wanted.snapshot(), ["b"].map(String::from).into());
    }

    #[test]
    fn past_the_bound_some_are_not_followed_until_others_are_let_go() {
        let wanted = Wanted::default();
        for n in 0..MAX_FOLLOWED {
            wanted.add(&format!("a{n:05}"));
        }
        // Past the bound, and counted: "z" by two clients.
        wanted.add("z");
        wanted.add("z");
        assert_eq!(wanted.snapshot().len(), MAX_FOLLOWED);
        assert!(!wanted.snapshot().contains("z"));
        wanted.remove("a00000");
        assert!(wanted.snapshot().contains("z"));
        // One of the two lets go: still followed for the other.
        wanted.remove("z");
        assert!(wanted.snapshot().contains("z"));
        wanted.remove("z");
        assert!(!wanted.snapshot().contains("z"));
    }
}
