//! One POST: send the message, then read its answer from a JSON body or an
//! event stream, resuming the stream (SEP-1699) when the server closes it
//! before the answer.

use reqwest::header::CONTENT_TYPE;
use toolshape_protocol::http::names;

use super::super::error::{ClientError, ClientErrorKind, TransportError};
use super::super::outgoing::Outgoing;
use super::super::peer::Received;
use super::Exchange;
use super::listen::{MAX_RETRY_MS, MIN_RETRY_MS};
use crate::transport::lines::{LeadingKind, leading};
use crate::transport::sse::EventReader;

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

impl Exchange {
    pub(super) async fn post(self, message: Outgoing) {
        let initialize = message.method == toolshape_protocol::methods::INITIALIZE;
        if initialize {
            self.state.remember_initialize(message.body.clone());
        }
        if let Some(version) = message.route.version {
            self.state.set_protocol_version(version);
        }
        let mut reopened = false;
        let sent = loop {
            let used_session = self.state.session_id();
            let headers = self.headers(&message);
            let sent = self
                .send_authorized("POST", |credentials| {
                    let mut headers = headers.clone();
                    headers.extend(credentials);
                    self.http
                        .post(self.url.clone())
                        .headers(headers)
                        .body(message.body.clone())
                })
                .await;
            // A session the server no longer knows: open a new one and send again, once
            // (2025-11-25: a 404 to a request with a session id means "initialize again").
            let gone = matches!(&sent, Ok(r) if r.status() == reqwest::StatusCode::NOT_FOUND);
            if gone
                && !reopened
                && !initialize
                && !message.route.is_stateless()
                && let Some(used) = used_session
                && self.reopen_session(&used).await
            {
                reopened = true;
                // The new session's stream, if the old one's had given up.
                self.start_listening().await;
                continue;
            }
            break sent;
        };
        let response = match sent {
            Ok(response) => response,
            Err(error) => return self.fail(&message, error),
        };
        if initialize
            && let Some(session) = response
                .headers()
                .get(names::SESSION_ID)
                .and_then(|v| v.to_str().ok())
        {
            self.state.set_session_id(Some(session.to_owned()));
        }
        let status = response.status();
        let is_sse = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"));
        if is_sse && status.is_success() {
            self.read_stream(&message, response).await;
        } else {
            self.read_body(&message, status, response).await;
        }
        // A stream or body that ended without the answer fails the request.
        self.fail(
            &message,
            TransportError::Status {
                status: status.as_u16(),
                detail: "the answer did not arrive".into(),
            },
        );
    }

    /// Reads the event stream of `message`, resuming it with GET and
    /// `Last-Event-ID` after the `retry` the server asked for when it closes
    /// the stream before the answer, once it sent an event id (handshake
    /// sessions; a few attempts).
    async fn read_stream(&self, message: &Outgoing, response: reqwest::Response) {
        let mut stream = self.read_events(message, response).await;
        let mut attempts = 0;
        while !stream.answered
            && message.id.is_some()
            && attempts < MAX_RESUMPTIONS
            && let (Some(last_id), Some(session)) =
                (stream.last_id.clone(), self.state.session_id())
        {
            attempts += 1;
            let wait = stream
                .retry_ms
                .unwrap_or(DEFAULT_RETRY_MS)
                .clamp(MIN_RETRY_MS, MAX_RETRY_MS);
            tokio::time::sleep(std::time::Duration::from_millis(wait)).await;
            let resumed = self.get_stream(session, Some(last_id)).await;
            let resumed = match resumed {
                Ok(resumed) if resumed.status().is_success() => resumed,
                Ok(resumed) => {
                    return self.fail(
                        message,
                        TransportError::Status {
                            status: resumed.status().as_u16(),
                            detail: "resuming the event stream failed".into(),
                        },
                    );
                }
                Err(error) => return self.fail(message, error),
            };
            let next = self.read_events(message, resumed).await;
            stream = Stream {
                answered: next.answered,
                last_id: next.last_id.or(stream.last_id),
                retry_ms: next.retry_ms.or(stream.retry_ms),
            };
        }
    }

    /// Reads an event stream until it ends, or until the answer to `message` arrived.
    async fn read_events(&self, message: &Outgoing, mut response: reqwest::Response) -> Stream {
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
                    self.fail(message, TransportError::Http(error));
                    return stream;
                }
            };
            for event in events.feed(&chunk) {
                if event.id.is_some() {
                    stream.last_id = event.id.clone();
                }
                if event.cut {
                    stream.answered |= self.too_long(message, &event.data);
                    continue;
                }
                // A priming event (an id, no data) carries no message.
                if event.data.trim().is_empty() {
                    continue;
                }
                stream.answered |= self.deliver(message, event.data.as_bytes());
            }
        }
    }

    /// Handles a message over the size limit on `message`'s stream, told
    /// apart by its first bytes as over stdio; whether it was the answer to
    /// `message` (then failed). On its own request's stream an answer whose
    /// id comes later than its first bytes is taken as that request's.
    fn too_long(&self, message: &Outgoing, prefix: &str) -> bool {
        let leading = leading(prefix.as_bytes());
        let limit = self.max_message_bytes;
        let ours = match &leading.id {
            Some(id) => leading.kind != LeadingKind::Request && message.id.as_ref() == Some(id),
            None => leading.kind == LeadingKind::Response,
        };
        if ours && leading.id.is_none() {
            tracing::warn!(
                limit,
                "the server sent an answer over the size limit; skipped"
            );
            self.fail(message, ClientError::too_large(limit));
        } else {
            self.peer.too_long(leading, limit);
        }
        ours
    }

    async fn read_body(
        &self,
        message: &Outgoing,
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
                    return self.fail(message, ClientError::too_large(limit));
                }
                Ok(None) => break,
                Err(error) => return self.fail(message, TransportError::Http(error)),
            }
        }
        if body.iter().all(u8::is_ascii_whitespace) {
            if !status.is_success() {
                self.fail(
                    message,
                    TransportError::Status {
                        status: status.as_u16(),
                        detail: String::new(),
                    },
                );
            }
            return;
        }
        // An error about the HTTP request itself carries no id (a refused
        // Origin, a missing or unknown session...): it fails this request,
        // in the server's words, rather than being dropped for want of an id.
        match self.peer.receive(&body, message.channel()) {
            Received::UnaddressedError(error) => {
                self.fail(message, ClientErrorKind::Protocol(error));
            }
            Received::Answer(_) | Received::Other | Received::Batch(_) => {}
            Received::Invalid => {
                let text = String::from_utf8_lossy(&body);
                self.fail(
                    message,
                    TransportError::Status {
                        status: status.as_u16(),
                        detail: toolshape_protocol::text::excerpt(&text, 200),
                    },
                );
            }
        }
    }
}
