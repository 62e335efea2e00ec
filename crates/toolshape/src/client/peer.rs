//! The request/response core: ids, pending requests matched in any order,
//! cancellation on drop or timeout, and the server's notifications.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use serde::Serialize;
use serde_json::json;
use serde_json::value::RawValue;
use tokio::io::AsyncBufRead;
use tokio::sync::{mpsc, oneshot};
use toolshape_protocol::{
    CancelledNotificationParams, ErrorObject, Incoming, Notification, ProgressNotificationParams,
    RequestId, Response, methods,
};

use super::error::{ClientError, ClientErrorKind};
use crate::tool::Progress;
use crate::transport::lines::{Line, LineReader, leading_id};

type Reply = Result<Response, ClientError>;

/// The shared state of one connection to a server.
pub(crate) struct Peer {
    outgoing: mpsc::Sender<Vec<u8>>,
    pending: Mutex<HashMap<RequestId, oneshot::Sender<Reply>>>,
    progress: Mutex<HashMap<RequestId, mpsc::UnboundedSender<Progress>>>,
    next_id: AtomicI64,
    closed: AtomicBool,
    /// Set when the server says its tool list changed.
    pub(crate) tools_changed: AtomicBool,
    /// Per tool, the arguments mirrored in `Mcp-Param-*` headers (SEP-2243):
    /// `(property, header suffix)`, from the last listing.
    pub(crate) param_headers: Mutex<HashMap<String, Vec<(String, String)>>>,
}

impl Peer {
    pub(crate) fn new(outgoing: mpsc::Sender<Vec<u8>>) -> Arc<Peer> {
        Arc::new(Peer {
            outgoing,
            pending: Mutex::default(),
            progress: Mutex::default(),
            next_id: AtomicI64::new(1),
            closed: AtomicBool::new(false),
            tools_changed: AtomicBool::new(false),
            param_headers: Mutex::default(),
        })
    }

    fn pending(&self) -> std::sync::MutexGuard<'_, HashMap<RequestId, oneshot::Sender<Reply>>> {
        self.pending.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn progress_routes(
        &self,
    ) -> std::sync::MutexGuard<'_, HashMap<RequestId, mpsc::UnboundedSender<Progress>>> {
        self.progress.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A fresh request id.
    pub(crate) fn next_id(&self) -> RequestId {
        RequestId::Number(self.next_id.fetch_add(1, Ordering::Relaxed))
    }

    /// Sends a request and waits for its answer. When the wait ends early (the
    /// timeout, or the future being dropped) and `cancellable`, the server is
    /// sent `notifications/cancelled`.
    pub(crate) async fn request<P: Serialize + ?Sized>(
        self: &Arc<Self>,
        id: RequestId,
        method: &str,
        params: &P,
        timeout: Duration,
        cancellable: bool,
    ) -> Result<Box<RawValue>, ClientError> {
        let mut message = Vec::with_capacity(256);
        toolshape_protocol::write_request(&mut message, &id, method, params)
            .map_err(|e| ClientError::transport(format!("cannot serialize the request: {e}")))?;
        message.push(b'\n');
        let (sender, receiver) = oneshot::channel();
        self.pending().insert(id.clone(), sender);
        let mut guard = PendingGuard {
            peer: Arc::clone(self),
            id,
            cancellable,
            armed: true,
        };
        if self.closed.load(Ordering::Acquire) || self.outgoing.send(message).await.is_err() {
            return Err(ClientError::transport(
                "the connection to the server is closed",
            ));
        }
        let reply = tokio::time::timeout(timeout, receiver).await;
        let reply = match reply {
            Ok(Ok(reply)) => {
                guard.armed = false;
                reply?
            }
            Ok(Err(_)) => {
                guard.armed = false;
                return Err(ClientError::transport(
                    "the connection to the server closed",
                ));
            }
            Err(_) => return Err(ClientErrorKind::Timeout(timeout).into()),
        };
        match reply {
            Response::Success { result, .. } => Ok(result),
            Response::Error { error, .. } => Err(ClientErrorKind::Protocol(error).into()),
        }
    }

    /// Sends a notification; errors only when the connection is closed.
    pub(crate) fn notify<P: Serialize + ?Sized>(
        &self,
        method: &str,
        params: &P,
    ) -> Result<(), ClientError> {
        let mut message = Vec::with_capacity(128);
        toolshape_protocol::write_notification(&mut message, method, params).map_err(|e| {
            ClientError::transport(format!("cannot serialize the notification: {e}"))
        })?;
        message.push(b'\n');
        self.outgoing
            .try_send(message)
            .map_err(|_| ClientError::transport("the connection to the server is closed"))
    }

