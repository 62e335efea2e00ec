//! The audit log: one JSON line per forwarded call (time, caller, tool,
//! duration, outcome, violation summary; arguments only when asked), written
//! by its own thread so that a slow disk never holds a call.

use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{SyncSender, TrySendError, sync_channel};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};

use crate::metrics::Outcome;
use crate::options::AuditTarget;

/// Records waiting to be written; past it, records are dropped and counted.
const QUEUE: usize = 4096;
/// The longest violation summary kept in a record, in characters.
const MAX_SUMMARY: usize = 1000;

/// One forwarded call, as the audit log tells it.
#[derive(Debug)]
pub(crate) struct Record<'a> {
    pub(crate) tool: &'a str,
    /// Who called, as the front names it (`ToolContext::caller`).
    pub(crate) client: Option<&'a str>,
    pub(crate) user: Option<&'a str>,
    pub(crate) took: Duration,
    pub(crate) outcome: Outcome,
    /// An invalid output's violations: where and which keyword, and as the
    /// validator words them (quoting values: kept only with the arguments).
    pub(crate) violations: Option<(&'a str, &'a str)>,
    pub(crate) arguments: &'a Value,
}

/// The audit log's writer.
#[derive(Debug)]
pub(crate) struct Audit {
    lines: SyncSender<String>,
    with_arguments: bool,
    dropped: AtomicU64,
}

impl Audit {
    /// Opens the target and starts the writer thread.
    pub(crate) fn start(target: &AuditTarget, with_arguments: bool) -> std::io::Result<Audit> {
        let mut sink: Box<dyn Write + Send> = match target {
            AuditTarget::Stderr => Box::new(std::io::stderr()),
            AuditTarget::File(path) => Box::new(
                std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(path)?,
            ),
        };
        let (lines, queue) = sync_channel::<String>(QUEUE);
        std::thread::Builder::new()
            .name("toolshape-proxy-audit".into())
            .spawn(move || {
                while let Ok(line) = queue.recv() {
                    let mut batch = line;
                    batch.push('\n');
                    // Whatever else is waiting goes in the same write.
                    while let Ok(more) = queue.try_recv() {
                        batch.push_str(&more);
                        batch.push('\n');
                    }
                    if let Err(error) = sink.write_all(batch.as_bytes()).and_then(|()| sink.flush())
                    {
                        tracing::error!(%error, "cannot write the audit log");
                    }
                }
            })?;
        Ok(Audit {
            lines,
            with_arguments,
            dropped: AtomicU64::new(0),
        })
    }

    /// Queues one record; never waits.
    pub(crate) fn record(&self, record: &Record<'_>) {
        let time_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |since| since.as_millis() as u64);
        let mut line = json!({
            "time_ms": time_ms,
            "tool": record.tool,
            "duration_ms": (record.took.as_secs_f64() * 1000.0 * 1000.0).round() / 1000.0,
            "outcome": record.outcome.label(),
        });
        if let Some(client) = record.client {
            line["client"] = json!(client);
        }
        if let Some(user) = record.user {
            line["user"] = json!(user);
        }
        if let Some((bare, quoting)) = record.violations {
            let violations = if self.with_arguments { quoting } else { bare };
            line["violations"] = json!(toolshape::protocol::text::excerpt(violations, MAX_SUMMARY));
        }
        if self.with_arguments {
            line["arguments"] = record.arguments.clone();
        } else {
            line["arguments_bytes"] = json!(record.arguments.to_string().len());
        }
        match self.lines.try_send(line.to_string()) {
            Ok(()) => {}
            Err(TrySendError::Full(_)) => {
                let dropped = self.dropped.fetch_add(1, Ordering::Relaxed) + 1;
                if dropped.is_power_of_two() {
                    tracing::warn!(dropped, "the audit log cannot keep up; records dropped");
                }
            }
            Err(TrySendError::Disconnected(_)) => {}
        }
    }
}
