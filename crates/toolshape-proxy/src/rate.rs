//! Per-client rate limits: each caller (as the front names it: its IP
//! address over HTTP and OTC, an IPv6 one by its /64 network, `stdio` on the
//! stdio front) has its own allowance of calls (GCRA, from `governor`),
//! refilled at the set rate.

use std::collections::HashMap;
use std::net::{IpAddr, Ipv6Addr};
use std::num::NonZeroU32;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use governor::clock::{Clock, DefaultClock};
use governor::{DefaultDirectRateLimiter, Quota, RateLimiter};

/// Most callers tracked at once. Past it, new callers share one allowance
/// until tracked ones are idle again (their state is then dropped); the
/// tracked ones keep theirs.
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
    quota: Quota,
    /// How long a caller's allowance takes to fill up again: idle that long,
    /// its state is that of a new caller, and can go.
    refill: Duration,
    clock: DefaultClock,
    table: Mutex<Table>,
    /// Callers without a name, and new ones while the table is full.
    shared: DefaultDirectRateLimiter,
}

/// The callers tracked, and when the table was last swept.
struct Table {
    callers: HashMap<Arc<str>, Tracked>,
    swept: Option<Instant>,
}

struct Tracked {
    allowance: DefaultDirectRateLimiter,
    last: Instant,
}

impl std::fmt::Debug for CallerLimits {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallerLimits")
            .field("limit", &self.limit)
            .finish_non_exhaustive()
    }
}

impl CallerLimits {
    pub(crate) fn new(limit: RateLimit) -> Self {
        let quota = Quota::per_second(limit.per_second).allow_burst(limit.burst);
        let refill = Duration::from_secs_f64(
            f64::from(limit.burst.get()) / f64::from(limit.per_second.get()),
        );
        CallerLimits {
            limit,
            quota,
            refill,
            clock: DefaultClock::default(),
            table: Mutex::new(Table {
                callers: HashMap::new(),
                swept: None,
            }),
            shared: RateLimiter::direct(quota),
        }
    }

    /// The limit each caller has.
    pub(crate) fn limit(&self) -> RateLimit {
        self.limit
    }

    /// Takes one call from `caller`'s allowance, or says how long it must
    /// wait for the next.
    pub(crate) fn take(&self, caller: Option<&str>) -> Result<(), Duration> {
        let checked = match caller {
            None => self.shared.check(),
            Some(caller) => {
                let key = network_of(caller);
                let mut table = self.table.lock().unwrap_or_else(PoisonError::into_inner);
                let now = Instant::now();
                let full = table.callers.len() >= MAX_CALLERS;
                if full && !table.callers.contains_key(key.as_ref()) {
                    self.sweep(&mut table, now);
                }
                let room = table.callers.len() < MAX_CALLERS;
                match table.callers.get_mut(key.as_ref()) {
                    Some(tracked) => {
                        tracked.last = now;
                        tracked.allowance.check()
                    }
                    None if room => {
                        let tracked = Tracked {
                            allowance: RateLimiter::direct(self.quota),
                            last: now,
                        };
                        let checked = tracked.allowance.check();
                        table.callers.insert(Arc::from(key.as_ref()), tracked);
                        checked
                    }
                    None => self.shared.check(),
                }
            }
        };
        checked.map_err(|not_until| not_until.wait_time_from(self.clock.now()))
    }

    /// Drops the callers idle long enough to have their whole allowance
    /// again, at most once per `SWEEP_EVERY`.
    fn sweep(&self, table: &mut Table, now: Instant) {
        if table
            .swept
            .is_some_and(|swept| now.duration_since(swept) < SWEEP_EVERY)
        {
            return;
        }
        table.swept = Some(now);
        let refill = self.refill;
        table
            .callers
            .retain(|_, tracked| now.duration_since(tracked.last) < refill);
    }
}

/// The key of `caller`'s allowance: an IPv6 address by its /64 network (one
/// host commonly holds a whole one), anything else as it is.
fn network_of(caller: &str) -> std::borrow::Cow<'_, str> {
    match caller.parse::<IpAddr>() {
        Ok(IpAddr::V6(address)) if address.to_ipv4_mapped().is_none() => {
            let network = u128::from(address) & !((1u128 << 64) - 1);
            std::borrow::Cow::Owned(format!("{}/64", Ipv6Addr::from(network)))
        }
        _ => std::borrow::Cow::Borrowed(caller),
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
    fn past_the_table_bound_new_callers_share_one_allowance_and_known_ones_keep_theirs() {
        let mut limits = limits(1, 2);
        // None idle long enough to go, however slowly the table fills.
        limits.refill = Duration::from_secs(3600);
        for n in 0..MAX_CALLERS {
            assert!(limits.take(Some(&format!("caller-{n}"))).is_ok());
        }
        assert!(
            limits.take(Some("one-more")).is_ok(),
            "the shared allowance"
        );
        assert!(limits.take(Some("and-another")).is_ok());
        assert!(
            limits.take(Some("a-third")).is_err(),
            "shares the allowance the last ones used"
        );
        // A tracked caller still has its own: one call of its two left.
        assert!(limits.take(Some("caller-7")).is_ok());
        assert!(limits.take(Some("caller-7")).is_err());
        let table = limits.table.lock().unwrap_or_else(PoisonError::into_inner);
        assert_eq!(table.callers.len(), MAX_CALLERS);
    }

    #[test]
    fn an_ipv6_caller_is_its_64_network() {
        assert_eq!(network_of("2001:db8:1:2:aaaa::1"), "2001:db8:1:2::/64");
        assert_eq!(
            network_of("2001:db8:1:2:bbbb::9"),
            network_of("2001:db8:1:2:aaaa::1")
        );
        assert_ne!(network_of("2001:db8:1:3::1"), network_of("2001:db8:1:2::1"));
        assert_eq!(network_of("10.0.0.1"), "10.0.0.1");
        assert_eq!(network_of("::ffff:10.0.0.1"), "::ffff:10.0.0.1");
        assert_eq!(network_of("stdio"), "stdio");
        let limits = limits(1, 1);
        assert!(limits.take(Some("2001:db8::1")).is_ok());
        assert!(limits.take(Some("2001:db8::2")).is_err(), "the same /64");
        assert!(limits.take(Some("2001:db8:0:1::1")).is_ok());
    }
}
