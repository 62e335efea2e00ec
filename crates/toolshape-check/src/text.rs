//! The report for people: a summary line per tool, then the findings grouped
//! by tool, each with its severity, rule, revisions, place and short fix.

use std::collections::HashMap;
use std::fmt::Write as _;

use serde_json::Value;
use toolshape_protocol::text::one_line;

use crate::finding::{Finding, Location};
use crate::report::{Report, RevisionStatus, ToolSummary};
use crate::rules::{Rule, Severity};

/// ANSI styles, or none.
#[derive(Debug, Clone, Copy)]
struct Paint {
    on: bool,
}

impl Paint {
    fn wrap(self, code: &str, text: &str) -> String {
        if self.on {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_owned()
        }
    }

    fn severity(self, severity: Severity) -> String {
        let (code, label) = match severity {
            Severity::Error => ("1;31", "error  "),
            Severity::Warning => ("33", "warning"),
            Severity::Info => ("2", "note   "),
        };
        self.wrap(code, label)
    }

    fn bold(self, text: &str) -> String {
        self.wrap("1", text)
    }

    fn dim(self, text: &str) -> String {
        self.wrap("2", text)
    }
}

/// Findings that differ only in their revision, shown once.
struct Group<'a> {
    finding: &'a Finding,
    revisions: Vec<String>,
}

fn groups<'a>(findings: &[&'a Finding]) -> Vec<Group<'a>> {
    let mut groups: Vec<Group<'a>> = Vec::new();
    let mut index: HashMap<(Rule, &Location, &str, Option<&Value>), usize> = HashMap::new();
    for finding in findings {
        // Calls with other arguments are other findings, each shown.
        let key = (
            finding.rule,
            &finding.location,
            finding.message.as_str(),
            finding.arguments.as_ref(),
        );
        let same = match index.get(&key) {
            Some(&at) => groups.get_mut(at),
            None => {
                index.insert(key, groups.len());
                None
            }
        };
        let revision = finding.revision.map(|v| v.to_string());
        match same {
            Some(group) => {
                if let Some(revision) = revision
                    && !group.revisions.contains(&revision)
                {
                    group.revisions.push(revision);
                }
            }
            None => groups.push(Group {
                finding,
                revisions: revision.into_iter().collect(),
            }),
        }
    }
    groups
}

fn calls_column(tool: &ToolSummary) -> String {
    let calls = &tool.calls;
    if calls.valid == 0 && calls.invalid == 0 {
        return match &calls.skipped {
            Some(_) => "not called".into(),
            None => "-".into(),
        };
    }
    let mut parts = vec![format!("{}/{} ok", calls.succeeded, calls.valid)];
    if calls.tool_errors > 0 {
        parts.push(format!("{} isError", calls.tool_errors));
    }
    if calls.invalid > 0 {
        parts.push(format!(
            "{}/{} invalid refused",
            calls.invalid_rejected, calls.invalid
        ));
    }
    parts.join(", ")
}

fn plural(count: usize, word: &str) -> String {
    format!("{count} {word}{}", if count == 1 { "" } else { "s" })
}

fn write_findings(out: &mut String, paint: Paint, findings: &[&Finding]) {
    for group in groups(findings) {
        let finding = group.finding;
        let pointer = if finding.location.pointer.is_empty() {
            "/"
        } else {
            finding.location.pointer.as_str()
        };
        let revisions = if group.revisions.is_empty() {
            String::new()
        } else {
            format!(" [{}]", group.revisions.join(", "))
        };
        let _ = writeln!(
            out,
            "  {} {}{} {}",
            paint.severity(finding.severity),
            paint.bold(finding.rule.id()),
            revisions,
            paint.dim(&one_line(&format!(
                "{}:{pointer}",
                finding.location.document.as_str()
            )))
        );
        let _ = writeln!(out, "            {}", one_line(&finding.message));
        if let Some(arguments) = &finding.arguments {
            let shown = toolshape_protocol::text::excerpt(&arguments.to_string(), 160);
            let shown = one_line(&shown);
            let _ = writeln!(
                out,
                "            {}",
                paint.dim(&format!("arguments: {shown}"))
            );
        }
        if finding.severity > Severity::Info {
            let _ = writeln!(
                out,
                "            {}",
                paint.dim(&format!("fix: {}", finding.fix()))
            );
        }
    }
}

