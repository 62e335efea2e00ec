#![allow(clippy::unwrap_used, clippy::expect_used)]
//! `toolshape check` (the library) cut short by its time limit, in front of
//! the hostile server (a real child process): the tools it never reached
//! are reported as not called, not as checked and clean.

mod client_common;

use std::time::Duration;

use toolshape::protocol::ProtocolVersion;
use toolshape_check::{CallPolicy, Options, ProtocolChoice, Rule, Target};

use client_common::hostile_server_bin;

#[tokio::test]
async fn tools_the_time_limit_left_uncalled_are_not_called() {
    let target = Target::stdio(&[hostile_server_bin().display().to_string()]).unwrap();
    let mut options = Options::default();
    options.protocol = ProtocolChoice::Only(ProtocolVersion::V2025_11_25);
    options.calls = CallPolicy::All;
    // `ok` answers at once; `pair`, second in the listing, holds its call
    // past the time limit.
    options.call_timeout = Duration::from_secs(2);
    options.max_time = Duration::from_secs(1);
    let report = toolshape_check::check(&target, &options).await;
    assert!(
        report
            .findings
            .iter()
            .any(|f| f.rule == Rule::CheckIncomplete),
        "{}",
        report.to_json()
    );
    let tool = |name: &str| report.tools.iter().find(|t| t.name == name).unwrap();
    assert!(tool("ok").calls.valid > 0, "{}", report.to_json());
    assert_eq!(tool("ok").calls.skipped, None);
    let unreached = tool("mismatch");
    assert_eq!(unreached.calls.valid, 0, "{}", report.to_json());
    assert_eq!(
        unreached.calls.skipped.as_deref(),
        Some("not called: the check stopped first")
    );
    let text = toolshape_check::to_text(&report, false);
    let line = text
        .lines()
        .find(|line| line.contains(" mismatch "))
        .expect("a line for mismatch");
    assert!(line.contains("not called"), "{line}");
}
