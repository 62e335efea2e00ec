//! Checking an MCP server: on each revision asked for, the handshake, the
//! listing, each tool's schemas and calls; then the revisions compared.

mod calls;
mod consistency;
mod failed_handshake;
mod listing;
mod messages;
mod results;
mod session;

use std::collections::HashMap;
use std::time::Instant;

use serde_json::Value;
use toolshape::client::Negotiation;
use toolshape_protocol::ProtocolVersion;
use toolshape_schema::mcp::{check_input_schema, is_object_rooted};

use self::calls::{Calls, Connection, Planned};
use self::consistency::Seen;
use self::listing::{ListedTool, Sideband};
use self::messages::Answers;
use self::session::Session;
use crate::finding::{Document, Finding, Location};
use crate::options::{CallPolicy, Options, ProtocolChoice, Target};
use crate::report::{
    CallCounts, Report, RevisionOutcome, RevisionStatus, ServerInfo, ToolSummary, root_kind,
};
use crate::rules::Rule;
use crate::schemas::{self, Engines, Usable};

/// A tool's schemas on one revision, compiled when usable.
struct Compiled {
    input: Option<Usable>,
    output: Option<Usable>,
    /// A schema was left uncompiled: the check's compile budget was spent.
    over_budget: bool,
}

/// Whether a tool is annotated read-only.
fn is_read_only(definition: &Value) -> bool {
    definition
        .get("annotations")
        .and_then(|annotations| annotations.get("readOnlyHint"))
        == Some(&Value::Bool(true))
}

/// Everything one check of an MCP server shares.
struct Run<'a> {
    target: &'a Target,
    options: &'a Options,
    engines: Engines,
    deadline: Instant,
    findings: Vec<Finding>,
    counts: HashMap<String, CallCounts>,
    progress_done: usize,
    /// A revision's handshake that failed as no server should (it exited,
    /// hung): findings once another revision was checked (otherwise the
    /// server counts as unreachable).
    failed_handshakes: Vec<Finding>,
}

/// Checks the MCP server at `target` into `report`.
pub(crate) async fn check(target: &Target, options: &Options, report: &mut Report) {
    let requested: Vec<Option<ProtocolVersion>> = match options.protocol {
        ProtocolChoice::Auto => vec![None],
        ProtocolChoice::All => ProtocolChoice::ALL_REVISIONS
            .into_iter()
            .map(Some)
            .collect(),
        ProtocolChoice::Only(version) => vec![Some(version)],
    };
    let mut run = Run {
        target,
        options,
        engines: Engines::new(options.compile_budget),
        deadline: Instant::now() + options.max_time.min(crate::options::LONGEST),
        findings: Vec::new(),
        counts: HashMap::new(),
        progress_done: 0,
        failed_handshakes: Vec::new(),
    };
    let mut seen = Vec::new();
    for version in requested {
        let (outcome, checked) = run.revision(version, report).await;
        report.revisions.push(outcome);
        seen.extend(checked);
    }
    // `all` on a server that speaks none of them, only an older revision:
    // that one is checked, as `auto` would (also when some of them failed
    // otherwise, exiting or hanging).
    let spoke_another = report
        .revisions
        .iter()
        .all(|r| r.status != RevisionStatus::Checked)
        && report
            .revisions
            .iter()
            .any(|r| r.status == RevisionStatus::Unsupported);
    if options.protocol == ProtocolChoice::All && spoke_another {
        let (outcome, checked) = run.revision(None, report).await;
        report.revisions.push(outcome);
        seen.extend(checked);
    }
    if report
        .revisions
        .iter()
        .any(|r| r.status == RevisionStatus::Checked)
    {
        run.findings.append(&mut run.failed_handshakes);
    } else {
        let detail = report
            .revisions
            .iter()
            .filter_map(|r| r.detail.clone())
            .collect::<Vec<_>>()
            .join("; ");
        run.findings.push(Finding::new(
            Rule::ServerUnreachable,
            Location::new(Document::Server, ""),
            detail,
        ));
    }
    run.findings.extend(consistency::compare(&seen));
    report.tools = summaries(&seen, &mut run.counts);
    report.findings.append(&mut run.findings);
}

