//! Every message the server sends, validated against the normative
//! `schema.json` of the revision in use: its JSON-RPC envelope, and the
//! result against the definition of what it answers.

use serde_json::Value;
use toolshape_protocol::ProtocolVersion;
use toolshape_protocol::meta::keys;
use toolshape_schema::Violation;

use crate::finding::{Document, Finding, Location, is_within, join};
use crate::rules::Rule;
use crate::spec::{self, Definition};

/// Most findings one message yields.
const MAX_FINDINGS_PER_MESSAGE: usize = 12;

/// A received message, parsed.
#[derive(Debug)]
pub(crate) enum Parsed {
    /// A JSON value.
    Json(Value),
    /// Not JSON; why.
    NotJson(String),
    /// Nested deeper than the JSON parser goes (127 levels).
    TooDeep,
}

/// The deepest nesting serde_json parses (its recursion limit, 128, is
/// reached by the 128th array or object).
const PARSED_DEPTH: usize = 127;

/// Parses one received message.
pub(crate) fn parse(bytes: &[u8]) -> Parsed {
    match serde_json::from_slice::<Value>(bytes) {
        Ok(value) => Parsed::Json(value),
        // Too deep where the parser stopped (not a syntax error before).
        Err(error) if nests_deeper_than(up_to(bytes, &error), PARSED_DEPTH) => Parsed::TooDeep,
        Err(error) => {
            let start = String::from_utf8_lossy(bytes.get(..80).unwrap_or(bytes)).into_owned();
            Parsed::NotJson(format!("{error}; it starts {start:?}"))
        }
    }
}

/// A listing page too deep to parse whole, read member by member: the page
/// with the tools that parse, and the name (when it has one) of each that
/// does not. `None` when what is too deep is not a listed tool.
pub(crate) fn parse_page_without(bytes: &[u8]) -> Option<(Value, Vec<String>)> {
    use serde_json::Map;
    use serde_json::value::RawValue;

    #[derive(serde::Deserialize)]
    struct Named {
        name: String,
    }
    let envelope: std::collections::BTreeMap<String, Box<RawValue>> =
        serde_json::from_slice(bytes).ok()?;
    let mut page = Map::new();
    let mut unreadable = Vec::new();
    for (key, raw) in envelope {
        if key != "result" {
            page.insert(key, serde_json::from_str(raw.get()).ok()?);
            continue;
        }
        let members: std::collections::BTreeMap<String, Box<RawValue>> =
            serde_json::from_str(raw.get()).ok()?;
        let mut result = Map::new();
        for (name, raw) in members {
            if name != "tools" {
                result.insert(name, serde_json::from_str(raw.get()).ok()?);
                continue;
            }
            let listed: Vec<Box<RawValue>> = serde_json::from_str(raw.get()).ok()?;
            let mut tools = Vec::new();
            for tool in listed {
                match serde_json::from_str::<Value>(tool.get()) {
                    Ok(value) => tools.push(value),
                    Err(_) => unreadable.push(
                        serde_json::from_str::<Named>(tool.get())
                            .map(|named| named.name)
                            .unwrap_or_default(),
                    ),
                }
            }
            result.insert(name, Value::Array(tools));
        }
        page.insert(key, Value::Object(result));
    }
    (!unreadable.is_empty()).then_some((Value::Object(page), unreadable))
}

/// `bytes` up to and including where `error` says the parser stopped (its
/// line and column, counted in bytes).
fn up_to<'b>(bytes: &'b [u8], error: &serde_json::Error) -> &'b [u8] {
    let line_start = if error.line() <= 1 {
        0
    } else {
        bytes
            .iter()
            .enumerate()
            .filter(|(_, byte)| **byte == b'\n')
            .nth(error.line() - 2)
            .map_or(bytes.len(), |(at, _)| at + 1)
    };
    let end = line_start.saturating_add(error.column()).min(bytes.len());
    &bytes[..end]
}

