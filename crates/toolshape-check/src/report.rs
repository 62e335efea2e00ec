//! The outcome of a check: what was reached, each tool's summary, the
//! findings, and the exit code they make. Serialized, it is the `--json`
//! output (shape in `schema/check-report-v1.schema.json`).

use std::collections::{HashMap, HashSet};

use serde::Serialize;

use crate::finding::Finding;
use crate::rules::Severity;

/// The `format` field of every JSON report.
pub const REPORT_FORMAT: &str = "toolshape-check-report";
/// The version of the JSON report's shape; it changes only when the shape does.
pub const REPORT_VERSION: u32 = 1;
/// The JSON Schema of the JSON report (version [`REPORT_VERSION`]).
pub const REPORT_SCHEMA: &str = include_str!("../schema/check-report-v1.schema.json");

/// Exit codes of `toolshape check`.
pub mod exit {
    /// No errors (warnings allowed unless strict).
    pub const CLEAN: u8 = 0;
    /// The usage was wrong.
    pub const USAGE: u8 = 2;
    /// An error finding: the server breaks a MUST of the spec or is unusable
    /// (dies, stops answering); strict, a SHOULD too.
    pub const BROKEN: u8 = 3;
    /// The server could not be reached, or spoke no valid protocol.
    pub const UNREACHABLE: u8 = 4;
}

/// Which server was checked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TargetInfo {
    /// `stdio`, `http` or `otc`.
    pub kind: &'static str,
    /// The command line, or the URL.
    pub address: String,
}

/// Who the server says it is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ServerInfo {
    /// Its name.
    pub name: String,
    /// Its version.
    pub version: String,
}

/// How one revision went.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RevisionOutcome {
    /// The revision asked for (`auto` before negotiation, `otc` for OTC).
    pub requested: String,
    /// The revision spoken, when one was.
    pub negotiated: Option<String>,
    /// `checked`, `unsupported` or `unreachable`.
    pub status: RevisionStatus,
    /// Why, when not checked.
    pub detail: Option<String>,
}

/// Whether a revision could be checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RevisionStatus {
    /// Spoken and checked.
    Checked,
    /// The server does not speak it.
    Unsupported,
    /// The server could not be reached at all.
    Unreachable,
}

/// The calls made to one tool, over every revision.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CallCounts {
    /// Calls with arguments its inputSchema accepts.
    pub valid: usize,
    /// ... answered with a successful result.
    pub succeeded: usize,
    /// ... answered `isError: true`.
    pub tool_errors: usize,
    /// Calls with arguments its inputSchema rejects.
    pub invalid: usize,
    /// ... answered `isError: true` or a JSON-RPC error, as they should be.
    pub invalid_rejected: usize,
    /// Why it was not called, when it was not.
    pub skipped: Option<String>,
}

impl CallCounts {
    /// Marks a tool the check stopped before calling (its time limit, or too
    /// many restarts) as not called.
    pub(crate) fn not_reached(&mut self) {
        if self.valid == 0 && self.invalid == 0 && self.skipped.is_none() {
            self.skipped = Some("not called: the check stopped first".to_owned());
        }
    }
}

/// One tool, in a line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolSummary {
    /// Its name (MCP) or id (OTC).
    pub name: String,
    /// The revisions it was listed on.
    pub revisions: Vec<String>,
    /// Whether it is annotated `readOnlyHint: true`.
    pub read_only: bool,
    /// What its inputSchema's root admits (`object`, `array`, `oneOf`...).
    pub input: String,
    /// What its outputSchema's root admits, when it has one.
    pub output: Option<String>,
    /// The calls made.
    pub calls: CallCounts,
    /// Its error findings.
    pub errors: usize,
    /// Its warning findings.
    pub warnings: usize,
}

/// Totals.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Summary {
    /// Error findings.
    pub errors: usize,
    /// Warning findings.
    pub warnings: usize,
    /// Info findings.
    pub infos: usize,
    /// Tools listed.
    pub tools: usize,
    /// Whether at least one revision could be spoken.
    pub reachable: bool,
}

/// Everything a check found.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    /// Always [`REPORT_FORMAT`].
    pub format: &'static str,
    /// Always [`REPORT_VERSION`].
    pub version: u32,
    /// The server checked.
    pub target: TargetInfo,
    /// Who it says it is.
    pub server: Option<ServerInfo>,
    /// Each revision tried.
    pub revisions: Vec<RevisionOutcome>,
    /// Each tool, in listing order.
    pub tools: Vec<ToolSummary>,
    /// Every finding, most severe first, then by tool.
    pub findings: Vec<Finding>,
    /// Totals.
    pub summary: Summary,
    /// How long the check took, in milliseconds.
    pub duration_ms: u64,
}

impl Report {
    /// The findings of `severity`.
    pub fn count(&self, severity: Severity) -> usize {
        self.findings
            .iter()
            .filter(|finding| finding.severity == severity)
            .count()
    }

