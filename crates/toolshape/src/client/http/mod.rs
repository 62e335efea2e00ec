//! The client side of Streamable HTTP: every message is a POST; answers come
//! back as JSON or as an SSE stream; a session id (handshake revisions) and
//! the request-metadata headers (2026-07-28) ride along, taken from the
//! message's typed [`Route`], never from re-reading its bytes.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use tokio::sync::{Semaphore, mpsc, watch};
use tokio::task::AbortHandle;
use toolshape_protocol::RequestId;
use toolshape_protocol::http::{encode_value, names};

mod auth;
mod listen;
mod post;
mod session;

pub use auth::{AuthChallenge, AuthFuture, AuthRequest, HttpAuth};

use session::HttpState;

use super::MessageObserver;
use super::error::{ClientError, TransportError};
use super::handlers::Handlers;
use super::outgoing::{Outbound, Outgoing};
use super::peer::{Peer, Received};

/// What an HTTP connection sends besides the messages: a hook's
/// credentials, and headers for every request.
#[derive(Clone, Default)]
pub(crate) struct HttpExtras {
    pub(crate) auth: Option<Arc<dyn HttpAuth>>,
    pub(crate) headers: HeaderMap,
}

/// Connects a new [`Peer`] to the MCP endpoint at `url`.
pub(crate) fn connect(
    url: reqwest::Url,
    max_message_bytes: usize,
    extras: HttpExtras,
    handlers: Handlers,
    observer: Option<MessageObserver>,
) -> Result<Arc<Peer>, ClientError> {
    let HttpExtras { auth, headers } = extras;
    let headers = fixed_headers(headers)?;
    // Keep-alive probes: a long-lived stream over a connection that died
    // without a word ends instead of waiting for good.
    let mut http = reqwest::Client::builder().tcp_keepalive(std::time::Duration::from_secs(30));
    if !headers.is_empty() {
        // Fixed headers carry keys: a redirect elsewhere would hand them to
        // another origin (the HTTP client strips only its own credential
        // headers), so only same-origin redirects are followed.
        http = http
            .default_headers(headers)
            .redirect(reqwest::redirect::Policy::custom(same_origin_redirects));
    }
    let http = http.build().map_err(TransportError::Http)?;
    let (outgoing, receiver) = mpsc::channel(1024);
    let peer = Peer::new(outgoing, handlers, observer);
    let exchange = Exchange {
        http,
        url,
        peer: Arc::clone(&peer),
        state: Arc::default(),
        max_message_bytes,
        exchanges: Arc::default(),
        auth,
        listener: Arc::default(),
        untracked: Arc::new(Semaphore::new(MAX_UNTRACKED_POSTS)),
        untracked_queued: Arc::new(Semaphore::new(MAX_UNTRACKED_QUEUED)),
        closing: Arc::new(watch::Sender::new(false)),
    };
    tokio::spawn(exchange.run(receiver));
    Ok(peer)
}

/// Most messages without an id (notifications, answers to the server)
/// being posted at once (a connection each); more wait their turn.
const MAX_UNTRACKED_POSTS: usize = 64;
/// Most such messages waiting or being posted; past it, further ones are
/// dropped (only a server that holds their posts open meets it).
const MAX_UNTRACKED_QUEUED: usize = 1024;
/// The longest a message without an id waits and is being posted (a
/// server answers one at once with `202`).
const UNTRACKED_POST_TIME: Duration = Duration::from_secs(30);

/// How long the session's end (`DELETE`) may take when the client closes.
const SESSION_END_TIME: Duration = Duration::from_secs(3);
/// Then how long what was sent before closing may take to be posted (the
/// two within the 5 s a close waits for the connection to end).
const CLOSING_GRACE: Duration = Duration::from_secs(1);

/// Most redirects followed for one request (as the HTTP client's default).
const MAX_REDIRECTS: usize = 10;

