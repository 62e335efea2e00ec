//! `tools/list`: every page checked, pagination followed to the end, names
//! checked, and a second listing compared with the first.

use std::collections::HashSet;

use serde_json::Value;
use toolshape::client::{ClientError, ClientErrorKind, TransportError};
use toolshape_protocol::tools::validate_tool_name;
use toolshape_protocol::{ProtocolVersion, methods};

use super::messages::{self, Answers, Parsed};
use super::session::Session;
use crate::finding::{Document, Finding, Location, join};
use crate::rules::Rule;

/// One listed tool: the first definition listed under its name.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ListedTool {
    pub(crate) name: String,
    pub(crate) definition: Value,
}

/// What a listing found.
#[derive(Debug, Default)]
pub(crate) struct Listing {
    /// The tools, in listing order, one per name.
    pub(crate) tools: Vec<ListedTool>,
    /// Whether the listing ended as it should.
    pub(crate) complete: bool,
    /// Whether the server said its tools changed meanwhile.
    pub(crate) changed: bool,
    /// Whether the server is gone.
    pub(crate) server_gone: bool,
}

/// What a batch of received messages held besides the responses.
#[derive(Debug, Default)]
pub(crate) struct Sideband {
    /// A `notifications/tools/list_changed` was among them.
    pub(crate) list_changed: bool,
    /// Messages that could not be parsed (each already a finding).
    pub(crate) unparsable: usize,
}

/// Checks the notifications and server requests in `messages` (and any
/// message that does not parse); returns the responses, in order.
pub(crate) fn sort_out(
    version: ProtocolVersion,
    messages: Vec<Vec<u8>>,
    what: &str,
    tool: Option<&str>,
    findings: &mut Vec<Finding>,
    sideband: &mut Sideband,
) -> Vec<Value> {
    let mut responses = Vec::new();
    // What the messages beside the answers break, bounded: a server may send
    // 100,000 of them during one request, each breaking several rules.
    let mut noted = Vec::new();
    let mut unchecked = 0usize;
    // Repeats are taken out each time the findings reach the bound; once
    // they stay at it, the rest are only counted (never deduplicated again).
    let mut full = false;
    let mut room = |noted: &mut Vec<Finding>| {
        if !full && noted.len() >= MAX_SIDEBAND_FINDINGS {
            crate::dedupe::apply(noted);
            full = noted.len() >= MAX_SIDEBAND_FINDINGS;
        }
        !full
    };
    for bytes in messages {
        let value = match messages::parse(&bytes) {
            Parsed::Json(value) => value,
            // A listing page with a tool too deep to read: the others are
            // checked, that one is its own finding.
            Parsed::TooDeep if what == "tools/list" && tool.is_none() => {
                let Some((page, unreadable)) = messages::parse_page_without(&bytes) else {
                    if room(&mut noted) {
                        sideband.unparsable += 1;
                        noted.extend(messages::unparsable(
                            Some(version),
                            &Parsed::TooDeep,
                            what,
                            tool,
                        ));
                    }
                    continue;
                };
                for name in unreadable {
                    let finding = Finding::new(
                        Rule::ResponseOverBounds,
                        Location::new(Document::Tool, ""),
                        "its definition nests deeper than 127 levels: toolshape's client (and a \
                         proxy in front of the server) leaves it out of the listing",
                    )
                    .revision(Some(version));
                    noted.push(match name.is_empty() {
                        true => finding,
                        false => finding.tool(name),
                    });
                }
                page
            }
            other => {
                // Counted with its finding: a call whose answer is unreadable
                // is reported by the call when this finding was not kept.
                if room(&mut noted) {
                    sideband.unparsable += 1;
                    noted.extend(messages::unparsable(Some(version), &other, what, tool));
                } else {
                    unchecked += 1;
                }
                continue;
            }
        };
        if let Some(problem) = messages::malformed_response(&value) {
            // Not an answer the client can take: counted as unreadable.
            if room(&mut noted) {
                sideband.unparsable += 1;
                let mut finding = Finding::new(
                    Rule::ResponseMalformed,
                    Location::new(Document::Message, ""),
                    format!("{what}: a response {problem}"),
                )
                .revision(Some(version));
                if let Some(tool) = tool {
                    finding = finding.tool(tool);
                }
                noted.push(finding);
            } else {
                unchecked += 1;
            }
            continue;
        }
        if messages::is_response(&value) {
            responses.push(value);
            continue;
        }
        if value.get("method") == Some(&Value::from("notifications/tools/list_changed")) {
            sideband.list_changed = true;
        }
        if !room(&mut noted) {
            unchecked += 1;
            continue;
        }
        let kind = if value.get("id").is_some() {
            "a request from the server"
        } else {
            "a notification"
        };
        // Named by its method when MCP has it, so that a finding says which
        // message it is (another's name would make each of a flood of made-up
        // methods a finding of its own).
        let kind = match value.get("method").and_then(Value::as_str) {
            Some(method) if SERVER_METHODS.contains(&method) => format!("{kind} ({method})"),
            Some(_) => format!("{kind} (a method MCP does not have)"),
            None => kind.to_owned(),
        };
        noted.extend(messages::check(version, &value, &Answers::Unknown, &kind));
    }
    findings.append(&mut noted);
    if unchecked > 0 {
        let mut finding = Finding::new(
            Rule::CheckIncomplete,
            Location::new(Document::Message, ""),
            format!(
                "{what}: {unchecked} more of the server's messages beside its answers were not \
                 checked ({MAX_SIDEBAND_FINDINGS} findings about such messages kept)"
            ),
        )
        .revision(Some(version));
        if let Some(tool) = tool {
            finding = finding.tool(tool);
        }
        findings.push(finding);
    }
    responses
}

