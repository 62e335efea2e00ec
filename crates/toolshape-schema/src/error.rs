//! Errors: why a schema would not compile, and why an instance did not validate.

use std::fmt;

/// Why a schema was refused. The message says where and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{kind}")]
pub struct SchemaError {
    kind: SchemaErrorKind,
}

/// What kind of refusal a [`SchemaError`] is, for callers that branch on it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SchemaErrorKind {
    /// `$schema` names neither a dialect the engine knows nor a meta-schema registered with it.
    #[error(
        "unknown JSON Schema dialect {0:?}: expected 2020-12, 2019-09, draft-07, draft-06, draft-04 or a meta-schema registered with the engine"
    )]
    UnknownDialect(String),
    /// `$schema` names a registered meta-schema that leads to no known dialect.
    #[error("meta-schema {uri:?} is unusable: {reason}")]
    MetaSchema {
        /// The meta-schema's URI, as registered.
        uri: String,
        /// Why it is unusable.
        reason: String,
    },
    /// A `$ref` leads outside the document and the registered documents; nothing was fetched.
    #[error(
        "reference to {uri:?} refused: only same-document and registered references resolve, and nothing is fetched"
    )]
    RemoteReference {
        /// The URI that was refused.
        uri: String,
    },
    /// A reference that cannot resolve (bad pointer, unknown anchor, bad URI).
    #[error("unresolvable reference: {0}")]
    Unresolvable(String),
    /// The schema is larger than [`crate::Limits::max_schema_bytes`].
    #[error("schema is larger than {limit} bytes")]
    TooLarge {
        /// The limit that was exceeded.
        limit: usize,
    },
    /// The schema nests deeper than [`crate::Limits::max_schema_depth`].
    #[error("schema nests deeper than {limit} levels at {at}")]
    TooDeep {
        /// The limit that was exceeded.
        limit: usize,
        /// JSON Pointer to where the limit was crossed.
        at: String,
    },
    /// The schema holds more subschemas than [`crate::Limits::max_subschemas`].
    #[error("schema has more than {limit} subschemas")]
    TooManySubschemas {
        /// The limit that was exceeded.
        limit: usize,
    },
    /// The worst-case evaluation cost exceeds [`crate::Limits::max_expansion`].
    #[error(
        "schema expands to more than {limit} subschema evaluations per instance location (exponential anyOf/oneOf/allOf through $ref?) at {at}"
    )]
    ExpansionTooCostly {
        /// The limit that was exceeded.
        limit: u64,
        /// JSON Pointer to the subschema whose cost crossed the limit.
        at: String,
    },
    /// A draft 2019-09 `$recursiveRef` other than `#`: the draft defines the
    /// keyword for `#` only (and validators read other values differently).
    #[error("$recursiveRef {value:?} at {at}: draft 2019-09 defines $recursiveRef only as \"#\"")]
    UndefinedRecursiveRef {
        /// The keyword's value, shortened.
        value: String,
        /// JSON Pointer to it (through the references followed to reach it).
        at: String,
    },
    /// Working out the schema's worst-case cost took more than
    /// [`crate::Limits::max_estimate_steps`] steps.
    #[error(
        "schema is too intricate to bound: working out its worst-case cost took more than {limit} steps"
    )]
    EstimateTooCostly {
        /// The limit that was exceeded.
        limit: usize,
    },
    /// A `$ref` cycle that never descends into the instance: it would recurse forever.
    #[error("reference cycle at {at} applies to the same instance location forever")]
    ReferenceCycle {
        /// JSON Pointer to a subschema on the cycle.
        at: String,
    },
    /// The schema's patterns took longer than [`crate::Limits::pattern_budget`]
    /// to compile.
    #[error(
        "the schema's patterns take more than {budget_ms} ms to compile (the last one tried at {at})"
    )]
    PatternsTooCostly {
        /// The budget, in milliseconds.
        budget_ms: u128,
        /// JSON Pointer to the pattern that crossed it.
        at: String,
    },
    /// Not compiled: the schemas compiled before it with the same
    /// [`crate::CompileBudget`] (a peer's listing) had spent it.
    #[error(
        "the listing's schemas took more than {budget_ms} ms to compile together; this one is left for the next listing"
    )]
    ListingTooCostly {
        /// The budget, in milliseconds.
        budget_ms: u128,
    },
    /// A pattern needs a backtracking regex engine (look-around, back-references).
    #[error(
        "pattern {pattern:?} at {at} needs backtracking (look-around or back-references); only linear-time patterns are accepted"
    )]
    BacktrackingPattern {
        /// The pattern, shortened.
        pattern: String,
        /// JSON Pointer to the pattern.
        at: String,
    },
    /// A pattern past what is read of one: longer than 32 KiB, or with
    /// more than 32 `\c` escapes (the translation to the regex engine's
    /// syntax reads the pattern again from its start for each).
    #[error("pattern {pattern:?} at {at} is longer than 32 KiB or holds more than 32 \\c escapes")]
    PatternOverBounds {
        /// The pattern, shortened.
        pattern: String,
        /// JSON Pointer to the pattern.
        at: String,
    },
    /// A chain of subschemas applied at one instance location (through
    /// `$ref`s) is longer than the engine follows: validating it would
    /// recurse that deep.
    #[error(
        "a chain of more than {limit} subschemas applies at one instance location (through references, at {at})"
    )]
    ReferenceChainTooLong {
        /// The longest chain accepted.
        limit: usize,
        /// JSON Pointer path (through references) to where it was crossed.
        at: String,
    },
    /// A pattern is not a valid regular expression.
    #[error("invalid regular expression {pattern:?} at {at}")]
    InvalidPattern {
        /// The pattern, shortened.
        pattern: String,
        /// JSON Pointer to the pattern.
        at: String,
    },
    /// The schema does not conform to its dialect's meta-schema.
    #[error("schema is not a valid {dialect} schema: {violations}")]
    Invalid {
        /// The dialect checked against.
        dialect: String,
        /// Where and why, `; `-separated.
        violations: String,
    },
    /// The validator library refused the schema for another reason.
    #[error("schema could not be compiled: {0}")]
    Compile(String),
}

