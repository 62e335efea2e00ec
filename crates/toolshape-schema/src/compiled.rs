//! A compiled schema, and validation against it.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use jsonschema::Validator;
use serde_json::Value;

use crate::budget::{self, Job, Runaways};
use crate::dialect::Dialect;
use crate::engine::Trust;
use crate::error::{ValidationError, ValidationErrorKind};
use crate::limits::Limits;
use crate::text::{InstanceText, TextJson};

/// The most members of one object an [`InstanceText`] is validated with: a
/// member is found by a scan there, so a larger object goes through a `Value`.
const SCANNED_MEMBERS: usize = 32;

/// A schema compiled once and validated against many times. `Send + Sync`;
/// share it through the `Arc` the engine hands out.
pub struct CompiledSchema {
    pub(crate) validator: Arc<Validator>,
    /// For instances read from text ([`InstanceText`]); untrusted schemas only.
    pub(crate) text_validator: Option<Arc<Validator<TextJson>>>,
    pub(crate) schema: Arc<Value>,
    pub(crate) dialect: Dialect,
    pub(crate) expansion: u64,
    pub(crate) trust: Trust,
    pub(crate) limits: Arc<Limits>,
    pub(crate) runaways: Arc<Runaways>,
    pub(crate) quarantined: AtomicBool,
}

impl std::fmt::Debug for CompiledSchema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CompiledSchema")
            .field("dialect", &self.dialect)
            .field("expansion", &self.expansion)
            .field("trust", &self.trust)
            .field("quarantined", &self.is_quarantined())
            .finish_non_exhaustive()
    }
}

impl CompiledSchema {
    /// Validates `instance`.
    ///
    /// Only a failing instance builds a report. Against an untrusted schema, a
    /// validation whose estimated work is large runs on a worker thread under
    /// the time budget; overrunning it quarantines the schema.
    pub fn validate(&self, instance: &Value) -> Result<(), ValidationError> {
        if self.is_quarantined() {
            return Err(ValidationErrorKind::Quarantined.into());
        }
        let nodes = count_nodes(instance, self.limits.max_instance_depth).ok_or(
            ValidationErrorKind::InstanceTooDeep {
                limit: self.limits.max_instance_depth,
            },
        )?;
        let work = self.expansion.saturating_mul(nodes);
        if self.trust == Trust::Trusted || work <= self.limits.inline_work {
            return budget::validate_with(
                &self.validator,
                instance,
                self.limits.max_violations,
                self.limits.max_message_chars,
            );
        }
        self.validate_budgeted(instance)
    }

    /// Validates an instance read from JSON text, as [`CompiledSchema::validate`]
    /// validates its `Value`, with the same outcome, without building the
    /// `Value` when the instance is valid and its validation runs inline
    /// (the `Value` is built for a report, a budgeted run, an object that
    /// repeats a member name, or a trusted schema).
    pub fn validate_text(&self, instance: &InstanceText<'_>) -> Result<(), ValidationError> {
        // A repeated member name: the `Value` keeps the last, and only its
        // depth counts. A large object: a member is found by a scan, which
        // the work estimate does not count.
        let Some(validator) = self.text_validator.as_ref().filter(|_| {
            !instance.repeats_member_names() && instance.largest_object() <= SCANNED_MEMBERS
        }) else {
            return self.validate(&instance.to_value());
        };
        if self.is_quarantined() {
            return Err(ValidationErrorKind::Quarantined.into());
        }
        if instance.depth() > self.limits.max_instance_depth {
            return Err(ValidationErrorKind::InstanceTooDeep {
                limit: self.limits.max_instance_depth,
            }
            .into());
        }
        let work = self.expansion.saturating_mul(instance.values());
        if work <= self.limits.inline_work && validator.is_valid(instance.root()) {
            return Ok(());
        }
        self.validate(&instance.to_value())
    }

    fn validate_budgeted(&self, instance: &Value) -> Result<(), ValidationError> {
        if self.runaways.count() >= self.limits.max_runaway_validations {
            return Err(ValidationErrorKind::Overloaded.into());
        }
        let job = Job {
            validator: Arc::clone(&self.validator),
            instance: instance.clone(),
            max_violations: self.limits.max_violations,
            max_message_chars: self.limits.max_message_chars,
        };
        match budget::run(job, self.limits.validation_budget, &self.runaways) {
            budget::Outcome::Finished(result) => result,
            budget::Outcome::OverBudget => {
                self.quarantined.store(true, Ordering::Release);
                Err(ValidationErrorKind::BudgetExceeded {
                    budget_ms: self.limits.validation_budget.as_millis(),
                }
                .into())
            }
        }
    }

    /// The schema as given.
    pub fn schema(&self) -> &Value {
        &self.schema
    }

    /// The dialect it was compiled as.
    pub fn dialect(&self) -> Dialect {
        self.dialect
    }

    /// Whether its root declares `type: "object"` (what 2025-06-18 and 2025-11-25 require of an `outputSchema`).
    pub fn is_object_rooted(&self) -> bool {
        crate::mcp::is_object_rooted(&self.schema)
    }

    /// The estimated worst-case subschema evaluations per instance location.
    pub fn expansion(&self) -> u64 {
        self.expansion
    }

    /// Whether it overran its budget and is no longer run.
    pub fn is_quarantined(&self) -> bool {
        self.quarantined.load(Ordering::Acquire)
    }
}

/// The number of values in `instance`, or `None` when it nests deeper than `max_depth`.
///
/// It runs before every validation, so it is kept cheap: a container counts its
/// children by length and descends only into the children that are containers
/// (no call per scalar), which about halves its cost on typical tool output.
fn count_nodes(instance: &Value, max_depth: usize) -> Option<u64> {
    fn is_container(value: &Value) -> bool {
        matches!(value, Value::Array(_) | Value::Object(_))
    }
    /// Adds the descendants of the container `value` to `nodes`; false when too deep.
    fn walk(value: &Value, depth_left: usize, nodes: &mut u64) -> bool {
        let Some(depth_left) = depth_left.checked_sub(1) else {
            return false;
        };
        match value {
            Value::Array(items) => {
                *nodes += items.len() as u64;
                items
                    .iter()
                    .all(|item| !is_container(item) || walk(item, depth_left, nodes))
            }
            Value::Object(map) => {
                *nodes += map.len() as u64;
                map.values()
                    .all(|item| !is_container(item) || walk(item, depth_left, nodes))
            }
            _ => true,
        }
    }
    let mut nodes = 1;
    (!is_container(instance) || walk(instance, max_depth, &mut nodes)).then_some(nodes)
}

#[cfg(test)]
mod tests {
    use super::count_nodes;
    use serde_json::json;

    #[test]
    fn counts_nodes_within_depth() {
        assert_eq!(count_nodes(&json!({"a": [1, 2], "b": null}), 8), Some(5));
        assert_eq!(count_nodes(&json!([[[1]]]), 3), Some(4));
        assert_eq!(count_nodes(&json!([[[[1]]]]), 3), None);
    }
}
