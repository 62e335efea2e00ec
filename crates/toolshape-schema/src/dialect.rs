//! JSON Schema dialects and their detection from `$schema`.

use std::fmt;

use referencing::Draft;
use serde_json::Value;

use crate::error::SchemaError;

/// A JSON Schema dialect (draft) the engine can compile.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Dialect {
    /// Draft 4 (`http://json-schema.org/draft-04/schema#`).
    Draft4,
    /// Draft 6 (`http://json-schema.org/draft-06/schema#`).
    Draft6,
    /// Draft 7 (`http://json-schema.org/draft-07/schema#`), which the TypeScript SDK stamps.
    Draft7,
    /// Draft 2019-09.
    Draft201909,
    /// Draft 2020-12, the default when `$schema` is absent (MCP, SEP-2106).
    Draft202012,
}

impl Dialect {
    /// The canonical meta-schema URI of this dialect.
    pub fn uri(self) -> &'static str {
        match self {
            Dialect::Draft4 => "http://json-schema.org/draft-04/schema#",
            Dialect::Draft6 => "http://json-schema.org/draft-06/schema#",
            Dialect::Draft7 => "http://json-schema.org/draft-07/schema#",
            Dialect::Draft201909 => "https://json-schema.org/draft/2019-09/schema",
            Dialect::Draft202012 => "https://json-schema.org/draft/2020-12/schema",
        }
    }

    /// The dialect a meta-schema URI names, if it is one of the known ones.
    ///
    /// Accepts `http` and `https`, with or without the trailing `#`.
    pub fn from_uri(uri: &str) -> Option<Dialect> {
        match Draft::from_schema_uri(uri) {
            Draft::Draft4 => Some(Dialect::Draft4),
            Draft::Draft6 => Some(Dialect::Draft6),
            Draft::Draft7 => Some(Dialect::Draft7),
            Draft::Draft201909 => Some(Dialect::Draft201909),
            Draft::Draft202012 => Some(Dialect::Draft202012),
            _ => None,
        }
    }

    /// The dialect a schema declares through `$schema`, 2020-12 when it declares none.
    ///
    /// A `$schema` that is not a string, or names no known dialect, is an error:
    /// the engine never silently falls back to another dialect. (A
    /// [`crate::SchemaEngine`] also accepts a `$schema` naming a meta-schema
    /// registered with it, which this function, knowing no registrations, refuses.)
    pub fn of(schema: &Value) -> Result<Dialect, SchemaError> {
        match schema.as_object().and_then(|map| map.get("$schema")) {
            None => Ok(Dialect::Draft202012),
            Some(Value::String(uri)) => {
                Dialect::from_uri(uri).ok_or_else(|| SchemaError::unknown_dialect(uri))
            }
            Some(_) => Err(SchemaError::unknown_dialect(
                "(a $schema that is not a string)",
            )),
        }
    }

    pub(crate) fn draft(self) -> Draft {
        match self {
            Dialect::Draft4 => Draft::Draft4,
            Dialect::Draft6 => Draft::Draft6,
            Dialect::Draft7 => Draft::Draft7,
            Dialect::Draft201909 => Draft::Draft201909,
            Dialect::Draft202012 => Draft::Draft202012,
        }
    }
}

impl fmt::Display for Dialect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Dialect::Draft4 => "draft-04",
            Dialect::Draft6 => "draft-06",
            Dialect::Draft7 => "draft-07",
            Dialect::Draft201909 => "2019-09",
            Dialect::Draft202012 => "2020-12",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn detects_declared_and_default_dialects() {
        assert_eq!(Dialect::of(&json!({})).ok(), Some(Dialect::Draft202012));
        assert_eq!(
            Dialect::of(&json!({"$schema": "http://json-schema.org/draft-07/schema#"})).ok(),
            Some(Dialect::Draft7)
        );
        assert_eq!(
            Dialect::of(&json!({"$schema": "https://json-schema.org/draft/2019-09/schema"})).ok(),
            Some(Dialect::Draft201909)
        );
        assert!(Dialect::of(&json!({"$schema": "https://example.com/mine"})).is_err());
        assert!(Dialect::of(&json!({"$schema": 7})).is_err());
    }
}
