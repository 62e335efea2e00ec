//! The client side of Streamable HTTP: every message is a POST; answers come
//! back as JSON or as an SSE stream; a session id (handshake revisions) and
//! the request-metadata headers ride along.

use std::sync::{Arc, Mutex, PoisonError};

use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderValue};
use serde_json::Value;
use tokio::sync::mpsc;
use toolshape_protocol::meta::keys;
use toolshape_protocol::{Incoming, RequestId, methods};

use super::error::ClientError;
use super::peer::Peer;
use crate::transport::headers;
use crate::transport::sse::EventReader;

/// What the HTTP transport remembers between requests.
#[derive(Debug, Default)]
pub(crate) struct HttpState {
    session_id: Mutex<Option<String>>,
    protocol_version: Mutex<Option<String>>,
}

impl HttpState {
    fn session_id(&self) -> Option<String> {
        self.session_id
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn protocol_version(&self) -> Option<String> {
        self.protocol_version
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

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
}

/// What the transport needs to know about an outgoing message.
struct Outgoing {
    id: Option<RequestId>,
    method: String,
    name: Option<String>,
    version: Option<String>,
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
            let exchange = self.clone();
            tokio::spawn(async move { exchange.post(message).await });
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
        map
    }

    async fn post(self, mut message: Vec<u8>) {
        if message.last() == Some(&b'\n') {
            message.pop();
        }
        let Some(outgoing) = inspect(&message) else {
            return;
        };
        let sent = self
            .http
            .post(self.url.clone())
            .headers(self.headers(&outgoing))
            .body(message)
            .send()
            .await;
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
            self.read_events(&outgoing, response).await;
        } else {
            self.read_body(&outgoing, status, response).await;
        }
        // A stream or body that ended without the answer fails the request.
        self.fail(
            &outgoing,
            ClientError::invalid(format!("HTTP {status}: the answer did not arrive")),
        );
    }

    async fn read_events(&self, outgoing: &Outgoing, mut response: reqwest::Response) {
        let mut events = EventReader::new(self.max_message_bytes);
        loop {
            let chunk = match response.chunk().await {
                Ok(Some(chunk)) => chunk,
                Ok(None) => return,
                Err(error) => {
                    return self.fail(
                        outgoing,
                        ClientError::transport(format!("the event stream broke: {error}")),
                    );
                }
            };
            match events.feed(&chunk) {
                Ok(batch) => {
                    for event in batch {
                        self.deliver(outgoing, event.data.as_bytes());
                    }
                }
                Err(_) => {
                    let limit = self.max_message_bytes;
                    return self.fail(
                        outgoing,
                        ClientError::invalid(format!("event larger than {limit} bytes")),
                    );
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
        if matches!(toolshape_protocol::classify(&body), Incoming::Response(_)) {
            self.deliver(outgoing, &body);
        } else {
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
