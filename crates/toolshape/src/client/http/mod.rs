//! The client side of Streamable HTTP: every message is a POST; answers come
//! back as JSON or as an SSE stream; a session id (handshake revisions) and
//! the request-metadata headers ride along.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use axum::body::Bytes;
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderValue};
use serde_json::Value;
use tokio::sync::mpsc;
use tokio::task::AbortHandle;
use toolshape_protocol::meta::keys;
use toolshape_protocol::{CancelledNotificationParams, Incoming, RequestId, methods};

mod session;

use session::HttpState;

use super::error::{ClientError, ClientErrorKind};
use super::peer::Peer;
use crate::transport::headers;
use crate::transport::sse::EventReader;

/// Connects a new [`Peer`] to the MCP endpoint at `url`.
pub(crate) fn connect(
    url: reqwest::Url,
    max_message_bytes: usize,
) -> Result<Arc<Peer>, ClientError> {
    let http = reqwest::Client::builder()
        .build()
        .map_err(|e| ClientError::transport(format!("cannot build the HTTP client: {e}")))?;
    let (outgoing, receiver) = mpsc::channel(1024);
    let peer = Peer::new(outgoing);
    let exchange = Exchange {
        http,
        url,
        peer: Arc::clone(&peer),
        state: Arc::default(),
        max_message_bytes,
        stateless_calls: Arc::default(),
    };
    tokio::spawn(exchange.run(receiver));
    Ok(peer)
}

#[derive(Clone)]
struct Exchange {
    http: reqwest::Client,
    url: reqwest::Url,
    peer: Arc<Peer>,
    state: Arc<HttpState>,
    max_message_bytes: usize,
    /// The exchanges of the stateless (2026-07-28) requests in flight, by
    /// request id: cancelling one is closing its exchange.
    stateless_calls: Arc<Mutex<HashMap<RequestId, AbortHandle>>>,
}

/// For a `notifications/cancelled`, the request it cancels.
fn cancelled_request(message: &[u8]) -> Option<RequestId> {
    match toolshape_protocol::classify(message) {
        Incoming::Notification(notification) if notification.method == methods::CANCELLED => {
            notification
                .parse_params::<CancelledNotificationParams>()
                .ok()?
                .request_id
        }
        _ => None,
    }
}

/// `Last-Event-ID`: where a resumed event stream picks up.
const LAST_EVENT_ID: &str = "last-event-id";
/// Most times one request's event stream is resumed.
const MAX_RESUMPTIONS: usize = 5;
/// The wait before resuming when the server set no `retry`, in ms.
const DEFAULT_RETRY_MS: u64 = 1000;

/// What reading one event stream left behind.
#[derive(Default)]
struct Stream {
    /// The answer to the request arrived.
    answered: bool,
    /// The id of the last event that had one.
    last_id: Option<String>,
    /// The reconnection delay the server set, in ms.
    retry_ms: Option<u64>,
}

/// Whether `message` is the response to `outgoing`.
fn answers(outgoing: &Outgoing, message: &[u8]) -> bool {
    match (toolshape_protocol::classify(message), &outgoing.id) {
        (Incoming::Response(response), Some(id)) => response.id() == Some(id),
        _ => false,
    }
}

/// What the transport needs to know about an outgoing message.
struct Outgoing {
    id: Option<RequestId>,
    method: String,
    name: Option<String>,
    version: Option<String>,
    /// A `tools/call`'s arguments.
    arguments: Option<Value>,
}

fn inspect(message: &[u8]) -> Option<Outgoing> {
    let (id, method, params) = match toolshape_protocol::classify(message) {
        Incoming::Request(request) => (Some(request.id), request.method, request.params),
        Incoming::Notification(notification) => (None, notification.method, notification.params),
        _ => return None,
    };
    let params: Option<Value> = params.and_then(|raw| serde_json::from_str(raw.get()).ok());
    let field = |path: &[&str]| {
        let mut value = params.as_ref()?;
        for key in path {
            value = value.get(key)?;
        }
        value.as_str().map(str::to_owned)
    };
    Some(Outgoing {
        id,
        name: (method == methods::TOOLS_CALL)
            .then(|| field(&["name"]))
            .flatten(),
        version: field(&["_meta", keys::PROTOCOL_VERSION]),
        arguments: (method == methods::TOOLS_CALL)
            .then(|| params.as_ref().and_then(|p| p.get("arguments")).cloned())
            .flatten(),
        method,
    })
}

