//! The request/response core: ids, pending requests matched in any order,
//! cancellation on drop or timeout, and the server's notifications.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use serde::Serialize;
use tokio::sync::{broadcast, mpsc, oneshot, watch};
use toolshape_protocol::{
    CancelledNotificationParams, ErrorObject, Incoming, KnownNotification, LoggingLevel,
    Notification, RequestId, Response, methods,
};

use super::MessageObserver;
use super::answer::ResultJson;
use super::error::{ClientError, ClientErrorKind, TransportError};
use super::handlers::Handlers;
use super::outgoing::{Outbound, Outgoing, Route};
use crate::tool::{LogMessage, Progress, ToolContext};
use crate::transport::lines::{Leading, LeadingKind, leading};

type Reply = Result<ResultJson, ClientError>;

/// How many resource updates a slow watcher may fall behind by before it
/// misses some.
const RESOURCE_UPDATES_QUEUED: usize = 256;

/// What a message from the server turned out to be.
#[derive(Debug)]
#[cfg_attr(not(feature = "client-http"), allow(dead_code))]
pub(crate) enum Received {
    /// The response to the request with this id.
    Answer(RequestId),
    /// An error response without an id (about the transport request itself).
    UnaddressedError(ErrorObject),
    /// Not a JSON-RPC message.
    Invalid,
    /// A notification or a request of the server's.
    Other,
    /// A JSON-RPC batch (2025-03-26) answering the requests with these ids
    /// (none, when it held only notifications and requests).
    Batch(Vec<RequestId>),
}

/// Where a message from the server arrived, which says what a request-scoped
/// notification (a log message) belongs to.
#[derive(Debug, Clone, Copy)]
#[cfg_attr(not(feature = "client-http"), allow(dead_code))]
pub(crate) enum Channel<'a> {
    /// The one channel every message shares (stdio): a log message belongs
    /// to a request only when that request is the only one in flight.
    Shared,
    /// The response stream of this request (Streamable HTTP POST).
    RequestStream(&'a RequestId),
    /// A stream no request owns (the HTTP GET stream).
    Standalone,
}

/// A request waiting for its answer.
#[derive(Debug)]
pub(super) struct Waiter {
    reply: oneshot::Sender<Reply>,
    /// Where the server's log messages about this request go, and the least
    /// severe level wanted.
    pub(super) log: Option<(LoggingLevel, mpsc::Sender<LogMessage>)>,
    /// The client of the call a gateway serves, asked the server's questions
    /// about this request.
    pub(super) asks: Option<Arc<ToolContext>>,
    /// One per question about this request still being answered: dropped
    /// with the request, which tells its answering task to give up.
    pub(super) answering: Vec<(String, oneshot::Sender<()>)>,
    /// The keys given to the questions relayed about this request so far.
    pub(super) keys: super::asked::QuestionKeys,
}

#[cfg(test)]
impl Waiter {
    /// A request waiting for nothing in particular, relaying to `asks`.
    pub(super) fn relaying_to(asks: Option<Arc<ToolContext>>) -> Waiter {
        Waiter {
            reply: oneshot::channel().0,
            log: None,
            asks,
            answering: Vec::new(),
            keys: super::asked::QuestionKeys::default(),
        }
    }
}

