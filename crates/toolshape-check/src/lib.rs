//! Audits any MCP server's tool schemas and structured outputs, on every
//! revision it speaks; or an OTC (Open Tool Calling) server's. The library
//! behind `toolshape check`.
//!
//! ```no_run
//! # async fn run() {
//! use toolshape_check::{Options, Target, check};
//!
//! let target = Target::stdio(&["toolshape", "serve"]).expect("a command");
//! let report = check(&target, &Options::default()).await;
//! for finding in &report.findings {
//!     println!("{} {} {:?} {}", finding.severity, finding.rule, finding.tool, finding.message);
//! }
//! std::process::exit(report.exit_code(false).into());
//! # }
//! ```
//!
//! What is checked, rule by rule ([`Rule::ALL`]), is in `docs/check.md`:
//!
//! 1. **Listing**, on each revision asked for: every message the server sends
//!    is validated against that revision's normative `schema.json` (carried in
//!    this crate); pagination is followed to the end and must be stable across
//!    connections; duplicate names; names valid for the revision; `listChanged`
//!    declared consistently.
//! 2. **Schemas**, per tool: each compiles in its dialect and is valid against
//!    its meta-schema; `inputSchema` rooted at `type: object`; `outputSchema`
//!    object-rooted where the revision requires it; bounds toolshape's client
//!    holds; remote `$ref`s; the portability lint; the same tool's schemas
//!    consistent across revisions.
//! 3. **Calls** ([`CallPolicy`]): arguments made from each `inputSchema`
//!    (examples and defaults first, edge values at bounds), each result
//!    checked (structured content present, valid, of the revision's shape,
//!    its text block equivalent); then invalid arguments, which must be
//!    refused.
//! 4. **Robustness**: every request has a time limit; a server that exits is
//!    a finding, and is started again (a bounded number of times).
//! 5. **OTC** ([`Target::Otc`]): status codes, CallToolResponse fields,
//!    `value` against `output_schema`, 422 on invalid input.

mod dedupe;
mod finding;
mod generate;
mod junit;
mod mcp;
mod options;
mod otc;
mod report;
mod rules;
mod schemas;
mod spec;
mod text;

use std::time::Instant;

pub use finding::{Document, Finding, Location};
pub use junit::to_junit;
pub use options::{CallPolicy, Options, Progress, ProgressSink, ProtocolChoice, Target};
pub use report::{
    CallCounts, REPORT_FORMAT, REPORT_SCHEMA, REPORT_VERSION, Report, RevisionOutcome,
    RevisionStatus, ServerInfo, Summary, TargetInfo, ToolSummary, exit,
};
pub use rules::{Rule, Severity};
pub use text::to_text;

fn target_info(target: &Target) -> TargetInfo {
    match target {
        Target::Stdio { display, .. } => TargetInfo {
            kind: "stdio",
            address: display.clone(),
        },
        Target::Http(url) => TargetInfo {
            kind: "http",
            address: url.clone(),
        },
        Target::Otc(url) => TargetInfo {
            kind: "otc",
            address: url.clone(),
        },
    }
}

/// Checks the server at `target`. Never fails: a server that cannot be
/// reached is a report whose [`Report::exit_code`] is 4.
pub async fn check(target: &Target, options: &Options) -> Report {
    let started = Instant::now();
    let mut report = Report {
        format: REPORT_FORMAT,
        version: REPORT_VERSION,
        target: target_info(target),
        server: None,
        revisions: Vec::new(),
        tools: Vec::new(),
        findings: Vec::new(),
        summary: Summary {
            errors: 0,
            warnings: 0,
            infos: 0,
            tools: 0,
            reachable: false,
        },
        duration_ms: 0,
    };
    match target {
        Target::Otc(url) => otc::check(url, options, &mut report).await,
        Target::Stdio { .. } | Target::Http(_) => mcp::check(target, options, &mut report).await,
    }
    dedupe::apply(&mut report.findings);
    report.duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    report.finish();
    report
}