impl Exchange {
    async fn run(self, mut receiver: mpsc::Receiver<Vec<u8>>) {
        while let Some(message) = receiver.recv().await {
            if message.is_empty() {
                self.end_session().await;
                break;
            }
            if self.cancel_stateless(&message) {
                continue;
            }
            // A stateless request's exchange is remembered until it ends, so
            // that cancelling the request can close it.
            let stateless_id = inspect(&message)
                .filter(|outgoing| outgoing.version.is_some())
                .and_then(|outgoing| outgoing.id);
            let exchange = self.clone();
            let calls = Arc::clone(&self.stateless_calls);
            // Held across the spawn, so the task's removal comes after the insertion.
            let mut in_flight = self.calls();
            let id = stateless_id.clone();
            let task = tokio::spawn(async move {
                exchange.post(message).await;
                if let Some(id) = id {
                    calls
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .remove(&id);
                }
            });
            if let Some(id) = stateless_id {
                in_flight.insert(id, task.abort_handle());
            }
        }
    }

    fn calls(&self) -> std::sync::MutexGuard<'_, HashMap<RequestId, AbortHandle>> {
        self.stateless_calls
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// 2026-07-28 over HTTP has no `notifications/cancelled`: closing the
    /// request's exchange (its event stream or pending response) is the
    /// cancellation. Returns whether `message` was such a cancellation, now
    /// done (or moot: without a handshake, the client is stateless and the
    /// request it names has already ended). After a handshake, the
    /// notification is posted like any other.
    fn cancel_stateless(&self, message: &[u8]) -> bool {
        let Some(id) = cancelled_request(message) else {
            return false;
        };
        let exchange = self.calls().remove(&id);
        match exchange {
            Some(exchange) => {
                exchange.abort();
                true
            }
            None => self.state.protocol_version().is_none(),
        }
    }

    async fn end_session(&self) {
        if let Some(session) = self.state.session_id() {
            let _ = self
                .http
                .delete(self.url.clone())
                .header(headers::SESSION_ID, session)
                .send()
                .await;
        }
    }

    fn headers(&self, outgoing: &Outgoing) -> HeaderMap {
        let mut map = HeaderMap::new();
        map.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        map.insert(
            ACCEPT,
            HeaderValue::from_static("application/json, text/event-stream"),
        );
        let version = outgoing
            .version
            .clone()
            .or_else(|| self.state.protocol_version());
        let modern = outgoing.version.is_some();
        let pairs = [
            (headers::PROTOCOL_VERSION, version),
            (
                headers::SESSION_ID,
                (!modern).then(|| self.state.session_id()).flatten(),
            ),
            (headers::METHOD, modern.then(|| outgoing.method.clone())),
            (
                headers::NAME,
                outgoing
                    .name
                    .as_deref()
                    .filter(|_| modern)
                    .map(headers::encode_value),
            ),
        ];
        for (name, value) in pairs {
            if let Some(value) = value.and_then(|v| HeaderValue::from_str(&v).ok()) {
                map.insert(name, value);
            }
        }
        if modern {
            self.param_headers(outgoing, &mut map);
        }
        map
    }

    /// SEP-2243: a `tools/call` argument whose property carries
    /// `x-mcp-header: NAME` also travels as `Mcp-Param-NAME` (absent or null
    /// arguments send no header; unsafe text goes Base64-encoded).
    fn param_headers(&self, outgoing: &Outgoing, map: &mut HeaderMap) {
        let (Some(tool), Some(arguments)) = (&outgoing.name, &outgoing.arguments) else {
            return;
        };
        let mirrored = self
            .peer
            .param_headers
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(tool)
            .cloned()
            .unwrap_or_default();
        for (property, suffix) in mirrored {
            let text = match arguments.get(&property) {
                Some(Value::String(text)) => text.clone(),
                Some(Value::Bool(flag)) => flag.to_string(),
                Some(Value::Number(number)) => number.to_string(),
                _ => continue,
            };
            let name =
                reqwest::header::HeaderName::from_bytes(format!("mcp-param-{suffix}").as_bytes());
            let value = HeaderValue::from_str(&headers::encode_value(&text));
            if let (Ok(name), Ok(value)) = (name, value) {
                map.insert(name, value);
            }
        }
    }

