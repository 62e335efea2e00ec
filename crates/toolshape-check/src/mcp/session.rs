//! One connection to the server under check, with every message it sends
//! kept (bounded) until taken.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;

use serde_json::{Map, Value};
use toolshape::CallOptions;
use toolshape::client::{
    Client, ClientError, ClientErrorKind, ClientOptions, Negotiation, ToolResult,
};
use toolshape_protocol::ProtocolVersion;

use crate::finding::{Document, Finding, Location};
use crate::options::{Options, Target};
use crate::rules::Rule;

/// Most bytes of messages kept between two takes (each counted with
/// [`KEPT_OVERHEAD`]), and most messages; past either, messages are
/// counted but not kept (64 MiB of two-byte lines would otherwise be 32
/// million kept messages, and as many findings).
const MAX_KEPT_BYTES: usize = 64 * 1024 * 1024;
const MAX_KEPT_MESSAGES: usize = 100_000;
/// What keeping one message costs besides its bytes, about.
const KEPT_OVERHEAD: usize = 64;

#[derive(Debug, Default)]
struct Kept {
    messages: Vec<Vec<u8>>,
    bytes: usize,
    dropped: usize,
}

/// The messages received and not yet taken.
#[derive(Debug, Default)]
pub(crate) struct Inbox {
    kept: Mutex<Kept>,
}

impl Inbox {
    fn push(&self, bytes: &[u8]) {
        let mut kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
        let cost = bytes.len() + KEPT_OVERHEAD;
        if kept.bytes + cost > MAX_KEPT_BYTES || kept.messages.len() >= MAX_KEPT_MESSAGES {
            kept.dropped += 1;
            return;
        }
        kept.bytes += cost;
        kept.messages.push(bytes.to_vec());
    }

    /// Every message received since the last take, and how many were dropped.
    pub(crate) fn take(&self) -> (Vec<Vec<u8>>, usize) {
        let mut kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
        let taken = std::mem::take(&mut *kept);
        (taken.messages, taken.dropped)
    }

    /// As [`Inbox::take`], adding a `message-flood` finding (for `what`, on
    /// `version`) when messages were dropped: what they held went unchecked.
    pub(crate) fn take_noting(
        &self,
        what: &str,
        version: ProtocolVersion,
        findings: &mut Vec<Finding>,
    ) -> Vec<Vec<u8>> {
        let (messages, dropped) = self.take();
        if dropped > 0 {
            findings.push(flood(what, dropped).revision(Some(version)));
        }
        messages
    }
}

/// The finding for `dropped` messages not kept during `what`.
pub(crate) fn flood(what: &str, dropped: usize) -> Finding {
    Finding::new(
        Rule::MessageFlood,
        Location::new(Document::Message, ""),
        format!(
            "{what}: {dropped} more messages than the check keeps ({MAX_KEPT_MESSAGES} or \
             {} MiB) arrived; they were not checked, and the answer may have been among them",
            MAX_KEPT_BYTES / (1024 * 1024)
        ),
    )
}

/// What one call brought.
pub(crate) struct CallRecord {
    /// What the client made of it.
    pub(crate) outcome: Result<ToolResult, ClientError>,
    /// Every message the server sent meanwhile, as received (bounded).
    pub(crate) messages: Vec<Vec<u8>>,
    /// Messages past the bound, not kept.
    pub(crate) dropped: usize,
    /// The ids of the requests the client made for it (the call's is the
    /// last; a listing's may come before it).
    pub(crate) ids: std::ops::RangeInclusive<i64>,
}

/// A connected client and what it received.
#[derive(Debug)]
pub(crate) struct Session {
    pub(crate) client: Client,
    pub(crate) inbox: Arc<Inbox>,
}

/// Why a session could not be opened, with what the server sent meanwhile.
#[derive(Debug)]
pub(crate) struct OpenError {
    pub(crate) error: ClientError,
    pub(crate) messages: Vec<Vec<u8>>,
    /// Messages past the inbox's bound, not kept.
    pub(crate) dropped: usize,
}

