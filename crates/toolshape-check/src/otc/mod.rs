//! Checking an OTC (Open Tool Calling, later OXP) server over its stateless
//! HTTP API: `GET /health`, `GET /tools` and each ToolDefinition, then
//! `POST /tools/call` with valid and invalid input, an unknown tool and an
//! unknown `$schema`. The facts checked are the spec's OpenAPI document
//! (see `docs/check.md`); its published CallToolResponse schema has a known
//! defect, so responses are checked field by field instead.

mod call;
mod http;

use std::collections::HashSet;
use std::time::Instant;

use serde_json::Value;

use self::http::Http;
use crate::finding::{Document, Finding, Location, join};
use crate::options::{CallPolicy, Options};
use crate::report::{CallCounts, Report, RevisionOutcome, RevisionStatus, ToolSummary, root_kind};
use crate::rules::Rule;
use crate::schemas::{self, Engines, Usable};

/// `Toolkit.Tool[@x[.y.z]]`.
fn is_tool_id(id: &str) -> bool {
    let (name, version) = match id.split_once('@') {
        Some((name, version)) => (name, Some(version)),
        None => (id, None),
    };
    let word = |part: &str| {
        !part.is_empty() && part.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    };
    let name_ok = matches!(name.split_once('.'), Some((kit, tool)) if word(kit) && word(tool));
    let version_ok = version.is_none_or(|v| {
        let parts: Vec<&str> = v.split('.').collect();
        (parts.len() == 1 || parts.len() == 3)
            && parts
                .iter()
                .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()))
    });
    name_ok && version_ok
}

fn is_tool_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

fn is_semver(version: &str) -> bool {
    let parts: Vec<&str> = version.split('.').collect();
    parts.len() == 3
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()))
}

/// One listed OTC tool.
pub(crate) struct OtcTool {
    pub(crate) id: String,
    pub(crate) input_schema: Value,
    pub(crate) input: Option<Usable>,
    /// `None`: no `output_schema` member; `Some(Null)`: the tool returns nothing.
    pub(crate) output_schema: Option<Value>,
    pub(crate) output: Option<Usable>,
}

/// Checks the OTC server at `base` into `report`.
pub(crate) async fn check(base: &str, options: &Options, report: &mut Report) {
    let mut findings = Vec::new();
    let mut outcome = RevisionOutcome {
        requested: "otc".into(),
        negotiated: None,
        status: RevisionStatus::Unreachable,
        detail: None,
    };
    let http = match Http::new(base, options) {
        Ok(http) => http,
        Err(detail) => {
            outcome.detail = Some(detail.clone());
            report.revisions.push(outcome);
            report.findings.push(Finding::new(
                Rule::ServerUnreachable,
                Location::new(Document::Server, ""),
                detail,
            ));
            return;
        }
    };
    options.report_progress("listing OTC tools", 0, 1);
    let listed = match http.get("tools").await {
        Ok(listed) => listed,
        Err(detail) => {
            outcome.detail = Some(detail.clone());
            report.revisions.push(outcome);
            report.findings.push(Finding::new(
                Rule::ServerUnreachable,
                Location::new(Document::Server, ""),
                detail,
            ));
            return;
        }
    };
    outcome.status = RevisionStatus::Checked;
    outcome.negotiated = Some("otc-1.0".into());
    report.revisions.push(outcome);
    match http.get("health").await {
        Ok(health) if health.status == 200 => {}
        Ok(health) => findings.push(Finding::new(
            Rule::OtcHealth,
            Location::new(Document::Otc, ""),
            format!("GET /health answered {}", health.status),
        )),
        Err(detail) => findings.push(Finding::new(
            Rule::OtcHealth,
            Location::new(Document::Otc, ""),
            format!("GET /health failed: {detail}"),
        )),
    }
    let engines = Engines::new(options.compile_budget);
    let tools = listing(&listed, &engines, &mut findings);
    findings.extend(engines.take_over_budget(Location::new(Document::Otc, "/items")));
    report.tools = tools
        .iter()
        .map(|tool| ToolSummary {
            name: tool.id.clone(),
            revisions: vec!["otc".into()],
            read_only: false,
            input: root_kind(&tool.input_schema),
            output: tool.output_schema.as_ref().map(|schema| match schema {
                Value::Null => "null".to_owned(),
                schema => root_kind(schema),
            }),
            calls: CallCounts::default(),
            errors: 0,
            warnings: 0,
        })
        .collect();
    if options.calls != CallPolicy::None {
        let deadline = Instant::now() + options.max_time.min(crate::options::LONGEST);
        let mut caller = call::Caller::new(&http, options, deadline, &mut findings);
        caller.unknown_tool().await;
        for (step, (tool, summary)) in tools.iter().zip(report.tools.iter_mut()).enumerate() {
            options.report_progress(format!("calling {}", tool.id), step, tools.len());
            if options.calls == CallPolicy::ReadOnly {
                summary.calls.skipped =
                    Some("OTC tools carry no read-only hint (use --call all)".into());
                continue;
            }
            if !caller.tool(tool, &mut summary.calls).await {
                break;
            }
        }
        if caller.stopped.is_some() {
            for summary in &mut report.tools {
                summary.calls.not_reached();
            }
        }
        if options.calls == CallPolicy::All
            && let Some(tool) = tools.iter().find(|tool| tool.input.is_some())
        {
            caller.unknown_schema_version(tool).await;
        }
        if let Some(reason) = caller.stopped.take() {
            findings.push(Finding::new(
                Rule::CheckIncomplete,
                Location::new(Document::Server, ""),
                reason,
            ));
        }
        if options.calls == CallPolicy::ReadOnly && !tools.is_empty() {
            findings.push(Finding::new(
                Rule::CallSkipped,
                Location::new(Document::Server, ""),
                "no tool called: OTC tools carry no read-only hint (use --call all)",
            ));
        }
    }
    report.findings.append(&mut findings);
}

