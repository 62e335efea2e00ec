//! One connection: read messages, answer them (tool calls concurrently), write
//! responses through one buffered writer, until the input ends.

use std::collections::HashMap;
use std::io;
use std::sync::{Arc, Mutex, PoisonError};

use serde::Serialize;
use serde_json::{Value, json};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, BufWriter};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinSet;
use toolshape_protocol::meta::keys;
use toolshape_protocol::{
    CallToolParams, CancelledNotificationParams, ErrorObject, Incoming, Notification,
    ProgressNotificationParams, Request, RequestId, methods,
};

use super::session::Session;
use super::{Shared, methods as answer, shape};
use crate::tool::{CallOptions, CallOutcome, Progress};
use crate::transport::lines::{Line, LineReader};

type InFlight = Arc<Mutex<HashMap<RequestId, oneshot::Sender<()>>>>;

/// Where a connection's outgoing messages go: one writer task, in order.
#[derive(Clone)]
struct Outbox(mpsc::Sender<Vec<u8>>);

impl Outbox {
    async fn send(&self, mut message: Vec<u8>) -> bool {
        message.push(b'\n');
        self.0.send(message).await.is_ok()
    }

    async fn result<R: Serialize + ?Sized>(&self, id: &RequestId, result: &R) -> bool {
        let mut out = Vec::with_capacity(256);
        match toolshape_protocol::write_result(&mut out, id, result) {
            Ok(()) => self.send(out).await,
            Err(e) => {
                self.error(
                    Some(id),
                    &ErrorObject::internal_error(format!("Internal error: {e}")),
                )
                .await
            }
        }
    }

    async fn error(&self, id: Option<&RequestId>, error: &ErrorObject) -> bool {
        let mut out = Vec::with_capacity(128);
        // An ErrorObject always serializes.
        let _ = toolshape_protocol::write_error(&mut out, id, error);
        self.send(out).await
    }

    async fn notification<P: Serialize + ?Sized>(&self, method: &str, params: &P) -> bool {
        let mut out = Vec::with_capacity(128);
        match toolshape_protocol::write_notification(&mut out, method, params) {
            Ok(()) => self.send(out).await,
            Err(_) => true,
        }
    }
}

struct Connection {
    shared: Arc<Shared>,
    session: Arc<Session>,
    outbox: Outbox,
    in_flight: InFlight,
    calls: JoinSet<()>,
}

pub(crate) async fn serve<R, W>(shared: Arc<Shared>, reader: R, writer: W) -> io::Result<()>
where
    R: AsyncRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (sender, receiver) = mpsc::channel(1024);
    let writer = tokio::spawn(write_loop(writer, receiver));
    let session = Arc::new(Session::default());
    let outbox = Outbox(sender);
    let watcher = tokio::spawn(announce_list_changes(
        shared.registry.watch_changes(),
        Arc::clone(&session),
        outbox.clone(),
    ));
    let mut lines = LineReader::new(
        BufReader::with_capacity(64 * 1024, reader),
        shared.options.max_message_bytes,
    );
    let mut connection = Connection {
        shared,
        session,
        outbox,
        in_flight: InFlight::default(),
        calls: JoinSet::new(),
    };

    loop {
        while connection.calls.try_join_next().is_some() {}
        if connection.calls.len() >= connection.shared.options.max_in_flight.max(1) {
            // At the bound: stop reading until a call finishes.
            connection.calls.join_next().await;
            continue;
        }
        let open = match lines.next().await {
            Ok(Line::Message(bytes)) => connection.handle(bytes).await,
            Ok(Line::TooLong(prefix)) => {
                let limit = connection.shared.options.max_message_bytes;
                tracing::warn!(limit, "skipped a message over the size limit");
                let error = ErrorObject::invalid_request(format!(
                    "Invalid Request: message larger than {limit} bytes"
                ));
                let id = crate::transport::lines::leading_id(prefix);
                connection.outbox.error(id.as_ref(), &error).await
            }
            Ok(Line::Eof) => break,
            Err(error) => {
                tracing::warn!(%error, "reading the input failed; finishing");
                break;
            }
        };
        if !open {
            tracing::debug!("the output is closed; finishing");
            break;
        }
    }

    while connection.calls.join_next().await.is_some() {}
    watcher.abort();
    drop(connection);
    writer.await.unwrap_or_else(|e| Err(io::Error::other(e)))
}

async fn write_loop<W: AsyncWrite + Unpin>(
    writer: W,
    mut receiver: mpsc::Receiver<Vec<u8>>,
) -> io::Result<()> {
    let mut writer = BufWriter::with_capacity(64 * 1024, writer);
    while let Some(message) = receiver.recv().await {
        writer.write_all(&message).await?;
        while let Ok(message) = receiver.try_recv() {
            writer.write_all(&message).await?;
        }
        writer.flush().await?;
    }
    writer.flush().await
}

async fn announce_list_changes(
    mut changes: tokio::sync::watch::Receiver<u64>,
    session: Arc<Session>,
    outbox: Outbox,
) {
    while changes.changed().await.is_ok() {
        if session.is_initialized()
            && !outbox
                .notification(methods::TOOLS_LIST_CHANGED, &json!({}))
                .await
        {
            return;
        }
    }
}

impl Connection {
    /// Handles one message; false when the output is gone.
    async fn handle(&mut self, bytes: &[u8]) -> bool {
        match toolshape_protocol::classify(bytes) {
            Incoming::Request(request) => self.request(request).await,
            Incoming::Notification(notification) => {
                self.notification(&notification);
                true
            }
            Incoming::Response(_) => {
                tracing::debug!("ignored a response: this server sends no requests");
                true
            }
            Incoming::Invalid { id, error } => self.outbox.error(id.as_ref(), &error).await,
        }
    }

