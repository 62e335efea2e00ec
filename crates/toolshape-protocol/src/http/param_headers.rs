//! SEP-2243's `Mcp-Param-*` headers: which arguments a tool mirrors in
//! headers (its `x-mcp-header` annotations, read once from its input
//! schema), the headers a call carries, and the check of a request's
//! headers against its arguments.

use serde_json::{Map, Value};

use super::{HEADER_KEYWORD, decode_value, encode_value, names};

/// Why a tool's `x-mcp-header` annotations are invalid (SEP-2243). A
/// server refuses to register such a tool; a client leaves it out.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ParamHeaderError {
    /// The annotation is not a string.
    #[error("property {property:?}: x-mcp-header is not a string")]
    NotAString {
        /// The property.
        property: String,
    },
    /// The annotation is not a valid header-name token.
    #[error("property {property:?}: x-mcp-header {suffix:?} is not a header name")]
    NotAToken {
        /// The property.
        property: String,
        /// The annotation.
        suffix: String,
    },
    /// The property is not a string, integer or boolean.
    #[error(
        "property {property:?}: x-mcp-header on a property that is not a string, integer or boolean"
    )]
    NotAScalar {
        /// The property.
        property: String,
    },
    /// The chain of property names to the annotated property is longer
    /// than [`MAX_PATH_BYTES`] (a hostile schema's keys, copied per
    /// annotation, would cost without bound).
    #[error(
        "property {property:?}: x-mcp-header on a property whose path is over {MAX_PATH_BYTES} bytes"
    )]
    PathTooLong {
        /// The start of the property's path.
        property: String,
    },
    /// An annotation sits where 2026-07-28 does not let one be: not at the
    /// end of a chain of `properties` from the root (under `items`, a
    /// composition keyword, `$defs`...).
    #[error(
        "x-mcp-header under {keyword:?}: only a property reached through `properties` alone may have one"
    )]
    Misplaced {
        /// The keyword the annotated schema was found under.
        keyword: String,
    },
    /// Two properties name the same header (regardless of case).
    #[error("property {property:?}: x-mcp-header {suffix:?} is used twice")]
    Duplicate {
        /// The second property.
        property: String,
        /// The annotation.
        suffix: String,
    },
}

/// A request's `Mcp-Param-*` headers do not match its arguments.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ParamHeaderMismatch {
    /// The argument is present but its header is not.
    #[error("the Mcp-Param-{0} header is missing")]
    Missing(String),
    /// The header's Base64 sentinel does not decode.
    #[error("the Mcp-Param-{0} header is malformed")]
    Malformed(String),
    /// The header differs from the argument.
    #[error("Mcp-Param-{suffix} does not match the argument {property:?}")]
    Differs {
        /// The header's name after `Mcp-Param-`.
        suffix: String,
        /// The argument.
        property: String,
    },
}

/// One argument mirrored in a header.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Mirrored {
    /// The chain of `properties` keys from the arguments to it.
    path: Vec<String>,
    /// The chain written `a.b` (for messages).
    property: String,
    /// The annotation as written (for messages).
    suffix: String,
    /// The full header name, lower case.
    header: String,
}

/// The arguments of one tool that travel in `Mcp-Param-*` headers too,
/// worked out once from its input schema.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ParamHeaders {
    mirrored: Vec<Mirrored>,
}

/// Most bytes of the property names from the arguments to an annotated
/// property, its own included.
pub const MAX_PATH_BYTES: usize = 1024;

/// Longest annotation kept in an error message.
const MAX_SUFFIX_CHARS: usize = 60;

