//! [`ConnectedClient`]: the client of a server's stdio connection, for
//! asking it outside any request (a gateway passes on the questions its own
//! upstream asks outside any call: roots right after the handshake).

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;

use crate::tool::ToolContext;

/// Where the stdio connection's client stands, and which connection said so.
#[derive(Debug, Clone, Default)]
enum Standing {
    /// No client yet, or one still in its handshake.
    #[default]
    Waiting,
    /// A handshake client, initialized: it can be asked.
    Ready(u64, ToolContext),
    /// A 2026-07-28 client (no request of the server's outside its own
    /// requests), or the connection ended.
    Unaskable(u64),
}

impl Standing {
    /// The connection that said so.
    fn told_by(&self) -> Option<u64> {
        match self {
            Standing::Waiting => None,
            Standing::Ready(connection, _) | Standing::Unaskable(connection) => Some(*connection),
        }
    }
}

/// The client of a server's stdio connection (or of the latest connection
/// it serves with [`Server::serve`](crate::Server::serve)), for asking it
/// outside any request: its roots, the user, its model, with the
/// [`ToolContext`] [`ConnectedClient::connected`] gives (`roots`,
/// `elicit_form`, `sample`...), within the server's `ask_timeout`.
///
/// Only a handshake-revision client (2025-11-25 and before) can be asked
/// so, once it has sent `notifications/initialized`: a 2026-07-28 client
/// takes questions only in the results of its own requests. Give the same
/// handle to [`ServerBuilder::connected_client`](crate::ServerBuilder::connected_client);
/// cheap to clone.
#[derive(Debug, Clone)]
pub struct ConnectedClient {
    standing: Arc<watch::Sender<Standing>>,
    /// Numbers the connections that tell it.
    connections: Arc<std::sync::atomic::AtomicU64>,
    /// Counts the client's `notifications/roots/list_changed`.
    roots_changes: Arc<watch::Sender<u64>>,
}

impl Default for ConnectedClient {
    fn default() -> Self {
        ConnectedClient::new()
    }
}

impl ConnectedClient {
    /// A handle no connection has told of yet.
    pub fn new() -> Self {
        ConnectedClient {
            standing: Arc::new(watch::Sender::new(Standing::Waiting)),
            connections: Arc::default(),
            roots_changes: Arc::new(watch::Sender::new(0)),
        }
    }

    /// The client, once it can be asked, waiting for its handshake at most
    /// `wait`; `None` when none came in time, when it speaks 2026-07-28, or
    /// when its connection has ended. The context keeps the connection's
    /// output open while it is held: drop it once the questions are asked.
    pub async fn connected(&self, wait: Duration) -> Option<ToolContext> {
        let mut standing = self.standing.subscribe();
        let settled = tokio::time::timeout(
            wait,
            standing.wait_for(|standing| !matches!(standing, Standing::Waiting)),
        )
        .await;
        match settled {
            Ok(Ok(standing)) => match &*standing {
                Standing::Ready(_, context) => Some(context.clone()),
                Standing::Waiting | Standing::Unaskable(_) => None,
            },
            _ => None,
        }
    }

    /// A watch whose value counts the client's
    /// `notifications/roots/list_changed` (a handshake client's roots
    /// changed): `changed().await` resolves at the next one; ask for the
    /// roots again then.
    pub fn roots_changes(&self) -> watch::Receiver<u64> {
        self.roots_changes.subscribe()
    }

    /// The client said its roots changed.
    pub(crate) fn roots_changed(&self) {
        self.roots_changes.send_modify(|count| *count += 1);
    }

    /// A number for a new connection to tell with.
    pub(crate) fn connection(&self) -> u64 {
        self.connections
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    }

    /// The client of `connection` finished its handshake: `context` asks
    /// it (until the connection ends: whoever keeps the context keeps the
    /// connection's output open, so keep it no longer than a question).
    pub(crate) fn ready(&self, connection: u64, context: ToolContext) {
        self.standing
            .send_replace(Standing::Ready(connection, context));
    }

    /// The client of `connection` cannot be asked outside its requests (it
    /// speaks 2026-07-28).
    pub(crate) fn unaskable(&self, connection: u64) {
        self.standing.send_replace(Standing::Unaskable(connection));
    }

    /// `connection` ended: its client can no longer be asked, unless a
    /// later connection has told otherwise since.
    pub(crate) fn ended(&self, connection: u64) {
        self.standing.send_if_modified(|standing| {
            let ours = standing.told_by().is_none_or(|told| told == connection);
            if ours {
                *standing = Standing::Unaskable(connection);
            }
            ours
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn only_the_connection_that_told_can_take_it_back() {
        let client = ConnectedClient::new();
        let (older, newer) = (client.connection(), client.connection());
        let now = Duration::ZERO;
        client.ready(newer, ToolContext::default());
        // An older connection ending changes nothing.
        client.ended(older);
        assert!(client.connected(now).await.is_some());
        // The newer one ending does.
        client.ended(newer);
        assert!(client.connected(now).await.is_none());
        // A connection ending before any told: nobody waits for it.
        let waiting = ConnectedClient::new();
        let only = waiting.connection();
        waiting.ended(only);
        assert!(waiting.connected(Duration::from_secs(5)).await.is_none());
        // A 2026-07-28 client, then its handshake: ready after all.
        let probing = ConnectedClient::new();
        let connection = probing.connection();
        probing.unaskable(connection);
        assert!(probing.connected(now).await.is_none());
        probing.ready(connection, ToolContext::default());
        assert!(probing.connected(now).await.is_some());
    }
}
