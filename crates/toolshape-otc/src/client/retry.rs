//! Retrying failed calls the server says may be retried (`can_retry`),
//! after the delay it asks for (`retry_after_ms`): off by default, bounded.

use std::time::Duration;

/// When to retry a failed call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct RetryPolicy {
    /// Most attempts in all (1: never retry).
    pub max_attempts: u32,
    /// The wait when the server gives no `retry_after_ms`.
    pub default_delay: Duration,
    /// The longest wait, whatever the server asks.
    pub max_delay: Duration,
}

impl Default for RetryPolicy {
    /// Never retry.
    fn default() -> Self {
        RetryPolicy {
            max_attempts: 1,
            default_delay: Duration::from_millis(250),
            max_delay: Duration::from_secs(10),
        }
    }
}

impl RetryPolicy {
    /// Never retry (the default).
    pub fn never() -> Self {
        RetryPolicy::default()
    }

    /// Up to `max_attempts` attempts in all (at most 10).
    pub fn attempts(max_attempts: u32) -> Self {
        RetryPolicy {
            max_attempts: max_attempts.clamp(1, 10),
            ..RetryPolicy::default()
        }
    }

    /// Sets the longest wait.
    #[must_use]
    pub fn max_delay(mut self, delay: Duration) -> Self {
        self.max_delay = delay;
        self
    }

    /// How long to wait before the next attempt.
    pub(crate) fn delay(&self, retry_after_ms: Option<u64>) -> Duration {
        retry_after_ms
            .map_or(self.default_delay, Duration::from_millis)
            .min(self.max_delay)
    }
}