impl ParamHeaders {
    /// The annotations of `input_schema`'s properties, at the root or
    /// nested through `properties` alone (the only places 2026-07-28 lets
    /// them be): a name must be a non-empty HTTP token, unique regardless
    /// of case, on a property of type string, integer or boolean.
    pub fn from_input_schema(input_schema: &Value) -> Result<ParamHeaders, ParamHeaderError> {
        if let Some(keyword) = misplaced_annotation(input_schema) {
            return Err(ParamHeaderError::Misplaced { keyword });
        }
        let mut mirrored: Vec<Mirrored> = Vec::new();
        let mut headers = std::collections::HashSet::new();
        // Each nested object seen: its parent's index and its own key. A
        // path is built only for an annotated property, from these links:
        // a hostile schema's long keys are never copied per property.
        let mut nested: Vec<(Option<usize>, &str)> = Vec::new();
        // Objects to look into (the root, then nested ones by index); a
        // schema's depth is bounded by what read it, and this walk keeps no
        // call stack.
        let mut objects: Vec<(&Value, Option<usize>)> = vec![(input_schema, None)];
        while let Some((object, parent)) = objects.pop() {
            let Some(properties) = object.get("properties").and_then(Value::as_object) else {
                continue;
            };
            for (property, schema) in properties {
                if schema.get("properties").is_some() {
                    nested.push((parent, property));
                    objects.push((schema, Some(nested.len() - 1)));
                }
                let Some(annotation) = schema.get(HEADER_KEYWORD) else {
                    continue;
                };
                let Some(at) = path_to(&nested, parent, property) else {
                    return Err(ParamHeaderError::PathTooLong {
                        property: crate::text::excerpt(property, MAX_SUFFIX_CHARS),
                    });
                };
                let written = at.join(".");
                let property_name = || crate::text::excerpt(&written, MAX_SUFFIX_CHARS);
                let suffix = annotation
                    .as_str()
                    .ok_or_else(|| ParamHeaderError::NotAString {
                        property: property_name(),
                    })?;
                let token = |b: u8| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b);
                if suffix.is_empty() || !suffix.bytes().all(token) {
                    return Err(ParamHeaderError::NotAToken {
                        property: property_name(),
                        suffix: crate::text::excerpt(suffix, MAX_SUFFIX_CHARS),
                    });
                }
                if !matches!(
                    schema.get("type").and_then(Value::as_str),
                    Some("string" | "integer" | "boolean")
                ) {
                    return Err(ParamHeaderError::NotAScalar {
                        property: property_name(),
                    });
                }
                let header = format!("{}{}", names::PARAM_PREFIX, suffix.to_ascii_lowercase());
                // A set, not a search of those kept: a listed schema may
                // annotate a million properties.
                if !headers.insert(header.clone()) {
                    return Err(ParamHeaderError::Duplicate {
                        property: property_name(),
                        suffix: crate::text::excerpt(suffix, MAX_SUFFIX_CHARS),
                    });
                }
                mirrored.push(Mirrored {
                    path: at,
                    property: written,
                    suffix: suffix.to_owned(),
                    header,
                });
            }
        }
        Ok(ParamHeaders { mirrored })
    }

    /// Whether no argument is mirrored.
    pub fn is_empty(&self) -> bool {
        self.mirrored.is_empty()
    }

    /// The headers a call with `arguments` carries, as (lower-case name,
    /// encoded value). An absent or null argument sends no header.
    pub fn headers_for(&self, arguments: Option<&Map<String, Value>>) -> Vec<(&str, String)> {
        self.mirrored
            .iter()
            .filter_map(|m| {
                let text = header_text(m.value_in(arguments?)?)?;
                Some((m.header.as_str(), encode_value(&text)))
            })
            .collect()
    }

    /// Checks a request's headers (looked up by lower-case name with
    /// `header`) against its `arguments`.
    pub fn check<'h>(
        &self,
        arguments: Option<&Map<String, Value>>,
        header: impl Fn(&str) -> Option<&'h str>,
    ) -> Result<(), ParamHeaderMismatch> {
        for m in &self.mirrored {
            let Some(expected) = arguments.and_then(|a| m.value_in(a)) else {
                continue;
            };
            if header_text(expected).is_none() {
                continue;
            }
            let suffix = || crate::text::excerpt(&m.suffix, MAX_SUFFIX_CHARS);
            let raw = header(&m.header).ok_or_else(|| ParamHeaderMismatch::Missing(suffix()))?;
            let value =
                decode_value(raw).ok_or_else(|| ParamHeaderMismatch::Malformed(suffix()))?;
            let matches = match expected {
                Value::String(text) => &value == text,
                Value::Bool(flag) => value == flag.to_string(),
                Value::Number(number) => value
                    .parse::<f64>()
                    .ok()
                    .zip(number.as_f64())
                    .is_some_and(|(got, want)| got == want),
                _ => false,
            };
            if !matches {
                return Err(ParamHeaderMismatch::Differs {
                    suffix: suffix(),
                    property: crate::text::excerpt(&m.property, MAX_SUFFIX_CHARS),
                });
            }
        }
        Ok(())
    }
}

