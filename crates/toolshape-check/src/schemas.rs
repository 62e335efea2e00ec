//! One schema's checks: it compiles in its dialect, it is valid against its
//! meta-schema, its references stay in the document, it is within the bounds
//! toolshape's client holds, and the portability lint.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::Value;
use toolshape_schema::lint::{self, LintKind};
use toolshape_schema::{
    CompileBudget, CompiledSchema, Dialect, FormatMode, Limits, SchemaEngine, SchemaErrorKind,
    meta_schema_violations,
};

use crate::finding::{Document, Finding, Location};
use crate::rules::Rule;

/// The engines tool schemas are compiled with: untrusted, with the default
/// limits (what toolshape's client accepts), nothing fetched, the compiles
/// of one check drawing on one [`CompileBudget`].
#[derive(Debug, Clone)]
pub(crate) struct Engines {
    /// `format` asserted, as toolshape's client does by default.
    pub(crate) asserting: SchemaEngine,
    /// `format` as each dialect says (2020-12: an annotation).
    pub(crate) dialect_default: SchemaEngine,
    /// What the compiles of one check draw on.
    budget: CompileBudget,
    /// Schemas left unchecked since [`Engines::take_over_budget`] was last
    /// asked, the budget being spent.
    over_budget: Arc<AtomicUsize>,
}

impl Default for Engines {
    fn default() -> Self {
        Engines::new(Limits::default().listing_budget)
    }
}

impl Engines {
    /// Engines whose compiles take `budget` together at most.
    pub(crate) fn new(budget: Duration) -> Engines {
        let budget = CompileBudget::new(budget);
        Engines {
            asserting: SchemaEngine::builder()
                .format_mode(FormatMode::Assert)
                .build()
                .with_budget(budget.clone()),
            dialect_default: SchemaEngine::builder()
                .format_mode(FormatMode::DialectDefault)
                .build()
                .with_budget(budget.clone()),
            budget,
            over_budget: Arc::default(),
        }
    }

    /// How many schemas were left unchecked since the last take, the budget
    /// being spent.
    pub(crate) fn skipped(&self) -> usize {
        self.over_budget.load(Ordering::Acquire)
    }

    /// The finding for the schemas left unchecked since the last time this
    /// was asked (the budget being spent), if any: at `location`.
    pub(crate) fn take_over_budget(&self, location: Location) -> Option<Finding> {
        let skipped = self.over_budget.swap(0, Ordering::AcqRel);
        (skipped > 0).then(|| {
            Finding::new(
                Rule::ListCompileOverBudget,
                location,
                format!(
                    "{skipped} schemas not checked: the listing's schemas took more than {} s to compile together",
                    self.budget.limit().as_secs_f64()
                ),
            )
        })
    }
}

/// One schema compiled both ways, when it is usable.
#[derive(Debug, Clone)]
pub(crate) struct Usable {
    pub(crate) asserting: Arc<CompiledSchema>,
    pub(crate) dialect_default: Arc<CompiledSchema>,
}

/// Checks the schema at `base` (e.g. `/inputSchema`) of `document`; the
/// findings carry no tool or revision yet.
pub(crate) fn check(
    engines: &Engines,
    schema: &Value,
    document: Document,
    base: &str,
) -> (Vec<Finding>, Option<Usable>) {
    let mut findings = Vec::new();
    let at = |pointer: &str| Location::new(document, format!("{base}{pointer}"));
    if !schema.is_object() && !schema.is_boolean() {
        findings.push(Finding::new(
            Rule::SchemaInvalid,
            at(""),
            "not a JSON Schema: a schema is an object or a boolean",
        ));
        return (findings, None);
    }
    let dialect = match Dialect::of(schema) {
        Ok(dialect) => dialect,
        Err(error) => {
            findings.push(Finding::new(
                Rule::SchemaDialectUnknown,
                at("/$schema"),
                error.to_string(),
            ));
            return (findings, None);
        }
    };
    let mut remote_linted = false;
    let warnings = lint::lint(schema);
    let cut = warnings.len() >= lint::MAX_WARNINGS;
    for warning in warnings {
        let rule = match &warning.kind {
            LintKind::NonStandardFormat(_) => Rule::SchemaFormatNonstandard,
            LintKind::BareItemsFalse => Rule::SchemaItemsFalse,
            LintKind::RemoteReference(_) => {
                remote_linted = true;
                Rule::SchemaRemoteRef
            }
            LintKind::TupleItemsIn202012 => Rule::SchemaTupleItems,
            _ => continue,
        };
        let message = warning.to_string();
        let message = message
            .split_once(": ")
            .map_or(message.as_str(), |(_, text)| text)
            .to_owned();
        findings.push(Finding::new(rule, at(&warning.at), message));
    }
    if cut {
        findings.push(Finding::new(
            Rule::SchemaLintCut,
            at(""),
            format!(
                "{} portability warnings listed for this schema, the most listed: there may be more",
                lint::MAX_WARNINGS
            ),
        ));
    }
    let asserting = match engines.asserting.compile(schema) {
        Ok(compiled) => compiled,
        Err(error) if matches!(error.kind(), SchemaErrorKind::ListingTooCostly { .. }) => {
            engines.over_budget.fetch_add(1, Ordering::AcqRel);
            return (findings, None);
        }
        Err(error) => {
            findings.extend(refusal(
                engines,
                schema,
                dialect,
                error.kind(),
                &at,
                remote_linted,
            ));
            return (findings, None);
        }
    };
    let usable = match engines.dialect_default.compile(schema) {
        Ok(dialect_default) => Some(Usable {
            asserting,
            dialect_default,
        }),
        Err(error) => {
            if matches!(error.kind(), SchemaErrorKind::ListingTooCostly { .. }) {
                engines.over_budget.fetch_add(1, Ordering::AcqRel);
            }
            None
        }
    };
    (findings, usable)
}

