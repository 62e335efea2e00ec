//! Checking a schema against its dialect's meta-schema, with a readable report.

use serde_json::Value;

use crate::dialect::Dialect;
use crate::error::{SchemaError, SchemaErrorKind};
use crate::limits::Limits;
use crate::report;

/// Fails with every place (up to the violation cap) where `schema` breaks its meta-schema.
pub(crate) fn check(schema: &Value, dialect: Dialect, limits: &Limits) -> Result<(), SchemaError> {
    if schema.is_boolean() {
        return Ok(());
    }
    let validator = match dialect {
        Dialect::Draft4 => jsonschema::draft4::meta::validator(),
        Dialect::Draft6 => jsonschema::draft6::meta::validator(),
        Dialect::Draft7 => jsonschema::draft7::meta::validator(),
        Dialect::Draft201909 => jsonschema::draft201909::meta::validator(),
        Dialect::Draft202012 => jsonschema::draft202012::meta::validator(),
    };
    if validator.is_valid(schema) {
        return Ok(());
    }
    let (violations, truncated) = report::collect(
        validator.iter_errors(schema),
        limits.max_violations,
        limits.max_message_chars,
    );
    let mut text = violations
        .iter()
        .map(|v| format!("{} ({})", v, v.keyword))
        .collect::<Vec<_>>()
        .join("; ");
    if truncated {
        text.push_str("; …");
    }
    Err(SchemaErrorKind::Invalid {
        dialect: dialect.to_string(),
        violations: text,
    }
    .into())
}
