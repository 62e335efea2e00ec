//! The long-lived streams of server-to-client notifications: a handshake
//! session's GET stream, and a 2026-07-28 `subscriptions/listen` stream.
//! Both send `notifications/tools/list_changed` when the registry changes,
//! keep-alives while idle, and end when their client goes away, their
//! session ends, or the server shuts down (a subscription then with its
//! result, which says it ended).

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use axum::response::Response;
use tokio::sync::{OwnedSemaphorePermit, mpsc};

use super::super::notices::{Change, Notice, next_change, next_completion};
use super::super::outbox::Outbox;
use super::app::App;
use super::response;

/// What a stream's client is told of a resource change.
pub(crate) type ResourceFilter = Box<dyn Fn(&Change) -> Vec<Notice> + Send + Sync>;

/// What a stream's client is told when a URL-mode elicitation completes.
pub(crate) type CompletionFilter = Box<dyn Fn(&str) -> Option<Notice> + Send + Sync>;

/// What a notification stream sends, and when it ends.
pub(crate) struct StreamPlan<E> {
    /// The first message, if any (the subscription's acknowledgement).
    pub(crate) first: Option<Notice>,
    /// What the stream says when the tool list changes; `None`: nothing
    /// (yet: a session that has not finished its handshake).
    pub(crate) list_changed: Box<dyn Fn() -> Option<Notice> + Send + Sync>,
    /// What the stream says when the prompts change.
    pub(crate) prompts_changed: Box<dyn Fn() -> Option<Notice> + Send + Sync>,
    /// What the stream says of a resource change.
    pub(crate) resource_changed: ResourceFilter,
    /// What the stream says when a URL-mode elicitation is complete, if it
    /// may say anything (a handshake session's stream).
    pub(crate) elicitation_completed: Option<CompletionFilter>,
    /// Resolves when the stream must end (its session ended).
    pub(crate) ended: E,
    /// The last message when the server shuts down, if any (a
    /// subscription's result, which says it ended).
    pub(crate) last: Option<Vec<u8>>,
}

/// Opens a notification stream following `plan`, holding `permit` (its
/// place among the streams, [`App::stream_permit`]) until it ends.
pub(crate) fn notification_stream<E>(
    app: &Arc<App>,
    permit: OwnedSemaphorePermit,
    plan: StreamPlan<E>,
) -> Response
where
    E: Future<Output = ()> + Send + 'static,
{
    let (sender, receiver) = mpsc::channel(16);
    let mut changes = app.shared.registry.watch_changes();
    let mut prompts = app.shared.prompts.watch_changes();
    let mut updates = app.shared.resource_events.watch();
    let mut completions = plan
        .elicitation_completed
        .as_ref()
        .map(|_| app.shared.url_elicitations.watch());
    let keep_alive = keep_alive_interval(app.sessions.idle_timeout());
    let shutdown = app.closing();
    tokio::spawn(async move {
        let _permit = permit;
        let outbox = Outbox(sender);
        if let Some((method, params)) = &plan.first
            && !outbox.notification(method, params).await
        {
            return;
        }
        let mut ticks = tokio::time::interval(keep_alive);
        ticks.tick().await;
        let (ended, mut last) = (plan.ended, plan.last);
        tokio::pin!(shutdown, ended);
        loop {
            let open = tokio::select! {
                () = &mut shutdown => {
                    if let Some(last) = last.take() {
                        outbox.send(last).await;
                    }
                    false
                }
                () = &mut ended => false,
                // The client went away (its response body was dropped).
                () = outbox.0.closed() => false,
                changed = changes.changed() => match changed {
                    Ok(()) => match (plan.list_changed)() {
                        Some((method, params)) => outbox.notification(method, &params).await,
                        None => true,
                    },
                    Err(_) => false,
                },
                changed = prompts.changed() => match changed {
                    Ok(()) => match (plan.prompts_changed)() {
                        Some((method, params)) => outbox.notification(method, &params).await,
                        None => true,
                    },
                    Err(_) => false,
                },
                change = next_change(&mut updates) => match change {
                    Some(change) => {
                        let mut open = true;
                        for (method, params) in (plan.resource_changed)(&change) {
                            open = outbox.notification(method, &params).await;
                            if !open {
                                break;
                            }
                        }
                        open
                    }
                    None => false,
                },
                completed = next_completion(&mut completions) => {
                    let told = plan.elicitation_completed.as_ref().and_then(|told| told(&completed));
                    match told {
                        Some((method, params)) => outbox.notification(method, &params).await,
                        None => true,
                    }
                }
                _ = ticks.tick() => outbox.keep_alive().await,
            };
            if !open {
                return;
            }
        }
    });
    response::event_stream(receiver, None)
}

/// How often an idle stream sends a keep-alive: a quarter of the session
/// idle time, between 1 and 15 seconds.
fn keep_alive_interval(idle: Duration) -> Duration {
    (idle / 4).clamp(Duration::from_secs(1), Duration::from_secs(15))
}