/// Checks `GET /tools` and each ToolDefinition; returns the tools.
fn listing(listed: &http::Answer, engines: &Engines, findings: &mut Vec<Finding>) -> Vec<OtcTool> {
    let shape = |pointer: String, message: String| {
        Finding::new(
            Rule::OtcListShape,
            Location::new(Document::Otc, pointer),
            message,
        )
    };
    if listed.status != 200 {
        findings.push(Finding::new(
            Rule::OtcListStatus,
            Location::new(Document::Otc, ""),
            format!("GET /tools answered {}", listed.status),
        ));
        return Vec::new();
    }
    let Some(body) = listed.json.as_ref() else {
        findings.push(Finding::new(
            Rule::OtcListStatus,
            Location::new(Document::Otc, ""),
            "GET /tools answered 200 without a JSON body",
        ));
        return Vec::new();
    };
    let (key, items) = match (body.get("items"), body.get("tools")) {
        (Some(Value::Array(items)), _) => ("items", items),
        (None, Some(Value::Array(items))) => ("tools", items),
        _ => {
            findings.push(shape(
                "/items".into(),
                "GET /tools answered without an `items` array".into(),
            ));
            return Vec::new();
        }
    };
    let mut tools = Vec::new();
    let mut ids = HashSet::new();
    for (index, item) in items.iter().enumerate() {
        let at = join(&format!("/{key}"), &index.to_string());
        let id = item.get("id").and_then(Value::as_str);
        let label = id.map_or_else(|| format!("tool #{index}"), str::to_owned);
        let mut tool_findings = Vec::new();
        match id {
            Some(id) if is_tool_id(id) => {
                if !ids.insert(id.to_owned()) {
                    tool_findings
                        .push(shape(join(&at, "id"), format!("id {id:?} is listed twice")));
                }
            }
            Some(id) => tool_findings.push(shape(
                join(&at, "id"),
                format!(
                    "id {:?} is not Toolkit.Tool[@version]",
                    toolshape_protocol::text::excerpt(id, 80)
                ),
            )),
            None => tool_findings.push(shape(join(&at, "id"), "no string id".into())),
        }
        match item.get("name").and_then(Value::as_str) {
            Some(name) if is_tool_name(name) => {}
            Some(name) => tool_findings.push(shape(
                join(&at, "name"),
                format!(
                    "name {:?} is not 1-64 of A-Z a-z 0-9 _ -",
                    toolshape_protocol::text::excerpt(name, 80)
                ),
            )),
            None => tool_findings.push(shape(join(&at, "name"), "no string name".into())),
        }
        if !item.get("description").is_some_and(Value::is_string) {
            tool_findings.push(shape(
                join(&at, "description"),
                "no string description".into(),
            ));
        }
        match item.get("version").and_then(Value::as_str) {
            Some(version) if is_semver(version) => {}
            _ => tool_findings.push(shape(join(&at, "version"), "no version x.y.z".into())),
        }
        // Older documents wrap the input schema as {"parameters": schema}:
        // findings point inside the wrapper.
        let input_at = join(&at, "input_schema");
        let (input_schema, input_at) = match item.get("input_schema") {
            Some(Value::Object(map)) if map.len() == 1 && map.contains_key("parameters") => (
                map.get("parameters").cloned().unwrap_or(Value::Null),
                join(&input_at, "parameters"),
            ),
            Some(schema) => (schema.clone(), input_at),
            None => (Value::Object(Default::default()), input_at),
        };
        let (found, input) = schemas::check(engines, &input_schema, Document::Otc, &input_at);
        tool_findings.extend(found);
        tool_findings.extend(reference_finding(&input_schema, &input_at));
        let output_schema = item.get("output_schema").cloned();
        let output = match &output_schema {
            Some(Value::Null) | None => None,
            Some(schema) => {
                let at = join(&at, "output_schema");
                let (found, usable) = schemas::check(engines, schema, Document::Otc, &at);
                tool_findings.extend(found);
                tool_findings.extend(reference_finding(schema, &at));
                usable
            }
        };
        findings.extend(tool_findings.into_iter().map(|f| f.tool(label.as_str())));
        if let Some(id) = id {
            tools.push(OtcTool {
                id: id.to_owned(),
                input_schema,
                input,
                output_schema,
                output,
            });
        }
    }
    tools
}

/// The finding for a schema (at `base`) that uses `$ref` or definitions:
/// OTC's schemas exclude them, so a client written to the spec may not
/// resolve them.
fn reference_finding(schema: &Value, base: &str) -> Option<Finding> {
    let at = toolshape_schema::inline::first_reference(schema)?;
    Some(Finding::new(
        Rule::OtcSchemaRef,
        Location::new(Document::Otc, format!("{base}{at}")),
        "OTC's schemas exclude $ref and definitions: a client written to the spec may not resolve this one",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_names_and_versions_follow_the_spec() {
        for good in [
            "Calculator.Add",
            "Calculator.Add@1",
            "Calculator.Add@1.0.0",
            "A_b.C_d",
        ] {
            assert!(is_tool_id(good), "{good}");
        }
        for bad in [
            "Add",
            "Calculator.Add@1.0",
            "Calc.Add@x",
            "a.b.c",
            ".Add",
            "Calc.Add@",
        ] {
            assert!(!is_tool_id(bad), "{bad}");
        }
        assert!(is_tool_name("Calculator_Add-2"));
        assert!(!is_tool_name("has space"));
        assert!(is_semver("1.2.3"));
        assert!(!is_semver("1.2"));
    }
}