/// The findings for a schema the engine refused.
fn refusal(
    engines: &Engines,
    schema: &Value,
    dialect: Dialect,
    kind: &SchemaErrorKind,
    at: &dyn Fn(&str) -> Location,
    remote_linted: bool,
) -> Vec<Finding> {
    let text = kind.to_string();
    let single = |rule: Rule, pointer: &str| vec![Finding::new(rule, at(pointer), text.clone())];
    match kind {
        SchemaErrorKind::UnknownDialect(_) | SchemaErrorKind::MetaSchema { .. } => {
            single(Rule::SchemaDialectUnknown, "/$schema")
        }
        SchemaErrorKind::RemoteReference { .. } if remote_linted => Vec::new(),
        SchemaErrorKind::RemoteReference { .. } => single(Rule::SchemaRemoteRef, ""),
        SchemaErrorKind::TooLarge { .. } | SchemaErrorKind::TooManySubschemas { .. } => {
            single(Rule::SchemaOverBounds, "")
        }
        // These name a path through `$ref`s, not a place in the document.
        SchemaErrorKind::ExpansionTooCostly { .. }
        | SchemaErrorKind::EstimateTooCostly { .. }
        | SchemaErrorKind::ReferenceCycle { .. }
        | SchemaErrorKind::ReferenceChainTooLong { .. } => single(Rule::SchemaOverBounds, ""),
        SchemaErrorKind::TooDeep { at: pointer, .. }
        | SchemaErrorKind::PatternsTooCostly { at: pointer, .. }
        | SchemaErrorKind::BacktrackingPattern { at: pointer, .. }
        | SchemaErrorKind::PatternOverBounds { at: pointer, .. } => {
            single(Rule::SchemaOverBounds, pointer)
        }
        SchemaErrorKind::InvalidPattern { at: pointer, .. } => single(Rule::SchemaInvalid, pointer),
        SchemaErrorKind::Invalid { .. } => {
            match meta_schema_violations(schema, dialect, engines.asserting.limits()) {
                Ok((violations, _)) if !violations.is_empty() => violations
                    .iter()
                    .map(|violation| {
                        Finding::new(
                            Rule::SchemaInvalid,
                            at(&violation.instance_path),
                            format!(
                                "not a valid {dialect} schema: {} ({})",
                                violation.message, violation.keyword
                            ),
                        )
                    })
                    .collect(),
                _ => single(Rule::SchemaInvalid, ""),
            }
        }
        _ => single(Rule::SchemaInvalid, ""),
    }
}

/// The marker FastMCP puts in an output schema whose values it wraps.
const FASTMCP_WRAP_MARKER: &str = "x-fastmcp-wrap-result";

/// Whether a tool says its outputs are sent wrapped as `{"result": value}`.
pub(crate) fn declares_wrapping(tool: &Value) -> bool {
    let by_meta = tool
        .get("_meta")
        .and_then(|meta| meta.get(toolshape_protocol::meta::keys::WRAPPED_OUTPUT))
        .is_some();
    let by_schema = tool
        .get("outputSchema")
        .and_then(|schema| schema.get(FASTMCP_WRAP_MARKER))
        == Some(&Value::Bool(true));
    by_meta || by_schema
}