/// The report as text; `colour` adds ANSI styles (for a terminal).
pub fn to_text(report: &Report, colour: bool) -> String {
    let paint = Paint { on: colour };
    let mut out = String::new();
    let server = report.server.as_ref().map_or_else(
        || "(unnamed server)".to_owned(),
        |s| one_line(&format!("{} {}", s.name, s.version)).into_owned(),
    );
    let revisions = report
        .revisions
        .iter()
        .map(|r| {
            let status = match r.status {
                RevisionStatus::Checked => "checked",
                RevisionStatus::Unsupported => "unsupported",
                RevisionStatus::Unreachable => "unreachable",
            };
            match (&r.negotiated, r.requested.as_str()) {
                (Some(negotiated), "auto") => format!("{negotiated} {status}"),
                _ => format!("{} {status}", r.requested),
            }
        })
        .collect::<Vec<_>>()
        .join(", ");
    let _ = writeln!(
        out,
        "{} ({} {}) - {revisions}",
        paint.bold(&server),
        report.target.kind,
        toolshape_protocol::text::excerpt(&report.target.address, 120)
    );
    if !report.tools.is_empty() {
        let width = report
            .tools
            .iter()
            .map(|t| t.name.len())
            .max()
            .unwrap_or(4)
            .clamp(4, 40);
        let _ = writeln!(out);
        let _ = writeln!(
            out,
            "  {:width$}  {:8}  {:8}  {:40}  FINDINGS",
            "TOOL", "INPUT", "OUTPUT", "CALLS"
        );
        for tool in &report.tools {
            let mark = if tool.errors > 0 {
                paint.wrap("1;31", "✗")
            } else if tool.warnings > 0 {
                paint.wrap("33", "!")
            } else {
                paint.wrap("32", "✓")
            };
            let _ = writeln!(
                out,
                "{mark} {:width$}  {:8}  {:8}  {:40}  {}, {}",
                one_line(&toolshape_protocol::text::excerpt(&tool.name, width)),
                one_line(&toolshape_protocol::text::excerpt(&tool.input, 8)),
                one_line(&toolshape_protocol::text::excerpt(
                    tool.output.as_deref().unwrap_or("-"),
                    8
                )),
                calls_column(tool),
                plural(tool.errors, "error"),
                plural(tool.warnings, "warning")
            );
        }
    }
    let by_tool = report.findings_by_tool();
    let server_findings: &[&Finding] = by_tool.get(&None).map_or(&[], Vec::as_slice);
    if !server_findings.is_empty() {
        let _ = writeln!(out, "\n{}", paint.bold("(server)"));
        write_findings(&mut out, paint, server_findings);
    }
    let names = report
        .tools
        .iter()
        .map(|t| t.name.as_str())
        .chain(report.unlisted_tools());
    for name in names {
        if let Some(mine) = by_tool.get(&Some(name)) {
            let _ = writeln!(out, "\n{}", paint.bold(&one_line(name)));
            write_findings(&mut out, paint, mine);
        }
    }
    let _ = writeln!(
        out,
        "\n{}, {}, {} in {:.1} s",
        plural(report.summary.errors, "error"),
        plural(report.summary.warnings, "warning"),
        plural(report.summary.infos, "note"),
        report.duration_ms as f64 / 1000.0
    );
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_servers_words_stay_on_one_line_in_the_order_written() {
        assert_eq!(
            super::one_line("a\nb\u{202E}c\td\u{1b}[2J\u{9b}e\u{2028}f\u{200F}g"),
            "a\u{FFFD}b\u{FFFD}c\u{FFFD}d\u{FFFD}[2J\u{FFFD}e\u{FFFD}f\u{FFFD}g"
        );
        assert!(matches!(
            super::one_line("plain é"),
            std::borrow::Cow::Borrowed(_)
        ));
    }
}
