//! Which revision each request is served under.
//!
//! A request whose `_meta` names a protocol version is served statelessly
//! under it (2026-07-28). Otherwise the connection's `initialize` handshake
//! decides (2024-11-05 through 2025-11-25).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use toolshape_protocol::meta::{RequestMeta, keys};
use toolshape_protocol::{ClientCapabilities, ErrorObject, LoggingLevel, ProtocolVersion};

use super::asking::ServerRequests;
use crate::resource::{Held, MAX_URI_BYTES, ResourceEvents};

/// Every revision this server speaks: the handshake ones through `initialize`,
/// 2026-07-28 per request.
pub(crate) const SUPPORTED: [ProtocolVersion; 5] = ProtocolVersion::ALL;

/// What one connection negotiated.
#[derive(Debug, Default)]
pub(crate) struct Session {
    handshake: Mutex<Option<ProtocolVersion>>,
    initialized: AtomicBool,
    /// The least severe log level the peer asked for with `logging/setLevel`.
    log_level: Mutex<Option<LoggingLevel>>,
    /// What the peer said it supports in `initialize`.
    client_capabilities: Mutex<Arc<ClientCapabilities>>,
    /// The requests this server sent the peer and waits on.
    pub(crate) requests: Arc<ServerRequests>,
    /// The resources the peer subscribed to (`resources/subscribe`).
    subscriptions: Subscriptions,
    /// Who the peer is, as the transport tells it (`ToolContext::caller`).
    caller: Option<Arc<str>>,
}

/// Most resources one peer may subscribe to.
pub(crate) const MAX_SUBSCRIPTIONS: usize = 1024;

impl Session {
    /// A session with the peer `caller`.
    pub(crate) fn of_caller(caller: Option<Arc<str>>) -> Session {
        Session {
            caller,
            ..Session::default()
        }
    }

    /// Who the peer is, as the transport tells it.
    pub(crate) fn caller(&self) -> Option<&Arc<str>> {
        self.caller.as_ref()
    }

    pub(crate) fn set_handshake(&self, version: ProtocolVersion) {
        *self
            .handshake
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(version);
    }

    pub(crate) fn set_client_capabilities(&self, capabilities: ClientCapabilities) {
        *self
            .client_capabilities
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Arc::new(capabilities);
    }

    /// What the peer declared in `initialize` (nothing before it).
    pub(crate) fn client_capabilities(&self) -> Arc<ClientCapabilities> {
        Arc::clone(
            &self
                .client_capabilities
                .lock()
                .unwrap_or_else(PoisonError::into_inner),
        )
    }

    /// Subscribes the peer to `uri` (bounded in number and length);
    /// `events` is told of a new subscription, and of its end
    /// (`unsubscribe`, or the session's).
    pub(crate) fn subscribe(
        &self,
        uri: String,
        events: &ResourceEvents,
    ) -> Result<(), ErrorObject> {
        let mut guard = self
            .subscriptions
            .uris
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let SubscribedUris {
            uris: subscriptions,
            held,
        } = &mut *guard;
        if subscriptions.contains(&uri) {
            return Ok(());
        }
        if uri.len() > MAX_URI_BYTES {
            return Err(ErrorObject::invalid_params(format!(
                "the URI is longer than {MAX_URI_BYTES} bytes"
            )));
        }
        if subscriptions.len() >= MAX_SUBSCRIPTIONS {
            return Err(ErrorObject::invalid_params(format!(
                "at most {MAX_SUBSCRIPTIONS} resources may be subscribed to"
            )));
        }
        // Told under the lock, so that the hooks of one session's subscribe
        // and unsubscribe of a URI come in the order they happened.
        let events = self.subscriptions.told.get_or_init(|| events.clone());
        if !events.subscribed(held, &uri) {
            return Err(ErrorObject::server_busy(
                "the server holds as many subscriptions as it keeps over all its peers; \
                 unsubscribe from others, or try again later",
            ));
        }
        subscriptions.insert(uri);
        Ok(())
    }

    pub(crate) fn unsubscribe(&self, uri: &str) {
        let mut guard = self
            .subscriptions
            .uris
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let subscribed = &mut *guard;
        if subscribed.uris.remove(uri)
            && let Some(events) = self.subscriptions.told.get()
        {
            events.unsubscribed(&mut subscribed.held, uri);
        }
    }

    /// The resources the peer subscribed to.
    pub(crate) fn subscribed(&self) -> Vec<String> {
        self.subscriptions
            .uris
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .uris
            .iter()
            .cloned()
            .collect()
    }

    /// Whether the peer subscribed to `uri`.
    pub(crate) fn is_subscribed(&self, uri: &str) -> bool {
        self.subscriptions
            .uris
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .uris
            .contains(uri)
    }