    /// The names of tools with findings that no [`ToolSummary`] lists (an
    /// OTC tool without an id, say), in first-found order.
    pub fn unlisted_tools(&self) -> Vec<&str> {
        let mut seen: HashSet<&str> = self.tools.iter().map(|t| t.name.as_str()).collect();
        let mut names: Vec<&str> = Vec::new();
        for name in self.findings.iter().filter_map(|f| f.tool.as_deref()) {
            if seen.insert(name) {
                names.push(name);
            }
        }
        names
    }

    /// The findings by the tool they concern (`None`: the server's), in
    /// order: looked up once, not filtered again for every tool.
    pub(crate) fn findings_by_tool(&self) -> HashMap<Option<&str>, Vec<&Finding>> {
        let mut by_tool: HashMap<Option<&str>, Vec<&Finding>> = HashMap::new();
        for finding in &self.findings {
            by_tool
                .entry(finding.tool.as_deref())
                .or_default()
                .push(finding);
        }
        by_tool
    }

    /// The exit code: 4 when no revision could be spoken, 3 with an error
    /// finding (or, `strict`, a warning), else 0.
    pub fn exit_code(&self, strict: bool) -> u8 {
        if !self.summary.reachable {
            exit::UNREACHABLE
        } else if self.summary.errors > 0 || (strict && self.summary.warnings > 0) {
            exit::BROKEN
        } else {
            exit::CLEAN
        }
    }

    /// The report as pretty-printed JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_else(|error| {
            serde_json::json!({"format": REPORT_FORMAT, "error": error.to_string()}).to_string()
        })
    }

    /// Puts the findings in order, counts them into the summary and the tools.
    pub(crate) fn finish(&mut self) {
        self.findings.sort_by(|a, b| {
            b.severity
                .cmp(&a.severity)
                .then_with(|| a.tool.cmp(&b.tool))
                .then_with(|| a.rule.cmp(&b.rule))
                .then_with(|| a.revision.cmp(&b.revision))
                .then_with(|| a.location.pointer.cmp(&b.location.pointer))
        });
        let mut counts: HashMap<&str, (usize, usize)> = HashMap::new();
        for finding in &self.findings {
            if let Some(tool) = finding.tool.as_deref() {
                let (errors, warnings) = counts.entry(tool).or_default();
                match finding.severity {
                    Severity::Error => *errors += 1,
                    Severity::Warning => *warnings += 1,
                    Severity::Info => {}
                }
            }
        }
        for tool in &mut self.tools {
            (tool.errors, tool.warnings) =
                counts.get(tool.name.as_str()).copied().unwrap_or_default();
        }
        self.summary.errors = self.count(Severity::Error);
        self.summary.warnings = self.count(Severity::Warning);
        self.summary.infos = self.count(Severity::Info);
        self.summary.tools = self.tools.len();
        self.summary.reachable = self
            .revisions
            .iter()
            .any(|revision| revision.status == RevisionStatus::Checked);
    }
}

/// What a schema's root admits, in a word.
pub(crate) fn root_kind(schema: &serde_json::Value) -> String {
    use serde_json::Value;
    match schema.get("type") {
        Some(Value::String(kind)) => kind.clone(),
        Some(Value::Array(kinds)) => kinds
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join("|"),
        _ if schema.get("oneOf").is_some() => "oneOf".into(),
        _ if schema.get("anyOf").is_some() => "anyOf".into(),
        _ if schema.get("$ref").is_some() => "$ref".into(),
        _ => "any".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::Rule;

    /// The published schema lists exactly the rules there are.
    #[test]
    fn the_report_schema_names_every_rule() {
        let schema: serde_json::Value = serde_json::from_str(REPORT_SCHEMA).unwrap();
        let listed: Vec<&str> = schema["$defs"]["finding"]["properties"]["rule"]["enum"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(serde_json::Value::as_str)
            .collect();
        let rules: Vec<&str> = Rule::ALL.iter().map(|rule| rule.id()).collect();
        assert_eq!(listed, rules);
        assert_eq!(schema["properties"]["version"]["const"], REPORT_VERSION);
        assert_eq!(schema["properties"]["format"]["const"], REPORT_FORMAT);
    }

    /// A pointer is built from a server's member names, which may hold a
    /// line end: the schema's pattern takes it (`.` would not).
    #[test]
    fn a_pointer_through_a_name_with_a_line_end_fits_the_schema() {
        let schema: serde_json::Value = serde_json::from_str(REPORT_SCHEMA).unwrap();
        let pointer =
            schema["$defs"]["finding"]["properties"]["location"]["properties"]["pointer"].clone();
        assert!(pointer.is_object(), "{pointer}");
        let compiled = toolshape_schema::SchemaEngine::default()
            .compile(&pointer)
            .unwrap();
        for good in ["", "/a", "/properties/a\nb/format", "/\u{2028}"] {
            assert!(
                compiled.validate(&serde_json::json!(good)).is_ok(),
                "{good:?}"
            );
        }
        assert!(compiled.validate(&serde_json::json!("a/b")).is_err());
    }
}
