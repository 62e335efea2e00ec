//! Calling the tools: valid arguments made from each inputSchema, then a few
//! invalid ones; every answer checked; a server that hangs or exits is a
//! finding, and is started again (a bounded number of times).

use std::time::Instant;

use serde_json::{Map, Value};
use toolshape::client::{ClientErrorKind, Negotiation};
use toolshape_protocol::ProtocolVersion;

use super::listing::{self, Sideband};
use super::messages::{self, Answers};
use super::results::{Call, Verdict};
use super::session::{self, Session};
use crate::finding::{Document, Finding, Location};
use crate::generate::Generator;
use crate::options::{Options, Target};
use crate::report::CallCounts;
use crate::rules::Rule;
use crate::schemas::Usable;

/// Consecutive timeouts after which the connection is started afresh.
const TIMEOUTS_BEFORE_RESTART: usize = 2;

/// How long a server has to answer the ping after a call timed out.
const PING_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(2);

/// A connection that is opened again when the server is gone.
pub(crate) struct Connection<'a> {
    pub(crate) target: &'a Target,
    pub(crate) options: &'a Options,
    pub(crate) negotiation: Negotiation,
    pub(crate) session: Option<Session>,
    pub(crate) restarts: usize,
    /// A restart was refused (the bound, or the server no longer starts).
    pub(crate) exhausted: bool,
}

impl Connection<'_> {
    /// The session, opened again if the server went away; the start and
    /// its listing end by `deadline` (the check's `--max-time`), or the
    /// server counts as not started.
    async fn session(&mut self, deadline: Instant) -> Option<&Session> {
        if self.session.is_none() && !self.exhausted {
            if self.restarts >= self.options.max_restarts {
                self.exhausted = true;
                return None;
            }
            self.restarts += 1;
            let (target, negotiation, options) = (self.target, self.negotiation, self.options);
            let started = tokio::time::timeout_at(deadline.into(), async move {
                let session = Session::open(target, negotiation, options)
                    .await
                    .map_err(|error| error.error.to_string())?;
                // The handshake and the listing were checked on the first
                // connection; listed here, not inside the next call.
                if let Err(error) = session.client.list_tools().await {
                    tracing::debug!(%error, "the restarted server's tools could not be listed");
                }
                Ok::<_, String>(session)
            })
            .await;
            match started {
                Ok(Ok(session)) => {
                    session.inbox.take();
                    self.session = Some(session);
                }
                Ok(Err(error)) => {
                    tracing::debug!(%error, "the server could not be started again");
                    self.exhausted = true;
                }
                Err(_) => {
                    tracing::debug!("the server's restart ran past the time limit");
                    self.exhausted = true;
                }
            }
        }
        self.session.as_ref()
    }

    async fn drop_session(&mut self) {
        if let Some(session) = self.session.take() {
            session.close().await;
        }
    }
}

/// One tool to call, with what its schemas allow.
pub(crate) struct Planned<'a> {
    pub(crate) name: &'a str,
    pub(crate) input_schema: &'a Value,
    pub(crate) input: Option<&'a Usable>,
    pub(crate) output: Option<&'a Usable>,
    pub(crate) declares_output: bool,
    /// A schema of it was not compiled: the check's compile budget was spent.
    pub(crate) over_budget: bool,
}

/// Everything the calls of one revision share.
pub(crate) struct Calls<'a, 'c> {
    pub(crate) version: ProtocolVersion,
    pub(crate) connection: &'c mut Connection<'a>,
    pub(crate) deadline: Instant,
    pub(crate) findings: &'c mut Vec<Finding>,
    pub(crate) sideband: Sideband,
    consecutive_timeouts: usize,
    /// The check stopped early; why.
    pub(crate) stopped: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Valid,
    Invalid,
}

impl<'a, 'c> Calls<'a, 'c> {
    pub(crate) fn new(
        version: ProtocolVersion,
        connection: &'c mut Connection<'a>,
        deadline: Instant,
        findings: &'c mut Vec<Finding>,
    ) -> Self {
        Calls {
            version,
            connection,
            deadline,
            findings,
            sideband: Sideband::default(),
            consecutive_timeouts: 0,
            stopped: None,
        }
    }

