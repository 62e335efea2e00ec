//! A compiled schema, and validation against it.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

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

/// The deepest a validation inline on the caller's thread may recurse, in
/// subschemas applied one inside the other (the instance's depth times the
/// schema's longest chain at one location): deeper ones run on a worker
/// thread with a large stack, whatever their work (an async runtime's
/// threads have 2 MiB).
const INLINE_LEVELS: usize = 512;

/// How long a schema that overran its budget stays quarantined: the same
/// schema may serve several tools and peers (the engine's cache is keyed by
/// content), which a hostile peer's instance must not shut out for good.
const QUARANTINE: Duration = Duration::from_secs(60);

/// A string's bytes that count as one instance node in the work of a
/// superlinear schema (`format: regex` reads the string as a pattern).
const BYTES_PER_NODE: u64 = 16;

/// A schema compiled once and validated against many times. `Send + Sync`;
/// share it through the `Arc` the engine hands out.
pub struct CompiledSchema {
    pub(crate) validator: Arc<Validator>,
    /// For instances read from text ([`InstanceText`]); untrusted schemas only.
    pub(crate) text_validator: Option<Arc<Validator<TextJson>>>,
    pub(crate) schema: Arc<Value>,
    pub(crate) dialect: Dialect,
    pub(crate) expansion: u64,
    /// The longest chain of subschemas applied at one instance location.
    pub(crate) chain: usize,
    /// Whether a keyword's work grows faster than the instance
    /// (`uniqueItems`, a `regex` format): the work counts its square.
    pub(crate) superlinear: bool,
    pub(crate) trust: Trust,
    pub(crate) limits: Arc<Limits>,
    pub(crate) runaways: Arc<Runaways>,
    /// Until when it is quarantined, in milliseconds from [`clock_base`]
    /// (0: it is not).
    pub(crate) quarantined_until: AtomicU64,
}

/// The instant quarantines are counted from.
fn clock_base() -> Instant {
    static BASE: OnceLock<Instant> = OnceLock::new();
    *BASE.get_or_init(Instant::now)
}