impl SchemaError {
    /// What kind of refusal this is.
    pub fn kind(&self) -> &SchemaErrorKind {
        &self.kind
    }

    pub(crate) fn unknown_dialect(uri: &str) -> Self {
        SchemaErrorKind::UnknownDialect(crate::report::excerpt(uri, 120)).into()
    }
}

impl From<SchemaErrorKind> for SchemaError {
    fn from(kind: SchemaErrorKind) -> Self {
        SchemaError { kind }
    }
}

/// One way an instance fails its schema.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Violation {
    /// JSON Pointer into the instance.
    pub instance_path: String,
    /// The schema keyword that failed (`type`, `required`, ...).
    pub keyword: String,
    /// JSON Pointer into the schema, through any `$ref`s taken.
    pub schema_path: String,
    /// A readable message that quotes at most a short excerpt of the instance.
    pub message: String,
    /// For a `required` violation, the property that is missing (the
    /// instance path names the object that lacks it).
    pub missing_property: Option<String>,
}

impl Violation {
    /// A violation at `instance_path` of `keyword`, saying `message` (no
    /// schema path, no missing property).
    pub fn new(
        instance_path: impl Into<String>,
        keyword: impl Into<String>,
        message: impl Into<String>,
    ) -> Violation {
        Violation {
            instance_path: instance_path.into(),
            keyword: keyword.into(),
            schema_path: String::new(),
            message: message.into(),
            missing_property: None,
        }
    }
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = if self.instance_path.is_empty() {
            "/"
        } else {
            &self.instance_path
        };
        write!(f, "at {at}: {}", self.message)
    }
}

/// Why an instance did not validate.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{kind}")]
pub struct ValidationError {
    kind: ValidationErrorKind,
}

/// What kind of validation failure a [`ValidationError`] is.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ValidationErrorKind {
    /// The instance does not match the schema.
    #[error("{}", Violations(.violations, *.truncated))]
    Mismatch {
        /// The violations found, capped at [`crate::Limits::max_violations`].
        violations: Vec<Violation>,
        /// Whether more violations were left out.
        truncated: bool,
    },
    /// The instance nests deeper than [`crate::Limits::max_instance_depth`].
    #[error("instance nests deeper than {limit} levels")]
    InstanceTooDeep {
        /// The limit that was exceeded.
        limit: usize,
    },
    /// Validation took longer than [`crate::Limits::validation_budget`]; the schema is now quarantined.
    #[error("validation exceeded its time budget of {budget_ms} ms; the schema is quarantined")]
    BudgetExceeded {
        /// The budget, in milliseconds.
        budget_ms: u128,
    },
    /// The schema overran its budget a short while ago (a minute) and is
    /// not run meanwhile.
    #[error("schema is quarantined after overrunning its validation budget")]
    Quarantined,
    /// The validator library failed on this instance (its worker thread
    /// ended without a result).
    #[error("the validator failed on this instance")]
    Failed,
    /// Too many overrunning validations are still running; this one was not started.
    #[error("too many validations are over budget and still running; try again later")]
    Overloaded,
}

impl ValidationError {
    /// What kind of failure this is.
    pub fn kind(&self) -> &ValidationErrorKind {
        &self.kind
    }

    /// The violations, when the instance simply does not match.
    pub fn violations(&self) -> &[Violation] {
        match &self.kind {
            ValidationErrorKind::Mismatch { violations, .. } => violations,
            _ => &[],
        }
    }
}

impl From<ValidationErrorKind> for ValidationError {
    fn from(kind: ValidationErrorKind) -> Self {
        ValidationError { kind }
    }
}

struct Violations<'a>(&'a [Violation], bool);

impl fmt::Display for Violations<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, violation) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            write!(f, "{violation}")?;
        }
        if self.1 {
            f.write_str("; (more violations left out)")?;
        }
        Ok(())
    }
}