    async fn request(&mut self, request: Request) -> bool {
        let shared = &*self.shared;
        let params = request.params.as_deref();
        let id = &request.id;
        match request.method.as_str() {
            methods::TOOLS_CALL => self.call(request),
            methods::TOOLS_LIST => {
                let mut out = Vec::with_capacity(4096);
                match answer::list_tools(shared, &self.session, params, &mut out, id) {
                    Ok(()) => self.outbox.send(out).await,
                    Err(error) => self.outbox.error(Some(id), &error).await,
                }
            }
            methods::INITIALIZE => match answer::initialize(shared, &self.session, params) {
                Ok(result) => self.outbox.result(id, &result).await,
                Err(error) => self.outbox.error(Some(id), &error).await,
            },
            methods::SERVER_DISCOVER => match answer::discover(shared, &self.session, params) {
                Ok(result) => self.outbox.result(id, &result).await,
                Err(error) => self.outbox.error(Some(id), &error).await,
            },
            methods::PING => self.outbox.result(id, &json!({})).await,
            other => {
                // Name the method, but never echo an arbitrarily long one back.
                let method = crate::text::excerpt(other, 100);
                self.outbox
                    .error(Some(id), &ErrorObject::method_not_found(&method))
                    .await
            }
        }
    }

    fn notification(&mut self, notification: &Notification) {
        match notification.method.as_str() {
            methods::INITIALIZED => self.session.mark_initialized(),
            methods::CANCELLED => {
                let Ok(params) = notification.parse_params::<CancelledNotificationParams>() else {
                    tracing::debug!("ignored a malformed cancellation");
                    return;
                };
                if let Some(request_id) = params.request_id {
                    let cancel = self
                        .in_flight
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .remove(&request_id);
                    if let Some(cancel) = cancel {
                        tracing::debug!(%request_id, "call cancelled");
                        let _ = cancel.send(());
                    }
                }
            }
            other => tracing::debug!(method = other, "ignored a notification"),
        }
    }

    /// Starts a tool call; it answers on its own when done.
    fn call(&mut self, request: Request) -> bool {
        let Request { id, params, .. } = request;
        let outbox = self.outbox.clone();
        let parsed =
            answer::params::<Option<CallToolParams>>(params.as_deref()).and_then(|params| {
                params.ok_or_else(|| {
                    ErrorObject::invalid_params("Invalid params: tools/call needs a tool name")
                })
            });
        let call = parsed.and_then(|call| {
            let version = answer::call_revision(&self.session, call.meta.as_ref())?;
            Ok((call, version))
        });
        let (call, version) = match call {
            Ok(ready) => ready,
            Err(error) => {
                self.calls.spawn(async move {
                    outbox.error(Some(&id), &error).await;
                });
                return true;
            }
        };
        let (cancel, cancelled) = oneshot::channel();
        {
            let mut in_flight = self
                .in_flight
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            if in_flight.contains_key(&id) {
                let error = ErrorObject::invalid_request(
                    "Invalid Request: a request with this id is already in flight",
                );
                self.calls.spawn(async move {
                    outbox.error(Some(&id), &error).await;
                });
                return true;
            }
            in_flight.insert(id.clone(), cancel);
        }
        let progress_token = call
            .meta
            .as_ref()
            .and_then(|meta| meta.get(keys::PROGRESS_TOKEN))
            .cloned();
        let shared = Arc::clone(&self.shared);
        let in_flight = Arc::clone(&self.in_flight);
        self.calls.spawn(async move {
            let (progress, mut reports) = mpsc::unbounded_channel::<Progress>();
            let options = CallOptions {
                timeout: shared.options.call_timeout,
                cancel: Some(cancelled),
                progress: progress_token.is_some().then_some(progress),
            };
            let running = shared.registry.call(&call.name, call.arguments, options);
            tokio::pin!(running);
            let outcome = loop {
                tokio::select! {
                    biased;
                    outcome = &mut running => break outcome,
                    Some(report) = reports.recv() => send_progress(&outbox, progress_token.as_ref(), report).await,
                }
            };
            while let Ok(report) = reports.try_recv() {
                send_progress(&outbox, progress_token.as_ref(), report).await;
            }
            in_flight.lock().unwrap_or_else(PoisonError::into_inner).remove(&id);
            match outcome {
                Err(unknown) => {
                    outbox.error(Some(&id), &ErrorObject::invalid_params(unknown.to_string())).await;
                }
                Ok(CallOutcome::Cancelled) => {}
                Ok(CallOutcome::Success(output)) => {
                    let Some(tool) = shared.registry.get(&call.name) else {
                        return;
                    };
                    let result = shape::success(output, &tool, version, shared.options.text_block_for_modern);
                    outbox.result(&id, &result).await;
                }
                Ok(CallOutcome::Failed(failure)) => {
                    let result = shape::failure(&failure, &call.name, version);
                    outbox.result(&id, &result).await;
                }
            }
        });
        true
    }
}

async fn send_progress(outbox: &Outbox, token: Option<&Value>, report: Progress) {
    let Some(token) = token.and_then(|t| serde_json::from_value(t.clone()).ok()) else {
        return;
    };
    let params = ProgressNotificationParams {
        progress_token: token,
        progress: report.progress,
        total: report.total,
        message: report.message,
        meta: None,
    };
    outbox.notification(methods::PROGRESS, &params).await;
}