/// The keyword under which `schema` holds an `x-mcp-header` annotation
/// that no chain of `properties` from the root reaches, if one does. Every
/// subschema is visited once, without recursion.
fn misplaced_annotation(schema: &Value) -> Option<String> {
    const ONE: [&str; 10] = [
        "items",
        "additionalProperties",
        "unevaluatedProperties",
        "unevaluatedItems",
        "contains",
        "propertyNames",
        "not",
        "if",
        "then",
        "else",
    ];
    const LISTS: [&str; 4] = ["allOf", "anyOf", "oneOf", "prefixItems"];
    const MAPS: [&str; 4] = [
        "patternProperties",
        "$defs",
        "definitions",
        "dependentSchemas",
    ];
    // (a subschema, the keyword it came under when off the chain).
    let mut pending: Vec<(&Value, Option<&str>)> = vec![(schema, None)];
    while let Some((node, off_chain)) = pending.pop() {
        let Some(object) = node.as_object() else {
            continue;
        };
        if let Some(keyword) = off_chain
            && object.contains_key(HEADER_KEYWORD)
        {
            return Some(keyword.to_owned());
        }
        if let Some(properties) = object.get("properties").and_then(Value::as_object) {
            pending.extend(properties.values().map(|child| (child, off_chain)));
        }
        for keyword in ONE {
            if let Some(child) = object.get(keyword) {
                pending.push((child, Some(keyword)));
            }
        }
        for keyword in LISTS {
            if let Some(children) = object.get(keyword).and_then(Value::as_array) {
                pending.extend(children.iter().map(|child| (child, Some(keyword))));
            }
        }
        for keyword in MAPS {
            if let Some(children) = object.get(keyword).and_then(Value::as_object) {
                pending.extend(children.values().map(|child| (child, Some(keyword))));
            }
        }
    }
    None
}

/// The keys from the root to `property`, a property of the nested object
/// at `parent` (the root's when `None`); `None` past [`MAX_PATH_BYTES`]
/// (told before anything is copied).
fn path_to(
    nested: &[(Option<usize>, &str)],
    parent: Option<usize>,
    property: &str,
) -> Option<Vec<String>> {
    let ancestors = || {
        std::iter::successors(parent.and_then(|index| nested.get(index)), |(up, _)| {
            up.and_then(|index| nested.get(index))
        })
    };
    let bytes = ancestors().try_fold(property.len(), |sum, (_, key)| {
        Some(sum + key.len()).filter(|&sum| sum <= MAX_PATH_BYTES)
    });
    bytes.filter(|&sum| sum <= MAX_PATH_BYTES)?;
    let mut path: Vec<String> = ancestors().map(|(_, key)| (*key).to_owned()).collect();
    path.reverse();
    path.push(property.to_owned());
    Some(path)
}

impl Mirrored {
    /// The argument at this one's path in `arguments`, if there is one.
    fn value_in<'a>(&self, arguments: &'a Map<String, Value>) -> Option<&'a Value> {
        let (first, rest) = self.path.split_first()?;
        rest.iter()
            .try_fold(arguments.get(first)?, |value, key| value.get(key))
    }
}