impl Session {
    /// Connects to `target` under `negotiation`.
    pub(crate) async fn open(
        target: &Target,
        negotiation: Negotiation,
        options: &Options,
    ) -> Result<Session, OpenError> {
        let inbox = Arc::new(Inbox::default());
        let sink = Arc::clone(&inbox);
        let mut client_options = ClientOptions::default();
        client_options.request_timeout = options.request_timeout;
        client_options.probe_timeout = options.request_timeout.min(Duration::from_secs(10));
        client_options.max_message_bytes = options.max_message_bytes;
        let builder = Client::builder()
            .negotiation(negotiation)
            .options(client_options)
            .client_info("toolshape-check", env!("CARGO_PKG_VERSION"))
            .on_message(move |bytes| sink.push(bytes));
        let connected = match target {
            Target::Stdio { command, .. } => builder.connect_stdio(command.clone()).await,
            Target::Http(url) => builder.connect_http(url).await,
            Target::Otc(_) => Err(ClientError::from(
                toolshape::client::TransportError::Interrupted("an OTC target has no MCP session"),
            )),
        };
        match connected {
            Ok(client) => Ok(Session { client, inbox }),
            Err(error) => {
                let (messages, dropped) = inbox.take();
                Err(OpenError {
                    error,
                    messages,
                    dropped,
                })
            }
        }
    }

    /// The revision spoken.
    pub(crate) fn version(&self) -> ProtocolVersion {
        self.client.protocol_version()
    }

    /// Calls `tool` with `arguments`; returns the client's outcome, every
    /// message received meanwhile and how many more were not kept. The call
    /// is cancelled (and its outcome is a timeout) when `idle` passes without
    /// an answer or a progress report, or `longest` in all.
    pub(crate) async fn call(
        &self,
        tool: &str,
        arguments: &Map<String, Value>,
        idle: Duration,
        longest: Duration,
    ) -> CallRecord {
        let before = self.client.requests_issued();
        let (progress, mut reports) = mpsc::channel(64);
        let (cancel, cancelled) = oneshot::channel::<()>();
        let options = CallOptions::new()
            .timeout(longest.max(idle))
            .progress(progress)
            .cancel_on(cancelled);
        let call = self
            .client
            .call_tool_with(tool, Some(arguments.clone()), options);
        tokio::pin!(call);
        let idle = idle.min(crate::options::LONGEST);
        let mut deadline = Instant::now() + idle;
        let outcome = loop {
            tokio::select! {
                outcome = &mut call => break outcome,
                Some(_) = reports.recv() => deadline = Instant::now() + idle,
                () = tokio::time::sleep_until(deadline) => {
                    drop(cancel);
                    // The cancelled call ends at once; its outcome is a timeout.
                    let _ = (&mut call).await;
                    break Err(ClientErrorKind::Timeout(idle).into());
                }
            }
        };
        let (messages, dropped) = self.inbox.take();
        CallRecord {
            outcome,
            messages,
            dropped,
            ids: before + 1..=self.client.requests_issued(),
        }
    }

    /// Ends the connection (the server process is stopped if it lingers).
    pub(crate) async fn close(&self) {
        self.client.close(Duration::from_secs(2)).await;
    }

    /// The last lines of the server's stderr, when it is captured.
    pub(crate) fn stderr_excerpt(&self) -> String {
        let tail = self.client.stderr_tail();
        let start = tail.len().saturating_sub(5);
        let lines = tail.get(start..).unwrap_or_default().join(" | ");
        toolshape_protocol::text::excerpt(&lines, 400)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_inbox_keeps_a_bounded_number_of_messages_and_counts_the_rest() {
        let inbox = Inbox::default();
        for _ in 0..MAX_KEPT_MESSAGES + 5 {
            inbox.push(b"1\n");
        }
        let (kept, dropped) = inbox.take();
        assert_eq!((kept.len(), dropped), (MAX_KEPT_MESSAGES, 5));
        // Large ones by their bytes.
        let large = vec![b'x'; MAX_KEPT_BYTES / 2];
        for _ in 0..3 {
            inbox.push(&large);
        }
        let (kept, dropped) = inbox.take();
        assert_eq!((kept.len(), dropped), (1, 2));
    }

    #[test]
    fn messages_not_kept_are_an_error_finding() {
        let inbox = Inbox::default();
        let mut findings = Vec::new();
        inbox.push(b"1\n");
        let kept = inbox.take_noting("tools/list", ProtocolVersion::V2025_11_25, &mut findings);
        assert_eq!((kept.len(), findings.len()), (1, 0));
        for _ in 0..MAX_KEPT_MESSAGES + 3 {
            inbox.push(b"1\n");
        }
        let kept = inbox.take_noting("tools/list", ProtocolVersion::V2025_11_25, &mut findings);
        assert_eq!(kept.len(), MAX_KEPT_MESSAGES);
        assert_eq!(findings.len(), 1, "{findings:?}");
        let finding = &findings[0];
        assert_eq!(finding.rule, Rule::MessageFlood);
        assert_eq!(finding.severity, crate::rules::Severity::Error);
        assert!(
            finding.message.starts_with("tools/list: 3 more messages"),
            "{}",
            finding.message
        );
    }
}