/// When `schema` (an object-rooted schema its values are wrapped in)
/// closes its root with `additionalProperties: false` (or
/// `unevaluatedProperties: false`) without declaring `result`, every wrapped
/// value `{"result": ...}` is invalid: the finding at `base`.
pub(crate) fn wrap_closed(schema: &Value, base: &str) -> Option<Finding> {
    let closing = ["additionalProperties", "unevaluatedProperties"]
        .into_iter()
        .find(|keyword| schema.get(*keyword) == Some(&Value::Bool(false)))?;
    let declares_result = schema
        .get("properties")
        .and_then(|properties| properties.get(toolshape_schema::mcp::WRAPPED_RESULT_KEY))
        .is_some();
    (!declares_result).then(|| {
        Finding::new(
            Rule::SchemaWrapClosed,
            Location::new(Document::Tool, format!("{base}/{closing}")),
            format!(
                "`{closing}: false` at the root, without a `result` property, rejects every wrapped output {{\"result\": ...}}"
            ),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rules(schema: &Value) -> Vec<(Rule, String)> {
        let (findings, _) = check(&Engines::default(), schema, Document::Tool, "/inputSchema");
        findings
            .into_iter()
            .map(|f| (f.rule, f.location.pointer))
            .collect()
    }

    #[test]
    fn each_hazard_has_its_rule_and_place() {
        assert_eq!(
            rules(
                &json!({"type": "object", "properties": {"n": {"type": "integer", "format": "int64"}}})
            ),
            vec![(
                Rule::SchemaFormatNonstandard,
                "/inputSchema/properties/n".to_owned()
            )]
        );
        let tuple =
            rules(&json!({"type": "object", "properties": {"p": {"items": [{"type": "string"}]}}}));
        assert!(
            tuple.contains(&(
                Rule::SchemaTupleItems,
                "/inputSchema/properties/p".to_owned()
            )),
            "{tuple:?}"
        );
        assert!(
            tuple.contains(&(
                Rule::SchemaInvalid,
                "/inputSchema/properties/p/items".to_owned()
            )),
            "{tuple:?}"
        );
        assert_eq!(
            rules(&json!({"$ref": "https://example.com/s.json"})),
            vec![(Rule::SchemaRemoteRef, "/inputSchema".to_owned())]
        );
        assert_eq!(
            rules(&json!({"$schema": "https://example.com/mine", "type": "object"})),
            vec![(
                Rule::SchemaDialectUnknown,
                "/inputSchema/$schema".to_owned()
            )]
        );
        assert_eq!(
            rules(&json!({"type": "object", "properties": {"a": {"type": "strung"}}}))
                .first()
                .map(|f| f.0),
            Some(Rule::SchemaInvalid)
        );
        assert!(
            rules(&json!({"type": "object", "properties": {"a": {"pattern": "(?=a)"}}}))
                .iter()
                .any(|(rule, _)| *rule == Rule::SchemaOverBounds)
        );
        assert!(
            rules(
                &json!({"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
            "properties": {"p": {"items": [{"type": "string"}], "additionalItems": false}}})
            )
            .is_empty()
        );
    }

    /// A schema with more hazards than the lint lists says so once; one
    /// with as many as it lists less one does not.
    #[test]
    fn a_cut_lint_list_is_marked() {
        let hazards = |count: usize| {
            let properties: serde_json::Map<String, Value> = (0..count)
                .map(|i| {
                    (
                        format!("p{i}"),
                        json!({"type": "integer", "format": "int64"}),
                    )
                })
                .collect();
            json!({"type": "object", "properties": properties})
        };
        let count = |found: &[(Rule, String)], rule: Rule| {
            found.iter().filter(|(each, _)| *each == rule).count()
        };
        let many = rules(&hazards(lint::MAX_WARNINGS + 10));
        assert_eq!(
            count(&many, Rule::SchemaFormatNonstandard),
            lint::MAX_WARNINGS
        );
        assert_eq!(count(&many, Rule::SchemaLintCut), 1);
        assert!(many.contains(&(Rule::SchemaLintCut, "/inputSchema".to_owned())));
        let fewer = rules(&hazards(lint::MAX_WARNINGS - 1));
        assert_eq!(
            count(&fewer, Rule::SchemaFormatNonstandard),
            lint::MAX_WARNINGS - 1
        );
        assert_eq!(count(&fewer, Rule::SchemaLintCut), 0);
    }

    #[test]
    fn a_closed_root_rejects_the_wrapping() {
        let closed =
            json!({"type": "object", "properties": {"v": {}}, "additionalProperties": false});
        assert_eq!(
            wrap_closed(&closed, "/outputSchema").map(|f| f.location.pointer),
            Some("/outputSchema/additionalProperties".to_owned())
        );
        let declared =
            json!({"type": "object", "properties": {"result": {}}, "additionalProperties": false});
        assert!(wrap_closed(&declared, "/outputSchema").is_none());
    }
}