    fn skipped(&mut self, tool: &str, reason: &str, counts: &mut CallCounts) {
        counts.skipped.get_or_insert_with(|| reason.to_owned());
        self.findings.push(
            Finding::new(Rule::CallSkipped, Location::new(Document::Tool, ""), reason)
                .tool(tool)
                .revision(Some(self.version)),
        );
    }

    /// Calls one tool with generated valid arguments, then invalid ones.
    pub(crate) async fn call_tool(&mut self, tool: &Planned<'_>, counts: &mut CallCounts) {
        let Some(input) = tool.input else {
            let reason = match tool.over_budget {
                true => {
                    "not called: its schemas were not compiled (the check's compile budget was spent)"
                }
                false => "not called: its inputSchema is unusable",
            };
            self.skipped(tool.name, reason, counts);
            return;
        };
        let generator = Generator::new(tool.input_schema);
        let accepts = |candidate: &Map<String, Value>| {
            input
                .asserting
                .validate(&Value::Object(candidate.clone()))
                .is_ok()
        };
        let seed = self.connection.options.arguments.get(tool.name);
        if let Some(seed) = seed
            && let Err(error) = input.asserting.validate(&Value::Object(seed.clone()))
        {
            self.findings.push(
                Finding::new(
                    Rule::CallSkipped,
                    Location::new(Document::Tool, "/inputSchema"),
                    format!("the arguments given for this tool were not used: its inputSchema rejects them: {error}"),
                )
                .tool(tool.name)
                .revision(Some(self.version))
                .arguments(&Value::Object(seed.clone())),
            );
        }
        let valid: Vec<Map<String, Value>> = generator
            .valid_candidates(seed)
            .into_iter()
            .filter(accepts)
            .take(self.connection.options.max_valid_calls)
            .collect();
        let Some(base) = valid.first() else {
            self.skipped(
                tool.name,
                "not called: no arguments its inputSchema accepts could be made (give `examples` or `default`s)",
                counts,
            );
            return;
        };
        let invalid: Vec<Map<String, Value>> = generator
            .invalid_candidates(base)
            .into_iter()
            .filter(|candidate| !accepts(candidate))
            .take(self.connection.options.max_invalid_calls)
            .collect();
        for arguments in &valid {
            if !self.one(tool, arguments, Kind::Valid, counts).await {
                return;
            }
        }
        for arguments in &invalid {
            if !self.one(tool, arguments, Kind::Invalid, counts).await {
                return;
            }
        }
    }