/// The methods of what a server may send a client besides answers.
const SERVER_METHODS: [&str; 13] = [
    methods::PING,
    methods::CANCELLED,
    methods::PROGRESS,
    methods::LOGGING_MESSAGE,
    methods::TOOLS_LIST_CHANGED,
    methods::RESOURCES_UPDATED,
    methods::RESOURCES_LIST_CHANGED,
    methods::PROMPTS_LIST_CHANGED,
    methods::SUBSCRIPTIONS_ACKNOWLEDGED,
    methods::ELICITATION_CREATE,
    methods::ELICITATION_COMPLETE,
    methods::SAMPLING_CREATE_MESSAGE,
    methods::ROOTS_LIST,
];

/// Most findings kept about the messages beside the answers during one step
/// (exact repeats counted once).
const MAX_SIDEBAND_FINDINGS: usize = 1_000;

/// The finding for a request that failed without a readable answer.
pub(crate) fn failure(error: &ClientError, what: &str, stderr: &str) -> (Rule, String, bool) {
    match error.kind() {
        ClientErrorKind::Timeout(limit) => (
            Rule::RequestTimeout,
            format!(
                "{what}: no answer (or progress report) within {} ms",
                limit.as_millis()
            ),
            false,
        ),
        ClientErrorKind::Transport(TransportError::Closed) => {
            let stderr = if stderr.is_empty() {
                String::new()
            } else {
                format!("; its stderr ends: {stderr}")
            };
            (
                Rule::ServerExited,
                format!("{what}: the server closed the connection{stderr}"),
                true,
            )
        }
        ClientErrorKind::Transport(other) => (
            Rule::ServerExited,
            format!("{what}: transport failure: {other}"),
            false,
        ),
        ClientErrorKind::InvalidResponse(detail) => (
            Rule::ResponseOverBounds,
            format!("{what}: the answer could not be read: {detail}"),
            false,
        ),
        _ => (Rule::MessageInvalid, format!("{what}: {error}"), false),
    }
}