/// Whether arrays and objects nest more than `limit` deep in `bytes`
/// (strings skipped; read as far as that is seen, whatever follows).
fn nests_deeper_than(bytes: &[u8], limit: usize) -> bool {
    // Whether each open container is an object (at most `limit` + 1).
    let mut open: Vec<bool> = Vec::new();
    let (mut in_string, mut escaped, mut key_due) = (false, false, false);
    for &byte in bytes {
        if in_string {
            match (escaped, byte) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match byte {
            b'"' => (in_string, key_due) = (true, false),
            // Where a key is due the parser stops for the syntax, not the depth.
            b'[' | b'{' if key_due => return false,
            b'[' | b'{' => {
                open.push(byte == b'{');
                if open.len() > limit {
                    return true;
                }
                key_due = byte == b'{';
            }
            b']' | b'}' => (_, key_due) = (open.pop(), false),
            b',' => key_due = open.last() == Some(&true),
            _ => {}
        }
    }
    false
}

/// What a response answers, as far as the check knows.
#[derive(Debug, Clone)]
pub(crate) enum Answers {
    /// The handshake (`initialize` or `server/discover`).
    Handshake,
    /// A page of `tools/list`.
    ListPage,
    /// A `tools/call` of this tool.
    Call(String),
    /// Nothing known (a late answer, say): only the envelope is checked.
    Unknown,
}

/// Whether a message is a response (no method; an id and a result, or an
/// error, which since 2025-11-25 may come without an id when the request's
/// could not be read; the revision's schema judges it).
pub(crate) fn is_response(value: &Value) -> bool {
    value.get("method").is_none()
        && ((value.get("id").is_some() && value.get("result").is_some())
            || value.get("error").is_some())
}

/// What is wrong with a message that answers (an id, no method) but not as
/// JSON-RPC 2.0 allows: both `result` and `error`, or neither.
pub(crate) fn malformed_response(value: &Value) -> Option<&'static str> {
    if value.get("method").is_some() || value.get("id").is_none() {
        return None;
    }
    match (value.get("result").is_some(), value.get("error").is_some()) {
        (true, true) => Some("has both result and error; JSON-RPC 2.0 allows exactly one"),
        (false, false) => Some("has neither result nor error; JSON-RPC 2.0 requires one"),
        _ => None,
    }
}

/// The numeric id of a response, when it has one.
pub(crate) fn numeric_id(value: &Value) -> Option<i64> {
    value.get("id").and_then(Value::as_i64)
}

fn invalid(location: Location, what: &str, violation: &Violation) -> Finding {
    Finding::new(
        Rule::MessageInvalid,
        location,
        format!("{what}: {} ({})", violation.message, violation.keyword),
    )
}

/// Validates one parsed message of `version`, sent as `answers` says,
/// described as `what` in messages.
pub(crate) fn check(
    version: ProtocolVersion,
    value: &Value,
    answers: &Answers,
    what: &str,
) -> Vec<Finding> {
    if !spec::has_schema(version) {
        return Vec::new();
    }
    let mut findings = Vec::new();
    let message_at = |pointer: &str| Location::new(Document::Message, pointer.to_owned());
    let envelope = |definition| spec::violations(version, definition, value).unwrap_or_default();
    if let Some(result) = value.get("result").filter(|_| is_response(value)) {
        for violation in envelope(Definition::ResultResponse)
            .iter()
            .filter(|v| !is_within(&v.instance_path, "/result"))
        {
            findings.push(invalid(
                message_at(&violation.instance_path),
                what,
                violation,
            ));
        }
        findings.extend(check_result(version, result, answers, what));
        if matches!(answers, Answers::ListPage) {
            findings.extend(unnamed(version, result, what));
        }
    } else if value.get("error").is_some() && is_response(value) {
        for violation in &envelope(Definition::ErrorResponse) {
            findings.push(invalid(
                message_at(&violation.instance_path),
                what,
                violation,
            ));
        }
    } else if value.get("method").is_some() {
        let (general, specific) = if value.get("id").is_some() {
            (Definition::Request, Definition::ServerRequest)
        } else {
            (Definition::Notification, Definition::ServerNotification)
        };
        let mut violations = envelope(general);
        if violations.is_empty() {
            violations = envelope(specific);
        }
        for violation in &violations {
            findings.push(invalid(
                message_at(&violation.instance_path),
                what,
                violation,
            ));
        }
    } else {
        findings.push(Finding::new(
            Rule::MessageInvalid,
            message_at(""),
            format!("{what}: not a JSON-RPC request, notification or response"),
        ));
    }
    findings.truncate(MAX_FINDINGS_PER_MESSAGE);
    let tool = match answers {
        Answers::Call(tool) => Some(tool.as_str()),
        _ => None,
    };
    findings
        .into_iter()
        .map(|f| match (tool, f.tool.is_none()) {
            (Some(tool), true) => f.tool(tool),
            _ => f,
        })
        .map(|f| f.revision(Some(version)))
        .collect()
}

