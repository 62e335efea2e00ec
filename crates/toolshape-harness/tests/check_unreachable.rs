#![allow(clippy::unwrap_used, clippy::expect_used)]
//! `toolshape check` (the library) against servers it cannot reach: exit
//! code 4, with the reason the server gave where it gave one (its stderr,
//! lines on stdout that are not JSON).

use std::collections::BTreeSet;
use std::time::Duration;

use toolshape_check::{Options, Rule, Target};

/// Nothing to reach: exit code 4, and the reason.
#[tokio::test]
async fn an_unreachable_server_is_exit_4() {
    let report = toolshape_check::check(
        &Target::stdio(&["/nonexistent/toolshape-check-server"]).unwrap(),
        &Options::default(),
    )
    .await;
    assert_eq!(report.exit_code(false), 4);
    assert!(
        report
            .findings
            .iter()
            .any(|f| f.rule == Rule::ServerUnreachable)
    );
}

/// A server that writes only logs to stdout never seems to answer: besides
/// the unreachable server, each line that is not JSON is a finding, and a
/// server that exits at its start is quoted from its stderr.
#[tokio::test]
async fn a_server_that_never_answers_says_why_when_it_can() {
    let mut quick = Options::default();
    quick.request_timeout = Duration::from_secs(1);
    let chatty = Target::stdio(&["sh", "-c", "while read l; do echo hello world; done"]).unwrap();
    let report = toolshape_check::check(&chatty, &quick).await;
    assert_eq!(report.exit_code(false), 4);
    let rules: BTreeSet<Rule> = report.findings.iter().map(|f| f.rule).collect();
    assert_eq!(
        rules,
        [Rule::ServerUnreachable, Rule::MessageNotJson].into(),
        "{}",
        report.to_json()
    );

    let failing =
        Target::stdio(&["sh", "-c", "echo 'fatal: missing API_KEY' >&2; exit 1"]).unwrap();
    let report = toolshape_check::check(&failing, &quick).await;
    let unreachable = report
        .findings
        .iter()
        .find(|f| f.rule == Rule::ServerUnreachable)
        .unwrap();
    assert!(
        unreachable.message.contains("fatal: missing API_KEY"),
        "{}",
        unreachable.message
    );
}
