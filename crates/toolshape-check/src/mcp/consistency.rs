//! The same server on several revisions: the same tools, the same schemas
//! (a non-object output wrapped for the revisions that need an object), the
//! same `listChanged`.

use std::collections::BTreeMap;

use serde_json::Value;
use toolshape_protocol::ProtocolVersion;
use toolshape_schema::mcp::{is_object_rooted, with_object_property_schemas, wrap_output_schema};

use super::listing::ListedTool;
use crate::finding::{Document, Finding, Location, push_token};
use crate::rules::Rule;
use crate::schemas;

/// What one checked revision listed and declared.
#[derive(Debug)]
pub(crate) struct Seen {
    pub(crate) version: ProtocolVersion,
    pub(crate) tools: Vec<ListedTool>,
    pub(crate) list_changed: Option<bool>,
    /// Whether the listing ended as it should (an incomplete one is not compared).
    pub(crate) complete: bool,
}

/// The first place where two JSON values differ, as a pointer under
/// `pointer`.
fn first_difference(a: &Value, b: &Value, pointer: &str) -> Option<String> {
    let mut path = pointer.to_owned();
    differs(a, b, &mut path).then_some(path)
}

/// Whether `a` and `b` differ; if they do, `path` is left at the first
/// place they do. One path grows and shrinks as the walk goes (a pointer
/// built anew for every member would copy a long key once per value under it).
fn differs(a: &Value, b: &Value, path: &mut String) -> bool {
    let at = path.len();
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for (key, value) in x {
                push_token(path, key);
                match y.get(key) {
                    Some(other) if !differs(value, other, path) => path.truncate(at),
                    _ => return true,
                }
            }
            match y.keys().find(|key| !x.contains_key(*key)) {
                Some(key) => {
                    push_token(path, key);
                    true
                }
                None => false,
            }
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            for (index, (x, y)) in x.iter().zip(y).enumerate() {
                push_token(path, &index.to_string());
                if differs(x, y, path) {
                    return true;
                }
                path.truncate(at);
            }
            false
        }
        _ => a != b,
    }
}

/// `schema` as compared: without FastMCP's wrap marker (the wrapping itself
/// is compared), and with its boolean top-level property schemas written as
/// the objects that mean the same, as revisions before 2026-07-28 need them.
fn unmarked(schema: &Value) -> Value {
    let mut schema = with_object_property_schemas(schema).into_owned();
    if let Some(map) = schema.as_object_mut() {
        map.remove("x-fastmcp-wrap-result");
    }
    schema
}

/// Compares the revisions' listings and declarations.
pub(crate) fn compare(seen: &[Seen]) -> Vec<Finding> {
    let mut findings = Vec::new();
    let complete: Vec<&Seen> = seen.iter().filter(|s| s.complete).collect();
    if complete.len() < 2 {
        return findings;
    }
    // Absent means false (the capability's default).
    let declared: Vec<(ProtocolVersion, bool)> = complete
        .iter()
        .map(|s| (s.version, s.list_changed.unwrap_or(false)))
        .collect();
    if declared.windows(2).any(|pair| pair[0].1 != pair[1].1) {
        let listed = declared
            .iter()
            .map(|(version, value)| format!("{version}: {value}"))
            .collect::<Vec<_>>()
            .join(", ");
        findings.push(Finding::new(
            Rule::ListChangedInconsistent,
            Location::new(Document::Server, "/capabilities/tools/listChanged"),
            format!("tools.listChanged differs between revisions ({listed})"),
        ));
    }
    let mut by_name: BTreeMap<&str, Vec<(ProtocolVersion, &Value)>> = BTreeMap::new();
    for revision in &complete {
        for tool in &revision.tools {
            by_name
                .entry(tool.name.as_str())
                .or_default()
                .push((revision.version, &tool.definition));
        }
    }
    for (name, listed) in &by_name {
        if listed.len() < complete.len() {
            let missing: Vec<String> = complete
                .iter()
                .filter(|s| !listed.iter().any(|(v, _)| *v == s.version))
                .map(|s| s.version.to_string())
                .collect();
            findings.push(
                Finding::new(
                    Rule::ToolSetDrift,
                    Location::new(Document::Tool, ""),
                    format!("listed on some revisions but not on {}", missing.join(", ")),
                )
                .tool(*name),
            );
        }
        findings.extend(compare_tool(name, listed));
    }
    findings
}

