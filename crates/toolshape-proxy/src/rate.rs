//! Per-client rate limits: each caller (as the front names it: its IP
//! address over HTTP and OTC, `stdio` on the stdio front) has its own
//! allowance of calls (GCRA, from `governor`), refilled at the set rate.

use std::num::NonZeroU32;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use governor::clock::{Clock, DefaultClock};
use governor::state::keyed::DefaultKeyedStateStore;
use governor::{Quota, RateLimiter};

/// Most callers tracked at once. Past it, callers share one allowance
/// until the tracked ones are idle again (their state is then dropped).
const MAX_CALLERS: usize = 10_000;
/// How often a full table is swept for idle callers, at most.
const SWEEP_EVERY: Duration = Duration::from_secs(1);

/// How many calls one client may make: `per_second` on average, up to
/// `burst` at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateLimit {
    /// Calls per second, on average.
    pub per_second: NonZeroU32,
    /// Calls allowed at once after a pause.
    pub burst: NonZeroU32,
}

/// The allowance of every caller.
pub(crate) struct CallerLimits {
    limit: RateLimit,
    limiter: RateLimiter<Arc<str>, DefaultKeyedStateStore<Arc<str>>, DefaultClock>,
    clock: DefaultClock,
    /// One key for callers without a name, and for any past `MAX_CALLERS`.
    shared: Arc<str>,
    started: Instant,
    /// When the table was last swept, in ms since `started`.
    swept_at_ms: AtomicU64,
}

impl std::fmt::Debug for CallerLimits {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallerLimits")
            .field("callers", &self.limiter.len())
            .finish_non_exhaustive()
    }
}

impl CallerLimits {
    pub(crate) fn new(limit: RateLimit) -> Self {
        let quota = Quota::per_second(limit.per_second).allow_burst(limit.burst);
        CallerLimits {
            limit,
            limiter: RateLimiter::keyed(quota),
            clock: DefaultClock::default(),
            shared: Arc::from(""),
            started: Instant::now(),
            swept_at_ms: AtomicU64::new(0),
        }
    }

    /// The limit each caller has.
    pub(crate) fn limit(&self) -> RateLimit {
        self.limit
    }

    /// Takes one call from `caller`'s allowance, or says how long it must
    /// wait for the next.
    pub(crate) fn take(&self, caller: Option<&str>) -> Result<(), Duration> {
        let mut key = caller.map_or_else(|| Arc::clone(&self.shared), Arc::from);
        if self.limiter.len() >= MAX_CALLERS {
            self.sweep();
            if self.limiter.len() >= MAX_CALLERS {
                key = Arc::clone(&self.shared);
            }
        }
        self.limiter
            .check_key(&key)
            .map_err(|not_until| not_until.wait_time_from(self.clock.now()))
    }

    /// Drops the state of idle callers, at most once per `SWEEP_EVERY`.
    fn sweep(&self) {
        let now = u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX);
        let last = self.swept_at_ms.load(Ordering::Relaxed);
        let due = now.saturating_sub(last) >= SWEEP_EVERY.as_millis() as u64;
        if due
            && self
                .swept_at_ms
                .compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
        {
            self.limiter.retain_recent();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(per_second: u32, burst: u32) -> CallerLimits {
        CallerLimits::new(RateLimit {
            per_second: NonZeroU32::new(per_second).unwrap_or(NonZeroU32::MIN),
            burst: NonZeroU32::new(burst).unwrap_or(NonZeroU32::MIN),
        })
    }

    #[test]
    fn each_caller_has_its_own_allowance() {
        let limits = limits(1, 2);
        assert!(limits.take(Some("10.0.0.1")).is_ok());
        assert!(limits.take(Some("10.0.0.1")).is_ok());
        let wait = limits.take(Some("10.0.0.1"));
        assert!(
            wait.is_err_and(|wait| wait > Duration::ZERO && wait <= Duration::from_secs(1)),
            "the third call in a burst of two waits up to a second"
        );
        assert!(
            limits.take(Some("10.0.0.2")).is_ok(),
            "another caller is not held back"
        );
        assert!(limits.take(None).is_ok());
    }

    #[test]
    fn past_the_table_bound_new_callers_share_one_allowance() {
        let limits = limits(1, 1);
        for n in 0..MAX_CALLERS {
            assert!(limits.take(Some(&format!("caller-{n}"))).is_ok());
        }
        assert!(
            limits.take(Some("one-more")).is_ok(),
            "the shared allowance"
        );
        assert!(
            limits.take(Some("and-another")).is_err(),
            "shares the allowance the last one used"
        );
        assert!(limits.limiter.len() <= MAX_CALLERS + 1);
    }
}
