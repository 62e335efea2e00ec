//! The server behind the proxy: one or more connections to it (child
//! processes over stdio, or Streamable HTTP clients), each reconnected with
//! backoff when it closes.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use tokio::sync::{broadcast, watch};
use toolshape::client::{Client, ClientBuilder, ClientError, ServerCommand};
use toolshape::protocol::LoggingLevel;
use toolshape::tool::UrlElicitations;

use crate::reach::Reach;

/// The first pause before reconnecting after a quick failure.
const FIRST_BACKOFF: Duration = Duration::from_millis(100);
/// The longest pause between reconnection attempts.
const MAX_BACKOFF: Duration = Duration::from_secs(10);
/// A connection that lived this long before closing counts as healthy: the
/// next reconnection does not wait.
const HEALTHY_AFTER: Duration = Duration::from_secs(10);

/// Where the upstream server is.
#[derive(Debug, Clone)]
pub enum UpstreamSpec {
    /// A command, started as a child process and spoken to over its stdin and stdout.
    Command(ServerCommand),
    /// A Streamable HTTP endpoint.
    Url(String),
}

/// The upstream server: `n` connections, calls spread round-robin.
pub(crate) struct Upstream {
    spec: UpstreamSpec,
    builder: ClientBuilder,
    slots: Vec<Slot>,
    log_level: Option<LoggingLevel>,
    /// Where the completions of the upstream's URL-mode elicitations are
    /// passed on, from every connection.
    elicitations: UrlElicitations,
    /// The proxy's sole client's roots changes, passed on to every
    /// connection (`notifications/roots/list_changed`), when its roots
    /// questions go to that client.
    roots_changes: Option<watch::Receiver<u64>>,
    next: AtomicUsize,
    restarts: AtomicU64,
    /// An HTTP upstream's reachability (`None` for a command's).
    reach: Option<Arc<Reach>>,
}

impl std::fmt::Debug for Upstream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Upstream")
            .field("spec", &self.spec)
            .field("connections", &self.slots.len())
            .finish_non_exhaustive()
    }
}

struct Slot {
    live: Mutex<Option<Client>>,
    reconnect: tokio::sync::Mutex<Backoff>,
    /// The task passing the sole client's roots changes to this slot's
    /// connection (it holds the connection: ended with it, or with the
    /// upstream).
    roots_relay: Mutex<Option<tokio::task::AbortHandle>>,
}

impl Slot {
    /// Ends the roots relay to the previous connection, if any, and keeps `next`.
    fn relay_roots(&self, next: Option<tokio::task::AbortHandle>) {
        let previous = std::mem::replace(
            &mut *self
                .roots_relay
                .lock()
                .unwrap_or_else(PoisonError::into_inner),
            next,
        );
        if let Some(previous) = previous {
            previous.abort();
        }
    }
}

impl Drop for Upstream {
    fn drop(&mut self) {
        for slot in &self.slots {
            slot.relay_roots(None);
        }
    }
}

#[derive(Default)]
struct Backoff {
    /// Quick failures in a row.
    failures: u32,
    connected_at: Option<Instant>,
    not_before: Option<Instant>,
}

impl Backoff {
    fn pause(&self) -> Duration {
        match self.failures {
            0 => Duration::ZERO,
            n => FIRST_BACKOFF
                .saturating_mul(1 << (n - 1).min(16))
                .min(MAX_BACKOFF),
        }
    }

    /// A connection closed or could not be made: back off if it was quick.
    fn failed(&mut self) {
        let healthy = self
            .connected_at
            .take()
            .is_some_and(|at| at.elapsed() >= HEALTHY_AFTER);
        self.failures = if healthy { 0 } else { self.failures + 1 };
        self.not_before = Some(Instant::now() + self.pause());
    }
}

impl Upstream {
    /// Connects the first connection (so that a wrong command fails at
    /// once); the others connect on first use.
    pub(crate) async fn connect(
        spec: UpstreamSpec,
        builder: ClientBuilder,
        connections: usize,
        log_level: Option<LoggingLevel>,
        elicitations: UrlElicitations,
        roots_changes: Option<watch::Receiver<u64>>,
    ) -> Result<Upstream, ClientError> {
        let slots = (0..connections.max(1))
            .map(|_| Slot {
                live: Mutex::new(None),
                reconnect: tokio::sync::Mutex::new(Backoff::default()),
                roots_relay: Mutex::new(None),
            })
            .collect();
        let reach = matches!(spec, UpstreamSpec::Url(_)).then(Arc::default);
        let upstream = Upstream {
            reach,
            spec,
            builder,
            slots,
            log_level,
            elicitations,
            roots_changes,
            next: AtomicUsize::new(0),
            restarts: AtomicU64::new(0),
        };
        upstream.client_of(0).await?;
        Ok(upstream)
    }

    /// Whether the first connection, the one whose tools the proxy
    /// mirrors, is open. While it is not, the proxy is connecting again
    /// (with backoff, `mirror::follow`).
    pub(crate) fn is_connected(&self) -> bool {
        self.slots.first().is_some_and(|slot| live(slot).is_some())
            && !self.reach.as_ref().is_some_and(|reach| reach.is_down())
    }

