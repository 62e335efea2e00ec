//! One stdio connection: read messages, answer them (tool calls concurrently),
//! write everything through one buffered writer, until the input ends, or
//! until the output fails (the peer closed it, or stopped reading for the
//! write stall limit: the session ends at once).

use std::io;
use std::sync::Arc;

use tokio::io::{AsyncBufRead, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, BufWriter};
use tokio::sync::{mpsc, oneshot};
use tokio::task::{JoinHandle, JoinSet};
use toolshape_protocol::subscriptions::ListenParams;
use toolshape_protocol::{
    ErrorObject, Incoming, KnownRequest, ProtocolVersion, RequestId, methods,
};

use super::Shared;
use super::dispatch::{self, Step};
use super::in_flight::InFlight;
use super::listens::Listens;
use super::notices;
use super::outbox::{Frame, Outbox};
use super::request::ParsedRequest;
use super::session::Session;
use crate::transport::lines::{Leading, LeadingKind, Line, LineReader, leading};
use crate::transport::stall::StallGuard;

mod batch;

struct Connection {
    shared: Arc<Shared>,
    session: Arc<Session>,
    outbox: Outbox,
    in_flight: Arc<InFlight>,
    calls: JoinSet<()>,
    /// The batches whose answers are still being gathered (2025-03-26).
    batches: JoinSet<()>,
    /// Its 2026-07-28 `subscriptions/listen` streams.
    listens: Listens,
    /// What the server's [`ConnectedClient`](super::ConnectedClient) was
    /// told about this connection's client.
    told_client: Told,
    /// Its number for the [`ConnectedClient`](super::ConnectedClient).
    number: u64,
}

/// What a [`ConnectedClient`](super::ConnectedClient) was told about a
/// connection's client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Told {
    Nothing,
    /// That it takes no request outside its own: its first request was a
    /// 2026-07-28 one (a client that probes so and then makes a handshake
    /// is told ready after it).
    Unaskable,
    Ready,
}

