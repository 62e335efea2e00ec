//! Whether an HTTP upstream (`--url`) can be reached. Its client has no
//! connection to see close: a call that cannot reach the server marks it
//! down, and a probe (a ping, with backoff) marks it up again, so that a
//! load balancer that took the proxy out of service on its `/health` sees
//! it come back without a call.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

use toolshape::client::{Client, ClientError, ClientErrorKind};

/// The first pause before probing a server that could not be reached.
const FIRST_PROBE: Duration = Duration::from_millis(100);
/// The longest pause between probes.
const MAX_PROBE_PAUSE: Duration = Duration::from_secs(10);
/// How long one probe waits for its answer.
const PROBE_TIMEOUT: Duration = Duration::from_secs(5);

/// An HTTP upstream's reachability.
#[derive(Debug, Default)]
pub(crate) struct Reach {
    down: AtomicBool,
    /// A probe runs (one at a time).
    probing: AtomicBool,
    /// Times it was reached again after being down.
    recoveries: AtomicU64,
}

/// Whether `error` says the server could not be reached.
fn unreachable(error: &ClientError) -> bool {
    matches!(error.kind(), ClientErrorKind::Transport(transport) if transport.is_unreachable())
}

/// Whether `error` is a request's time running out: no answer, which
/// says nothing of whether the server can be reached (a call may be slow).
fn timed_out(error: &ClientError) -> bool {
    matches!(error.kind(), ClientErrorKind::Timeout(_))
}

impl Reach {
    /// Whether the last call (or probe) could not reach the server.
    pub(crate) fn is_down(&self) -> bool {
        self.down.load(Ordering::Acquire)
    }

    /// Times it was reached again after being down.
    pub(crate) fn recoveries(&self) -> u64 {
        self.recoveries.load(Ordering::Relaxed)
    }

    /// After a request through `client` that ended with `error` (or
    /// none): one that could not reach the server marks it down and starts
    /// a probe; any other marks it up.
    pub(crate) fn observe(self: &Arc<Self>, client: &Client, error: Option<&ClientError>) {
        match error {
            Some(error) if unreachable(error) => {
                if !self.down.swap(true, Ordering::AcqRel) {
                    tracing::warn!(%error, "the upstream server cannot be reached; probing it until it answers");
                }
                if !self.probing.swap(true, Ordering::AcqRel) {
                    tokio::spawn(probe(Arc::downgrade(self), client.clone()));
                }
            }
            Some(error) if timed_out(error) => {}
            _ => self.up(),
        }
    }

    fn up(&self) {
        if self.down.swap(false, Ordering::AcqRel) {
            self.recoveries.fetch_add(1, Ordering::Relaxed);
            tracing::info!("the upstream server answers again");
        }
    }
}

/// Pings the server with backoff until it answers (any answer: an error of
/// its own is an answer; none within [`PROBE_TIMEOUT`] is none), it is
/// marked up by a call, the client closes, or the upstream is gone (the
/// probe holds no more than a weak reference to it).
async fn probe(reach: Weak<Reach>, client: Client) {
    let mut pause = FIRST_PROBE;
    loop {
        tokio::time::sleep(pause).await;
        let Some(reach) = reach.upgrade() else { return };
        if reach.is_down() && !client.is_closed() {
            match client.ping(PROBE_TIMEOUT).await {
                Err(error) if unreachable(&error) || timed_out(&error) => {
                    pause = pause.saturating_mul(2).min(MAX_PROBE_PAUSE);
                }
                _ => reach.up(),
            }
            continue;
        }
        reach.probing.store(false, Ordering::Release);
        // Down again in the instant before: go on probing, unless another
        // probe took over.
        if !reach.is_down() || client.is_closed() || reach.probing.swap(true, Ordering::AcqRel) {
            return;
        }
        pause = FIRST_PROBE;
    }
}