    async fn post(self, mut message: Vec<u8>) {
        if message.last() == Some(&b'\n') {
            message.pop();
        }
        let Some(outgoing) = inspect(&message) else {
            return;
        };
        let message = Bytes::from(message);
        if outgoing.method == methods::INITIALIZE {
            *self
                .state
                .initialize
                .lock()
                .unwrap_or_else(PoisonError::into_inner) = Some(message.clone());
        }
        let mut reopened = false;
        let sent = loop {
            let used_session = self.state.session_id();
            let sent = self
                .http
                .post(self.url.clone())
                .headers(self.headers(&outgoing))
                .body(message.clone())
                .send()
                .await;
            // A session the server no longer knows: open a new one and send again, once
            // (2025-11-25: a 404 to a request with a session id means "initialize again").
            let gone = matches!(&sent, Ok(r) if r.status() == reqwest::StatusCode::NOT_FOUND);
            if gone
                && !reopened
                && outgoing.method != methods::INITIALIZE
                && outgoing.version.is_none()
                && let Some(used) = used_session
                && self.reopen_session(&used).await
            {
                reopened = true;
                continue;
            }
            break sent;
        };
        let response = match sent {
            Ok(response) => response,
            Err(error) => {
                return self.fail(
                    &outgoing,
                    ClientError::transport(format!("HTTP request failed: {error}")),
                );
            }
        };
        if outgoing.method == methods::INITIALIZE
            && let Some(session) = response
                .headers()
                .get(headers::SESSION_ID)
                .and_then(|v| v.to_str().ok())
        {
            *self
                .state
                .session_id
                .lock()
                .unwrap_or_else(PoisonError::into_inner) = Some(session.to_owned());
        }
        let status = response.status();
        let is_sse = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"));
        if is_sse && status.is_success() {
            let mut stream = self.read_events(&outgoing, response).await;
            // The server may close a stream before the answer once it has sent
            // an event id (SEP-1699): resume with GET and Last-Event-ID after
            // the `retry` it asked for (handshake sessions; a few attempts).
            let mut attempts = 0;
            while !stream.answered
                && outgoing.id.is_some()
                && attempts < MAX_RESUMPTIONS
                && let (Some(last_id), Some(session)) =
                    (stream.last_id.clone(), self.state.session_id())
            {
                attempts += 1;
                let wait = stream.retry_ms.unwrap_or(DEFAULT_RETRY_MS);
                tokio::time::sleep(std::time::Duration::from_millis(wait)).await;
                let mut resume = HeaderMap::new();
                resume.insert(ACCEPT, HeaderValue::from_static("text/event-stream"));
                for (name, value) in [
                    (headers::SESSION_ID, Some(session)),
                    (headers::PROTOCOL_VERSION, self.state.protocol_version()),
                    (LAST_EVENT_ID, Some(last_id)),
                ] {
                    if let Some(value) = value.and_then(|v| HeaderValue::from_str(&v).ok()) {
                        resume.insert(name, value);
                    }
                }
                let resumed = match self.http.get(self.url.clone()).headers(resume).send().await {
                    Ok(resumed) if resumed.status().is_success() => resumed,
                    Ok(resumed) => {
                        let status = resumed.status();
                        return self.fail(
                            &outgoing,
                            ClientError::transport(format!(
                                "resuming the event stream failed: HTTP {status}"
                            )),
                        );
                    }
                    Err(error) => {
                        return self.fail(
                            &outgoing,
                            ClientError::transport(format!(
                                "resuming the event stream failed: {error}"
                            )),
                        );
                    }
                };
                let next = self.read_events(&outgoing, resumed).await;
                stream = Stream {
                    answered: next.answered,
                    last_id: next.last_id.or(stream.last_id),
                    retry_ms: next.retry_ms.or(stream.retry_ms),
                };
            }
        } else {
            self.read_body(&outgoing, status, response).await;
        }
        // A stream or body that ended without the answer fails the request.
        self.fail(
            &outgoing,
            ClientError::invalid(format!("HTTP {status}: the answer did not arrive")),
        );
    }