/// One line per tool, in first-listed order, over every revision.
fn summaries(seen: &[Seen], counts: &mut HashMap<String, CallCounts>) -> Vec<ToolSummary> {
    let mut tools: Vec<ToolSummary> = Vec::new();
    for revision in seen {
        for tool in &revision.tools {
            let version = revision.version.to_string();
            let definition = &tool.definition;
            // Revisions come oldest first: the newest one's schemas are shown.
            if let Some(summary) = tools.iter_mut().find(|t| t.name == tool.name) {
                summary.revisions.push(version);
                summary.input = definition
                    .get("inputSchema")
                    .map_or_else(|| "-".to_owned(), root_kind);
                summary.output = definition.get("outputSchema").map(root_kind);
                continue;
            }
            tools.push(ToolSummary {
                name: tool.name.clone(),
                revisions: vec![version],
                read_only: is_read_only(definition),
                input: definition
                    .get("inputSchema")
                    .map_or_else(|| "-".to_owned(), root_kind),
                output: definition.get("outputSchema").map(root_kind),
                calls: counts.remove(&tool.name).unwrap_or_default(),
                errors: 0,
                warnings: 0,
            });
        }
    }
    tools
}

impl Run<'_> {
    fn progress(&mut self, stage: String, step: usize, planned: usize) {
        self.options.report_progress(
            stage,
            self.progress_done + step,
            self.progress_done + planned,
        );
    }

    /// Checks one revision (`None`: whichever is negotiated).
    async fn revision(
        &mut self,
        requested: Option<ProtocolVersion>,
        report: &mut Report,
    ) -> (RevisionOutcome, Option<Seen>) {
        let label = requested.map_or_else(|| "auto".to_owned(), |v| v.to_string());
        let negotiation = requested.map_or(Negotiation::Auto, Negotiation::Pinned);
        self.progress(format!("connecting ({label})"), 0, 1);
        let outcome =
            |status, negotiated: Option<ProtocolVersion>, detail: Option<String>| RevisionOutcome {
                requested: label.clone(),
                negotiated: negotiated.map(|v| v.to_string()),
                status,
                detail,
            };
        // The calls stop at the deadline themselves; the handshake and the
        // listings (a server may page slowly without end) are cut at it here.
        let deadline = tokio::time::Instant::from_std(self.deadline);
        let opened = tokio::time::timeout_at(
            deadline,
            Session::open(self.target, negotiation, self.options),
        )
        .await;
        let Ok(opened) = opened else {
            let detail = format!(
                "{label}: the check's time limit ({}) passed before the handshake completed",
                self.time_limit()
            );
            self.findings.push(self.cut(requested, detail.clone()));
            return (
                outcome(RevisionStatus::Unreachable, None, Some(detail)),
                None,
            );
        };
        let session = match opened {
            Ok(session) => session,
            Err(error) => return (self.failed_handshake(requested, &label, error), None),
        };
        let version = session.version();
        if let Some(wanted) = requested.filter(|wanted| *wanted != version) {
            session.close().await;
            let detail = format!("asked for {wanted}, the server offered {version}");
            self.findings.push(
                Finding::new(
                    Rule::RevisionUnsupported,
                    Location::new(Document::Server, "/protocolVersion"),
                    detail.clone(),
                )
                .revision(Some(wanted)),
            );
            return (
                outcome(RevisionStatus::Unsupported, Some(version), Some(detail)),
                None,
            );
        }
        let messages = session
            .inbox
            .take_noting("the handshake", version, &mut self.findings);
        self.handshake_messages(version, messages);
        if report.server.is_none()
            && let Some(info) = session.client.server_info()
        {
            report.server = Some(ServerInfo {
                name: info.name.clone(),
                version: info.version.clone(),
            });
        }
        let capabilities = session.client.negotiated().capabilities.clone();
        let list_changed = capabilities.tools.as_ref().and_then(|t| t.list_changed);

        self.progress(format!("listing tools on {version}"), 0, 1);
        let listed =
            tokio::time::timeout_at(deadline, listing::list(&session, &mut self.findings)).await;
        let Ok(listing) = listed else {
            let detail = format!(
                "tools/list on {version}: the check's time limit ({}) passed before the listing \
                 ended; its tools were not checked",
                self.time_limit()
            );
            self.findings.push(self.cut(Some(version), detail));
            session.close().await;
            let seen = Seen {
                version,
                tools: Vec::new(),
                list_changed,
                complete: false,
            };
            return (
                outcome(RevisionStatus::Checked, Some(version), None),
                Some(seen),
            );
        };
        // Arguments given for a tool the server does not list: a typo, most
        // likely; said rather than ignored.
        let mut unknown: Vec<&String> = self
            .options
            .arguments
            .keys()
            .filter(|name| listing.complete && !listing.tools.iter().any(|t| &t.name == *name))
            .collect();
        unknown.sort();
        for name in unknown {
            self.findings.push(
                Finding::new(
                    Rule::CallSkipped,
                    Location::new(Document::Listing, ""),
                    format!(
                        "the arguments given for {:?} (--args) were not used: the server lists no such tool",
                        toolshape_protocol::text::excerpt(name, 80)
                    ),
                )
                .revision(Some(version)),
            );
        }
        if capabilities.tools.is_none() && !listing.tools.is_empty() {
            self.findings.push(
                Finding::new(
                    Rule::ToolsCapabilityMissing,
                    Location::new(Document::Server, "/capabilities"),
                    "tools are listed, but the tools capability is not declared",
                )
                .revision(Some(version)),
            );
        }
        let mut changed = listing.changed;
        if listing.complete && !changed {
            let stable =
                tokio::time::timeout_at(deadline, self.stability(version, &listing.tools)).await;
            match stable {
                Ok(said_changed) => changed |= said_changed,
                Err(_) => {
                    let detail = format!(
                        "the second listing on {version} (for stability): the check's time \
                         limit ({}) passed before it ended",
                        self.time_limit()
                    );
                    self.findings.push(self.cut(Some(version), detail));
                }
            }
        }
        let compiled: Vec<Compiled> = listing
            .tools
            .iter()
            .map(|tool| self.schemas(version, tool))
            .collect();
        if let Some(finding) = self
            .engines
            .take_over_budget(Location::new(Document::Listing, "/tools"))
        {
            self.findings.push(finding.revision(Some(version)));
        }

        let mut connection = Connection {
            target: self.target,
            options: self.options,
            negotiation: Negotiation::Pinned(version),
            session: (!listing.server_gone).then_some(session),
            restarts: 0,
            exhausted: listing.server_gone,
        };
        let sideband = self
            .calls(version, &listing.tools, &compiled, &mut connection)
            .await;
        changed |= sideband.list_changed;
        if changed && list_changed != Some(true) {
            self.findings.push(
                Finding::new(
                    Rule::ListChangedUndeclared,
                    Location::new(Document::Server, "/capabilities/tools"),
                    "the server sent notifications/tools/list_changed without declaring listChanged: true",
                )
                .revision(Some(version)),
            );
        }
        if let Some(session) = connection.session.take() {
            session.close().await;
        }
        let seen = Seen {
            version,
            tools: listing.tools,
            list_changed,
            complete: listing.complete,
        };
        (
            outcome(RevisionStatus::Checked, Some(version), None),
            Some(seen),
        )
    }

    /// `--max-time`, as the findings name it.
    fn time_limit(&self) -> String {
        format!("{} s, --max-time", self.options.max_time.as_secs())
    }

    /// The finding for a step cut at the check's deadline.
    fn cut(&self, revision: Option<ProtocolVersion>, detail: String) -> Finding {
        Finding::new(
            Rule::CheckIncomplete,
            Location::new(Document::Server, ""),
            detail,
        )
        .revision(revision)
    }

    /// Checks the messages of a handshake.
    fn handshake_messages(&mut self, version: ProtocolVersion, received: Vec<Vec<u8>>) {
        let mut sideband = Sideband::default();
        let responses = listing::sort_out(
            version,
            received,
            "handshake",
            None,
            &mut self.findings,
            &mut sideband,
        );
        for response in &responses {
            self.findings.extend(messages::check(
                version,
                response,
                &Answers::Handshake,
                "handshake",
            ));
        }
    }

    /// Lists again on a second connection; a difference is a finding.
    /// Returns whether the server said its tools changed meanwhile.
    async fn stability(&mut self, version: ProtocolVersion, first: &[ListedTool]) -> bool {
        let Ok(session) =
            Session::open(self.target, Negotiation::Pinned(version), self.options).await
        else {
            return false;
        };
        session.inbox.take();
        // Its messages were checked on the first listing: findings here would repeat them.
        let mut scratch = Vec::new();
        let again = listing::list(&session, &mut scratch).await;
        session.close().await;
        if !again.complete || again.changed {
            return again.changed;
        }
        if let Some(difference) = listing::difference(first, &again.tools) {
            self.findings.push(
                Finding::new(
                    Rule::ListUnstable,
                    Location::new(Document::Listing, "/tools"),
                    format!("two connections listed different tools: {difference}"),
                )
                .revision(Some(version)),
            );
        }
        false
    }

    /// Checks one tool's schemas on `version`.
    fn schemas(&mut self, version: ProtocolVersion, tool: &ListedTool) -> Compiled {
        let tag = |findings: Vec<Finding>| -> Vec<Finding> {
            findings
                .into_iter()
                .map(|f| f.tool(tool.name.as_str()).revision(Some(version)))
                .collect()
        };
        let definition = &tool.definition;
        let skipped_before = self.engines.skipped();
        let input = definition.get("inputSchema").and_then(|schema| {
            let (found, usable) =
                schemas::check(&self.engines, schema, Document::Tool, "/inputSchema");
            self.findings.extend(tag(found));
            if let Err(error) = check_input_schema(schema) {
                self.findings.extend(tag(vec![Finding::new(
                    Rule::InputSchemaNotObject,
                    Location::new(Document::Tool, "/inputSchema"),
                    error.to_string(),
                )]));
                return None;
            }
            usable
        });
        let output = definition.get("outputSchema").and_then(|schema| {
            let (found, usable) =
                schemas::check(&self.engines, schema, Document::Tool, "/outputSchema");
            self.findings.extend(tag(found));
            let legacy_structured =
                version.supports_structured_output() && !version.allows_any_structured_content();
            if legacy_structured && !is_object_rooted(schema) {
                self.findings.extend(tag(vec![Finding::new(
                    Rule::OutputSchemaNotObject,
                    Location::new(Document::Tool, "/outputSchema"),
                    format!("outputSchema must be rooted at type \"object\" on {version}"),
                )]));
            }
            if schemas::declares_wrapping(definition)
                && let Some(finding) = schemas::wrap_closed(schema, "/outputSchema")
            {
                self.findings.extend(tag(vec![finding]));
            }
            usable
        });
        Compiled {
            input,
            output,
            over_budget: self.engines.skipped() != skipped_before,
        }
    }

    /// Calls the tools the policy allows.
    async fn calls(
        &mut self,
        version: ProtocolVersion,
        tools: &[ListedTool],
        compiled: &[Compiled],
        connection: &mut Connection<'_>,
    ) -> Sideband {
        let chosen: Vec<(&ListedTool, &Compiled)> = tools
            .iter()
            .zip(compiled)
            .filter(|(tool, _)| match self.options.calls {
                CallPolicy::None => false,
                CallPolicy::ReadOnly => is_read_only(&tool.definition),
                CallPolicy::All => true,
            })
            .collect();
        if self.options.calls == CallPolicy::ReadOnly {
            for tool in tools.iter().filter(|tool| !is_read_only(&tool.definition)) {
                self.counts
                    .entry(tool.name.clone())
                    .or_default()
                    .skipped
                    .get_or_insert_with(|| "not read-only (use --call all)".to_owned());
            }
        }
        let planned = chosen.len();
        let deadline = self.deadline;
        let mut stopped = None;
        let mut sideband = Sideband::default();
        let mut findings = Vec::new();
        let mut counts = std::mem::take(&mut self.counts);
        {
            let mut calls = Calls::new(version, connection, deadline, &mut findings);
            for (step, (tool, compiled)) in chosen.iter().enumerate() {
                self.options.report_progress(
                    format!("calling {} on {version}", tool.name),
                    self.progress_done + step,
                    self.progress_done + planned,
                );
                let definition = &tool.definition;
                let plan = Planned {
                    name: &tool.name,
                    input_schema: definition.get("inputSchema").unwrap_or(&Value::Null),
                    input: compiled.input.as_ref(),
                    output: compiled.output.as_ref(),
                    declares_output: definition.get("outputSchema").is_some(),
                    over_budget: compiled.over_budget,
                };
                let entry = counts.entry(tool.name.clone()).or_default();
                calls.call_tool(&plan, entry).await;
                if calls.stopped.is_some() {
                    break;
                }
            }
            stopped = stopped.or(calls.stopped.take());
            sideband.list_changed = calls.sideband.list_changed;
        }
        if stopped.is_some() {
            for (tool, _) in &chosen {
                counts.entry(tool.name.clone()).or_default().not_reached();
            }
        }
        self.progress_done += planned;
        self.counts = counts;
        self.findings.append(&mut findings);
        if let Some(reason) = stopped {
            self.findings.push(
                Finding::new(
                    Rule::CheckIncomplete,
                    Location::new(Document::Server, ""),
                    reason,
                )
                .revision(Some(version)),
            );
        }
        sideband
    }
}
