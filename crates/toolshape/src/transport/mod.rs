//! Transports: how messages travel. Stdio frames them as newline-delimited
//! JSON; Streamable HTTP carries one per POST, answered as JSON or as an SSE
//! stream. Writes to a peer that stopped reading give up after a while
//! ([`stall`]).

pub(crate) mod lines;
#[cfg(any(feature = "server-http", feature = "client-http"))]
pub(crate) mod sse;
pub(crate) mod stall;
pub(crate) mod stdio;

/// The instant `limit` from now, or about 30 years from now when `limit` is
/// longer (`Duration::MAX` for "no limit"): adding it would overflow the
/// clock and panic.
pub(crate) fn deadline_after(limit: std::time::Duration) -> tokio::time::Instant {
    let now = tokio::time::Instant::now();
    now.checked_add(limit)
        .unwrap_or_else(|| now + std::time::Duration::from_secs(30 * 365 * 24 * 60 * 60))
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    #[test]
    fn a_deadline_past_the_clock_is_far_off_not_a_panic() {
        let now = tokio::time::Instant::now();
        assert!(super::deadline_after(Duration::MAX) > now + Duration::from_secs(1_000_000));
        let soon = super::deadline_after(Duration::from_secs(5));
        assert!(soon >= now + Duration::from_secs(5));
    }
}
