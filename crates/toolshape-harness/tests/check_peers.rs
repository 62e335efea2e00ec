#![allow(clippy::unwrap_used, clippy::expect_used)]
//! `toolshape check` (the library) against the five SDK peers of
//! `peers/` (rmcp, TypeScript SDK 1.x and 2.x, Python `mcp`, FastMCP), each
//! checked on every revision it speaks with both tools called. What it finds
//! in each, and why each finding is right by the spec, is in
//! `docs/check.md` ("The SDK peers"); this test pins those findings, so a
//! change in either the peers or the checks shows.
//!
//! Needs the peers installed (`scripts/setup-peers.sh`) and `TOOLSHAPE_PEERS`
//! set; unset, it prints a skip notice and passes.

mod client_common;

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use toolshape_check::{
    CallPolicy, Options, ProtocolChoice, Report, RevisionStatus, Severity, Target,
};

use client_common::{PEERS_SKIPPED, PeerKind, installed_peers, peer_command};

fn found(report: &Report) -> BTreeMap<String, BTreeSet<(String, String)>> {
    let mut found: BTreeMap<String, BTreeSet<(String, String)>> = BTreeMap::new();
    for finding in &report.findings {
        if finding.severity == Severity::Info {
            continue;
        }
        found
            .entry(finding.tool.clone().unwrap_or_else(|| "(server)".into()))
            .or_default()
            .insert((
                finding.rule.id().to_owned(),
                finding.location.pointer.clone(),
            ));
    }
    found
}

fn table(rows: &[(&str, &str, &str)]) -> BTreeMap<String, BTreeSet<(String, String)>> {
    let mut table: BTreeMap<String, BTreeSet<(String, String)>> = BTreeMap::new();
    for (tool, rule, pointer) in rows {
        table
            .entry((*tool).to_owned())
            .or_default()
            .insert(((*rule).to_owned(), (*pointer).to_owned()));
    }
    table
}

async fn check(peer: PeerKind) -> Option<Report> {
    let installed = installed_peers()?;
    let command = peer_command(peer, &installed);
    let mut options = Options::default();
    options.protocol = ProtocolChoice::All;
    options.calls = CallPolicy::All;
    options.call_timeout = Duration::from_secs(20);
    let target = Target::Stdio {
        command,
        display: peer.name().to_owned(),
    };
    Some(toolshape_check::check(&target, &options).await)
}

fn statuses(report: &Report) -> Vec<RevisionStatus> {
    report.revisions.iter().map(|r| r.status).collect()
}

#[tokio::test]
async fn rmcp_peer() {
    let Some(report) = check(PeerKind::Rmcp).await else {
        return eprintln!("{PEERS_SKIPPED}");
    };
    assert_eq!(statuses(&report), [RevisionStatus::Checked; 3]);
    // schemars writes `format: int64` for i64: a format no standard defines.
    // Its 2026-07-28 results do not name it in `_meta` (a SHOULD there).
    assert_eq!(
        found(&report),
        table(&[
            ("(server)", "result-server-unnamed", "/_meta"),
            (
                "add",
                "schema-format-nonstandard",
                "/inputSchema/properties/a"
            ),
            (
                "add",
                "schema-format-nonstandard",
                "/inputSchema/properties/b"
            ),
            (
                "add",
                "schema-format-nonstandard",
                "/outputSchema/properties/sum"
            ),
        ]),
        "{}",
        report.to_json()
    );
    assert_eq!(report.exit_code(false), 0);
    assert_eq!(report.exit_code(true), 3);
}

#[tokio::test]
async fn typescript_2_peer() {
    let Some(report) = check(PeerKind::Ts2).await else {
        return eprintln!("{PEERS_SKIPPED}");
    };
    // The 2.x line speaks every revision, 2026-07-28 included.
    assert_eq!(statuses(&report), [RevisionStatus::Checked; 3]);
    // 2020-12 schemas from zod, nothing to report on any revision.
    assert_eq!(found(&report), table(&[]), "{}", report.to_json());
    // As the 1.x line: add at its bounds overflows its own output schema,
    // and the SDK refuses its own output with isError.
    let add = report.tools.iter().find(|t| t.name == "add").unwrap();
    assert!(add.calls.tool_errors > 0, "{add:?}");
    assert_eq!(report.exit_code(true), 0);
}

#[tokio::test]
async fn typescript_peer() {
    let Some(report) = check(PeerKind::Ts).await else {
        return eprintln!("{PEERS_SKIPPED}");
    };
    // Legacy only: server/discover is answered -32601.
    assert_eq!(
        statuses(&report),
        [
            RevisionStatus::Checked,
            RevisionStatus::Checked,
            RevisionStatus::Unsupported
        ]
    );
    // Draft-07 schemas with additionalProperties: false compile and hold.
    assert_eq!(found(&report), table(&[]), "{}", report.to_json());
    // add at its bounds (±(2^53-1) each) overflows its own output schema:
    // the SDK refuses its own output with isError, as it should.
    let add = report.tools.iter().find(|t| t.name == "add").unwrap();
    assert!(add.calls.tool_errors > 0, "{add:?}");
    assert_eq!(report.exit_code(true), 0);
}

#[tokio::test]
async fn python_sdk_peer() {
    let Some(report) = check(PeerKind::PyMcp).await else {
        return eprintln!("{PEERS_SKIPPED}");
    };
    assert_eq!(statuses(&report), [RevisionStatus::Checked; 3]);
    // tools.listChanged: false on 2025-06-18 and 2025-11-25, true on 2026-07-28.
    assert_eq!(
        found(&report),
        table(&[(
            "(server)",
            "list-changed-inconsistent",
            "/capabilities/tools/listChanged"
        )]),
        "{}",
        report.to_json()
    );
    assert_eq!(report.exit_code(false), 0);
}

#[tokio::test]
async fn fastmcp_peer() {
    let Some(report) = check(PeerKind::PyFastmcp).await else {
        return eprintln!("{PEERS_SKIPPED}");
    };
    assert_eq!(statuses(&report), [RevisionStatus::Checked; 3]);
    // tools.listChanged: true on 2025-06-18 and 2025-11-25, false on 2026-07-28.
    assert_eq!(
        found(&report),
        table(&[(
            "(server)",
            "list-changed-inconsistent",
            "/capabilities/tools/listChanged"
        )]),
        "{}",
        report.to_json()
    );
    assert_eq!(report.exit_code(false), 0);
}