    pub(crate) fn handshake(&self) -> Option<ProtocolVersion> {
        *self
            .handshake
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn set_log_level(&self, level: LoggingLevel) {
        *self
            .log_level
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(level);
    }

    /// The level `logging/setLevel` set, if the peer sent one.
    pub(crate) fn log_level(&self) -> Option<LoggingLevel> {
        *self
            .log_level
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn mark_initialized(&self) {
        self.initialized.store(true, Ordering::Release);
    }

    /// Whether the peer finished the handshake (and so takes notifications).
    pub(crate) fn is_initialized(&self) -> bool {
        self.initialized.load(Ordering::Acquire) && self.handshake().is_some()
    }

    /// The revision to serve a request under, from its `_meta` or the handshake.
    pub(crate) fn revision(&self, meta: &RequestMeta) -> Result<ProtocolVersion, ErrorObject> {
        match meta.protocol_version.as_deref() {
            Some(requested) => match ProtocolVersion::parse(requested) {
                // Every 2026-07-28 request declares the client's
                // capabilities: one without is malformed (-32602), as the
                // HTTP endpoint answers it too.
                Some(version) if version.is_stateless() => meta
                    .require_modern()
                    .map(|_| version)
                    .map_err(|error| error.to_error_object()),
                Some(version) if self.handshake() == Some(version) => Ok(version),
                _ => Err(ErrorObject::unsupported_protocol_version(
                    requested,
                    &supported_strings(),
                )),
            },
            // Before a handshake, a request without the version is a
            // 2026-07-28 request missing a required field: invalid params
            // (the message names the handshake for an older client too).
            None => self.handshake().ok_or_else(|| {
                ErrorObject::invalid_params(format!(
                    "no protocol version: put `{}` in `_meta`, or send `initialize` first",
                    keys::PROTOCOL_VERSION
                ))
            }),
        }
    }
}

/// The supported revisions, newest first, as a discovery or error lists them.
pub(crate) fn supported_strings() -> Vec<&'static str> {
    SUPPORTED
        .iter()
        .rev()
        .map(|version| version.as_str())
        .collect()
}

/// A session's resource subscriptions, which end with it.
#[derive(Debug, Default)]
struct Subscriptions {
    uris: Mutex<SubscribedUris>,
    /// Told of each subscription made and ended (set by the first).
    told: std::sync::OnceLock<ResourceEvents>,
}

/// The URIs a session is subscribed to, and what they hold.
#[derive(Debug, Default)]
struct SubscribedUris {
    uris: std::collections::BTreeSet<String>,
    held: Held,
}

impl Drop for Subscriptions {
    fn drop(&mut self) {
        if let Some(events) = self.told.get() {
            let subscribed = self.uris.get_mut().unwrap_or_else(PoisonError::into_inner);
            for uri in &subscribed.uris {
                events.unsubscribed(&mut subscribed.held, uri);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use toolshape_protocol::error_code;

    use super::Session;
    use crate::resource::ResourceEvents;

    #[test]
    fn subscriptions_share_one_budget_over_all_sessions_past_what_each_holds_of_its_own() {
        let watched = Arc::new(AtomicUsize::new(0));
        let (up, down) = (Arc::clone(&watched), Arc::clone(&watched));
        // Each URI here is 10 bytes, counted with its overhead: each session
        // holds one of its own, and all share room for two more.
        let one = 10 + 64;
        let events = ResourceEvents::new()
            .on_subscribe(move |_| {
                up.fetch_add(1, Ordering::SeqCst);
            })
            .on_unsubscribe(move |_| {
                down.fetch_sub(1, Ordering::SeqCst);
            })
            .with_subscription_budget(2 * one, one);
        let uri = |n: usize| format!("file:///{n:02}");
        let first = Session::default();
        let second = Session::default();
        for n in 0..3 {
            assert!(first.subscribe(uri(n), &events).is_ok(), "{n}");
        }
        // The shared budget is spent: the second session has its own still.
        assert!(second.subscribe(uri(3), &events).is_ok());
        let refused = second.subscribe(uri(4), &events);
        let refused = refused.map_err(|error| (error.code, error.message)).err();
        assert!(
            refused.as_ref().is_some_and(|(code, message)| {
                *code == error_code::INTERNAL_ERROR
                    && message.starts_with("Server busy: ")
                    && message.contains("over all its peers")
            }),
            "{refused:?}"
        );
        assert_eq!(
            watched.load(Ordering::SeqCst),
            4,
            "a refused one is not told"
        );
        // Subscribing again to what one holds takes nothing more.
        assert!(second.subscribe(uri(3), &events).is_ok());
        // A session's end gives back what it drew; so does unsubscribing.
        drop(first);
        assert_eq!(watched.load(Ordering::SeqCst), 1);
        assert!(second.subscribe(uri(4), &events).is_ok());
        assert!(second.subscribe(uri(5), &events).is_ok());
        assert!(second.subscribe(uri(6), &events).is_err());
        second.unsubscribe(&uri(3));
        assert!(second.subscribe(uri(6), &events).is_ok());
        assert!(second.subscribe(uri(7), &events).is_err());
        assert_eq!(watched.load(Ordering::SeqCst), 3);
    }
}