/// The shared state of one connection to a server.
#[derive(Debug)]
pub(crate) struct Peer {
    pub(super) outgoing: mpsc::Sender<Outbound>,
    /// What this client answers when the server asks.
    pub(crate) handlers: Handlers,
    pub(super) pending: Mutex<HashMap<RequestId, Waiter>>,
    progress: Mutex<HashMap<RequestId, mpsc::Sender<Progress>>>,
    /// Requests whose questions were relayed and that ended unanswered
    /// lately: the server may still ask about them (see `asked.rs`).
    pub(super) abandoned: Mutex<super::asked::Abandoned>,
    next_id: AtomicI64,
    closed: AtomicBool,
    /// Set when the server says its tool list changed.
    pub(crate) tools_changed: AtomicBool,
    /// Counts the server's `tools/list_changed` notifications, for watchers.
    pub(crate) tool_list_changes: watch::Sender<u64>,
    /// Counts its `resources/list_changed` notifications.
    pub(crate) resource_list_changes: watch::Sender<u64>,
    /// Counts its `prompts/list_changed` notifications.
    pub(crate) prompt_list_changes: watch::Sender<u64>,
    /// Counts the new sessions opened in place of ones the server ended.
    pub(crate) session_renewals: watch::Sender<u64>,
    /// The URIs of its `resources/updated` notifications.
    pub(crate) resource_updates: broadcast::Sender<String>,
    /// The URL-mode elicitations it sent, and their completions.
    pub(crate) url_visits: super::url_visits::UrlVisits,
    /// The `subscriptions/listen` streams open (2026-07-28).
    pub(super) listens: super::listening::ListenWaiters,
    /// Becomes `true` when the connection closes, for watchers.
    pub(crate) closed_signal: watch::Sender<bool>,
    /// Answers to the server's requests waiting for room in the queue (see
    /// `asked.rs`), at most `MAX_ANSWERING` at once.
    pub(super) answering: Arc<tokio::sync::Semaphore>,
    /// The server's questions being answered by this client's own
    /// handlers, at most `MAX_ANSWERING` at once.
    pub(super) handling: Arc<tokio::sync::Semaphore>,
    /// How many answers were dropped past the first bound.
    pub(super) answers_dropped: std::sync::atomic::AtomicU64,
    /// Whether the server may send JSON-RPC batches: it speaks 2025-03-26
    /// (see `batch.rs`).
    pub(super) takes_batches: AtomicBool,
    /// How many messages from the server could not be read (warned of at
    /// the first and every thousandth: a server writing logs to stdout
    /// would fill the log otherwise).
    invalid_messages: std::sync::atomic::AtomicU64,
    /// Shown every message received, before it is read.
    observer: Observer,
}

/// The optional [`MessageObserver`], shown in `Debug` output by presence only.
struct Observer(Option<MessageObserver>);

impl std::fmt::Debug for Observer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() { "Some(..)" } else { "None" })
    }
}

