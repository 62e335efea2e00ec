//! The standalone event stream of a handshake session (a GET on the
//! endpoint): where a server sends the requests and notifications that
//! answer no request of the client's, such as an elicitation a tool makes
//! outside its own response stream, a list change, a resource update.
//! Opened once the session is initialized; resumed with `Last-Event-ID`
//! when the server closes it, a bounded number of times in a row.

use std::time::Duration;

use reqwest::header::CONTENT_TYPE;

use super::super::peer::Channel;
use super::{Exchange, lock};
use crate::transport::lines::leading;
use crate::transport::sse::EventReader;

/// Most attempts in a row that open no stream before the client gives up.
const MAX_FAILED_OPENS: usize = 3;
/// The wait before reopening when the server set no `retry`, in ms.
const DEFAULT_RETRY_MS: u64 = 1000;
/// The shortest and longest waits a server's `retry` can impose, in ms
/// (reopening this stream, or resuming a request's, `post.rs`).
pub(super) const MIN_RETRY_MS: u64 = 100;
pub(super) const MAX_RETRY_MS: u64 = 30_000;

/// What one attempt to open the stream gave.
enum Opened {
    Stream(reqwest::Response),
    /// 405: the server offers no standalone stream.
    NotOffered,
    /// 404: the server no longer knows the session (this one).
    Gone(String),
    Failed,
}

/// How long opening the stream may hold up the client's first request
/// (then it is opened in the background).
const FIRST_OPEN_WAIT: Duration = Duration::from_secs(5);

impl Exchange {
    /// Opens the standalone stream of the current session, once, and keeps
    /// reading it in a task of its own. Returns when the first attempt has
    /// its answer (or after [`FIRST_OPEN_WAIT`]), so that what the client
    /// sends next finds the stream open.
    pub(super) async fn start_listening(&self) {
        if self.state.is_closed() || self.state.session_id().is_none() {
            return;
        }
        let (opened, first_opened) = tokio::sync::oneshot::channel();
        {
            // The slot is taken before anything is awaited: one listener.
            let mut slot = lock(&self.listener);
            if slot.is_some() {
                return;
            }
            let exchange = self.clone();
            let task = tokio::spawn(async move { exchange.listen(opened).await });
            *slot = Some(task.abort_handle());
        }
        let _ = tokio::time::timeout(FIRST_OPEN_WAIT, first_opened).await;
    }

    async fn open(&self, last_id: Option<String>) -> Opened {
        let Some(session) = self.state.session_id() else {
            return Opened::NotOffered;
        };
        let opened = self.get_stream(session.clone(), last_id).await;
        match opened {
            Ok(response) if response.status() == reqwest::StatusCode::METHOD_NOT_ALLOWED => {
                Opened::NotOffered
            }
            Ok(response) if response.status() == reqwest::StatusCode::NOT_FOUND => {
                Opened::Gone(session)
            }
            Ok(response) if response.status().is_success() && is_event_stream(&response) => {
                Opened::Stream(response)
            }
            Ok(response) => {
                tracing::debug!(status = %response.status(), "the standalone event stream was refused");
                Opened::Failed
            }
            Err(error) => {
                tracing::debug!(%error, "opening the standalone event stream failed");
                Opened::Failed
            }
        }
    }

    /// Reads the stream, opening it again as it ends, until the server
    /// offers none or it failed to open [`MAX_FAILED_OPENS`] times in a row.
    /// A session the server forgot (idle too long) is opened anew in place.
    async fn listen(self, first_opened: tokio::sync::oneshot::Sender<()>) {
        let opened = self.open(None).await;
        let _ = first_opened.send(());
        self.keep_listening(opened).await;
        // The slot is freed only if it still holds this task.
        let mut slot = lock(&self.listener);
        if slot
            .as_ref()
            .is_some_and(|task| task.id() == tokio::task::id())
        {
            *slot = None;
        }
    }

    async fn keep_listening(&self, mut opened: Opened) {
        let mut last_id: Option<String> = None;
        let mut retry_ms = DEFAULT_RETRY_MS;
        let mut failed = 0;
        loop {
            match opened {
                Opened::NotOffered => return,
                Opened::Failed => failed += 1,
                // Counted as a failed open (a server that forgets every
                // session is not asked again and again).
                Opened::Gone(session) => {
                    failed += 1;
                    if self.reopen_session(&session).await {
                        last_id = None;
                    }
                }
                Opened::Stream(response) => {
                    failed = 0;
                    let (id, retry) = self.read_standalone(response).await;
                    last_id = id.or(last_id);
                    retry_ms = retry.unwrap_or(retry_ms).clamp(MIN_RETRY_MS, MAX_RETRY_MS);
                }
            }
            if failed >= MAX_FAILED_OPENS || self.state.is_closed() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(retry_ms)).await;
            opened = self.open(last_id.clone()).await;
        }
    }

    /// Hands every message of the stream to the peer until it ends; returns
    /// the last event id and the `retry` the server set.
    async fn read_standalone(
        &self,
        mut response: reqwest::Response,
    ) -> (Option<String>, Option<u64>) {
        let mut events = EventReader::new(self.max_message_bytes);
        let mut last_id = None;
        loop {
            let chunk = match response.chunk().await {
                Ok(Some(chunk)) => chunk,
                Ok(None) | Err(_) => {
                    return (last_id, events.retry());
                }
            };
            for event in events.feed(&chunk) {
                if event.id.is_some() {
                    last_id = event.id.clone();
                }
                if event.cut {
                    let leading = leading(event.data.as_bytes());
                    self.peer.too_long(leading, self.max_message_bytes);
                } else if !event.data.trim().is_empty() {
                    self.peer
                        .receive(event.data.as_bytes(), Channel::Standalone);
                }
            }
        }
    }
}

fn is_event_stream(response: &reqwest::Response) -> bool {
    response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"))
}
