//! One defect, one finding: exact repeats go, and a generic finding (the
//! message is invalid against schema.json, the schema against its
//! meta-schema) goes when a specific rule already points at the same place.

use crate::finding::{Finding, is_within};
use crate::rules::{Rule, Severity};

fn is_generic(rule: Rule) -> bool {
    matches!(rule, Rule::MessageInvalid | Rule::SchemaInvalid)
}

/// Whether `specific` says what `generic` says, more precisely.
fn covers(specific: &Finding, generic: &Finding) -> bool {
    !is_generic(specific.rule)
        && specific.severity >= Severity::Warning
        && specific.tool == generic.tool
        && specific.revision == generic.revision
        && specific.location.document == generic.location.document
        && !specific.location.pointer.is_empty()
        && is_within(&generic.location.pointer, &specific.location.pointer)
}

/// Removes repeated and covered findings, keeping the order of the rest.
pub(crate) fn apply(findings: &mut Vec<Finding>) {
    let mut kept: Vec<Finding> = Vec::with_capacity(findings.len());
    for finding in findings.drain(..) {
        if !kept.contains(&finding) {
            kept.push(finding);
        }
    }
    let covered: Vec<bool> = kept
        .iter()
        .map(|finding| is_generic(finding.rule) && kept.iter().any(|other| covers(other, finding)))
        .collect();
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
}