/// Lists the tools, checking every page.
pub(crate) async fn list(session: &Session, findings: &mut Vec<Finding>) -> Listing {
    let version = session.version();
    let outcome = session.client.list_tools().await;
    let messages = session.inbox.take_noting("tools/list", version, findings);
    let mut sideband = Sideband::default();
    let pages = sort_out(
        version,
        messages,
        "tools/list",
        None,
        findings,
        &mut sideband,
    );
    let mut listing = Listing {
        changed: sideband.list_changed,
        ..Listing::default()
    };
    let mut names = HashSet::new();
    let mut cursors = HashSet::new();
    // Pages that come round again list the same tools again: that is the
    // repeated cursor's finding, not each tool's.
    let looping = {
        let mut seen = HashSet::new();
        pages.iter().any(|page| {
            page.pointer("/result/nextCursor")
                .and_then(Value::as_str)
                .is_some_and(|cursor| !seen.insert(cursor))
        })
    };
    let mut invalid_pages = 0;
    for (number, page) in pages.iter().enumerate() {
        let what = format!("tools/list page {}", number + 1);
        let page_findings = messages::check(version, page, &Answers::ListPage, &what);
        invalid_pages += usize::from(!page_findings.is_empty());
        findings.extend(page_findings);
        let Some(result) = page.get("result") else {
            let error = page.get("error").map(Value::to_string).unwrap_or_default();
            findings.push(
                Finding::new(
                    Rule::ListFailed,
                    Location::new(Document::Message, "/error"),
                    format!(
                        "{what}: answered with an error: {}",
                        toolshape_protocol::text::excerpt(&error, 300)
                    ),
                )
                .revision(Some(version)),
            );
            break;
        };
        let entries = result.get("tools").and_then(Value::as_array);
        for (index, entry) in entries.into_iter().flatten().enumerate() {
            let Some(name) = entry.get("name").and_then(Value::as_str) else {
                continue;
            };
            if !names.insert(name.to_owned()) {
                if looping {
                    continue;
                }
                findings.push(
                    Finding::new(
                        Rule::ToolDuplicateName,
                        Location::new(
                            Document::Listing,
                            join(&messages::tool_pointer(index), "name"),
                        ),
                        format!(
                            "{what}: {name:?} is listed again; clients keep one of the definitions"
                        ),
                    )
                    .tool(name)
                    .revision(Some(version)),
                );
                continue;
            }
            if version >= ProtocolVersion::V2025_11_25
                && let Err(reason) = validate_tool_name(name)
            {
                findings.push(
                    Finding::new(
                        Rule::ToolNameInvalid,
                        Location::new(Document::Tool, "/name"),
                        reason.to_string(),
                    )
                    .tool(name)
                    .revision(Some(version)),
                );
            }
            listing.tools.push(ListedTool {
                name: name.to_owned(),
                definition: entry.clone(),
            });
        }
        if let Some(cursor) = result.get("nextCursor").and_then(Value::as_str)
            && !cursors.insert(cursor.to_owned())
        {
            findings.push(
                Finding::new(
                    Rule::ListCursorRepeated,
                    Location::new(Document::Listing, "/nextCursor"),
                    format!(
                        "{what}: nextCursor {:?} was returned before: the listing would never end",
                        toolshape_protocol::text::excerpt(cursor, 80)
                    ),
                )
                .revision(Some(version)),
            );
        }
    }
    match outcome {
        Ok(_) => listing.complete = true,
        Err(error) => {
            let already = findings.iter().any(|f| {
                f.revision == Some(version)
                    && matches!(f.rule, Rule::ListCursorRepeated | Rule::ListFailed)
            });
            if let ClientErrorKind::ListingOverBounds { bound, .. } = error.kind() {
                findings.push(
                    Finding::new(
                        Rule::ListEndless,
                        Location::new(Document::Listing, "/nextCursor"),
                        format!(
                            "tools/list did not end within the client's bounds: it went past {bound}"
                        ),
                    )
                    .revision(Some(version)),
                );
            } else if matches!(error.kind(), ClientErrorKind::Protocol(_)) || already {
                // The error page was reported above.
            } else if matches!(error.kind(), ClientErrorKind::InvalidResponse(_))
                && invalid_pages > 0
            {
                // The invalid page was reported above.
            } else {
                let (rule, message, gone) =
                    failure(&error, "tools/list", &session.stderr_excerpt());
                let rule = if rule == Rule::MessageInvalid {
                    Rule::ListFailed
                } else {
                    rule
                };
                listing.server_gone = gone;
                findings.push(
                    Finding::new(rule, Location::new(Document::Listing, ""), message)
                        .revision(Some(version)),
                );
            }
        }
    }
    listing
}