/// The text of a mirrored argument; `None` for null and for values no
/// header carries.
fn header_text(value: &Value) -> Option<String> {
    match value {
        Value::String(text) => Some(text.clone()),
        Value::Bool(flag) => Some(flag.to_string()),
        Value::Number(number) => Some(number.to_string()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_header_named_twice_regardless_of_case_is_refused() {
        let schema = json!({"type": "object", "properties": {
            "a": {"type": "string", "x-mcp-header": "Region"},
            "b": {"type": "string", "x-mcp-header": "region"},
        }});
        assert!(matches!(
            ParamHeaders::from_input_schema(&schema),
            Err(ParamHeaderError::Duplicate { .. })
        ));
    }

    #[test]
    fn nested_properties_are_mirrored_by_their_path() {
        let schema = json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "nested": {"type": "object", "properties": {
                "zone": {"type": "string", "x-mcp-header": "Zone"}
            }}
        }});
        let Ok(rules) = ParamHeaders::from_input_schema(&schema) else {
            panic!("the annotations are valid");
        };
        let arguments = json!({"region": "us", "nested": {"zone": "z1"}});
        let mut sent = rules.headers_for(arguments.as_object());
        sent.sort();
        assert_eq!(
            sent,
            [
                ("mcp-param-region", "us".to_owned()),
                ("mcp-param-zone", "z1".to_owned())
            ]
        );
        let headers = |zone: &'static str| {
            move |name: &str| match name {
                "mcp-param-region" => Some("us"),
                "mcp-param-zone" => Some(zone),
                _ => None,
            }
        };
        assert_eq!(rules.check(arguments.as_object(), headers("z1")), Ok(()));
        assert!(matches!(
            rules.check(arguments.as_object(), headers("z2")),
            Err(ParamHeaderMismatch::Differs { property, .. }) if property == "nested.zone"
        ));
        let missing = |name: &str| (name == "mcp-param-region").then_some("us");
        assert_eq!(
            rules.check(arguments.as_object(), missing),
            Err(ParamHeaderMismatch::Missing("Zone".into()))
        );
    }

    #[test]
    fn an_annotation_off_the_properties_chain_makes_the_schema_invalid() {
        let annotated = json!({"type": "string", "x-mcp-header": "Zone"});
        for (keyword, schema) in [
            (
                "items",
                json!({"properties": {"list": {"type": "array", "items": {"properties": {"z": annotated}}}}}),
            ),
            (
                "oneOf",
                json!({"oneOf": [{"properties": {"z": annotated}}]}),
            ),
            (
                "$defs",
                json!({"$defs": {"Z": annotated}, "properties": {"z": {"$ref": "#/$defs/Z"}}}),
            ),
            ("not", json!({"properties": {"a": {"not": annotated}}})),
        ] {
            assert_eq!(
                ParamHeaders::from_input_schema(&schema),
                Err(ParamHeaderError::Misplaced {
                    keyword: keyword.into()
                }),
                "{schema}"
            );
        }
        // A property named like the keyword is a property, not an annotation.
        let named = json!({"properties": {"x-mcp-header": {"type": "string"}}});
        assert_eq!(
            ParamHeaders::from_input_schema(&named).map(|h| h.is_empty()),
            Ok(true)
        );
    }

    #[test]
    fn long_keys_are_never_copied_per_property() {
        // A long key above a million unannotated objects: nothing copied.
        let key = "k".repeat(1 << 20);
        let inner: Map<String, Value> = (0..100_000)
            .map(|n| (format!("p{n}"), json!({"properties": {}})))
            .collect();
        let schema = json!({"properties": {key.clone(): {"properties": inner}}});
        assert_eq!(
            ParamHeaders::from_input_schema(&schema).map(|h| h.is_empty()),
            Ok(true)
        );
        // An annotation under it: refused, not copied.
        let schema = json!({"properties": {key: {"properties": {
            "zone": {"type": "string", "x-mcp-header": "Zone"}
        }}}});
        assert!(matches!(
            ParamHeaders::from_input_schema(&schema),
            Err(ParamHeaderError::PathTooLong { .. })
        ));
    }

    #[test]
    fn many_annotated_properties_are_read_in_one_pass() {
        let properties: Map<String, Value> = (0..100_000)
            .map(|n| {
                (
                    format!("p{n}"),
                    json!({"type": "string", "x-mcp-header": format!("h{n}")}),
                )
            })
            .collect();
        let schema = json!({"type": "object", "properties": properties});
        // 0.2 s in a release build; 25.6 s when each name was compared
        // with every one kept before it.
        let headers = ParamHeaders::from_input_schema(&schema).map(|h| h.mirrored.len());
        assert_eq!(headers.ok(), Some(100_000));
    }

    #[test]
    fn rules_are_checked_once_and_applied_both_ways() {
        let schema = json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "count": {"type": "integer", "x-mcp-header": "Count"},
            "plain": {"type": "string"}
        }});
        let rules = ParamHeaders::from_input_schema(&schema).unwrap_or_default();
        let arguments = json!({"region": "café", "count": 3, "plain": "x"});
        let arguments = arguments.as_object();
        let headers = rules.headers_for(arguments);
        assert_eq!(headers.len(), 2);
        let lookup = |name: &str| {
            headers
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| v.as_str())
        };
        assert_eq!(rules.check(arguments, lookup), Ok(()));
        let other = json!({"region": "paris", "count": 3});
        assert!(matches!(
            rules.check(other.as_object(), lookup),
            Err(ParamHeaderMismatch::Differs { .. })
        ));
        assert_eq!(
            rules.check(arguments, |_| None),
            Err(ParamHeaderMismatch::Missing("Count".into()))
        );
    }

    #[test]
    fn invalid_annotations_are_refused() {
        for (schema, expected) in [
            (
                json!({"properties": {"a": {"type": "string", "x-mcp-header": 1}}}),
                "not a string",
            ),
            (
                json!({"properties": {"a": {"type": "string", "x-mcp-header": "a b"}}}),
                "not a header",
            ),
            (
                json!({"properties": {"a": {"type": "object", "x-mcp-header": "A"}}}),
                "not a string, integer",
            ),
            (
                json!({"properties": {"a": {"type": "string", "x-mcp-header": "A"},
                                      "b": {"type": "string", "x-mcp-header": "a"}}}),
                "used twice",
            ),
        ] {
            let error = ParamHeaders::from_input_schema(&schema).err();
            assert!(
                error
                    .as_ref()
                    .is_some_and(|e| e.to_string().contains(expected)),
                "{schema}: {error:?}"
            );
        }
    }
}
