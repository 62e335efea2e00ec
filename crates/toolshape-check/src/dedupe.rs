//! One defect, one finding: exact repeats go, and a generic finding (the
//! message is invalid against schema.json, the schema against its
//! meta-schema) goes when a specific rule at least as severe already points
//! at the same place (a warning never hides an error: the exit code would).

use std::collections::HashMap;
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};

use toolshape_protocol::ProtocolVersion;

use crate::finding::{Document, Finding, is_within};
use crate::rules::{Rule, Severity};

fn is_generic(rule: Rule) -> bool {
    matches!(rule, Rule::MessageInvalid | Rule::SchemaInvalid)
}

/// Where a specific finding may cover a generic one: the same tool,
/// revision and document.
type Place<'a> = (Option<&'a str>, Option<ProtocolVersion>, Document);

fn place(finding: &Finding) -> Place<'_> {
    (
        finding.tool.as_deref(),
        finding.revision,
        finding.location.document,
    )
}

/// Whether `finding` is specific enough to cover a generic one at its
/// pointer or below it.
fn can_cover(finding: &Finding) -> bool {
    !is_generic(finding.rule)
        && finding.severity >= Severity::Warning
        && !finding.location.pointer.is_empty()
}

/// A hash of everything but the arguments (which need not hash): equal
/// findings hash the same.
fn key(finding: &Finding) -> u64 {
    let mut hasher = DefaultHasher::new();
    (
        finding.rule,
        &finding.tool,
        finding.revision,
        &finding.location,
        &finding.message,
    )
        .hash(&mut hasher);
    hasher.finish()
}

/// Removes repeated and covered findings, keeping the order of the rest.
/// Findings are looked up by hash and by place, never compared all with
/// all: a hostile server may cause a great many.
pub(crate) fn apply(findings: &mut Vec<Finding>) {
    let mut kept: Vec<Finding> = Vec::with_capacity(findings.len());
    let mut by_key: HashMap<u64, Vec<usize>> = HashMap::new();
    for finding in findings.drain(..) {
        let same = by_key.entry(key(&finding)).or_default();
        if same.iter().any(|&index| kept[index] == finding) {
            continue;
        }
        same.push(kept.len());
        kept.push(finding);
    }
    let mut covering: HashMap<Place<'_>, Vec<(&str, Severity)>> = HashMap::new();
    for finding in kept.iter().filter(|finding| can_cover(finding)) {
        covering
            .entry(place(finding))
            .or_default()
            .push((&finding.location.pointer, finding.severity));
    }
    let covered: Vec<bool> = kept
        .iter()
        .map(|finding| {
            is_generic(finding.rule)
                && covering.get(&place(finding)).is_some_and(|pointers| {
                    pointers.iter().any(|(pointer, severity)| {
                        *severity >= finding.severity
                            && is_within(&finding.location.pointer, pointer)
                    })
                })
        })
        .collect();
    drop(covering);
    *findings = kept
        .into_iter()
        .zip(covered)
        .filter_map(|(finding, covered)| (!covered).then_some(finding))
        .collect();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::finding::{Document, Location};

    #[test]
    fn a_specific_finding_covers_the_generic_one_below_it() {
        let at = |pointer: &str| Location::new(Document::Tool, pointer);
        let specific = Finding::new(Rule::InputSchemaNotObject, at("/inputSchema"), "x").tool("t");
        let generic = Finding::new(Rule::MessageInvalid, at("/inputSchema/type"), "y").tool("t");
        let elsewhere = Finding::new(Rule::MessageInvalid, at("/name"), "z").tool("t");
        let mut findings = vec![
            generic.clone(),
            specific.clone(),
            specific.clone(),
            elsewhere.clone(),
        ];
        apply(&mut findings);
        assert_eq!(findings, vec![specific, elsewhere]);
    }

    #[test]
    fn a_warning_never_hides_an_error() {
        let at = |pointer: &str| Location::new(Document::Result, pointer);
        // A result whose text block is missing (a warning at /content) and
        // whose first block is not valid against schema.json (an error below it).
        let warning = Finding::new(Rule::OutputTextMissing, at("/content"), "x").tool("t");
        let error = Finding::new(Rule::MessageInvalid, at("/content/0"), "y").tool("t");
        let mut findings = vec![warning.clone(), error.clone()];
        apply(&mut findings);
        assert_eq!(findings, vec![warning, error]);
    }

    #[test]
    fn repeats_go_and_findings_that_differ_only_in_their_arguments_stay() {
        let at = |pointer: &str| Location::new(Document::Tool, pointer);
        let call = |n: i64| {
            Finding::new(Rule::OutputInvalid, at("/structuredContent"), "x")
                .tool("t")
                .arguments(&serde_json::json!({"n": n}))
        };
        let mut findings: Vec<Finding> = (0..3).flat_map(|_| (0..1000).map(call)).collect();
        apply(&mut findings);
        assert_eq!(findings, (0..1000).map(call).collect::<Vec<_>>());
    }
}
