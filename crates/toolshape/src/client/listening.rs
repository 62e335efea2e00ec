//! Following a server's changes: its list changes and resource updates,
//! watched client-wide, and on 2026-07-28 the `subscriptions/listen`
//! streams that bring them (a handshake session gets them unasked, and
//! resource updates after `resources/subscribe`).
//!
//! A stream is a request that stays open: it is kept apart from the
//! requests waiting for an answer (so that a call is still "the only request
//! in flight" beside it), has no time limit once acknowledged, and ends when
//! the server answers it, the connection closes, or its [`Listening`] is
//! dropped (which cancels it).

use std::collections::HashMap;

use serde_json::Map;
use tokio::sync::{oneshot, watch};
use toolshape_protocol::meta::keys;
use toolshape_protocol::subscriptions::{SubscriptionFilter, SubscriptionsAcknowledgedParams};
use toolshape_protocol::{CancelledNotificationParams, RequestId, methods};

use super::error::{ClientError, ClientErrorKind, TransportError};
use super::outgoing::{Outgoing, Route};
use super::peer::{Peer, lock};
use super::{Arc, Client};

/// Most `subscriptions/listen` streams one client keeps open.
const MAX_LISTENING: usize = 16;

/// A stream being opened or open.
#[derive(Debug)]
pub(crate) struct ListenWaiter {
    /// Until acknowledged: where the acknowledgement (or the failure) goes.
    acknowledged: Option<oneshot::Sender<Result<SubscriptionFilter, ClientError>>>,
    /// Becomes `true` when the stream ends.
    ended: watch::Sender<bool>,
}

/// The open streams of one connection.
pub(crate) type ListenWaiters = std::sync::Mutex<HashMap<RequestId, ListenWaiter>>;

/// An open `subscriptions/listen` stream (2026-07-28). What it brings
/// reaches the client's watchers ([`Client::tool_list_changes`],
/// [`Client::resource_updates`]...). Dropping it cancels the stream.
#[derive(Debug)]
pub struct Listening {
    peer: Arc<Peer>,
    id: RequestId,
    route: Route,
    acknowledged: SubscriptionFilter,
    ended: watch::Receiver<bool>,
}

impl Listening {
    /// What the server agreed to send (a part of what was asked).
    pub fn acknowledged(&self) -> &SubscriptionFilter {
        &self.acknowledged
    }

    /// Resolves when the stream ends: the server ended it, or the
    /// connection closed (at once if it has).
    pub async fn ended(&mut self) {
        let _ = self.ended.wait_for(|ended| *ended).await;
    }
}

impl Drop for Listening {
    fn drop(&mut self) {
        let open = lock(&self.peer.listens).remove(&self.id).is_some();
        if open {
            let params = CancelledNotificationParams::new(
                self.id.clone(),
                Some("the client stopped listening".into()),
            );
            let route = Route {
                cancels: Some(self.id.clone()),
                ..Route::under(self.route.version)
            };
            let _ = self.peer.notify(methods::CANCELLED, &params, route);
        }
    }
}

impl Client {
    /// Opens a `subscriptions/listen` stream for what `filter` asks
    /// (2026-07-28 servers only: a handshake session gets its list changes
    /// unasked, and resource updates after [`Client::subscribe`]). Returns
    /// once the server acknowledged it, within the request timeout. A
    /// client keeps at most 16 open.
    pub async fn listen(&self, filter: SubscriptionFilter) -> Result<Listening, ClientError> {
        let version = self.negotiated().version;
        if !version.is_stateless() {
            return Err(ClientErrorKind::Protocol(
                toolshape_protocol::ErrorObject::method_not_found(methods::SUBSCRIPTIONS_LISTEN),
            )
            .into());
        }
        let peer = &self.inner.peer;
        let id = peer.next_id();
        let mut params = Map::new();
        params.insert(
            "notifications".into(),
            serde_json::to_value(&filter).map_err(TransportError::Serialize)?,
        );
        let params = self.params(params);
        let mut body = Vec::with_capacity(256);
        toolshape_protocol::write_request(&mut body, &id, methods::SUBSCRIPTIONS_LISTEN, &params)
            .map_err(TransportError::Serialize)?;
        let (acknowledged, answer) = oneshot::channel();
        let (ended, ended_signal) = watch::channel(false);
        {
            let mut listens = lock(&peer.listens);
            if listens.len() >= MAX_LISTENING {
                return Err(ClientError::invalid(format!(
                    "at most {MAX_LISTENING} subscriptions may be open at once"
                )));
            }
            let waiter = ListenWaiter {
                acknowledged: Some(acknowledged),
                ended,
            };
            listens.insert(id.clone(), waiter);
        }
        let route = self.route();
        // From here on, failing or giving up cancels the stream.
        let mut listening = Listening {
            peer: Arc::clone(peer),
            id: id.clone(),
            route: Route::under(route.version),
            acknowledged: SubscriptionFilter::default(),
            ended: ended_signal,
        };
        if peer.is_closed() {
            return Err(TransportError::Closed.into());
        }
        let message = Outgoing {
            id: Some(id),
            method: methods::SUBSCRIPTIONS_LISTEN,
            body,
            route,
        };
        let timeout = self.inner.options.request_timeout;
        let deadline = crate::transport::deadline_after(timeout);
        peer.send_by(message, deadline, timeout).await?;
        match tokio::time::timeout_at(deadline, answer).await {
            Ok(Ok(Ok(honoured))) => {
                listening.acknowledged = honoured;
                Ok(listening)
            }
            Ok(Ok(Err(error))) => Err(error),
            Ok(Err(_)) => Err(TransportError::Closed.into()),
            Err(_) => Err(ClientErrorKind::Timeout(timeout).into()),
        }
    }
}

impl Peer {
    /// The acknowledgement of the stream its `_meta` names.
    pub(super) fn acknowledged(&self, params: SubscriptionsAcknowledgedParams) {
        let id = params
            .meta
            .as_ref()
            .and_then(|meta| meta.get(keys::SUBSCRIPTION_ID))
            .and_then(|id| serde_json::from_value::<RequestId>(id.clone()).ok());
        let Some(id) = id else {
            tracing::debug!("an acknowledgement without a subscription id; ignored");
            return;
        };
        match lock(&self.listens)
            .get_mut(&id)
            .and_then(|waiter| waiter.acknowledged.take())
        {
            Some(waiting) => {
                let _ = waiting.send(Ok(params.notifications));
            }
            None => tracing::debug!(%id, "an acknowledgement of no stream being opened; ignored"),
        }
    }

    /// Ends the stream `id`, if it is one, with `outcome` (its answer: an
    /// error fails it if not yet acknowledged). Whether it was one.
    pub(super) fn end_listen(&self, id: &RequestId, outcome: Result<(), ClientError>) -> bool {
        let Some(mut waiter) = lock(&self.listens).remove(id) else {
            return false;
        };
        if let Some(waiting) = waiter.acknowledged.take() {
            let error = outcome.err().unwrap_or_else(|| {
                ClientError::invalid("the server ended the subscription before acknowledging it")
            });
            let _ = waiting.send(Err(error));
        }
        waiter.ended.send_replace(true);
        true
    }

    /// Ends every stream (the connection closed).
    pub(super) fn end_all_listens(&self) {
        for (_, mut waiter) in lock(&self.listens).drain() {
            if let Some(waiting) = waiter.acknowledged.take() {
                let _ = waiting.send(Err(TransportError::Closed.into()));
            }
            waiter.ended.send_replace(true);
        }
    }
}