    /// Asks the writer to close the server's input (its signal to exit).
    /// Waits (a bounded time) until the writer has finished: the server's
    /// input is closed, or the HTTP session's DELETE has been sent.
    pub(crate) async fn close_output(&self) {
        if self.outgoing.send(Vec::new()).await.is_ok() {
            let _ = tokio::time::timeout(std::time::Duration::from_secs(5), self.outgoing.closed())
                .await;
        }
    }

    /// Routes progress for the request `id` to `sender` until [`Peer::unroute_progress`].
    pub(crate) fn route_progress(&self, id: RequestId, sender: mpsc::UnboundedSender<Progress>) {
        self.progress_routes().insert(id, sender);
    }

    pub(crate) fn unroute_progress(&self, id: &RequestId) {
        self.progress_routes().remove(id);
    }

    /// Handles one message from the server.
    pub(crate) fn receive(&self, bytes: &[u8]) {
        match toolshape_protocol::classify(bytes) {
            Incoming::Response(response) => {
                let Some(id) = response.id().cloned() else {
                    tracing::warn!(error = ?response, "the server sent an error without an id");
                    return;
                };
                match self.pending().remove(&id) {
                    Some(waiter) => {
                        let _ = waiter.send(Ok(response));
                    }
                    None => {
                        tracing::debug!(%id, "a response for no pending request (late or cancelled)")
                    }
                }
            }
            Incoming::Notification(notification) => self.notification(&notification),
            Incoming::Request(request) => {
                // A tools client offers nothing the server may ask for, but ping.
                let mut reply = Vec::with_capacity(96);
                let written = if request.method == methods::PING {
                    toolshape_protocol::write_result(&mut reply, &request.id, &json!({}))
                } else {
                    toolshape_protocol::write_error(
                        &mut reply,
                        Some(&request.id),
                        &ErrorObject::method_not_found(&request.method),
                    )
                };
                if written.is_ok() {
                    reply.push(b'\n');
                    let _ = self.outgoing.try_send(reply);
                }
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
            }
            Incoming::Invalid { error, .. } => {
                tracing::warn!(%error, "the server sent an invalid message; ignored");
            }
        }
    }

    fn notification(&self, notification: &Notification) {
        match notification.method.as_str() {
            methods::TOOLS_LIST_CHANGED => self.tools_changed.store(true, Ordering::Release),
            methods::PROGRESS => {
                let Ok(params) = notification.parse_params::<ProgressNotificationParams>() else {
                    return;
                };
                if let Some(route) = self.progress_routes().get(&params.progress_token) {
                    let _ = route.send(Progress {
                        progress: params.progress,
                        total: params.total,
                        message: params.message,
                    });
                }
            }
            methods::LOGGING_MESSAGE => {
                let params = notification
                    .params
                    .as_deref()
                    .map(RawValue::get)
                    .unwrap_or("{}");
                tracing::info!(target: "toolshape::server_log", message = %crate::text::excerpt(params, 1000));
            }
            other => tracing::debug!(method = other, "ignored a notification"),
        }
    }

    /// Fails a pending request whose response could not be read.
    pub(crate) fn fail(&self, id: &RequestId, error: ClientError) {
        if let Some(waiter) = self.pending().remove(id) {
            let _ = waiter.send(Err(error));
        }
    }

    /// Marks the connection closed and fails everything still waiting.
    fn close(&self) {
        self.closed.store(true, Ordering::Release);
        for (_, waiter) in self.pending().drain() {
            let _ = waiter.send(Err(ClientError::transport(
                "the server closed the connection",
            )));
        }
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
    cancellable: bool,
    armed: bool,
}

impl Drop for PendingGuard {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        let was_pending = self.peer.pending().remove(&self.id).is_some();
        if was_pending && self.cancellable {
            let params = CancelledNotificationParams::new(
                self.id.clone(),
                Some("the client stopped waiting".into()),
            );
            let _ = self.peer.notify(methods::CANCELLED, &params);
        }
    }
}

/// Reads the server's messages until its output ends.
pub(crate) async fn read_loop<R: AsyncBufRead + Unpin>(
    peer: Arc<Peer>,
    reader: R,
    max_message_bytes: usize,
) {
    let mut lines = LineReader::new(reader, max_message_bytes);
    loop {
        match lines.next().await {
            Ok(Line::Message(bytes)) => peer.receive(bytes),
            Ok(Line::TooLong(prefix)) => {
                tracing::warn!(
                    limit = max_message_bytes,
                    "the server sent a message over the size limit; skipped"
                );
                if let Some(id) = leading_id(prefix) {
                    peer.fail(
                        &id,
                        ClientError::invalid(format!(
                            "response larger than {max_message_bytes} bytes"
                        )),
                    );
                }
            }
            Ok(Line::Eof) => break,
            Err(error) => {
                tracing::warn!(%error, "reading from the server failed");
                break;
            }
        }
    }
    peer.close();
}
