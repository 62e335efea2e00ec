#![allow(clippy::unwrap_used, clippy::expect_used)]
//! What `toolshape check` (the library) covered, in front of the hostile
//! server (a real child process): the tools its time limit left uncalled
//! are reported as not called, not as checked and clean; `--protocol all`
//! on a server that speaks an older revision only checks that one, one
//! lacking a revision has it noted, one dying on a revision has a finding;
//! a read-only check calls only read-only tools.

mod check_common;
mod client_common;

use std::time::Duration;

use toolshape::protocol::ProtocolVersion;
use toolshape_check::{CallPolicy, Options, ProtocolChoice, Rule, Target};

use check_common::{options, target};
use client_common::hostile_server_bin;

/// Each revision's status in `report`, as `(requested, status)`.
fn assert_statuses<const N: usize>(report: &toolshape_check::Report, expected: [(&str, &str); N]) {
    let statuses: Vec<(String, String)> = report
        .revisions
        .iter()
        .map(|r| (r.requested.clone(), format!("{:?}", r.status)))
        .collect();
    assert_eq!(
        statuses,
        expected.map(|(a, b)| (a.to_owned(), b.to_owned()))
    );
}

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

/// `--protocol all` on a server that speaks only 2025-03-26: each revision
/// asked for is a note, and the server is checked on the one it offers, not
/// reported unreachable.
#[tokio::test]
async fn all_revisions_on_an_older_server_checks_the_one_it_offers() {
    let argv = [
        hostile_server_bin().display().to_string(),
        "--offer".to_owned(),
        "2025-03-26".to_owned(),
    ];
    let mut options = Options::default();
    options.protocol = ProtocolChoice::All;
    let report = toolshape_check::check(&Target::stdio(&argv).unwrap(), &options).await;
    let checked: Vec<_> = report
        .revisions
        .iter()
        .filter(|r| r.status == toolshape_check::RevisionStatus::Checked)
        .map(|r| r.negotiated.as_deref())
        .collect();
    assert_eq!(checked, [Some("2025-03-26")], "{}", report.to_json());
    assert_eq!(report.exit_code(false), 0, "{}", report.to_json());
    assert!(report.tools.iter().any(|t| t.name == "ok"));
}

/// A read-only check calls only read-only tools; a legacy-only server is
/// checked on the revisions it has, and the one it lacks is a note.
#[tokio::test]
async fn read_only_calls_and_unsupported_revisions() {
    let mut options = options(ProtocolChoice::All, CallPolicy::ReadOnly);
    options.max_valid_calls = 1;
    let report = toolshape_check::check(&target(&["--legacy-only"]), &options).await;
    assert_statuses(
        &report,
        [
            ("2025-06-18", "Checked"),
            ("2025-11-25", "Checked"),
            ("2026-07-28", "Unsupported"),
        ],
    );
    // No base tool is read-only: none was called (pair would have hung).
    assert!(
        report
            .tools
            .iter()
            .all(|t| t.calls.valid == 0 && t.calls.skipped.is_some())
    );
    assert!(
        report
            .findings
            .iter()
            .all(|f| f.rule != Rule::RequestTimeout)
    );
    assert_eq!(
        report.exit_code(false),
        3,
        "remote_ref and friends are still wrong"
    );
}

/// A server that exits when asked for one revision, and serves the others:
/// that revision's failed handshake is a finding (`server-exited`, naming
/// the revision), not only its line among the revisions.
#[tokio::test]
async fn a_revision_the_server_dies_on_is_a_finding() {
    let options = options(ProtocolChoice::All, CallPolicy::None);
    let server = target(&["--legacy-only", "--die-on-initialize", "2025-06-18"]);
    let report = toolshape_check::check(&server, &options).await;
    assert_statuses(
        &report,
        [
            ("2025-06-18", "Unreachable"),
            ("2025-11-25", "Checked"),
            ("2026-07-28", "Unsupported"),
        ],
    );
    let exited: Vec<_> = report
        .findings
        .iter()
        .filter(|f| f.rule == Rule::ServerExited)
        .collect();
    assert_eq!(exited.len(), 1, "{:#?}", report.findings);
    assert_eq!(exited[0].revision, Some(ProtocolVersion::V2025_06_18));
    assert!(
        exited[0].message.contains("handshake"),
        "{}",
        exited[0].message
    );
    assert!(
        report
            .findings
            .iter()
            .all(|f| f.rule != Rule::ServerUnreachable),
        "{:#?}",
        report.findings
    );
}
