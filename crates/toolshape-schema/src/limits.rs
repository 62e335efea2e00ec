//! The bounds every schema and every validation is held to.

use std::time::Duration;

/// Bounds on schema cost and validation work. Every field has a safe default.
///
/// ```
/// let mut limits = toolshape_schema::Limits::default();
/// limits.max_subschemas = 2_000;
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct Limits {
    /// Largest schema, in bytes of compact JSON.
    pub max_schema_bytes: usize,
    /// Deepest nesting of the schema document (objects and arrays).
    pub max_schema_depth: usize,
    /// Most subschemas one schema may hold.
    pub max_subschemas: usize,
    /// Most subschema evaluations one instance location may cost in the worst case,
    /// counting every branch of `anyOf`/`oneOf`/`allOf` and following `$ref`s
    /// (recursion unrolled to [`Limits::max_instance_depth`]).
    pub max_expansion: u64,
    /// Most steps (a subschema at an instance depth) working out a schema's
    /// worst-case cost may take: a schema too intricate to bound within them
    /// is refused. The 2020-12 meta-schema takes between 10,000 and 20,000.
    pub max_estimate_steps: usize,
    /// Deepest instance a validation accepts; deeper ones fail without being walked further.
    pub max_instance_depth: usize,
    /// Time one validation against an untrusted schema may take.
    pub validation_budget: Duration,
    /// Time the regular expressions of one untrusted schema (`pattern`,
    /// `patternProperties`) may take to compile together, each distinct one
    /// checked once before the schema is compiled: one may take a tenth of
    /// a second, and a schema may hold thousands.
    pub pattern_budget: Duration,
    /// Compile time the untrusted schemas of one peer's listing may take
    /// together: what a [`crate::CompileBudget`] is made with by those that
    /// compile a listing at once (`ToolRegistry::replace_all`, the proxy,
    /// `toolshape check`). Past it, schemas not already compiled are
    /// refused ([`crate::SchemaErrorKind::ListingTooCostly`]).
    pub listing_budget: Duration,
    /// Untrusted validations whose estimated work (schema expansion × instance nodes)
    /// stays under this run inline on the caller's thread; larger ones run on a
    /// budgeted worker thread.
    pub inline_work: u64,
    /// Most budgeted validations that may be over budget and still running at once;
    /// past that, further budgeted validations fail fast.
    pub max_runaway_validations: usize,
    /// Most violations one report lists.
    pub max_violations: usize,
    /// Longest message, in characters, one violation carries.
    pub max_message_chars: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_schema_bytes: 512 * 1024,
            max_schema_depth: 64,
            max_subschemas: 10_000,
            max_expansion: 100_000,
            max_estimate_steps: 200_000,
            max_instance_depth: 128,
            validation_budget: Duration::from_millis(500),
            pattern_budget: Duration::from_millis(500),
            listing_budget: Duration::from_secs(30),
            inline_work: 1_000_000,
            max_runaway_validations: 4,
            max_violations: 20,
            max_message_chars: 200,
        }
    }
}
