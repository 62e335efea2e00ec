//! What the proxy counts, per tool, rendered in the Prometheus text format
//! (`GET /metrics` on its HTTP fronts).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

/// How a forwarded call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// The upstream answered and its output was valid.
    Ok,
    /// The upstream tool reported an error (`isError`).
    ToolError,
    /// The output did not match the tool's `outputSchema` (or was missing).
    InvalidOutput,
    /// The upstream call took longer than its limit.
    Timeout,
    /// The upstream could not be reached, or answered with a protocol error.
    UpstreamError,
    /// The caller was over its rate limit: the upstream never saw the call.
    RateLimited,
    /// The caller went away or cancelled before the answer (the upstream
    /// told, if the call had reached it).
    Cancelled,
    /// One round of a 2026-07-28 call, ended to ask the client a question
    /// the upstream asked (the call runs again with the answer).
    InputRequired,
}

impl Outcome {
    const ALL: [Outcome; 8] = [
        Outcome::Ok,
        Outcome::ToolError,
        Outcome::InvalidOutput,
        Outcome::Timeout,
        Outcome::UpstreamError,
        Outcome::RateLimited,
        Outcome::Cancelled,
        Outcome::InputRequired,
    ];

    /// The label in metrics and audit records.
    pub fn label(self) -> &'static str {
        match self {
            Outcome::Ok => "ok",
            Outcome::ToolError => "tool_error",
            Outcome::InvalidOutput => "invalid_output",
            Outcome::Timeout => "timeout",
            Outcome::UpstreamError => "upstream_error",
            Outcome::RateLimited => "rate_limited",
            Outcome::Cancelled => "cancelled",
            Outcome::InputRequired => "input_required",
        }
    }
}

/// Upper bounds of the latency histogram's buckets, in seconds.
const BUCKETS: [f64; 12] = [
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0, 5.0, 30.0,
];

#[derive(Default)]
struct ToolStats {
    outcomes: [u64; Outcome::ALL.len()],
    /// Count per bucket (not cumulative; summed when rendered).
    buckets: [u64; BUCKETS.len()],
    sum_seconds: f64,
    count: u64,
}

/// Counters of forwarded calls by tool. Tool names come from the upstream's
/// listing, so the set is bounded by it.
#[derive(Default)]
pub(crate) struct Metrics {
    tools: Mutex<BTreeMap<String, ToolStats>>,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metrics").finish_non_exhaustive()
    }
}

impl Metrics {
    pub(crate) fn record(&self, tool: &str, outcome: Outcome, took: Duration) {
        let seconds = took.as_secs_f64();
        let mut tools = self.tools.lock().unwrap_or_else(PoisonError::into_inner);
        if !tools.contains_key(tool) {
            tools.insert(tool.to_owned(), ToolStats::default());
        }
        let Some(stats) = tools.get_mut(tool) else {
            return;
        };
        if let Some(at) = Outcome::ALL.iter().position(|o| *o == outcome) {
            stats.outcomes[at] += 1;
        }
        if let Some(at) = BUCKETS.iter().position(|bound| seconds <= *bound) {
            stats.buckets[at] += 1;
        }
        stats.sum_seconds += seconds;
        stats.count += 1;
    }

    /// The Prometheus text exposition of every counter.
    pub(crate) fn render(&self, restarts: u64) -> String {
        let tools = self.tools.lock().unwrap_or_else(PoisonError::into_inner);
        let mut out = String::new();
        out.push_str("# HELP toolshape_proxy_calls_total Tool calls forwarded upstream, by tool and outcome.\n");
        out.push_str("# TYPE toolshape_proxy_calls_total counter\n");
        for (tool, stats) in tools.iter() {
            for (outcome, count) in Outcome::ALL.iter().zip(stats.outcomes) {
                let _ = writeln!(
                    out,
                    "toolshape_proxy_calls_total{{tool=\"{}\",outcome=\"{}\"}} {count}",
                    escape(tool),
                    outcome.label()
                );
            }
        }
        out.push_str("# HELP toolshape_proxy_validation_failures_total Upstream outputs that failed their outputSchema, by tool.\n");
        out.push_str("# TYPE toolshape_proxy_validation_failures_total counter\n");
        let invalid = Outcome::ALL
            .iter()
            .position(|o| *o == Outcome::InvalidOutput)
            .unwrap_or(0);
        for (tool, stats) in tools.iter() {
            let _ = writeln!(
                out,
                "toolshape_proxy_validation_failures_total{{tool=\"{}\"}} {}",
                escape(tool),
                stats.outcomes[invalid]
            );
        }
        out.push_str("# HELP toolshape_proxy_call_duration_seconds Time from the call reaching the proxy to its answer, by tool.\n");
        out.push_str("# TYPE toolshape_proxy_call_duration_seconds histogram\n");
        for (tool, stats) in tools.iter() {
            let tool = escape(tool);
            let mut cumulative = 0;
            for (bound, count) in BUCKETS.iter().zip(stats.buckets) {
                cumulative += count;
                let _ = writeln!(
                    out,
                    "toolshape_proxy_call_duration_seconds_bucket{{tool=\"{tool}\",le=\"{bound}\"}} {cumulative}"
                );
            }
            let _ = writeln!(
                out,
                "toolshape_proxy_call_duration_seconds_bucket{{tool=\"{tool}\",le=\"+Inf\"}} {}",
                stats.count
            );
            let _ = writeln!(
                out,
                "toolshape_proxy_call_duration_seconds_sum{{tool=\"{tool}\"}} {}",
                stats.sum_seconds
            );
            let _ = writeln!(
                out,
                "toolshape_proxy_call_duration_seconds_count{{tool=\"{tool}\"}} {}",
                stats.count
            );
        }
        out.push_str("# HELP toolshape_proxy_upstream_restarts_total Upstream connections made again after closing.\n");
        out.push_str("# TYPE toolshape_proxy_upstream_restarts_total counter\n");
        let _ = writeln!(out, "toolshape_proxy_upstream_restarts_total {restarts}");
        out
    }
}

/// A label value as the text format wants it.
fn escape(value: &str) -> String {
    value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_render_as_cumulative_buckets() {
        let metrics = Metrics::default();
        metrics.record("read", Outcome::Ok, Duration::from_micros(300));
        metrics.record("read", Outcome::InvalidOutput, Duration::from_millis(20));
        let text = metrics.render(2);
        assert!(text.contains("toolshape_proxy_calls_total{tool=\"read\",outcome=\"ok\"} 1"));
        assert!(text.contains("toolshape_proxy_validation_failures_total{tool=\"read\"} 1"));
        assert!(text.contains(
            "toolshape_proxy_call_duration_seconds_bucket{tool=\"read\",le=\"0.0005\"} 1"
        ));
        assert!(text.contains(
            "toolshape_proxy_call_duration_seconds_bucket{tool=\"read\",le=\"0.025\"} 2"
        ));
        assert!(text.contains("toolshape_proxy_call_duration_seconds_count{tool=\"read\"} 2"));
        assert!(text.contains("toolshape_proxy_upstream_restarts_total 2"));
        assert_eq!(escape("a\"b\\"), "a\\\"b\\\\");
    }
}
