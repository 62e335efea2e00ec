//! Checks that run before anything is compiled: size, depth, subschema count and patterns.

use std::collections::HashSet;
use std::hash::{DefaultHasher, Hasher};
use std::io;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::error::{SchemaError, SchemaErrorKind};
use crate::limits::Limits;
use crate::report::excerpt;
use crate::walk::{self, push_segment};

/// The size of a schema and a hash of its content, from one serialization pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Footprint {
    pub(crate) bytes: usize,
    pub(crate) hash: u64,
}

struct HashingCounter {
    hasher: DefaultHasher,
    bytes: usize,
    limit: usize,
}

impl io::Write for HashingCounter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.bytes += buf.len();
        if self.bytes > self.limit {
            return Err(io::Error::other("schema over the size limit"));
        }
        self.hasher.write(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Measures and hashes `schema`, stopping as soon as it is over `limit` bytes.
pub(crate) fn footprint(schema: &Value, limit: usize) -> Result<Footprint, SchemaError> {
    let mut counter = HashingCounter {
        hasher: DefaultHasher::new(),
        bytes: 0,
        limit,
    };
    // The only error the writer produces is going over the limit.
    serde_json::to_writer(&mut counter, schema)
        .map_err(|_| SchemaError::from(SchemaErrorKind::TooLarge { limit }))?;
    Ok(Footprint {
        bytes: counter.bytes,
        hash: counter.hasher.finish(),
    })
}

/// The longest pattern read: the regex engine's own bounds come after the
/// translation from ECMA-262 syntax, which is not linear in every pattern.
const MAX_PATTERN_BYTES: usize = 32 * 1024;

/// Most `\c` escapes (control characters) in one pattern: the translation
/// reads the pattern again from its start for each one.
const MAX_CONTROL_ESCAPES: usize = 32;

/// How patterns are checked before compiling.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum PatternPolicy {
    /// Only patterns a linear-time engine can run.
    LinearOnly,
    /// Backtracking patterns too (the engine then runs them with a backtrack limit).
    AllowBacktracking,
}

/// Checks document depth, subschema count and every pattern (their compiling
/// within `pattern_budget` together): what was met, for the subschemas
/// that references reach elsewhere to be held to the same bounds
/// ([`StructureChecker::referenced`]).
pub(crate) fn check_structure(
    schema: &Value,
    limits: &Limits,
    patterns: PatternPolicy,
    pattern_budget: Duration,
) -> Result<StructureChecker, SchemaError> {
    let mut pointer = String::new();
    check_depth(schema, limits.max_schema_depth, 0, &mut pointer)?;
    let mut checker = StructureChecker {
        limit: limits.max_subschemas,
        count: 0,
        patterns,
        pattern_budget,
        pattern_time: Duration::ZERO,
        checked: HashSet::new(),
        walked: HashSet::new(),
    };
    checker.visit(schema, &mut pointer)?;
    Ok(checker)
}

/// Checks only the document's depth.
pub(crate) fn check_document_depth(schema: &Value, limits: &Limits) -> Result<(), SchemaError> {
    check_depth(schema, limits.max_schema_depth, 0, &mut String::new())
}

fn check_depth(
    value: &Value,
    limit: usize,
    depth: usize,
    pointer: &mut String,
) -> Result<(), SchemaError> {
    let children: Box<dyn Iterator<Item = (String, &Value)>> = match value {
        Value::Object(map) => Box::new(map.iter().map(|(k, v)| (k.clone(), v))),
        Value::Array(items) => Box::new(items.iter().enumerate().map(|(i, v)| (i.to_string(), v))),
        _ => return Ok(()),
    };
    if depth >= limit {
        return Err(SchemaErrorKind::TooDeep {
            limit,
            at: excerpt(pointer, 200),
        }
        .into());
    }
    for (segment, child) in children {
        if child.is_object() || child.is_array() {
            let len = pointer.len();
            push_segment(pointer, &segment);
            check_depth(child, limit, depth + 1, pointer)?;
            pointer.truncate(len);
        }
    }
    Ok(())
}

/// The subschemas of a document met so far, counted, and their patterns checked.
pub(crate) struct StructureChecker {
    limit: usize,
    count: usize,
    patterns: PatternPolicy,
    /// The time all the schema's patterns may take to compile.
    pattern_budget: Duration,
    /// The time they took so far.
    pattern_time: Duration,
    /// The patterns checked so far (each distinct one is checked once).
    checked: HashSet<String>,
    /// The addresses of the subschemas the walk met.
    pub(crate) walked: HashSet<usize>,
}

impl StructureChecker {
    fn visit(&mut self, schema: &Value, pointer: &mut String) -> Result<(), SchemaError> {
        self.walked.insert(std::ptr::from_ref(schema) as usize);
        self.visit_one(schema, pointer)?;
        let Value::Object(map) = schema else {
            return Ok(());
        };
        let mut result = Ok(());
        walk::for_each_subschema(map, |edge| {
            if result.is_ok() {
                let len = pointer.len();
                edge.push_pointer(pointer);
                result = self.visit(edge.schema, pointer);
                pointer.truncate(len);
            }
        });
        result
    }

