//! The handshake session of the HTTP transport: its id, its negotiated
//! version, and opening a new one when the server no longer knows it.

use std::sync::Mutex;

use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderValue};
use toolshape_protocol::ProtocolVersion;
use toolshape_protocol::http::names;

use super::super::error::ClientError;
use super::{Exchange, lock};

/// What the HTTP transport remembers between requests.
#[derive(Debug, Default)]
pub(super) struct HttpState {
    session_id: Mutex<Option<String>>,
    protocol_version: Mutex<Option<ProtocolVersion>>,
    /// The `initialize` request that opened the session, to open a new one
    /// when the server says the session is gone.
    initialize: Mutex<Option<Vec<u8>>>,
    /// Serializes re-opening a session.
    reopening: tokio::sync::Mutex<()>,
    /// Set when the client closes: no session is opened, and no stream,
    /// after it.
    closed: std::sync::atomic::AtomicBool,
}

impl HttpState {
    /// The client is closing: nothing is opened from here on.
    pub(super) fn close(&self) {
        self.closed
            .store(true, std::sync::atomic::Ordering::Release);
    }

    pub(super) fn is_closed(&self) -> bool {
        self.closed.load(std::sync::atomic::Ordering::Acquire)
    }

    pub(super) fn session_id(&self) -> Option<String> {
        lock(&self.session_id).clone()
    }

    pub(super) fn set_session_id(&self, id: Option<String>) {
        *lock(&self.session_id) = id;
    }

    pub(super) fn protocol_version(&self) -> Option<ProtocolVersion> {
        *lock(&self.protocol_version)
    }

    pub(super) fn set_protocol_version(&self, version: ProtocolVersion) {
        *lock(&self.protocol_version) = Some(version);
    }

    pub(super) fn remember_initialize(&self, body: Vec<u8>) {
        *lock(&self.initialize) = Some(body);
    }
}

impl Exchange {
    /// A GET on the endpoint for an event stream of `session`: its
    /// standalone stream, or (with `last_id`) the rest of a stream resumed.
    pub(super) async fn get_stream(
        &self,
        session: String,
        last_id: Option<String>,
    ) -> Result<reqwest::Response, ClientError> {
        let mut headers = HeaderMap::new();
        headers.insert(ACCEPT, HeaderValue::from_static("text/event-stream"));
        let version = self.state.protocol_version().map(|v| v.as_str().to_owned());
        for (name, value) in [
            (names::SESSION_ID, Some(session)),
            (names::PROTOCOL_VERSION, version),
            (names::LAST_EVENT_ID, last_id),
        ] {
            if let Some(value) = value.and_then(|v| HeaderValue::from_str(&v).ok()) {
                headers.insert(name, value);
            }
        }
        self.send_authorized("GET", |credentials| {
            let mut headers = headers.clone();
            headers.extend(credentials);
            self.http.get(self.url.clone()).headers(headers)
        })
        .await
    }

    /// Opens a new session in place of `gone` with the remembered `initialize`;
    /// says whether there is a live session to send with now.
    pub(super) async fn reopen_session(&self, gone: &str) -> bool {
        let _reopening = self.state.reopening.lock().await;
        if self.state.is_closed() {
            return false;
        }
        if self.state.session_id().as_deref() != Some(gone) {
            // Another request already opened a new one.
            return self.state.session_id().is_some();
        }
        // The old id stays until the new one is known: a request sent
        // meanwhile gets 404 and comes here, to wait for it (none goes out
        // without a session).
        let Some(initialize) = lock(&self.state.initialize).clone() else {
            return false;
        };
        let mut request = HeaderMap::new();
        request.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        request.insert(
            ACCEPT,
            HeaderValue::from_static("application/json, text/event-stream"),
        );
        let sent = self
            .send_authorized("POST", |credentials| {
                let mut headers = request.clone();
                headers.extend(credentials);
                self.http
                    .post(self.url.clone())
                    .headers(headers)
                    .body(initialize.clone())
            })
            .await;
        let Ok(response) = sent else {
            return false;
        };
        let Some(session) = response
            .headers()
            .get(names::SESSION_ID)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
        else {
            return false;
        };
        if !response.status().is_success() {
            return false;
        }
        let initialized = br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
        let mut notify = request;
        if let Ok(value) = HeaderValue::from_str(&session) {
            notify.insert(names::SESSION_ID, value);
        }
        if let Some(version) = self.state.protocol_version() {
            notify.insert(
                names::PROTOCOL_VERSION,
                HeaderValue::from_static(version.as_str()),
            );
        }
        let sent = self
            .send_authorized("POST", |credentials| {
                let mut headers = notify.clone();
                headers.extend(credentials);
                self.http
                    .post(self.url.clone())
                    .headers(headers)
                    .body(&initialized[..])
            })
            .await;
        if !sent.is_ok_and(|response| response.status().is_success()) {
            return false;
        }
        // Only an initialized session is used: requests meanwhile waited
        // here (they got 404 on the old one).
        tracing::debug!("the server ended the session; opened a new one");
        self.state.set_session_id(Some(session));
        // Whatever the old session had asked for (resource subscriptions)
        // is gone, and anything may have changed meanwhile.
        self.peer.session_renewed();
        true
    }
}
