//! The report as JUnit XML (`--junit FILE`), for CI systems: one test suite
//! for the server, one test case per tool plus one for the server as a
//! whole; a case fails when it has an error finding (or, strict, a warning).

use std::fmt::Write as _;

use crate::finding::Finding;
use crate::report::Report;
use crate::rules::Severity;

/// `text` escaped for XML 1.0 (characters XML cannot carry are dropped).
fn escape(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => escaped.push_str("&amp;"),
            '<' => escaped.push_str("&lt;"),
            '>' => escaped.push_str("&gt;"),
            '"' => escaped.push_str("&quot;"),
            '\'' => escaped.push_str("&apos;"),
            '\t' | '\n' | '\r' => escaped.push(c),
            c if (c as u32) < 0x20 || c == '\u{fffe}' || c == '\u{ffff}' => {}
            c => escaped.push(c),
        }
    }
    escaped
}

fn line(finding: &Finding) -> String {
    let revision = finding
        .revision
        .map_or_else(String::new, |v| format!(" [{v}]"));
    let pointer = if finding.location.pointer.is_empty() {
        "/"
    } else {
        &finding.location.pointer
    };
    format!(
        "{} {}{} {}:{} {} (fix: {})",
        finding.severity,
        finding.rule,
        revision,
        finding.location.document.as_str(),
        pointer,
        finding.message,
        finding.fix()
    )
}

/// One test case: `name`, with these findings.
fn case(
    out: &mut String,
    classname: &str,
    name: &str,
    findings: &[&Finding],
    strict: bool,
) -> bool {
    let errors = findings
        .iter()
        .filter(|f| f.severity == Severity::Error)
        .count();
    let warnings = findings
        .iter()
        .filter(|f| f.severity == Severity::Warning)
        .count();
    let failed = errors > 0 || (strict && warnings > 0);
    let _ = writeln!(
        out,
        "    <testcase classname=\"{}\" name=\"{}\" time=\"0\">",
        escape(classname),
        escape(name)
    );
    if failed {
        let failing: Vec<String> = findings
            .iter()
            .filter(|f| {
                f.severity == Severity::Error || (strict && f.severity == Severity::Warning)
            })
            .map(|f| line(f))
            .collect();
        let kind = findings
            .iter()
            .find(|f| f.severity == Severity::Error)
            .or(findings.first())
            .map_or("finding", |f| f.rule.id());
        let _ = writeln!(
            out,
            "      <failure type=\"{}\" message=\"{} errors, {} warnings\">{}</failure>",
            escape(kind),
            errors,
            warnings,
            escape(&failing.join("\n"))
        );
    }
    let others: Vec<String> = findings
        .iter()
        .filter(|f| !(f.severity == Severity::Error || (strict && f.severity == Severity::Warning)))
        .map(|f| line(f))
        .collect();
    if !others.is_empty() {
        let _ = writeln!(
            out,
            "      <system-out>{}</system-out>",
            escape(&others.join("\n"))
        );
    }
    out.push_str("    </testcase>\n");
    failed
}

/// The report as a JUnit XML document.
pub fn to_junit(report: &Report, strict: bool) -> String {
    let suite_name = report.server.as_ref().map_or_else(
        || report.target.address.clone(),
        |server| format!("{} {}", server.name, server.version),
    );
    let mut cases = String::new();
    let mut tests = 0;
    let mut failures = 0;
    let mut errors = 0;
    let by_tool = report.findings_by_tool();
    let server_findings: &[&Finding] = by_tool.get(&None).map_or(&[], Vec::as_slice);
    tests += 1;
    if !report.summary.reachable {
        errors += 1;
        let message = server_findings
            .iter()
            .map(|f| line(f))
            .collect::<Vec<_>>()
            .join("\n");
        let _ = writeln!(
            cases,
            "    <testcase classname=\"toolshape.check.server\" name=\"(server)\" time=\"0\">\n      <error type=\"server-unreachable\" message=\"the server could not be reached\">{}</error>\n    </testcase>",
            escape(&message)
        );
    } else if case(
        &mut cases,
        "toolshape.check.server",
        "(server)",
        server_findings,
        strict,
    ) {
        failures += 1;
    }
    let names = report
        .tools
        .iter()
        .map(|t| t.name.as_str())
        .chain(report.unlisted_tools());
    for name in names {
        tests += 1;
        let findings = by_tool.get(&Some(name)).map_or(&[][..], Vec::as_slice);
        if case(&mut cases, "toolshape.check.tool", name, findings, strict) {
            failures += 1;
        }
    }
    let seconds = format!("{:.3}", report.duration_ms as f64 / 1000.0);
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        out,
        "<testsuites name=\"toolshape check\" tests=\"{tests}\" failures=\"{failures}\" errors=\"{errors}\" time=\"{seconds}\">"
    );
    let _ = writeln!(
        out,
        "  <testsuite name=\"{}\" tests=\"{tests}\" failures=\"{failures}\" errors=\"{errors}\" skipped=\"0\" time=\"{seconds}\">",
        escape(&suite_name)
    );
    let _ = writeln!(
        out,
        "    <properties>\n      <property name=\"target\" value=\"{}\"/>\n      <property name=\"revisions\" value=\"{}\"/>\n    </properties>",
        escape(&report.target.address),
        escape(
            &report
                .revisions
                .iter()
                .map(|r| format!("{}={:?}", r.requested, r.status).to_lowercase())
                .collect::<Vec<_>>()
                .join(",")
        )
    );
    out.push_str(&cases);
    out.push_str("  </testsuite>\n</testsuites>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::escape;

    #[test]
    fn escapes_markup_and_drops_what_xml_cannot_carry() {
        assert_eq!(escape("a<b>&\"c'\u{1}\n"), "a&lt;b&gt;&amp;&quot;c&apos;\n");
    }
}