    /// Makes one call and judges it; false when the check must stop calling.
    async fn one(
        &mut self,
        tool: &Planned<'_>,
        arguments: &Map<String, Value>,
        kind: Kind,
        counts: &mut CallCounts,
    ) -> bool {
        if Instant::now() >= self.deadline {
            self.stopped = Some(format!(
                "the time limit ({} s) ran out before every call was made",
                self.connection.options.max_time.as_secs()
            ));
            return false;
        }
        let version = self.version;
        let options = self.connection.options;
        let Some(session) = self.connection.session(self.deadline).await else {
            if Instant::now() >= self.deadline {
                self.stopped = Some(format!(
                    "the time limit ({} s) ran out while the server was started again",
                    self.connection.options.max_time.as_secs()
                ));
                return false;
            }
            self.stopped = Some(format!(
                "the server could not be started again after {} restarts",
                self.connection.restarts
            ));
            return false;
        };
        let session::CallRecord {
            outcome,
            messages: received,
            dropped,
            ids,
        } = session
            .call(
                tool.name,
                arguments,
                options.call_timeout,
                options.max_call_time,
            )
            .await;
        let stderr = session.stderr_excerpt();
        let what = match kind {
            Kind::Valid => format!("tools/call {}", tool.name),
            Kind::Invalid => format!("tools/call {} (invalid arguments)", tool.name),
        };
        if dropped > 0 {
            self.findings.push(
                session::flood(&what, dropped)
                    .tool(tool.name)
                    .revision(Some(version)),
            );
        }
        let unparsable_before = self.sideband.unparsable;
        let responses = listing::sort_out(
            version,
            received,
            &what,
            Some(tool.name),
            self.findings,
            &mut self.sideband,
        );
        let unparsable = self.sideband.unparsable > unparsable_before;
        let timed_out = matches!(
            outcome.as_ref().map_err(|e| e.kind()),
            Err(ClientErrorKind::Timeout(_) | ClientErrorKind::Cancelled)
        );
        let unanswered = timed_out
            || matches!(
                outcome.as_ref().map_err(|e| e.kind()),
                Err(ClientErrorKind::Transport(_))
            );
        // The answer is the response to the last request the client made
        // for the call (a listing it made first has an earlier id, a late
        // answer to an earlier call too, and a stray answer to an id never
        // sent is none of them); the last of them if the server repeats it.
        // After a timeout, or once the connection is gone, none is ours.
        let answer = (!unanswered && !ids.is_empty())
            .then(|| {
                responses
                    .iter()
                    .rposition(|r| messages::numeric_id(r) == Some(*ids.end()))
            })
            .flatten();
        for (index, response) in responses.iter().enumerate() {
            let answers = if Some(index) == answer {
                Answers::Call(tool.name.to_owned())
            } else {
                Answers::Unknown
            };
            if let Some(id) = never_sent(response, *ids.end()) {
                self.findings.push(
                    Finding::new(
                        Rule::ResponseUnknownId,
                        Location::new(Document::Message, "/id"),
                        format!(
                            "{what}: a response to id {}, which the client never sent",
                            toolshape_protocol::text::excerpt(&id.to_string(), 80)
                        ),
                    )
                    .tool(tool.name)
                    .revision(Some(version)),
                );
            }
            self.findings
                .extend(messages::check(version, response, &answers, &what));
        }
        let call = Call {
            version,
            tool: tool.name,
            arguments,
            declares_output: tool.declares_output,
            output: tool.output,
            over_budget: tool.over_budget,
        };
        match kind {
            Kind::Valid => counts.valid += 1,
            Kind::Invalid => counts.invalid += 1,
        }
        let Some(response) = answer.and_then(|index| responses.get(index)) else {
            let error = match outcome {
                Ok(_) => return true,
                Err(error) => error,
            };
            let (rule, message, gone) = listing::failure(&error, &what, &stderr);
            if unparsable && matches!(error.kind(), ClientErrorKind::InvalidResponse(_)) {
                // The unreadable answer is a finding already.
                return true;
            }
            self.findings.push(
                Finding::new(rule, Location::new(Document::Result, ""), message)
                    .tool(tool.name)
                    .revision(Some(version))
                    .arguments(&Value::Object(arguments.clone())),
            );
            self.consecutive_timeouts = if timed_out {
                self.consecutive_timeouts + 1
            } else {
                0
            };
            // A server that stopped reading would cost the next tool a
            // timeout of its own: one that does not answer a ping at once is
            // started again.
            let deaf = timed_out
                && self.consecutive_timeouts < TIMEOUTS_BEFORE_RESTART
                && session
                    .client
                    .ping(options.call_timeout.min(PING_TIMEOUT))
                    .await
                    .is_err();
            if gone || deaf || self.consecutive_timeouts >= TIMEOUTS_BEFORE_RESTART {
                self.consecutive_timeouts = 0;
                self.connection.drop_session().await;
            }
            return true;
        };
        self.consecutive_timeouts = 0;
        match (kind, call_verdict(&call, kind, response, self.findings)) {
            (Kind::Valid, Verdict::Succeeded) => counts.succeeded += 1,
            (Kind::Valid, Verdict::ToolError) => counts.tool_errors += 1,
            (Kind::Invalid, Verdict::ToolError | Verdict::Rejected) => {
                counts.invalid_rejected += 1;
            }
            _ => {}
        }
        true
    }
}

/// The id of `response` when the client never sent a request with it (its
/// ids are the numbers 1 to `issued`); `null` answers a request that could
/// not be read, so it is not counted.
fn never_sent(response: &Value, issued: i64) -> Option<&Value> {
    let id = response.get("id")?;
    let sent = id.is_null() || id.as_i64().is_some_and(|n| (1..=issued).contains(&n));
    (!sent).then_some(id)
}

fn call_verdict(
    call: &Call<'_>,
    kind: Kind,
    response: &Value,
    findings: &mut Vec<Finding>,
) -> Verdict {
    match kind {
        Kind::Valid => call.valid(response, findings),
        Kind::Invalid => call.invalid(response, findings),
    }
}