pub(super) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Peer {
    pub(crate) fn new(
        outgoing: mpsc::Sender<Outbound>,
        handlers: Handlers,
        observer: Option<MessageObserver>,
    ) -> Arc<Peer> {
        Arc::new(Peer {
            outgoing,
            handlers,
            pending: Mutex::default(),
            progress: Mutex::default(),
            abandoned: Mutex::default(),
            next_id: AtomicI64::new(1),
            closed: AtomicBool::new(false),
            tools_changed: AtomicBool::new(false),
            tool_list_changes: watch::Sender::new(0),
            resource_list_changes: watch::Sender::new(0),
            session_renewals: watch::Sender::new(0),
            prompt_list_changes: watch::Sender::new(0),
            resource_updates: broadcast::channel(RESOURCE_UPDATES_QUEUED).0,
            url_visits: super::url_visits::UrlVisits::default(),
            listens: Default::default(),
            closed_signal: watch::Sender::new(false),
            answering: Arc::new(tokio::sync::Semaphore::new(super::asked::MAX_ANSWERING)),
            handling: Arc::new(tokio::sync::Semaphore::new(super::asked::MAX_ANSWERING)),
            answers_dropped: std::sync::atomic::AtomicU64::new(0),
            invalid_messages: std::sync::atomic::AtomicU64::new(0),
            takes_batches: AtomicBool::new(false),
            observer: Observer(observer),
        })
    }

    /// A fresh request id.
    pub(crate) fn next_id(&self) -> RequestId {
        RequestId::Number(self.next_id.fetch_add(1, Ordering::Relaxed))
    }

    /// How many ids this connection has handed out (1 to this).
    pub(crate) fn ids_issued(&self) -> i64 {
        self.next_id.load(Ordering::Relaxed) - 1
    }

    /// Whether `id` is one this connection has handed out.
    fn issued(&self, id: &RequestId) -> bool {
        id.as_i64()
            .is_some_and(|n| n >= 1 && n < self.next_id.load(Ordering::Relaxed))
    }

    /// Sends a request and waits for its answer. When the wait ends early (the
    /// timeout, or the future being dropped) and `cancellable`, the server is
    /// sent `notifications/cancelled`.
    pub(crate) async fn request<P: Serialize + ?Sized>(
        self: &Arc<Self>,
        id: RequestId,
        method: &'static str,
        params: &P,
        route: Route,
        timeout: Duration,
        cancellable: bool,
    ) -> Result<ResultJson, ClientError> {
        let mut body = Vec::with_capacity(256);
        toolshape_protocol::write_request(&mut body, &id, method, params)
            .map_err(TransportError::Serialize)?;
        let (sender, receiver) = oneshot::channel();
        let waiter = Waiter {
            reply: sender,
            log: route.log.clone(),
            asks: route.asks.clone(),
            answering: Vec::new(),
            keys: super::asked::QuestionKeys::default(),
        };
        lock(&self.pending).insert(id.clone(), waiter);
        let mut guard = PendingGuard {
            peer: Arc::clone(self),
            id: id.clone(),
            route: cancellable.then(|| Route::under(route.version)),
            armed: true,
        };
        let message = Outgoing {
            id: Some(id),
            method,
            body,
            route,
        };
        if self.closed.load(Ordering::Acquire) {
            return Err(TransportError::Closed.into());
        }
        let deadline = crate::transport::deadline_after(timeout);
        self.send_by(message, deadline, timeout).await?;
        match tokio::time::timeout_at(deadline, receiver).await {
            Ok(Ok(reply)) => {
                guard.armed = false;
                reply
            }
            Ok(Err(_)) => {
                guard.armed = false;
                Err(TransportError::Closed.into())
            }
            Err(_) => Err(ClientErrorKind::Timeout(timeout).into()),
        }
    }

    /// Queues a request for sending by `deadline` (the end of its time
    /// limit, `timeout`): the limit covers the queueing too, since a server
    /// that stops reading fills the queue, and a request must not wait on
    /// it forever.
    pub(super) async fn send_by(
        &self,
        message: Outgoing,
        deadline: tokio::time::Instant,
        timeout: Duration,
    ) -> Result<(), ClientError> {
        match tokio::time::timeout_at(deadline, self.outgoing.send(Outbound::Message(message)))
            .await
        {
            Ok(Ok(())) => Ok(()),
            Ok(Err(_)) => Err(TransportError::Closed.into()),
            Err(_) => Err(ClientErrorKind::Timeout(timeout).into()),
        }
    }

    /// Sends a notification; errors only when the connection is closed.
    pub(crate) fn notify<P: Serialize + ?Sized>(
        &self,
        method: &'static str,
        params: &P,
        route: Route,
    ) -> Result<(), ClientError> {
        let mut body = Vec::with_capacity(128);
        toolshape_protocol::write_notification(&mut body, method, params)
            .map_err(TransportError::Serialize)?;
        let message = Outgoing {
            id: None,
            method,
            body,
            route,
        };
        self.outgoing
            .try_send(Outbound::Message(message))
            .map_err(|_| TransportError::Closed.into())
    }

    /// Asks the writer to close the server's input (its signal to exit).
    /// Waits (a bounded time) until the writer has finished: the server's
    /// input is closed, or the HTTP session's DELETE has been sent.
    pub(crate) async fn close_output(&self) {
        if self.outgoing.send(Outbound::Close).await.is_ok() {
            let _ = tokio::time::timeout(Duration::from_secs(5), self.outgoing.closed()).await;
        }
    }

    /// Routes progress for the request `id` to `sender` until [`Peer::unroute_progress`].
    pub(crate) fn route_progress(&self, id: RequestId, sender: mpsc::Sender<Progress>) {
        lock(&self.progress).insert(id, sender);
    }

    pub(crate) fn unroute_progress(&self, id: &RequestId) {
        lock(&self.progress).remove(id);
    }

    /// Handles one message from the server, arrived on `channel`, and says
    /// what it was.
    pub(crate) fn receive(&self, bytes: &[u8], channel: Channel<'_>) -> Received {
        if let Some(observe) = &self.observer.0 {
            observe(bytes);
        }
        if toolshape_protocol::is_batch(bytes) && self.takes_batches.load(Ordering::Relaxed) {
            return self.receive_batch(bytes, channel);
        }
        self.receive_one(bytes, channel)
    }

    /// Handles one message that is no batch.
    pub(super) fn receive_one(&self, bytes: &[u8], channel: Channel<'_>) -> Received {
        // A success response with the usual layout: its result is read
        // once, by the request that waits for it.
        if let Some((id, result)) = ResultJson::cut(bytes) {
            self.answer(&id, Ok(result));
            return Received::Answer(id);
        }
        match toolshape_protocol::classify(bytes) {
            Incoming::Response(response) => {
                let (id, reply) = match response {
                    Response::Error { id: None, error } => {
                        tracing::warn!(%error, "the server sent an error without an id");
                        return Received::UnaddressedError(error);
                    }
                    Response::Error {
                        id: Some(id),
                        error,
                    } => {
                        self.url_visits.refused(&error);
                        (id, Err(ClientErrorKind::Protocol(error).into()))
                    }
                    Response::Success { id, result } => (id, Ok(ResultJson::read(result))),
                };
                self.answer(&id, reply);
                Received::Answer(id)
            }
            Incoming::Notification(notification) => {
                self.notification(&notification, channel);
                Received::Other
            }
            Incoming::Request(request) => {
                self.answer_request(request, channel);
                Received::Other
            }
            // An unreadable response to one of our requests (a malformed
            // error object, both `result` and `error`...): fail that request
            // now instead of leaving it to its timeout.
            Incoming::Invalid {
                id: Some(id),
                error,
            } if !has_method(bytes) => {
                tracing::warn!(%error, %id, "the server sent an invalid response");
                self.fail(
                    &id,
                    ClientError::invalid(format!("invalid response: {}", error.message)),
                );
                Received::Answer(id)
            }
            Incoming::Invalid { error, .. } => {
                // Not JSON at all (a byte that is not UTF-8, a raw control
                // character in a string): its leading members may still say
                // it answers a request of ours, which then fails now, not
                // at its timeout.
                let leading = leading(bytes);
                if let Some(id) = leading.id.filter(|_| leading.kind != LeadingKind::Request) {
                    let unreadable =
                        ClientError::invalid(format!("unreadable response: {}", error.message));
                    if self.fail(&id, unreadable) {
                        tracing::warn!(%error, %id, "the server sent an unreadable response");
                        return Received::Answer(id);
                    }
                }
                let seen = self.invalid_messages.fetch_add(1, Ordering::Relaxed);
                if seen.is_multiple_of(1000) {
                    tracing::warn!(
                        %error,
                        invalid = seen + 1,
                        "the server sent an invalid message; ignored (warned of again every 1000)"
                    );
                }
                Received::Invalid
            }
        }
    }

    /// Hands the waiting request `id` its reply.
    fn answer(&self, id: &RequestId, reply: Reply) {
        let waiter = lock(&self.pending).remove(id);
        match waiter {
            Some(waiter) => {
                let _ = waiter.reply.send(reply);
            }
            None if self.end_listen(id, reply.map(drop)) => {}
            None if self.issued(id) => tracing::debug!(
                %id,
                "a response for a request no longer waiting (late, cancelled or answered twice); ignored"
            ),
            None => tracing::warn!(
                id = %toolshape_protocol::text::excerpt(&id.to_string(), 100),
                "the server answered a request this client never sent; ignored"
            ),
        }
    }

    fn notification(&self, notification: &Notification, channel: Channel<'_>) {
        match KnownNotification::from_notification(notification) {
            Ok(KnownNotification::ToolListChanged(_)) => {
                self.tools_changed.store(true, Ordering::Release);
                self.tool_list_changes.send_modify(|count| *count += 1);
            }
            Ok(KnownNotification::Progress(params)) => {
                if let Some(route) = lock(&self.progress).get(&params.progress_token) {
                    let _ = route.try_send(Progress {
                        progress: params.progress,
                        total: params.total,
                        message: params.message,
                    });
                }
            }
            Ok(KnownNotification::LoggingMessage(params)) => match self.log_route(channel) {
                Some((level, _)) if params.level < level => {}
                Some((_, route)) => {
                    let _ = route.try_send(LogMessage {
                        level: params.level,
                        logger: params.logger,
                        data: params.data,
                    });
                }
                None => {
                    let data = toolshape_protocol::text::excerpt(&params.data.to_string(), 1000);
                    tracing::info!(target: "toolshape::server_log", level = ?params.level, logger = ?params.logger, message = %data);
                }
            },
            Ok(KnownNotification::ResourceUpdated(params)) => {
                let _ = self.resource_updates.send(params.uri);
            }
            Ok(KnownNotification::ResourceListChanged(_)) => {
                self.resource_list_changes.send_modify(|count| *count += 1);
            }
            Ok(KnownNotification::PromptListChanged(_)) => {
                self.prompt_list_changes.send_modify(|count| *count += 1);
            }
            Ok(KnownNotification::SubscriptionsAcknowledged(params)) => self.acknowledged(params),
            Ok(KnownNotification::ElicitationComplete(params)) => {
                self.url_visits.completed(params.elicitation_id);
            }
            Ok(other) => tracing::debug!(method = other.method(), "ignored a notification"),
            Err(error) => tracing::debug!(%error, "ignored a notification"),
        }
    }

    /// Where a log message that arrived on `channel` goes: to the request it
    /// is about, when that can be told and the request asked for them.
    fn log_route(&self, channel: Channel<'_>) -> Option<(LoggingLevel, mpsc::Sender<LogMessage>)> {
        let pending = lock(&self.pending);
        let waiter = match channel {
            Channel::RequestStream(id) => pending.get(id),
            Channel::Shared => self.only_request(&pending).map(|(_, waiter)| waiter),
            Channel::Standalone => None,
        };
        waiter.and_then(|waiter| waiter.log.clone())
    }

    /// Fails a pending request (or listen) whose response could not be
    /// read; false when none of ours has that id.
    pub(crate) fn fail(&self, id: &RequestId, error: ClientError) -> bool {
        let waiter = lock(&self.pending).remove(id);
        match waiter {
            Some(waiter) => {
                let _ = waiter.reply.send(Err(error));
                true
            }
            None => self.end_listen(id, Err(error)),
        }
    }

    /// Handles a message from the server over the size limit, skipped
    /// unread: an answer, or a message that may be one, fails the request
    /// of ours it answers; a request of the server's (or a message that
    /// answers none of ours) is refused, and this client's own request with
    /// the same id goes on.
    pub(crate) fn too_long(&self, leading: Leading, limit: usize) {
        tracing::warn!(limit, kind = ?leading.kind, "the server sent a message over the size limit; skipped");
        let Some(id) = leading.id else {
            return;
        };
        if leading.kind != LeadingKind::Request {
            let error = ClientError::too_large(limit);
            if self.fail(&id, error) || leading.kind == LeadingKind::Response {
                return;
            }
        }
        let refusal = ErrorObject::invalid_request(format!("message larger than {limit} bytes"));
        self.refuse(id, refusal);
    }

    /// A new session replaced one the server ended: what was subscribed on
    /// the old one must be again, and any list may have changed.
    #[cfg(feature = "client-http")]
    pub(crate) fn session_renewed(&self) {
        self.tools_changed.store(true, Ordering::Release);
        self.tool_list_changes.send_modify(|count| *count += 1);
        self.resource_list_changes.send_modify(|count| *count += 1);
        self.prompt_list_changes.send_modify(|count| *count += 1);
        self.session_renewals.send_modify(|count| *count += 1);
    }

    /// Whether the connection is closed.
    pub(crate) fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    /// Marks the connection closed and fails everything still waiting.
    pub(crate) fn close(&self) {
        self.closed.store(true, Ordering::Release);
        for (_, waiter) in lock(&self.pending).drain() {
            let _ = waiter.reply.send(Err(TransportError::Closed.into()));
        }
        self.end_all_listens();
        self.closed_signal.send_replace(true);
    }
}

