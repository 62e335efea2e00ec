//! The portability lint: what other validators are known to mishandle.

use std::fmt;

use serde_json::Value;

use crate::dialect::Dialect;
use crate::walk;

/// Formats JSON Schema 2020-12 defines. Others are ignored by most validators.
const STANDARD_FORMATS: &[&str] = &[
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

/// One portability warning, with where it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LintWarning {
    /// JSON Pointer to the subschema.
    pub at: String,
    /// What is wrong there.
    pub kind: LintKind,
}

/// What a [`LintWarning`] warns about.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum LintKind {
    /// A `format` no standard defines (schemars emits `int32`, `uint8`, ...).
    NonStandardFormat(String),
    /// `items: false` (without `prefixItems`): several validators mishandle it.
    BareItemsFalse,
    /// A `$ref` outside the document: clients will not (and should not) fetch it.
    RemoteReference(String),
    /// A draft-07 tuple (`items` as an array) inside a 2020-12 schema, where it is invalid.
    TupleItemsIn202012,
}

impl fmt::Display for LintWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = if self.at.is_empty() { "/" } else { &self.at };
        match &self.kind {
            LintKind::NonStandardFormat(format) => write!(
                f,
                "{at}: non-standard format {format:?} is ignored by most validators"
            ),
            LintKind::BareItemsFalse => write!(
                f,
                "{at}: bare `items: false` is mishandled by several validators; use `maxItems: 0`"
            ),
            LintKind::RemoteReference(uri) => write!(
                f,
                "{at}: reference {uri:?} leaves the document; clients will not fetch it"
            ),
            LintKind::TupleItemsIn202012 => write!(
                f,
                "{at}: `items` as an array is draft-07 tuple syntax; 2020-12 uses `prefixItems`"
            ),
        }
    }
}

/// Most warnings [`lint`] lists for one schema: a list this long may have
/// been cut.
pub const MAX_WARNINGS: usize = 256;
/// Longest pointer or quoted value in a warning, in characters (longer:
/// cut, ending in `…`).
const MAX_WARNING_CHARS: usize = 1024;

/// Lists what in `schema` other validators are known to mishandle: at most
/// 256 warnings, each pointer and quoted value cut at 1,024 characters (a
/// hostile schema may hold a million hazards under a megabyte-long name).
pub fn lint(schema: &Value) -> Vec<LintWarning> {
    let dialect = Dialect::of(schema).unwrap_or(Dialect::Draft202012);
    let mut warnings = Vec::new();
    let mut pointer = String::new();
    visit(schema, dialect, &mut pointer, &mut warnings, 0);
    warnings
}

const MAX_LINT_DEPTH: usize = 256;

fn visit(
    schema: &Value,
    dialect: Dialect,
    pointer: &mut String,
    warnings: &mut Vec<LintWarning>,
    depth: usize,
) {
    let Value::Object(map) = schema else {
        return;
    };
    if depth > MAX_LINT_DEPTH || warnings.len() >= MAX_WARNINGS {
        return;
    }
    let mut warn = |kind| {
        if warnings.len() < MAX_WARNINGS {
            warnings.push(LintWarning {
                at: crate::report::excerpt(pointer, MAX_WARNING_CHARS),
                kind,
            });
        }
    };
    if let Some(Value::String(format)) = map.get("format")
        && !STANDARD_FORMATS.contains(&format.as_str())
    {
        warn(LintKind::NonStandardFormat(crate::report::excerpt(
            format,
            MAX_WARNING_CHARS,
        )));
    }
    match map.get("items") {
        Some(Value::Bool(false)) if !map.contains_key("prefixItems") => {
            warn(LintKind::BareItemsFalse)
        }
        Some(Value::Array(_)) if dialect == Dialect::Draft202012 => {
            warn(LintKind::TupleItemsIn202012)
        }
        _ => {}
    }
    for (_, reference) in walk::references(map) {
        if !reference.starts_with('#') {
            warn(LintKind::RemoteReference(crate::report::excerpt(
                reference, 200,
            )));
        }
    }
    walk::for_each_subschema(map, |edge| {
        let len = pointer.len();
        edge.push_pointer(pointer);
        visit(edge.schema, dialect, pointer, warnings, depth + 1);
        pointer.truncate(len);
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_schema_full_of_hazards_gets_a_bounded_list() {
        let long_name = "n".repeat(100_000);
        let properties: serde_json::Map<String, Value> = (0..10_000)
            .map(|n| (format!("p{n}"), json!({"format": "x".repeat(2_000)})))
            .collect();
        let schema = json!({"properties": {long_name: {"properties": properties}}});
        let warnings = lint(&schema);
        assert_eq!(warnings.len(), MAX_WARNINGS);
        for warning in &warnings {
            assert!(
                warning.at.chars().count() <= MAX_WARNING_CHARS + 1,
                "a pointer kept whole"
            );
            assert!(warning.at.ends_with('…'));
            let LintKind::NonStandardFormat(format) = &warning.kind else {
                panic!("{warning:?}");
            };
            assert_eq!(format.chars().count(), MAX_WARNING_CHARS + 1);
        }
    }

    #[test]
    fn warns_about_each_portability_hazard() {
        let schema = json!({
            "type": "object",
            "properties": {
                "n": {"type": "integer", "format": "int32"},
                "when": {"type": "string", "format": "date-time"},
                "empty": {"type": "array", "items": false},
                "pair": {"type": "array", "items": [{"type": "string"}, {"type": "integer"}]},
                "other": {"$ref": "https://example.com/other.json"}
            }
        });
        let warnings = lint(&schema);
        let kinds: Vec<(&str, &LintKind)> =
            warnings.iter().map(|w| (w.at.as_str(), &w.kind)).collect();
        assert_eq!(kinds.len(), 4, "{warnings:?}");
        assert!(kinds.contains(&(
            "/properties/n",
            &LintKind::NonStandardFormat("int32".into())
        )));
        assert!(kinds.contains(&("/properties/empty", &LintKind::BareItemsFalse)));
        assert!(kinds.contains(&("/properties/pair", &LintKind::TupleItemsIn202012)));
        assert!(kinds.contains(&(
            "/properties/other",
            &LintKind::RemoteReference("https://example.com/other.json".into())
        )));
    }
}