/// Validates a result against the definition of what it answers.
fn check_result(
    version: ProtocolVersion,
    result: &Value,
    answers: &Answers,
    what: &str,
) -> Vec<Finding> {
    let definition = match answers {
        Answers::Handshake if result.get("supportedVersions").is_some() => {
            Definition::DiscoverResult
        }
        Answers::Handshake => Definition::InitializeResult,
        Answers::ListPage => Definition::ListToolsResult,
        Answers::Call(_) if result.get("resultType") == Some(&Value::from("input_required")) => {
            Definition::InputRequiredResult
        }
        Answers::Call(_) => Definition::CallToolResult,
        Answers::Unknown => return Vec::new(),
    };
    let Some(violations) = spec::violations(version, definition, result) else {
        return Vec::new();
    };
    violations
        .iter()
        .map(|violation| {
            let path = violation.instance_path.as_str();
            match answers {
                Answers::Handshake => {
                    invalid(Location::new(Document::Server, path), what, violation)
                }
                Answers::ListPage => match listed_tool(result, path) {
                    Some((name, rest)) => {
                        invalid(Location::new(Document::Tool, rest), what, violation).tool(name)
                    }
                    None => invalid(Location::new(Document::Listing, path), what, violation),
                },
                Answers::Call(tool) => {
                    invalid(Location::new(Document::Result, path), what, violation).tool(tool)
                }
                Answers::Unknown => {
                    invalid(Location::new(Document::Message, path), what, violation)
                }
            }
        })
        .collect()
}

/// A 2026-07-28 result that does not name its server in `_meta` (that
/// revision's SHOULD; judged on listings, which every check reads).
fn unnamed(version: ProtocolVersion, result: &Value, what: &str) -> Option<Finding> {
    let named = result
        .get("_meta")
        .and_then(|meta| meta.get(keys::SERVER_INFO))
        .is_some();
    (version.is_stateless() && !named).then(|| {
        Finding::new(
            Rule::ResultServerUnnamed,
            Location::new(Document::Listing, "/_meta"),
            format!("{what}: no `{}` in the result's `_meta`", keys::SERVER_INFO),
        )
    })
}

/// For a pointer into a tools/list result that lies within one listed tool
/// with a name: the name and the pointer's rest.
fn listed_tool(result: &Value, pointer: &str) -> Option<(String, String)> {
    let rest = pointer.strip_prefix("/tools/")?;
    let (index, rest) = match rest.split_once('/') {
        Some((index, rest)) => (index, format!("/{rest}")),
        None => (rest, String::new()),
    };
    let index: usize = index.parse().ok()?;
    let name = result.get("tools")?.get(index)?.get("name")?.as_str()?;
    Some((name.to_owned(), rest))
}

/// The finding for a message that could not be parsed (`None` for JSON).
pub(crate) fn unparsable(
    version: Option<ProtocolVersion>,
    parsed: &Parsed,
    what: &str,
    tool: Option<&str>,
) -> Option<Finding> {
    let finding = match parsed {
        Parsed::Json(_) => return None,
        Parsed::NotJson(why) => Finding::new(
            Rule::MessageNotJson,
            Location::new(Document::Message, ""),
            format!("{what}: not JSON: {why}"),
        ),
        Parsed::TooDeep => Finding::new(
            Rule::ResponseOverBounds,
            Location::new(Document::Message, ""),
            format!(
                "{what}: nests deeper than 127 levels; toolshape's client (and most JSON parsers) refuse it"
            ),
        ),
    };
    let finding = finding.revision(version);
    Some(match tool {
        Some(tool) => finding.tool(tool),
        None => finding,
    })
}