/// Whether a message has a top-level `method` (a request or notification,
/// never a response to one of ours).
fn has_method(bytes: &[u8]) -> bool {
    #[derive(serde::Deserialize)]
    struct Probe {
        method: Option<serde::de::IgnoredAny>,
    }
    serde_json::from_slice::<Probe>(bytes).is_ok_and(|probe| probe.method.is_some())
}

/// Removes a request that ended without its answer, and cancels it at the server.
struct PendingGuard {
    peer: Arc<Peer>,
    id: RequestId,
    /// Where a cancellation goes; `None`: the request is not cancellable.
    route: Option<Route>,
    armed: bool,
}

impl Drop for PendingGuard {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        let removed = lock(&self.peer.pending).remove(&self.id);
        let was_pending = removed.is_some();
        if let Some(context) = removed.and_then(|waiter| waiter.asks) {
            let caller = super::asked::caller_identity(&context);
            lock(&self.peer.abandoned).record(caller.as_deref());
        }
        if let (true, Some(route)) = (was_pending, self.route.take()) {
            let params = CancelledNotificationParams::new(
                self.id.clone(),
                Some("the client stopped waiting".into()),
            );
            let route = Route {
                cancels: Some(self.id.clone()),
                ..route
            };
            let _ = self.peer.notify(methods::CANCELLED, &params, route);
        }
    }
}