/// Milliseconds since [`clock_base`] (at least 1).
fn now_ms() -> u64 {
    u64::try_from(clock_base().elapsed().as_millis())
        .unwrap_or(u64::MAX)
        .max(1)
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
        let (nodes, depth) = count_nodes(instance, self.limits.max_instance_depth).ok_or(
            ValidationErrorKind::InstanceTooDeep {
                limit: self.limits.max_instance_depth,
            },
        )?;
        let nodes = if self.superlinear {
            let weighed = nodes.saturating_add(string_bytes(instance) / BYTES_PER_NODE);
            weighed.saturating_mul(weighed)
        } else {
            nodes
        };
        if self.trust == Trust::Trusted || self.fits_inline(nodes, depth) {
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
        if !self.superlinear
            && self.fits_inline(instance.values(), instance.depth())
            && validator.is_valid(instance.root())
        {
            return Ok(());
        }
        self.validate(&instance.to_value())
    }

    /// Whether an untrusted validation of an instance of `nodes` values
    /// (weighed) nesting `depth` deep runs inline: little work, little
    /// recursion.
    fn fits_inline(&self, nodes: u64, depth: usize) -> bool {
        let levels = depth
            .saturating_add(1)
            .saturating_mul(self.chain.saturating_add(1));
        self.expansion.saturating_mul(nodes) <= self.limits.inline_work && levels <= INLINE_LEVELS
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
                let until = now_ms().saturating_add(QUARANTINE.as_millis() as u64);
                self.quarantined_until.store(until, Ordering::Release);
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

    /// Whether it overran its budget and is not run for now (a minute
    /// after the overrun).
    pub fn is_quarantined(&self) -> bool {
        match self.quarantined_until.load(Ordering::Acquire) {
            0 => false,
            until => now_ms() < until,
        }
    }
}

/// The number of values in `instance` and how many containers deep it
/// nests (a scalar is 0 deep), or `None` when it nests deeper than `max_depth`.
///
/// It runs before every validation, so it is kept cheap: a container counts its
/// children by length and descends only into the children that are containers
/// (no call per scalar), which about halves its cost on typical tool output.
fn count_nodes(instance: &Value, max_depth: usize) -> Option<(u64, usize)> {
    /// What a walk has found so far.
    struct Walk {
        nodes: u64,
        deepest: usize,
        max_depth: usize,
    }
    fn is_container(value: &Value) -> bool {
        matches!(value, Value::Array(_) | Value::Object(_))
    }
    /// Counts the descendants of the container `value`, `depth` deep;
    /// false when too deep.
    fn walk(value: &Value, depth: usize, found: &mut Walk) -> bool {
        if depth > found.max_depth {
            return false;
        }
        found.deepest = found.deepest.max(depth);
        let walk_item =
            |item: &Value, found: &mut Walk| !is_container(item) || walk(item, depth + 1, found);
        match value {
            Value::Array(items) => {
                found.nodes += items.len() as u64;
                items.iter().all(|item| walk_item(item, found))
            }
            Value::Object(map) => {
                found.nodes += map.len() as u64;
                map.values().all(|item| walk_item(item, found))
            }
            _ => true,
        }
    }
    let mut found = Walk {
        nodes: 1,
        deepest: 0,
        max_depth,
    };
    let within = !is_container(instance) || walk(instance, 1, &mut found);
    within.then_some((found.nodes, found.deepest))
}

/// The bytes of the strings in `instance` (its member names included),
/// for a superlinear schema's work; within the depth already checked.
fn string_bytes(instance: &Value) -> u64 {
    match instance {
        Value::String(text) => text.len() as u64,
        Value::Array(items) => items.iter().map(string_bytes).sum(),
        Value::Object(map) => map
            .iter()
            .map(|(name, value)| name.len() as u64 + string_bytes(value))
            .sum(),
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::{count_nodes, string_bytes};
    use serde_json::json;

    #[test]
    fn counts_nodes_within_depth() {
        assert_eq!(
            count_nodes(&json!({"a": [1, 2], "b": null}), 8),
            Some((5, 2))
        );
        assert_eq!(count_nodes(&json!([[[1]]]), 3), Some((4, 3)));
        assert_eq!(count_nodes(&json!([[[[1]]]]), 3), None);
        assert_eq!(count_nodes(&json!("x"), 3), Some((1, 0)));
        assert_eq!(count_nodes(&json!([1, [2], {"a": [[3]]}]), 8), Some((8, 4)));
    }

    /// A quarantine ends: the same schema may serve other tools and peers.
    #[test]
    fn a_quarantine_ends() {
        use std::sync::atomic::Ordering;
        let engine = crate::SchemaEngine::default();
        let compiled = engine
            .compile(&json!({"type": "string"}))
            .expect("compiles");
        assert!(!compiled.is_quarantined());
        let until = super::now_ms() + super::QUARANTINE.as_millis() as u64;
        compiled.quarantined_until.store(until, Ordering::Release);
        assert!(compiled.is_quarantined());
        assert!(compiled.validate(&json!("x")).is_err());
        compiled.quarantined_until.store(1, Ordering::Release);
        assert!(!compiled.is_quarantined());
        assert!(compiled.validate(&json!("x")).is_ok());
    }

    /// The chain that bounds a validation's recursion is the longest at any
    /// instance location, not only at the root's.
    #[test]
    fn the_longest_chain_anywhere_is_kept() {
        let mut links: Vec<serde_json::Value> = (1..=100)
            .map(|next| json!({"$ref": format!("#/x/{next}")}))
            .collect();
        links.push(json!({"type": "array", "items": {"$ref": "#"}}));
        let schema = json!({"type": "array", "items": {"$ref": "#/x/0"}, "x": links});
        let compiled = crate::SchemaEngine::default()
            .compile(&schema)
            .expect("compiles");
        assert!(compiled.chain > 100, "{}", compiled.chain);
        // So an instance 100 deep does not fit inline.
        assert!(!compiled.fits_inline(101, 100));
    }

    #[test]
    fn counts_string_bytes() {
        assert_eq!(string_bytes(&json!({"ab": ["cde", 1], "f": null})), 6);
    }
}