/// The first difference between two listings of the same server, if any.
pub(crate) fn difference(first: &[ListedTool], second: &[ListedTool]) -> Option<String> {
    let names = |tools: &[ListedTool]| tools.iter().map(|t| t.name.clone()).collect::<Vec<_>>();
    let (a, b) = (names(first), names(second));
    if a != b {
        let mut sorted_a = a.clone();
        let mut sorted_b = b.clone();
        sorted_a.sort();
        sorted_b.sort();
        return Some(if sorted_a == sorted_b {
            format!(
                "the same tools in another order: {} then {}",
                a.join(","),
                b.join(",")
            )
        } else {
            format!("other tools: {} then {}", a.join(","), b.join(","))
        });
    }
    first
        .iter()
        .zip(second)
        .find(|(x, y)| x.definition != y.definition)
        .map(|(tool, _)| format!("the definition of {} changed", tool.name))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(name: &str, input: Value) -> ListedTool {
        ListedTool {
            name: name.into(),
            definition: json!({"name": name, "inputSchema": input}),
        }
    }

    fn sorted_out(messages: Vec<Vec<u8>>) -> (Vec<Value>, Vec<Finding>) {
        let mut findings = Vec::new();
        let mut sideband = Sideband::default();
        let responses = sort_out(
            ProtocolVersion::V2025_11_25,
            messages,
            "tools/list",
            None,
            &mut findings,
            &mut sideband,
        );
        (responses, findings)
    }

    const ANSWER: &[u8] = br#"{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}"#;

    #[test]
    fn findings_about_messages_beside_the_answer_are_bounded() {
        // 5,000 invalid log messages, each the same defect: kept once.
        let mut messages: Vec<Vec<u8>> = (0..5_000)
            .map(|n| {
                json!({"jsonrpc": "2.0", "method": "notifications/message",
                       "params": {"level": format!("level-{n}"), "data": n}})
                .to_string()
                .into_bytes()
            })
            .collect();
        messages.push(ANSWER.to_vec());
        let (responses, findings) = sorted_out(messages);
        assert_eq!(responses.len(), 1);
        assert!(findings.len() < MAX_SIDEBAND_FINDINGS, "{}", findings.len());
        // 1,500 lines that are not JSON, each failing at another column: a
        // thousand findings, then a count of the rest.
        let mut messages: Vec<Vec<u8>> = (0..1_500)
            .map(|n| format!("{{\"a\": {}x", " ".repeat(n)).into_bytes())
            .collect();
        messages.push(ANSWER.to_vec());
        let (responses, findings) = sorted_out(messages);
        assert_eq!(responses.len(), 1);
        assert_eq!(findings.len(), MAX_SIDEBAND_FINDINGS + 1);
        let last = findings.last().expect("findings");
        assert_eq!(last.rule, Rule::CheckIncomplete, "{last:?}");
        assert!(
            last.message.contains("500 more of the server's messages"),
            "{}",
            last.message
        );
    }

    #[test]
    fn listings_are_compared_by_order_then_definition() {
        let a = [
            tool("a", json!({"type": "object"})),
            tool("b", json!({"type": "object"})),
        ];
        let reordered = [a[1].clone(), a[0].clone()];
        let changed = [
            a[0].clone(),
            tool("b", json!({"type": "object", "required": ["x"]})),
        ];
        assert_eq!(difference(&a, &a), None);
        assert!(difference(&a, &reordered).is_some_and(|d| d.contains("another order")));
        assert!(difference(&a, &changed).is_some_and(|d| d.contains("definition of b")));
    }
}
