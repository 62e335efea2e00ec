//! The handshake session of the HTTP transport: its id, its negotiated
//! version, and opening a new one when the server no longer knows it.

use std::sync::{Mutex, PoisonError};

use axum::body::Bytes;
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderValue};

use super::Exchange;
use crate::transport::headers;

/// What the HTTP transport remembers between requests.
#[derive(Debug, Default)]
pub(crate) struct HttpState {
    pub(super) session_id: Mutex<Option<String>>,
    pub(super) protocol_version: Mutex<Option<String>>,
    /// The `initialize` request that opened the session, to open a new one
    /// when the server says the session is gone.
    pub(super) initialize: Mutex<Option<Bytes>>,
    /// Serializes re-opening a session.
    reopening: tokio::sync::Mutex<()>,
}

impl HttpState {
    pub(super) fn session_id(&self) -> Option<String> {
        self.session_id
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    pub(super) fn set_session_id(&self, id: Option<String>) {
        *self
            .session_id
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = id;
    }

    pub(super) fn protocol_version(&self) -> Option<String> {
        self.protocol_version
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

impl Exchange {
    /// Opens a new session in place of `gone` with the remembered `initialize`;
    /// says whether there is a live session to send with now.
    pub(super) async fn reopen_session(&self, gone: &str) -> bool {
        let _reopening = self.state.reopening.lock().await;
        if self.state.session_id().as_deref() != Some(gone) {
            // Another request already opened a new one.
            return self.state.session_id().is_some();
        }
        self.state.set_session_id(None);
        let Some(initialize) = self
            .state
            .initialize
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
        else {
            return false;
        };
        let mut request = HeaderMap::new();
        request.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        request.insert(
            ACCEPT,
            HeaderValue::from_static("application/json, text/event-stream"),
        );
        let Ok(response) = self
            .http
            .post(self.url.clone())
            .headers(request.clone())
            .body(initialize)
            .send()
            .await
        else {
            return false;
        };
        let Some(session) = response
            .headers()
            .get(headers::SESSION_ID)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
        else {
            return false;
        };
        if !response.status().is_success() {
            return false;
        }
        tracing::debug!("the server ended the session; opened a new one");
        self.state.set_session_id(Some(session.clone()));
        let initialized = br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
        let mut notify = request;
        if let Ok(value) = HeaderValue::from_str(&session) {
            notify.insert(headers::SESSION_ID, value);
        }
        if let Some(value) = self
            .state
            .protocol_version()
            .and_then(|v| HeaderValue::from_str(&v).ok())
        {
            notify.insert(headers::PROTOCOL_VERSION, value);
        }
        let sent = self
            .http
            .post(self.url.clone())
            .headers(notify)
            .body(&initialized[..])
            .send()
            .await;
        sent.is_ok()
    }
}