fn compare_tool(name: &str, listed: &[(ProtocolVersion, &Value)]) -> Vec<Finding> {
    let mut findings = Vec::new();
    let Some((first_version, first)) = listed.first() else {
        return findings;
    };
    for (version, definition) in &listed[1..] {
        if let Some(at) = first_difference(
            &unmarked(first.get("inputSchema").unwrap_or(&Value::Null)),
            &unmarked(definition.get("inputSchema").unwrap_or(&Value::Null)),
            "/inputSchema",
        ) {
            findings.push(
                Finding::new(
                    Rule::SchemaDrift,
                    Location::new(Document::Tool, at),
                    format!("the inputSchema on {version} differs from the one on {first_version}"),
                )
                .tool(name)
                .revision(Some(*version)),
            );
        }
    }
    // Output schemas: the modern revision's, as is, against each legacy one
    // that has structured output (as is when object-rooted, else wrapped).
    let modern = listed
        .iter()
        .find(|(version, _)| version.allows_any_structured_content())
        .and_then(|(_, definition)| definition.get("outputSchema"));
    let legacy: Vec<(ProtocolVersion, Option<&Value>)> = listed
        .iter()
        .filter(|(v, _)| v.supports_structured_output() && !v.allows_any_structured_content())
        .map(|(v, definition)| (*v, definition.get("outputSchema")))
        .collect();
    let reference = match modern {
        Some(schema) if !is_object_rooted(schema) => {
            Some(unmarked(&wrap_output_schema(&unmarked(schema))))
        }
        other => other.map(unmarked),
    };
    let has_modern = listed
        .iter()
        .any(|(v, _)| v.allows_any_structured_content());
    for (version, schema) in &legacy {
        if has_modern {
            if let (Some(modern), Some(schema)) = (modern, schema)
                && !is_object_rooted(modern)
                && let Some(finding) = schemas::wrap_closed(schema, "/outputSchema")
            {
                findings.push(finding.tool(name).revision(Some(*version)));
                continue;
            }
            let differs = match (&reference, schema) {
                (Some(reference), Some(schema)) => {
                    first_difference(reference, &unmarked(schema), "/outputSchema")
                        .filter(|_| modern.is_some_and(|m| unmarked(schema) != unmarked(m)))
                }
                (None, None) => None,
                _ => Some("/outputSchema".to_owned()),
            };
            if let Some(at) = differs {
                findings.push(
                    Finding::new(
                        Rule::SchemaDrift,
                        Location::new(Document::Tool, at),
                        format!(
                            "the outputSchema on {version} is neither the 2026-07-28 one nor its wrapping"
                        ),
                    )
                    .tool(name)
                    .revision(Some(*version)),
                );
            }
        }
    }
    if let [(a, Some(x)), rest @ ..] = legacy.as_slice() {
        for (b, y) in rest {
            let at = match y {
                Some(y) => first_difference(x, y, "/outputSchema"),
                None => Some("/outputSchema".to_owned()),
            };
            if let Some(at) = at {
                findings.push(
                    Finding::new(
                        Rule::SchemaDrift,
                        Location::new(Document::Tool, at),
                        format!("the outputSchema on {b} differs from the one on {a}"),
                    )
                    .tool(name)
                    .revision(Some(*b)),
                );
            }
        }
    }
    findings
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_first_difference_is_found_with_its_escaped_path() {
        let a = json!({"p": {"a/b": [1, {"x~": 2}], "same": true}});
        let changed = json!({"p": {"a/b": [1, {"x~": 3}], "same": true}});
        assert_eq!(
            first_difference(&a, &changed, "/s").as_deref(),
            Some("/s/p/a~1b/1/x~0")
        );
        let extra = json!({"p": {"a/b": [1, {"x~": 2}], "same": true, "new": 1}});
        assert_eq!(first_difference(&a, &extra, "").as_deref(), Some("/p/new"));
        assert_eq!(first_difference(&extra, &a, "").as_deref(), Some("/p/new"));
        let shorter = json!({"p": {"a/b": [1], "same": true}});
        assert_eq!(
            first_difference(&a, &shorter, "").as_deref(),
            Some("/p/a~1b")
        );
        assert_eq!(first_difference(&a, &a.clone(), "/s"), None);
    }

    fn seen(version: ProtocolVersion, tools: &[(&str, Value)]) -> Seen {
        Seen {
            version,
            tools: tools
                .iter()
                .map(|(name, definition)| ListedTool {
                    name: (*name).into(),
                    definition: definition.clone(),
                })
                .collect(),
            list_changed: None,
            complete: true,
        }
    }

    #[test]
    fn a_wrapped_legacy_schema_is_consistent_and_a_changed_one_is_not() {
        use ProtocolVersion::*;
        let array = json!({"type": "array", "items": {"type": "integer"}});
        let modern = json!({"name": "t", "inputSchema": {"type": "object"}, "outputSchema": array});
        let wrapped = json!({"name": "t", "inputSchema": {"type": "object"}, "outputSchema": wrap_output_schema(&array)});
        let other = json!({"name": "t", "inputSchema": {"type": "object", "required": ["x"]},
            "outputSchema": {"type": "object"}});
        let clean = compare(&[
            seen(V2025_06_18, &[("t", wrapped.clone())]),
            seen(V2025_11_25, &[("t", wrapped)]),
            seen(V2026_07_28, &[("t", modern.clone())]),
        ]);
        assert!(clean.is_empty(), "{clean:?}");
        let drift = compare(&[
            seen(V2025_11_25, &[("t", other)]),
            seen(V2026_07_28, &[("t", modern)]),
        ]);
        let pointers: Vec<&str> = drift.iter().map(|f| f.location.pointer.as_str()).collect();
        assert!(
            drift.iter().all(|f| f.rule == Rule::SchemaDrift),
            "{drift:?}"
        );
        assert!(pointers.contains(&"/inputSchema/required"), "{pointers:?}");
        assert!(
            pointers.iter().any(|p| p.starts_with("/outputSchema")),
            "{pointers:?}"
        );
    }

    #[test]
    fn a_boolean_property_schema_written_as_an_object_is_no_drift() {
        use ProtocolVersion::*;
        let modern = json!({"name": "t",
            "inputSchema": {"type": "object", "properties": {"any": true}},
            "outputSchema": {"type": "object", "properties": {"v": true}}});
        let legacy = json!({"name": "t",
            "inputSchema": {"type": "object", "properties": {"any": {}}},
            "outputSchema": {"type": "object", "properties": {"v": {}}}});
        let clean = compare(&[
            seen(V2025_11_25, &[("t", legacy)]),
            seen(V2026_07_28, &[("t", modern)]),
        ]);
        assert!(clean.is_empty(), "{clean:?}");
    }

    #[test]
    fn list_changed_absent_is_false() {
        use ProtocolVersion::*;
        let declaring = |version, list_changed| Seen {
            list_changed,
            ..seen(version, &[])
        };
        let same = compare(&[
            declaring(V2025_11_25, None),
            declaring(V2026_07_28, Some(false)),
        ]);
        assert!(same.is_empty(), "{same:?}");
        let differs = compare(&[
            declaring(V2025_11_25, None),
            declaring(V2026_07_28, Some(true)),
        ]);
        assert_eq!(differs.len(), 1, "{differs:?}");
        assert!(
            differs[0].message.contains("2025-11-25: false"),
            "{}",
            differs[0].message
        );
    }

    #[test]
    fn tools_missing_on_a_revision_are_named() {
        use ProtocolVersion::*;
        let tool = json!({"name": "t", "inputSchema": {"type": "object"}});
        let found = compare(&[seen(V2025_11_25, &[("t", tool)]), seen(V2026_07_28, &[])]);
        assert_eq!(
            found.iter().map(|f| f.rule).collect::<Vec<_>>(),
            vec![Rule::ToolSetDrift]
        );
    }
}