/// Serves one peer until its input ends (then the calls in flight finish)
/// or `stop` resolves (then each call in flight is answered that the
/// server is stopping, each listen stream that it ended), or until its
/// output fails.
pub(crate) async fn serve<R, W, S>(
    shared: Arc<Shared>,
    reader: R,
    writer: W,
    caller: Option<Arc<str>>,
    stop: S,
) -> io::Result<()>
where
    R: AsyncRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send + 'static,
    S: Future<Output = ()> + Send,
{
    let mut stop = std::pin::pin!(stop);
    let (sender, receiver) = mpsc::channel(1024);
    // A peer that stops reading ends the session after the stall limit; until
    // then, what waits for it is bounded (this queue, then reading pauses).
    let writer = StallGuard::new(writer, shared.options.write_stall_timeout);
    let (finish, finished) = oneshot::channel();
    let mut writer: JoinHandle<io::Result<()>> =
        tokio::spawn(write_loop(writer, receiver, finished));
    let session = Arc::new(Session::of_caller(caller));
    let outbox = Outbox(sender);
    let watcher = tokio::spawn(announce_list_changes(
        shared.registry.watch_changes(),
        methods::TOOLS_LIST_CHANGED,
        Arc::clone(&session),
        outbox.clone(),
    ));
    // Prompts change only in a registry the server shares.
    let prompt_watcher = shared.announces_prompt_changes.then(|| {
        tokio::spawn(announce_list_changes(
            shared.prompts.watch_changes(),
            methods::PROMPTS_LIST_CHANGED,
            Arc::clone(&session),
            outbox.clone(),
        ))
    });
    let updates = tokio::spawn(announce_changes(
        Arc::clone(&shared),
        Arc::clone(&session),
        outbox.clone(),
    ));
    let mut lines = LineReader::new(
        BufReader::with_capacity(64 * 1024, reader),
        shared.options.max_message_bytes,
    );
    let number = shared
        .connected_client
        .as_ref()
        .map_or(0, super::ConnectedClient::connection);
    let mut connection = Connection {
        shared,
        session,
        outbox,
        in_flight: Arc::default(),
        calls: JoinSet::new(),
        batches: JoinSet::new(),
        listens: Listens::default(),
        told_client: Told::Nothing,
        number,
    };

    let mut write_failed = None;
    let mut stopped = false;
    loop {
        // Finished tasks are let go of here (a set keeps them until joined).
        while connection.calls.try_join_next().is_some() {}
        while connection.batches.try_join_next().is_some() {}
        if connection.calls.len() >= connection.shared.options.max_in_flight.max(1) {
            // At the bound: stop reading until a call finishes.
            tokio::select! {
                _ = connection.calls.join_next() => continue,
                outcome = &mut writer => {
                    write_failed = Some(outcome);
                    break;
                }
                () = &mut stop => {
                    stopped = true;
                    break;
                }
            }
        }
        // A read dropped here keeps what it took of a line (the reader is
        // cancel-safe): the stop reads on from it.
        let line = tokio::select! {
            line = lines.next() => line,
            outcome = &mut writer => {
                write_failed = Some(outcome);
                break;
            }
            () = &mut stop => {
                stopped = true;
                break;
            }
        };
        let open = match line {
            Ok(Line::Message(bytes)) => connection.handle(bytes).await,
            Ok(Line::TooLong(prefix)) => connection.too_long(leading(prefix)).await,
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

    // Stopping: the calls in flight are taken first (each to be told that
    // the server stops), before their questions to the client are given up
    // (a handler would otherwise run on past a question that failed).
    let unfinished = if stopped {
        let mut unfinished = connection.in_flight.stop_all();
        let batches = connection.takes_batches();
        take_unstarted(&mut lines, &mut unfinished, batches).await;
        unfinished
    } else {
        Vec::new()
    };
    // Nobody may ask this client any more; no answer to the server's own
    // requests can come.
    if let Some(client) = &connection.shared.connected_client {
        client.ended(connection.number);
    }
    connection.session.requests.abandon_all();
    watcher.abort();
    if let Some(prompt_watcher) = prompt_watcher {
        prompt_watcher.abort();
    }
    updates.abort();
    let listening = connection.listens.end_all().await;
    if let Some(outcome) = write_failed {
        // Nobody reads the answers any more: stop the calls in flight.
        connection.calls.abort_all();
        connection.batches.abort_all();
        while connection.calls.join_next().await.is_some() {}
        let error = match outcome {
            Ok(Err(error)) => error,
            Ok(Ok(())) => io::Error::new(io::ErrorKind::BrokenPipe, "the output closed"),
            Err(join) => io::Error::other(join),
        };
        tracing::warn!(%error, in_flight = connection.in_flight.len(), "writing to the peer failed; the session ends");
        return Err(error);
    }
    stop_calls(&mut connection, unfinished, &listening).await;
    while connection.calls.join_next().await.is_some() {}
    // Each batch's answers are written once its last call has ended.
    while connection.batches.join_next().await.is_some() {}
    drop(connection);
    // What is queued is written; a sender still held elsewhere (a task a
    // handler left behind) does not keep the session open.
    let _ = finish.send(());
    writer.await.unwrap_or_else(|e| Err(io::Error::other(e)))
}

/// How many messages a stopping connection reads on at most, of those its
/// peer had sent already, to answer the requests among them.
const UNSTARTED_AT_STOP: usize = 1024;

/// Adds to `ids` the requests a stopping connection had been sent but not
/// started: those read already (waiting at the in-flight bound, say) and
/// those its input has ready, at most [`UNSTARTED_AT_STOP`] messages, never
/// waiting for more. Each is answered, as the calls in flight are, that the
/// server stops, rather than left without an answer; an id already among
/// `ids` (a peer's mistake) is not answered twice.
async fn take_unstarted<R: AsyncBufRead + Unpin>(
    lines: &mut LineReader<R>,
    ids: &mut Vec<RequestId>,
    batches: bool,
) {
    for _ in 0..UNSTARTED_AT_STOP {
        // Unconstrained: the runtime's budget per task would make a read
        // wait although its input is ready.
        let line = tokio::task::unconstrained(async {
            tokio::select! {
                biased;
                line = lines.next() => Some(line),
                () = std::future::ready(()) => None,
            }
        })
        .await;
        let Some(line) = line else { return };
        match line {
            Ok(Line::Message(bytes)) if batches && toolshape_protocol::is_batch(bytes) => {
                batch::requests_of(bytes, ids);
            }
            Ok(Line::Message(bytes)) => request_of(bytes, ids),
            // Over the size limit: answered by the id its first bytes
            // carry, if they carry one, as when it is read while serving.
            Ok(Line::TooLong(prefix)) => {
                let leading = leading(prefix);
                if leading.kind != LeadingKind::Response
                    && let Some(id) = leading.id
                    && !ids.contains(&id)
                {
                    ids.push(id);
                }
            }
            Ok(Line::Eof) | Err(_) => return,
        }
    }
}

/// Adds to `ids` the id of `message` when it is a request not among them
/// already (a peer's mistake is not answered twice).
fn request_of(message: &[u8], ids: &mut Vec<RequestId>) {
    if let Incoming::Request(request) = toolshape_protocol::classify(message)
        && !ids.contains(&request.id)
    {
        ids.push(request.id);
    }
}

/// Ends the calls in flight as the server stops (`unfinished`, taken from
/// [`InFlight::stop_all`]), each answered with an error that says so (its
/// handler dropped, as if cancelled: a proxy's upstream is told so), so that
/// every call the server had started gets an answer. An open
/// `subscriptions/listen` stream (of `listening`, ended already) gets the
/// result that says it ended, as the 2026-07-28 schema has it for a server
/// that stops.
async fn stop_calls(
    connection: &mut Connection,
    unfinished: Vec<RequestId>,
    listening: &[RequestId],
) {
    if unfinished.is_empty() {
        return;
    }
    tracing::info!(
        requests = unfinished.len(),
        "stopping: the requests in flight are answered with an error"
    );
    // Each call taken ends at its next wait (every handler, listing and
    // completion runs under its cancellation); the others finish sending
    // their own answers (a send waits at most the write stall limit).
    while connection.calls.join_next().await.is_some() {}
    let error = ErrorObject::internal_error(
        "The server is stopping: this request was not finished; it may be sent again to a \
         server that runs",
    );
    for id in &unfinished {
        let answered = if listening.contains(id) {
            connection
                .outbox
                .send(super::listens::ended(&connection.shared, id))
                .await
        } else {
            connection.outbox.error(Some(id), &error).await
        };
        if !answered {
            return;
        }
    }
}

/// Writes each message as one line, flushing whenever the queue runs dry,
/// until every sender is gone or `finish` comes (then what is queued is
/// written first).
async fn write_loop<W: AsyncWrite + Unpin>(
    writer: W,
    mut receiver: mpsc::Receiver<Frame>,
    mut finish: oneshot::Receiver<()>,
) -> io::Result<()> {
    let mut writer = BufWriter::with_capacity(64 * 1024, writer);
    loop {
        let frame = tokio::select! {
            biased;
            _ = &mut finish => {
                // Nothing more is taken: what is queued is written below.
                receiver.close();
                None
            }
            frame = receiver.recv() => frame,
        };
        let Some(frame) = frame else { break };
        write_frame(&mut writer, frame).await?;
        while let Ok(frame) = receiver.try_recv() {
            write_frame(&mut writer, frame).await?;
        }
        writer.flush().await?;
    }
    while let Ok(frame) = receiver.try_recv() {
        write_frame(&mut writer, frame).await?;
    }
    writer.flush().await
}

async fn write_frame<W: AsyncWrite + Unpin>(writer: &mut W, frame: Frame) -> io::Result<()> {
    match frame {
        Frame::Message(message) => {
            writer.write_all(&message).await?;
            writer.write_all(b"\n").await
        }
        // A line stream needs no keep-alive.
        Frame::KeepAlive => Ok(()),
    }
}

/// Tells a handshake peer (once initialized) that a list changed:
/// `method` at each change of `changes`.
async fn announce_list_changes(
    mut changes: tokio::sync::watch::Receiver<u64>,
    method: &'static str,
    session: Arc<Session>,
    outbox: Outbox,
) {
    while changes.changed().await.is_ok() {
        if session.is_initialized() && !outbox.notification(method, &serde_json::json!({})).await {
            return;
        }
    }
}

/// Tells a handshake peer of the resource changes it gets, and of the
/// completion of URL-mode elicitations it was sent (`notices.rs`).
async fn announce_changes(shared: Arc<Shared>, session: Arc<Session>, outbox: Outbox) {
    let mut changes = shared.resource_events.watch();
    let mut completions = Some(shared.url_elicitations.watch());
    loop {
        let notices = tokio::select! {
            change = notices::next_change(&mut changes) => match change {
                Some(change) => notices::for_session(&shared, &session, &change),
                None => return,
            },
            completed = notices::next_completion(&mut completions) => {
                notices::elicitation_completed(&session, &completed).into_iter().collect()
            }
        };
        for (method, params) in notices {
            if !outbox.notification(method, &params).await {
                return;
            }
        }
    }
}

impl Connection {
    /// Handles one message (a batch, where the session's revision has them);
    /// false when the output is gone.
    async fn handle(&mut self, bytes: &[u8]) -> bool {
        if toolshape_protocol::is_batch(bytes) && self.takes_batches() {
            return self.batch(bytes).await;
        }
        let reply = self.outbox.clone();
        self.handle_one(bytes, &reply, false).await
    }

    /// Whether the session's revision has JSON-RPC batches (2025-03-26).
    fn takes_batches(&self) -> bool {
        self.session
            .handshake()
            .is_some_and(ProtocolVersion::allows_batches)
    }

    /// Handles one message (of a batch: `in_batch`), its answer (if it gets
    /// one) sent to `reply`; false when the output is gone.
    async fn handle_one(&mut self, bytes: &[u8], reply: &Outbox, in_batch: bool) -> bool {
        match toolshape_protocol::classify(bytes) {
            Incoming::Request(request) => {
                match ParsedRequest::parse(request, &self.shared.registry) {
                    Ok(request)
                        if in_batch && matches!(request.body, KnownRequest::Initialize(_)) =>
                    {
                        let error = dispatch::initialize_in_batch();
                        reply.error(Some(&request.id), &error).await
                    }
                    Ok(request) => self.request(request, reply).await,
                    Err(unparsable) => reply.error(Some(&unparsable.id), &unparsable.error).await,
                }
            }
            Incoming::Notification(notification) => {
                if let Some(cancelled) =
                    dispatch::notification(&self.session, &self.in_flight, &notification)
                {
                    self.listens.cancel(&cancelled);
                }
                if self.told_client != Told::Ready && self.session.is_initialized() {
                    self.tell_client_ready();
                }
                if notification.method == methods::ROOTS_LIST_CHANGED
                    && let Some(client) = &self.shared.connected_client
                {
                    client.roots_changed();
                }
                true
            }
            Incoming::Response(response) => {
                if !self.session.requests.resolve(response) {
                    tracing::debug!("ignored a response to no request of ours");
                }
                true
            }
            Incoming::Invalid { id, error } => reply.error(id.as_ref(), &error).await,
        }
    }

    /// Handles a message over the size limit, skipped unread: an answer to
    /// one of this server's requests fails that request (an answer is never
    /// answered); anything else gets an error naming the limit, with the
    /// message's id when it came early enough.
    async fn too_long(&mut self, leading: Leading) -> bool {
        let limit = self.shared.options.max_message_bytes;
        tracing::warn!(limit, kind = ?leading.kind, "skipped a message over the size limit");
        if super::asking::over_long_answer(Some(&self.session.requests), &leading, limit) {
            return true;
        }
        let error = ErrorObject::invalid_request(format!("message larger than {limit} bytes"));
        self.outbox.error(leading.id.as_ref(), &error).await
    }

    /// Tells the server's [`ConnectedClient`](super::ConnectedClient), if
    /// it has one, that this connection's client can be asked outside its
    /// requests: it finished its handshake.
    fn tell_client_ready(&mut self) {
        let Some(client) = &self.shared.connected_client else {
            return;
        };
        self.told_client = Told::Ready;
        let asking = super::asking::over_session(
            self.session.client_capabilities(),
            self.session
                .handshake()
                .unwrap_or(ProtocolVersion::V2025_11_25),
            Arc::clone(&self.session.requests),
            Some(self.outbox.clone()),
            self.shared.options.ask_timeout,
        );
        let context = crate::tool::ToolContext::default()
            .with_caller(self.session.caller().cloned())
            .with_asking(Some(asking.context));
        client.ready(self.number, context);
    }

    /// Serves one request, its answer sent to `reply`; false when the
    /// output is gone.
    async fn request(&mut self, request: ParsedRequest, reply: &Outbox) -> bool {
        if self.told_client == Told::Nothing
            && request.meta.protocol_version.is_some()
            && let Some(client) = &self.shared.connected_client
        {
            // A 2026-07-28 request: its client takes no request of ours
            // outside its own.
            self.told_client = Told::Unaskable;
            client.unaskable(self.number);
        }
        if let KnownRequest::Listen(params) = &request.body {
            return self.listen(&request, params, reply).await;
        }
        let call = match dispatch::route(&self.shared, &self.session, request) {
            Step::Answer(answer) => return reply.send(answer).await,
            Step::Call(call) => call,
        };
        let (cancelled, ticket) = match self.in_flight.begin(&call.id) {
            Ok(begun) => begun,
            Err(error) => return reply.error(Some(&call.id), &error).await,
        };
        let (shared, in_flight, outbox, reply) = (
            Arc::clone(&self.shared),
            Arc::clone(&self.in_flight),
            self.outbox.clone(),
            reply.clone(),
        );
        let mut running = Box::pin(async move {
            let id = call.id.clone();
            let answer = call.run(&shared, Some(&outbox), cancelled).await;
            // Its id is free again before the client sees the answer; a
            // connection that stopped meanwhile answered it already.
            if in_flight.finish(&id, ticket)
                && let Some(answer) = answer
            {
                reply.send(answer.body).await;
            }
        });
        // Most calls finish at their first poll: those need no task of their
        // own. The rest go on concurrently.
        let done =
            std::future::poll_fn(|cx| std::task::Poll::Ready(running.as_mut().poll(cx).is_ready()))
                .await;
        if !done {
            self.calls.spawn(running);
        }
        true
    }

    /// `subscriptions/listen`: a 2026-07-28 request only (the handshake
    /// revisions have no such method).
    async fn listen(
        &mut self,
        request: &ParsedRequest,
        params: &ListenParams,
        reply: &Outbox,
    ) -> bool {
        let stateless = self
            .session
            .revision(&request.meta)
            .map(ProtocolVersion::is_stateless);
        // `revision` has checked the 2026-07-28 `_meta` (its capabilities).
        let opened = match stateless {
            // In flight like a call: its id is not reused while it is open,
            // and a cancellation names it.
            Ok(true) => match self.in_flight.begin(&request.id) {
                Ok((_, ticket)) => {
                    let opened = self
                        .listens
                        .open(&self.shared, request.id.clone(), params, &self.outbox)
                        .await;
                    if !matches!(opened, Ok(true)) {
                        self.in_flight.finish(&request.id, ticket);
                    }
                    opened
                }
                Err(error) => Err(error),
            },
            Ok(false) => Err(ErrorObject::method_not_found(request.body.method())),
            Err(error) => Err(error),
        };
        match opened {
            Ok(open) => open,
            Err(error) => reply.error(Some(&request.id), &error).await,
        }
    }
}