/// A pointer to listed tool `index` of a page.
pub(crate) fn tool_pointer(index: usize) -> String {
    join("/tools", &index.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_error_without_an_id_is_judged_by_its_revisions_schema() {
        let idless = json!({"jsonrpc": "2.0", "error": {"code": -32700, "message": "Parse error"}});
        let null_id = json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "Parse error"}});
        let findings =
            |version, message: &Value| check(version, message, &Answers::Unknown, "a message");
        // Since 2025-11-25 an error may come without an id, never with a null one.
        assert!(findings(ProtocolVersion::V2025_11_25, &idless).is_empty());
        assert!(findings(ProtocolVersion::V2026_07_28, &idless).is_empty());
        assert!(!findings(ProtocolVersion::V2025_11_25, &null_id).is_empty());
        // Before it, the id is required.
        assert!(!findings(ProtocolVersion::V2025_06_18, &idless).is_empty());
    }

    #[test]
    fn too_deep_is_told_where_serde_json_stops() {
        for depth in [126, 127, 128, 129, 400] {
            for (open, close) in [("[", "]"), ("{\"a\":", "}")] {
                // Brackets in a string do not count.
                let text = format!(
                    "{{\"s\":\"[[[\\\"[[\",\"v\":{}1{}}}",
                    open.repeat(depth - 1),
                    close.repeat(depth - 1)
                );
                let parsed = parse(text.as_bytes());
                let refused = serde_json::from_str::<Value>(&text).is_err();
                assert_eq!(matches!(parsed, Parsed::TooDeep), refused, "{depth}");
                assert!(matches!(parsed, Parsed::Json(_)) != refused, "{depth}");
            }
        }
        // Not JSON for another reason, deep or not: a syntax error before
        // the nesting is not taken for it, on the first line or a later one.
        assert!(matches!(parse(b"[[[oops"), Parsed::NotJson(_)));
        let deep_after = |before: &str| {
            format!(
                "{before}{{\"a\": nope, \"b\": {}1{}}}",
                "[".repeat(200),
                "]".repeat(200)
            )
        };
        for before in ["", "\n\n  "] {
            let text = deep_after(before);
            assert!(
                matches!(parse(text.as_bytes()), Parsed::NotJson(_)),
                "{text}"
            );
        }
        // A bracket where a key is due is a syntax error, deep as it is.
        let key_due = format!("{}{{[", "[".repeat(126));
        assert!(matches!(parse(key_due.as_bytes()), Parsed::NotJson(_)));
        let deep_on_line_three = format!("\n\n{}1{}", "[".repeat(200), "]".repeat(200));
        assert!(matches!(
            parse(deep_on_line_three.as_bytes()),
            Parsed::TooDeep
        ));
    }

    #[test]
    fn a_bad_tool_in_a_page_is_pointed_at_in_its_own_definition() {
        let page = json!({"jsonrpc": "2.0", "id": 2, "result": {"tools": [
            {"name": "fine", "inputSchema": {"type": "object"}},
            {"name": "broken", "inputSchema": {"type": "array"}}
        ]}});
        let findings = check(
            ProtocolVersion::V2025_11_25,
            &page,
            &Answers::ListPage,
            "tools/list",
        );
        assert!(!findings.is_empty());
        for finding in &findings {
            assert_eq!(finding.tool.as_deref(), Some("broken"), "{finding:?}");
            assert_eq!(finding.location.document, Document::Tool);
            assert!(
                finding.location.pointer.starts_with("/inputSchema"),
                "{finding:?}"
            );
        }
    }

    #[test]
    fn a_2026_07_28_listing_should_name_its_server() {
        let page = |meta: Value| {
            json!({"jsonrpc": "2.0", "id": 2, "result": {
                "tools": [{"name": "t", "inputSchema": {"type": "object"}}],
                "resultType": "complete", "ttlMs": 0, "cacheScope": "public", "_meta": meta,
            }})
        };
        let rules = |version, page: &Value| -> Vec<Rule> {
            check(version, page, &Answers::ListPage, "tools/list")
                .iter()
                .map(|finding| finding.rule)
                .collect()
        };
        let unnamed = page(json!({"dev.example/x": 1}));
        let named = page(json!({keys::SERVER_INFO: {"name": "s", "version": "1"}}));
        let modern = ProtocolVersion::V2026_07_28;
        assert_eq!(rules(modern, &unnamed), [Rule::ResultServerUnnamed]);
        assert_eq!(rules(modern, &named), []);
        // Another revision's listing need not.
        let legacy = json!({"jsonrpc": "2.0", "id": 2, "result": {
            "tools": [{"name": "t", "inputSchema": {"type": "object"}}]}});
        assert_eq!(rules(ProtocolVersion::V2025_11_25, &legacy), []);
    }

    #[test]
    fn envelopes_and_notifications_are_checked() {
        let version = ProtocolVersion::V2025_06_18;
        let no_version = json!({"id": 1, "result": {"content": []}});
        let findings = check(
            version,
            &no_version,
            &Answers::Call("t".into()),
            "tools/call",
        );
        assert!(
            findings
                .iter()
                .any(|f| f.location.document == Document::Message)
        );
        let progress = json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": 1, "progress": 1}});
        assert!(check(version, &progress, &Answers::Unknown, "notification").is_empty());
        let bad = json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progress": "x"}});
        assert!(!check(version, &bad, &Answers::Unknown, "notification").is_empty());
    }
}
