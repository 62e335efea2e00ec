//! Checking a schema against its meta-schema, with a readable report: the
//! built-in one of its dialect, or a custom one registered with the engine.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use jsonschema::Validator;
use referencing::Registry;
use serde_json::Value;

use crate::dialect::Dialect;
use crate::error::{SchemaError, SchemaErrorKind, Violation};
use crate::limits::Limits;
use crate::report::{self, excerpt};
use crate::resolve::Retriever;

/// Fails with every place (up to the violation cap) where `schema` breaks its dialect's meta-schema.
pub(crate) fn check(schema: &Value, dialect: Dialect, limits: &Limits) -> Result<(), SchemaError> {
    if schema.is_boolean() {
        return Ok(());
    }
    report_against(&builtin(dialect), schema, &dialect.to_string(), limits)
}

fn builtin(dialect: Dialect) -> jsonschema::meta::MetaValidator<'static> {
    match dialect {
        Dialect::Draft4 => jsonschema::draft4::meta::validator(),
        Dialect::Draft6 => jsonschema::draft6::meta::validator(),
        Dialect::Draft7 => jsonschema::draft7::meta::validator(),
        Dialect::Draft201909 => jsonschema::draft201909::meta::validator(),
        Dialect::Draft202012 => jsonschema::draft202012::meta::validator(),
    }
}

/// Where `schema` breaks the meta-schema of `dialect`: each violation's
/// `instance_path` is a JSON Pointer into `schema`. At most
/// [`Limits::max_violations`] are listed; the flag says whether more were
/// left out. Empty when it conforms (a boolean schema always does). A
/// schema larger or deeper than the limits allow is refused first, as
/// [`SchemaEngine::compile`](crate::SchemaEngine::compile) refuses it.
///
/// [`SchemaEngine::compile`](crate::SchemaEngine::compile) reports the same
/// violations as one message; this is for tools that point at each place
/// (`toolshape check`).
///
/// ```
/// use serde_json::json;
/// use toolshape_schema::{Dialect, Limits, meta_schema_violations};
/// let schema = json!({"type": "object", "properties": {"pair": {"items": [{"type": "string"}]}}});
/// let (violations, _) = meta_schema_violations(&schema, Dialect::Draft202012, &Limits::default())?;
/// assert!(violations.iter().any(|v| v.instance_path == "/properties/pair/items"));
/// # Ok::<(), toolshape_schema::SchemaError>(())
/// ```
pub fn meta_schema_violations(
    schema: &Value,
    dialect: Dialect,
    limits: &Limits,
) -> Result<(Vec<Violation>, bool), SchemaError> {
    if schema.is_boolean() {
        return Ok((Vec::new(), false));
    }
    crate::precheck::footprint(schema, limits.max_schema_bytes)?;
    crate::precheck::check_document_depth(schema, limits)?;
    let validator = builtin(dialect);
    if validator.is_valid(schema) {
        return Ok((Vec::new(), false));
    }
    Ok(report::collect(
        validator.iter_errors(schema),
        limits.max_violations,
        limits.max_message_chars,
    ))
}

/// The validators of the custom meta-schemas used so far, by registered URI:
/// each is compiled once per engine.
#[derive(Default)]
pub(crate) struct CustomValidators {
    compiled: Mutex<HashMap<String, Arc<Validator>>>,
}

impl CustomValidators {
    /// Fails with every place (up to the violation cap) where `schema` breaks
    /// the custom meta-schema registered at `uri`, which builds on `dialect`.
    /// Its references resolve among the registered documents; nothing is fetched.
    pub(crate) fn check(
        &self,
        schema: &Value,
        (uri, meta_schema): (&str, &Value),
        dialect: Dialect,
        documents: &Registry<'static>,
        limits: &Limits,
    ) -> Result<(), SchemaError> {
        if schema.is_boolean() {
            return Ok(());
        }
        let validator = self.validator(uri, meta_schema, dialect, documents)?;
        report_against(&validator, schema, &excerpt(uri, 120), limits)
    }

    fn validator(
        &self,
        uri: &str,
        meta_schema: &Value,
        dialect: Dialect,
        documents: &Registry<'static>,
    ) -> Result<Arc<Validator>, SchemaError> {
        let mut compiled = self.compiled.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(validator) = compiled.get(uri) {
            return Ok(Arc::clone(validator));
        }
        let validator = jsonschema::options()
            .with_draft(dialect.draft())
            .with_registry(documents)
            .with_base_uri(uri.trim_end_matches('#'))
            .with_retriever(Retriever::offline())
            .build(meta_schema)
            .map_err(|error| SchemaErrorKind::MetaSchema {
                uri: excerpt(uri, 120),
                reason: excerpt(&error.masked().to_string(), 300),
            })?;
        let validator = Arc::new(validator);
        compiled.insert(uri.to_owned(), Arc::clone(&validator));
        Ok(validator)
    }
}

fn report_against(
    validator: &Validator,
    schema: &Value,
    name: &str,
    limits: &Limits,
) -> Result<(), SchemaError> {
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
        dialect: name.to_owned(),
        violations: text,
    }
    .into())
}