/// Follows a redirect only to the origin the request was for.
fn same_origin_redirects(attempt: reqwest::redirect::Attempt<'_>) -> reqwest::redirect::Action {
    let same_origin = attempt
        .previous()
        .first()
        .is_some_and(|first| first.origin() == attempt.url().origin());
    if same_origin && attempt.previous().len() <= MAX_REDIRECTS {
        attempt.follow()
    } else {
        attempt.stop()
    }
}

/// The headers given for every request, their values marked sensitive (a
/// key or a token: never shown), or the first one the transport sets
/// itself or given twice (only one value of a name would be sent).
fn fixed_headers(mut headers: HeaderMap) -> Result<HeaderMap, ClientError> {
    let refused = |name: &HeaderName, reason| {
        Err(TransportError::Header {
            name: name.as_str().to_owned(),
            reason,
        }
        .into())
    };
    for name in headers.keys() {
        if let Some(reason) = transport_header(name) {
            return refused(name, reason);
        }
        if headers.get_all(name).iter().nth(1).is_some() {
            return refused(name, "given more than once");
        }
    }
    for value in headers.values_mut() {
        value.set_sensitive(true);
    }
    Ok(headers)
}

/// Why `name` is the transport's to set, if it is.
fn transport_header(name: &HeaderName) -> Option<&'static str> {
    const HOP_BY_HOP: [&str; 8] = [
        "connection",
        "content-length",
        "host",
        "keep-alive",
        "proxy-connection",
        "te",
        "transfer-encoding",
        "upgrade",
    ];
    let name = name.as_str();
    if name == "content-type" || name == "accept" || name == "last-event-id" {
        Some("the transport sets it per message")
    } else if name.starts_with("mcp-") {
        Some("the MCP headers are the transport's")
    } else if HOP_BY_HOP.contains(&name) {
        Some("the HTTP client sets it")
    } else {
        None
    }
}

#[derive(Clone)]
struct Exchange {
    http: reqwest::Client,
    url: reqwest::Url,
    peer: Arc<Peer>,
    state: Arc<HttpState>,
    max_message_bytes: usize,
    /// The exchanges of the requests in flight, by request id, and whether
    /// each is stateless (2026-07-28: cancelling it is closing its
    /// exchange). A session's request cancelled (or past its time) is
    /// closed too, besides the notification: a server that never ends its
    /// stream cannot keep the exchange, its connection and its buffer.
    exchanges: Arc<Mutex<HashMap<RequestId, (AbortHandle, bool)>>>,
    /// Credentials for every request, when the endpoint needs them.
    auth: Option<Arc<dyn HttpAuth>>,
    /// The standalone event stream's task, while it runs.
    listener: Arc<Mutex<Option<AbortHandle>>>,
    /// Room for messages without an id being posted at once.
    untracked: Arc<Semaphore>,
    /// Room for messages without an id waiting to be posted, or being posted.
    untracked_queued: Arc<Semaphore>,
    /// `true` once the client closes: what is still posting a message
    /// without an id (no request can cancel it) stops then.
    closing: Arc<watch::Sender<bool>>,
}