    /// How many times a connection was made again after closing, or an
    /// HTTP upstream reached again after it could not be.
    pub(crate) fn restarts(&self) -> u64 {
        self.restarts.load(Ordering::Relaxed)
            + self.reach.as_ref().map_or(0, |reach| reach.recoveries())
    }

    /// After a request through `client` ended with `error` (or none): for
    /// an HTTP upstream, whether it could be reached (see [`Reach`]).
    pub(crate) fn observe(&self, client: &Client, error: Option<&ClientError>) {
        if let Some(reach) = &self.reach {
            reach.observe(client, error);
        }
    }

    /// The first connection: the one whose tool list the proxy mirrors.
    pub(crate) async fn primary(&self) -> Result<Client, ClientError> {
        self.client_of(0).await
    }

    /// A connection for the next call (round-robin), reconnected if closed.
    pub(crate) async fn client(&self) -> Result<Client, ClientError> {
        let index = self.next.fetch_add(1, Ordering::Relaxed) % self.slots.len();
        self.client_of(index).await
    }

    async fn client_of(&self, index: usize) -> Result<Client, ClientError> {
        let slot = &self.slots[index % self.slots.len()];
        if let Some(client) = live(slot) {
            return Ok(client);
        }
        let mut backoff = slot.reconnect.lock().await;
        // Someone else may have reconnected while this call waited.
        if let Some(client) = live(slot) {
            return Ok(client);
        }
        let closed = slot
            .live
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(closed) = closed {
            backoff.failed();
            self.restarts.fetch_add(1, Ordering::Relaxed);
            tracing::warn!(
                connection = index,
                pause_ms = backoff.pause().as_millis() as u64,
                stderr = ?closed.stderr_tail(),
                "the upstream connection closed; reconnecting"
            );
            // Reap the child (it has exited, or closed its output).
            tokio::spawn(async move {
                closed.close(Duration::from_secs(1)).await;
            });
        }
        if let Some(not_before) = backoff.not_before {
            tokio::time::sleep_until(not_before.into()).await;
        }
        let connected = match &self.spec {
            UpstreamSpec::Command(command) => {
                self.builder.clone().connect_stdio(command.clone()).await
            }
            UpstreamSpec::Url(url) => self.builder.clone().connect_http(url).await,
        };
        match connected {
            Ok(client) => {
                tokio::spawn(relay_completions(
                    client.elicitation_completions(),
                    self.elicitations.clone(),
                ));
                if let Some(changes) = &self.roots_changes {
                    let relay = tokio::spawn(relay_roots_changes(changes.clone(), client.clone()));
                    slot.relay_roots(Some(relay.abort_handle()));
                }
                self.ask_for_logs(&client, index).await;
                backoff.connected_at = Some(Instant::now());
                backoff.not_before = None;
                *slot.live.lock().unwrap_or_else(PoisonError::into_inner) = Some(client.clone());
                Ok(client)
            }
            Err(error) => {
                backoff.failed();
                tracing::warn!(connection = index, %error, "cannot connect to the upstream server");
                Err(error)
            }
        }
    }

    /// Asks a handshake-revision upstream that logs for its messages.
    async fn ask_for_logs(&self, client: &Client, index: usize) {
        let Some(level) = self.log_level else { return };
        if client.negotiated().capabilities.logging.is_none() {
            return;
        }
        if let Err(error) = client.set_log_level(level).await {
            tracing::warn!(connection = index, %error, "the upstream refused logging/setLevel");
        }
    }

    /// Closes every connection (children get `grace` to exit).
    pub(crate) async fn close(&self, grace: Duration) {
        for slot in &self.slots {
            let client = slot
                .live
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .take();
            if let Some(client) = client {
                client.close(grace).await;
            }
        }
    }
}

/// Passes on the completions of URL-mode elicitations one connection
/// announces (`notifications/elicitation/complete`), to the client session
/// each was relayed to, until the connection is gone.
async fn relay_completions(
    mut completions: broadcast::Receiver<String>,
    elicitations: UrlElicitations,
) {
    loop {
        match completions.recv().await {
            Ok(elicitation_id) => elicitations.complete(&elicitation_id),
            Err(broadcast::error::RecvError::Lagged(missed)) => {
                tracing::warn!(
                    missed,
                    "elicitation completions from the upstream came too fast; some were not passed on"
                );
            }
            Err(broadcast::error::RecvError::Closed) => return,
        }
    }
}

/// Tells one connection each time the sole client's roots change (from
/// now on), until either is gone.
async fn relay_roots_changes(mut changes: watch::Receiver<u64>, client: Client) {
    changes.borrow_and_update();
    loop {
        tokio::select! {
            changed = changes.changed() => if changed.is_err() {
                return;
            },
            () = client.closed() => return,
        }
        if let Err(error) = client.notify_roots_changed() {
            tracing::debug!(%error, "the roots change could not be passed on");
            return;
        }
    }
}

/// The slot's connection, when it is open.
fn live(slot: &Slot) -> Option<Client> {
    slot.live
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .as_ref()
        .filter(|client| !client.is_closed())
        .cloned()
}
