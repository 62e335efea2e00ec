//! The dialect a schema declares: a known dialect's meta-schema URI, or a
//! custom meta-schema registered with the engine ahead of time, followed
//! through its own `$schema` to the dialect it builds on.

use std::collections::HashMap;

use serde_json::Value;

use crate::dialect::Dialect;
use crate::error::{SchemaError, SchemaErrorKind};
use crate::report::excerpt;

/// How many custom meta-schemas a chain may pass through before reaching a known dialect.
const MAX_CHAIN: usize = 8;

/// The dialect a schema is compiled in, and the registered meta-schema it
/// names, when it names one instead of a known dialect.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Declared<'a> {
    /// The dialect whose keywords and rules apply.
    pub(crate) dialect: Dialect,
    /// The custom meta-schema's URI (as registered) and document.
    pub(crate) custom: Option<(&'a str, &'a Value)>,
}

/// The documents registered with an engine, as meta-schemas a `$schema` may
/// name: each under the URI it was registered at and under its root `$id`.
#[derive(Debug, Default)]
pub(crate) struct MetaSchemas {
    by_uri: HashMap<String, (String, Value)>,
}

/// The form two URIs are compared in: parsed and normalised, without fragment.
fn key(uri: &str) -> Option<String> {
    let mut parsed = referencing::uri::from_str(uri.trim_end_matches('#')).ok()?;
    parsed.set_fragment(None);
    Some(parsed.as_str().to_owned())
}

impl MetaSchemas {
    /// Indexes `documents`. A URI that does not parse is skipped here; the
    /// registry reports it.
    pub(crate) fn new(documents: &[(String, Value)]) -> Self {
        let mut by_uri = HashMap::new();
        for (uri, document) in documents {
            let id = document.get("$id").and_then(Value::as_str);
            for name in std::iter::once(uri.as_str()).chain(id) {
                if let Some(key) = key(name) {
                    by_uri
                        .entry(key)
                        .or_insert_with(|| (uri.clone(), document.clone()));
                }
            }
        }
        MetaSchemas { by_uri }
    }

    fn get(&self, uri: &str) -> Option<(&str, &Value)> {
        let (registered, document) = self.by_uri.get(&key(uri)?)?;
        Some((registered.as_str(), document))
    }

    /// What `schema`'s `$schema` declares: 2020-12 when absent, a known
    /// dialect, or a registered meta-schema and the dialect it builds on.
    /// Anything else is refused: the engine never guesses a dialect.
    pub(crate) fn declared<'a>(&'a self, schema: &Value) -> Result<Declared<'a>, SchemaError> {
        let uri = match schema.as_object().and_then(|map| map.get("$schema")) {
            None => {
                return Ok(Declared {
                    dialect: Dialect::Draft202012,
                    custom: None,
                });
            }
            Some(Value::String(uri)) => uri,
            Some(_) => {
                return Err(SchemaError::unknown_dialect(
                    "(a $schema that is not a string)",
                ));
            }
        };
        if let Some(dialect) = Dialect::from_uri(uri) {
            return Ok(Declared {
                dialect,
                custom: None,
            });
        }
        let (registered, meta_schema) = self
            .get(uri)
            .ok_or_else(|| SchemaError::unknown_dialect(uri))?;
        Ok(Declared {
            dialect: self.dialect_below(registered, meta_schema)?,
            custom: Some((registered, meta_schema)),
        })
    }

    /// The known dialect a custom meta-schema builds on, through at most
    /// [`MAX_CHAIN`] registered meta-schemas. A meta-schema without `$schema`
    /// is read as 2020-12, as a schema without one is.
    fn dialect_below(&self, uri: &str, meta_schema: &Value) -> Result<Dialect, SchemaError> {
        let unusable = |reason: String| -> SchemaError {
            SchemaErrorKind::MetaSchema {
                uri: excerpt(uri, 120),
                reason,
            }
            .into()
        };
        let mut seen = vec![uri];
        let mut current = meta_schema;
        for _ in 0..MAX_CHAIN {
            let next = match current.as_object().and_then(|map| map.get("$schema")) {
                None => return Ok(Dialect::Draft202012),
                Some(Value::String(next)) => next,
                Some(_) => return Err(unusable("a $schema that is not a string".into())),
            };
            if let Some(dialect) = Dialect::from_uri(next) {
                return Ok(dialect);
            }
            let (registered, document) = self.get(next).ok_or_else(|| {
                unusable(format!(
                    "$schema {:?} names neither a known dialect nor a registered document",
                    excerpt(next, 120)
                ))
            })?;
            if seen.contains(&registered) {
                return Err(unusable(format!(
                    "its $schema chain returns to {:?}",
                    excerpt(registered, 120)
                )));
            }
            seen.push(registered);
            current = document;
        }
        Err(unusable(format!(
            "its $schema chain is longer than {MAX_CHAIN} meta-schemas"
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const META: &str = "https://example.com/meta";

    fn registered(documents: &[(&str, Value)]) -> MetaSchemas {
        let documents: Vec<(String, Value)> = documents
            .iter()
            .map(|(uri, document)| ((*uri).to_owned(), document.clone()))
            .collect();
        MetaSchemas::new(&documents)
    }

    #[test]
    fn known_absent_and_registered_dialects() {
        let metas = registered(&[(
            META,
            json!({"$schema": "http://json-schema.org/draft-07/schema#"}),
        )]);
        let declared = |schema: Value| metas.declared(&schema).map(|d| d.dialect).ok();
        assert_eq!(declared(json!({})), Some(Dialect::Draft202012));
        assert_eq!(
            declared(json!({"$schema": "https://json-schema.org/draft/2019-09/schema"})),
            Some(Dialect::Draft201909)
        );
        assert_eq!(declared(json!({"$schema": META})), Some(Dialect::Draft7));
        assert_eq!(
            declared(json!({"$schema": format!("{META}#")})),
            Some(Dialect::Draft7)
        );
        assert_eq!(
            declared(json!({"$schema": "https://example.com/other"})),
            None
        );
        assert_eq!(declared(json!({"$schema": 7})), None);
    }

    #[test]
    fn found_by_root_id_and_through_a_chain() {
        let metas = registered(&[
            (
                "urn:registered-as",
                json!({"$id": "https://example.com/by-id", "$schema": META}),
            ),
            (
                META,
                json!({"$schema": "https://json-schema.org/draft/2019-09/schema"}),
            ),
        ]);
        let declared = metas.declared(&json!({"$schema": "https://example.com/by-id"}));
        assert!(matches!(
            declared,
            Ok(Declared {
                dialect: Dialect::Draft201909,
                custom: Some(("urn:registered-as", _))
            })
        ));
    }

    #[test]
    fn cycles_and_dangling_chains_are_refused() {
        let metas = registered(&[
            (
                "https://example.com/a",
                json!({"$schema": "https://example.com/b"}),
            ),
            (
                "https://example.com/b",
                json!({"$schema": "https://example.com/a"}),
            ),
            (
                "https://example.com/c",
                json!({"$schema": "https://example.com/nowhere"}),
            ),
        ]);
        for uri in ["https://example.com/a", "https://example.com/c"] {
            let error = metas.declared(&json!({"$schema": uri}));
            assert!(
                matches!(
                    error.as_ref().map_err(SchemaError::kind),
                    Err(SchemaErrorKind::MetaSchema { .. })
                ),
                "{uri}: {error:?}"
            );
        }
    }
}