    /// Reads an event stream until it ends, or until the answer to `outgoing` arrived.
    async fn read_events(&self, outgoing: &Outgoing, mut response: reqwest::Response) -> Stream {
        let mut events = EventReader::new(self.max_message_bytes);
        let mut stream = Stream::default();
        loop {
            stream.retry_ms = events.retry();
            if stream.answered {
                return stream;
            }
            let chunk = match response.chunk().await {
                Ok(Some(chunk)) => chunk,
                Ok(None) => return stream,
                Err(error) => {
                    self.fail(
                        outgoing,
                        ClientError::transport(format!("the event stream broke: {error}")),
                    );
                    return stream;
                }
            };
            match events.feed(&chunk) {
                Ok(batch) => {
                    for event in batch {
                        if event.id.is_some() {
                            stream.last_id = event.id.clone();
                        }
                        // A priming event (an id, no data) carries no message.
                        if event.data.trim().is_empty() {
                            continue;
                        }
                        if answers(outgoing, event.data.as_bytes()) {
                            stream.answered = true;
                        }
                        self.deliver(outgoing, event.data.as_bytes());
                    }
                }
                Err(_) => {
                    let limit = self.max_message_bytes;
                    self.fail(
                        outgoing,
                        ClientError::invalid(format!("event larger than {limit} bytes")),
                    );
                    return stream;
                }
            }
        }
    }

    async fn read_body(
        &self,
        outgoing: &Outgoing,
        status: reqwest::StatusCode,
        mut response: reqwest::Response,
    ) {
        let mut body = Vec::new();
        loop {
            match response.chunk().await {
                Ok(Some(chunk)) if body.len() + chunk.len() <= self.max_message_bytes => {
                    body.extend_from_slice(&chunk)
                }
                Ok(Some(_)) => {
                    let limit = self.max_message_bytes;
                    return self.fail(
                        outgoing,
                        ClientError::invalid(format!("response larger than {limit} bytes")),
                    );
                }
                Ok(None) => break,
                Err(error) => {
                    return self.fail(
                        outgoing,
                        ClientError::transport(format!("reading the body failed: {error}")),
                    );
                }
            }
        }
        if body.iter().all(u8::is_ascii_whitespace) {
            if !status.is_success() {
                self.fail(outgoing, ClientError::invalid(format!("HTTP {status}")));
            }
            return;
        }
        match toolshape_protocol::classify(&body) {
            // An error about the HTTP request itself carries no id (a refused
            // Origin, a missing or unknown session...): it fails this request,
            // in the server's words, rather than being dropped for want of an id.
            Incoming::Response(toolshape_protocol::Response::Error { id: None, error }) => {
                self.fail(outgoing, ClientErrorKind::Protocol(error).into());
            }
            Incoming::Response(_) => self.deliver(outgoing, &body),
            _ => {
                let text = String::from_utf8_lossy(&body);
                self.fail(
                    outgoing,
                    ClientError::invalid(format!(
                        "HTTP {status}: {}",
                        crate::text::excerpt(&text, 200)
                    )),
                );
            }
        }
    }

    /// Hands one message to the peer, learning the negotiated version from an `initialize` answer.
    fn deliver(&self, outgoing: &Outgoing, message: &[u8]) {
        if outgoing.method == methods::INITIALIZE
            && let Ok(value) = serde_json::from_slice::<Value>(message)
            && let Some(version) = value
                .pointer("/result/protocolVersion")
                .and_then(Value::as_str)
        {
            *self
                .state
                .protocol_version
                .lock()
                .unwrap_or_else(PoisonError::into_inner) = Some(version.to_owned());
        }
        self.peer.receive(message);
    }

    fn fail(&self, outgoing: &Outgoing, error: ClientError) {
        if let Some(id) = &outgoing.id {
            self.peer.fail(id, error);
        }
    }
}