impl Exchange {
    async fn run(self, mut receiver: mpsc::Receiver<Outbound>) {
        while let Some(outbound) = receiver.recv().await {
            let message = match outbound {
                Outbound::Message(message) => message,
                Outbound::Close => {
                    self.state.close();
                    if let Some(listener) = lock(&self.listener).take() {
                        listener.abort();
                    }
                    self.abort_exchanges();
                    self.end_session().await;
                    // What was sent before closing gets a moment more to be
                    // posted; what a server still holds open then ends.
                    let all = u32::try_from(MAX_UNTRACKED_QUEUED).unwrap_or(u32::MAX);
                    let posted = self.untracked_queued.acquire_many(all);
                    let _ = tokio::time::timeout(CLOSING_GRACE, posted).await;
                    self.closing.send_replace(true);
                    break;
                }
            };
            if self.cancel_exchange(&message) {
                continue;
            }
            // The end of the handshake: posted in line, then the session's
            // standalone stream opened, before anything else is sent.
            if message.method == toolshape_protocol::methods::INITIALIZED {
                self.clone().post_untracked(message).await;
                self.start_listening().await;
                continue;
            }
            // A notification or an answer to the server: no request can
            // cancel its exchange, so it is bounded here, in time and in
            // number (a server answering each with a stream that never
            // ends, and pinging without pause, would otherwise hold a
            // connection per ping for good).
            if message.id.is_none() {
                let Ok(queued) = Arc::clone(&self.untracked_queued).try_acquire_owned() else {
                    tracing::warn!(
                        method = message.method,
                        "a message to the server was dropped: {MAX_UNTRACKED_QUEUED} others are waiting to be posted"
                    );
                    continue;
                };
                let exchange = self.clone();
                tokio::spawn(async move {
                    exchange.post_untracked(message).await;
                    drop(queued);
                });
                continue;
            }
            // A request's exchange is remembered until it ends, so that
            // cancelling the request can close it.
            let request = message.id.clone();
            let stateless = message.route.is_stateless();
            let exchange = self.clone();
            let calls = Arc::clone(&self.exchanges);
            // Held across the spawn, so the task's removal comes after the insertion.
            let mut in_flight = self.calls();
            let id = request.clone();
            let task = tokio::spawn(async move {
                exchange.post(message).await;
                if let Some(id) = id {
                    lock(&calls).remove(&id);
                }
            });
            if let Some(id) = request {
                in_flight.insert(id, (task.abort_handle(), stateless));
            }
        }
        // Every sender gone (or closed above): nothing more can cancel, and
        // nothing more can be answered.
        self.closing.send_replace(true);
        self.abort_exchanges();
        self.peer.close();
    }

    /// Posts a message without an id, once one of [`MAX_UNTRACKED_POSTS`]
    /// is free, within [`UNTRACKED_POST_TIME`] (the wait included), and
    /// only until the client closes.
    async fn post_untracked(self, message: Outgoing) {
        let method = message.method;
        let room = Arc::clone(&self.untracked);
        let mut closing = self.closing.subscribe();
        let posting = async move {
            if let Ok(_room) = room.acquire_owned().await {
                self.post(message).await;
            }
        };
        tokio::select! {
            posted = tokio::time::timeout(UNTRACKED_POST_TIME, posting) => {
                if posted.is_err() {
                    tracing::warn!(
                        method,
                        "the server did not finish answering a message without an id in {UNTRACKED_POST_TIME:?}: its exchange was closed"
                    );
                }
            }
            _ = closing.wait_for(|closed| *closed) => {}
        }
    }

    /// Closes every request's exchange still open: the client is closing,
    /// and no cancellation can come after it.
    fn abort_exchanges(&self) {
        for (exchange, _) in self.calls().drain().map(|(_, open)| open) {
            exchange.abort();
        }
    }