    /// Counts a subschema that references reach outside the places the
    /// walk met (a pointer into another member, another document), and
    /// checks its own patterns (its subschemas are met as it is, one by one).
    pub(crate) fn referenced(&mut self, schema: &Value, path: &str) -> Result<(), SchemaError> {
        let mut pointer = path.to_owned();
        self.visit_one(schema, &mut pointer)
    }

    /// Counts `schema` and checks its own patterns.
    fn visit_one(&mut self, schema: &Value, pointer: &mut String) -> Result<(), SchemaError> {
        self.count += 1;
        if self.count > self.limit {
            return Err(SchemaErrorKind::TooManySubschemas { limit: self.limit }.into());
        }
        let Value::Object(map) = schema else {
            return Ok(());
        };
        if let Some(Value::String(pattern)) = map.get("pattern") {
            let len = pointer.len();
            push_segment(pointer, "pattern");
            self.check_pattern(pattern, pointer)?;
            pointer.truncate(len);
        }
        if let Some(Value::Object(patterns)) = map.get("patternProperties") {
            for pattern in patterns.keys() {
                let len = pointer.len();
                push_segment(pointer, "patternProperties");
                push_segment(pointer, pattern);
                self.check_pattern(pattern, pointer)?;
                pointer.truncate(len);
            }
        }
        Ok(())
    }

    fn check_pattern(&mut self, pattern: &str, pointer: &str) -> Result<(), SchemaError> {
        if self.checked.contains(pattern) {
            return Ok(());
        }
        if pattern.len() > MAX_PATTERN_BYTES || pattern.matches(r"\c").count() > MAX_CONTROL_ESCAPES
        {
            return Err(SchemaErrorKind::PatternOverBounds {
                pattern: excerpt(pattern, 120),
                at: excerpt(pointer, 200),
            }
            .into());
        }
        let started = Instant::now();
        let class = classify_pattern(pattern);
        self.pattern_time += started.elapsed();
        if self.pattern_time > self.pattern_budget {
            return Err(SchemaErrorKind::PatternsTooCostly {
                budget_ms: self.pattern_budget.as_millis(),
                at: excerpt(pointer, 200),
            }
            .into());
        }
        self.checked.insert(pattern.to_owned());
        match class {
            PatternClass::Linear => Ok(()),
            PatternClass::Backtracking if self.patterns == PatternPolicy::AllowBacktracking => {
                Ok(())
            }
            PatternClass::Backtracking => Err(SchemaErrorKind::BacktrackingPattern {
                pattern: excerpt(pattern, 120),
                at: excerpt(pointer, 200),
            }
            .into()),
            PatternClass::Invalid => Err(SchemaErrorKind::InvalidPattern {
                pattern: excerpt(pattern, 120),
                at: excerpt(pointer, 200),
            }
            .into()),
        }
    }
}

#[derive(Debug, PartialEq, Eq)]
enum PatternClass {
    Linear,
    Backtracking,
    Invalid,
}

/// Whether an ECMA-262 pattern runs on a linear-time engine, needs backtracking, or is invalid.
fn classify_pattern(pattern: &str) -> PatternClass {
    let Ok(translated) = jsonschema_regex::to_rust_regex(pattern) else {
        return PatternClass::Invalid;
    };
    if regex::Regex::new(&translated).is_ok() {
        PatternClass::Linear
    } else if fancy_regex::Regex::new(&translated).is_ok() {
        PatternClass::Backtracking
    } else {
        PatternClass::Invalid
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn classifies_patterns() {
        assert_eq!(classify_pattern(r"^[a-z]+\d*$"), PatternClass::Linear);
        assert_eq!(
            classify_pattern(r"^(\w+\s?)*(?<!x)$"),
            PatternClass::Backtracking
        );
        assert_eq!(classify_pattern(r"(a)\1"), PatternClass::Backtracking);
        assert_eq!(classify_pattern(r"(unclosed"), PatternClass::Invalid);
    }

    #[test]
    fn footprint_is_content_keyed_and_bounded() {
        let a = footprint(&json!({"type": "string", "minLength": 1}), 1000).ok();
        let b = footprint(&json!({"minLength": 1, "type": "string"}), 1000).ok();
        assert_eq!(a, b);
        assert!(footprint(&json!({"description": "x".repeat(100)}), 50).is_err());
    }

    #[test]
    fn depth_error_names_the_place() {
        let limits = Limits {
            max_schema_depth: 3,
            ..Limits::default()
        };
        let schema = json!({"properties": {"a": {"properties": {"b": {}}}}});
        let error = check_structure(
            &schema,
            &limits,
            PatternPolicy::LinearOnly,
            limits.pattern_budget,
        )
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
        assert!(error.contains("/properties/a/properties"), "{error}");
    }
}