    fn calls(&self) -> MutexGuard<'_, HashMap<RequestId, (AbortHandle, bool)>> {
        lock(&self.exchanges)
    }

    /// Closes the exchange (its event stream or pending response) of the
    /// request `message` cancels, if any. 2026-07-28 over HTTP has no
    /// `notifications/cancelled`: closing the exchange is the cancellation.
    /// Returns whether `message` was such a cancellation, now done (or moot:
    /// without a handshake, the client is stateless and the request it
    /// names has already ended). After a handshake, the notification is
    /// posted too.
    fn cancel_exchange(&self, message: &Outgoing) -> bool {
        let Some(id) = &message.route.cancels else {
            return false;
        };
        let exchange = self.calls().remove(id);
        match exchange {
            Some((exchange, stateless)) => {
                exchange.abort();
                stateless
            }
            None => message.route.is_stateless(),
        }
    }

    async fn end_session(&self) {
        if let Some(session) = self.state.session_id() {
            let mut headers = self.auth_headers("DELETE").await.unwrap_or_default();
            if let Ok(value) = HeaderValue::from_str(&session) {
                headers.insert(names::SESSION_ID, value);
            }
            let _ = self
                .http
                .delete(self.url.clone())
                .headers(headers)
                .timeout(SESSION_END_TIME)
                .send()
                .await;
        }
    }

    /// The credentials the hook adds to a `method` request (none without a hook).
    async fn auth_headers(&self, method: &str) -> Result<HeaderMap, ClientError> {
        let Some(auth) = &self.auth else {
            return Ok(HeaderMap::new());
        };
        let request = AuthRequest {
            url: &self.url,
            method,
        };
        auth.headers(request)
            .await
            .map_err(|source| TransportError::Auth(source).into())
    }

    /// Sends a request built by `build` (headers included), adding the
    /// hook's credentials, and on 401 or 403 asks the hook for new ones and
    /// sends it again (a bounded number of times).
    async fn send_authorized(
        &self,
        method: &'static str,
        build: impl Fn(HeaderMap) -> reqwest::RequestBuilder,
    ) -> Result<reqwest::Response, ClientError> {
        let mut attempt = 0;
        loop {
            let credentials = self.auth_headers(method).await?;
            let response = build(credentials.clone())
                .send()
                .await
                .map_err(TransportError::Http)?;
            let status = response.status().as_u16();
            let Some(auth) = self.auth.as_ref().filter(|_| matches!(status, 401 | 403)) else {
                return Ok(response);
            };
            if attempt >= auth::MAX_AUTH_RETRIES {
                return Ok(response);
            }
            attempt += 1;
            let challenge = AuthChallenge {
                request: AuthRequest {
                    url: &self.url,
                    method,
                },
                status,
                headers: response.headers(),
                sent: &credentials,
            };
            match auth.challenge(challenge).await {
                Ok(true) => continue,
                Ok(false) => return Ok(response),
                Err(source) => return Err(TransportError::Auth(source).into()),
            }
        }
    }

    /// The headers of a POST carrying `message`.
    fn headers(&self, message: &Outgoing) -> HeaderMap {
        let mut map = HeaderMap::new();
        map.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        map.insert(
            ACCEPT,
            HeaderValue::from_static("application/json, text/event-stream"),
        );
        let route = &message.route;
        if let Some(version) = route.version {
            map.insert(
                names::PROTOCOL_VERSION,
                HeaderValue::from_static(version.as_str()),
            );
        }
        if !route.is_stateless() {
            if let Some(value) = self
                .state
                .session_id()
                .and_then(|session| HeaderValue::from_str(&session).ok())
            {
                map.insert(names::SESSION_ID, value);
            }
            return map;
        }
        if !message.method.is_empty() {
            map.insert(names::METHOD, HeaderValue::from_static(message.method));
        }
        if let Some(value) = route
            .name
            .as_deref()
            .and_then(|name| HeaderValue::from_str(&encode_value(name)).ok())
        {
            map.insert(names::NAME, value);
        }
        for (name, value) in &route.param_headers {
            let name = HeaderName::from_bytes(name.as_bytes());
            let value = HeaderValue::from_str(value);
            if let (Ok(name), Ok(value)) = (name, value) {
                map.insert(name, value);
            }
        }
        map
    }

    /// Hands one message to the peer; says whether it answers `message`.
    fn deliver(&self, message: &Outgoing, received: &[u8]) -> bool {
        match self.peer.receive(received, message.channel()) {
            Received::Answer(id) => message.id.as_ref() == Some(&id),
            Received::Batch(answered) => {
                message.id.as_ref().is_some_and(|id| answered.contains(id))
            }
            _ => false,
        }
    }

    fn fail(&self, message: &Outgoing, error: impl Into<ClientError>) {
        if let Some(id) = &message.id {
            let _ = self.peer.fail(id, error.into());
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
