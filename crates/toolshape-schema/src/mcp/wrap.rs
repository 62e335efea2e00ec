//! The legacy wrapping of a non-object output schema, and the reference
//! rewriting that keeps its meaning.

use referencing::Uri;
use serde_json::map::Entry;
use serde_json::{Map, Value, json};

use super::WRAPPED_RESULT_KEY;
use crate::dialect::Dialect;
use crate::resolve::DEFAULT_BASE;
use crate::walk;

/// The `$id` given to a wrapped schema that refers to its own root in a way
/// no pointer rewriting can express (a 2019-09 `$recursiveRef`, which may
/// only be `#`). Relative, so that relative references resolve as before.
pub const WRAPPED_RESOURCE_ID: &str = "dev.toolshape.wrapped-output";

/// The wrapped form of an output schema for revisions that need an object root:
/// `{"type":"object","properties":{"result": schema},"required":["result"]}`.
///
/// It accepts `{"result": v}` exactly when `schema` accepts `v`. References
/// that point into the document by JSON Pointer (`#`, `#/...`, or any URI
/// that resolves to the document's own), in every subschema and in the
/// objects under keywords no dialect knows (a pointer may reach those, never
/// in data such as `examples`), are rewritten to point into
/// `/properties/result`; `$schema` moves to the new root. A schema with an
/// `$id` of its own (`id` in draft-04) keeps its references unchanged, being
/// its own resource; an `$id` that names the document itself (`""`) is
/// dropped, the wrapper now being that document. A schema using 2019-09's
/// `$recursiveRef` or `$recursiveAnchor` anywhere is given the `$id`
/// [`WRAPPED_RESOURCE_ID`]. Anchors and embedded resources keep working.
///
/// The wrapper adds two levels of nesting, one subschema and some 60 bytes:
/// a schema at the very edge of the engine's [`crate::Limits`] may compile
/// where its wrapped form does not.
pub fn wrap_output_schema(schema: &Value) -> Value {
    let mut inner = schema.clone();
    let dialect = inner.as_object_mut().and_then(|map| map.remove("$schema"));
    let declared = dialect
        .as_ref()
        .and_then(Value::as_str)
        .and_then(Dialect::from_uri);
    let rules = IdRules::of(declared);
    let document = default_base();
    let mut base = rules.base_of(&inner, &document);
    if base.as_ref() == Some(&document)
        && let Some(map) = inner.as_object_mut()
    {
        // An id naming the document itself: the wrapper is that document now.
        map.remove(rules.keyword);
    }
    // Before 2019-09 `$recursiveRef` means nothing (and an `$id` beside a
    // root `$ref` would be ignored).
    if base.as_ref().is_none_or(|base| *base == document)
        && !rules.ref_hides_siblings
        && uses_recursive_keywords(&inner)
        && let Some(map) = inner.as_object_mut()
    {
        map.insert("$id".into(), json!(WRAPPED_RESOURCE_ID));
        base = rules.base_of(&inner, &document);
    }
    if let Some(own) = &base
        && *own != document
        && let (Some(map), Some(dialect)) = (inner.as_object_mut(), dialect.clone())
    {
        // Its own resource: its dialect goes with it.
        map.insert("$schema".into(), dialect);
    }
    let rewrite = Rewrite {
        rules,
        document,
        from: "",
        to: WRAPPED_POINTER,
    };
    let base = base.unwrap_or_else(|| rewrite.document.clone());
    rewrite.below(&mut inner, &base);
    let mut root = Map::new();
    if let Some(dialect) = dialect {
        root.insert("$schema".into(), dialect);
    }
    root.insert("type".into(), json!("object"));
    root.insert("properties".into(), json!({ WRAPPED_RESULT_KEY: inner }));
    root.insert("required".into(), json!([WRAPPED_RESULT_KEY]));
    Value::Object(root)
}

/// Where a wrapped schema holds the original: `/properties/result`.
const WRAPPED_POINTER: &str = "/properties/result";

/// The schema of the value inside a wrapped output schema, `schema` being
/// `{"type":"object","properties":{"result": inner}, ...}` as
/// [`wrap_output_schema`] or another server built it: `inner`, with the
/// wrapper's `$schema` where it has none, the wrapper's `$defs` and
/// `definitions` beside its own (some wrappers keep definitions at their
/// root; its own win a name both have), references into
/// `/properties/result` re-pointed at the new root, and the
/// [`WRAPPED_RESOURCE_ID`] wrapping may have given it removed. The inverse
/// of [`wrap_output_schema`]. `None` when `schema` holds no `result` property.
pub fn unwrap_output_schema(schema: &Value) -> Option<Value> {
    let inner = schema.get("properties")?.get(super::WRAPPED_RESULT_KEY)?;
    let declared = schema
        .get("$schema")
        .and_then(Value::as_str)
        .and_then(Dialect::from_uri);
    let rules = IdRules::of(declared);
    let rewrite = Rewrite {
        rules,
        document: default_base(),
        from: WRAPPED_POINTER,
        to: "",
    };
    let document = &rewrite.document;
    let mut unwrapped = match inner {
        Value::Object(_) => inner.clone(),
        Value::Bool(true) => Value::Object(Map::new()),
        other => return Some(other.clone()),
    };
    let base = rules
        .base_of(inner, document)
        .unwrap_or_else(|| document.clone());
    rewrite.below(&mut unwrapped, &base);
    let Some(map) = unwrapped.as_object_mut() else {
        return Some(unwrapped);
    };
    if map.get("$id").and_then(Value::as_str) == Some(WRAPPED_RESOURCE_ID) {
        // The id wrapping gave it: the original had none.
        map.remove("$id");
    }
    if let Some(dialect) = schema.get("$schema")
        && !map.contains_key("$schema")
    {
        map.insert("$schema".into(), dialect.clone());
    }
    for key in ["$defs", "definitions"] {
        let Some(Value::Object(definitions)) = schema.get(key) else {
            continue;
        };
        // Read where they were: at the wrapper's root.
        let mut carried = json!({ key: definitions });
        rewrite.below(&mut carried, document);
        let Some(Value::Object(carried)) = carried.get_mut(key).map(Value::take) else {
            continue;
        };
        match map.entry(key) {
            Entry::Vacant(entry) => {
                entry.insert(Value::Object(carried));
            }
            Entry::Occupied(mut entry) => {
                if let Value::Object(own) = entry.get_mut() {
                    for (name, definition) in carried {
                        own.entry(name).or_insert(definition);
                    }
                }
            }
        }
    }
    Some(unwrapped)
}

/// The base URI of a document that declares none.
fn default_base() -> Uri<String> {
    #[allow(clippy::expect_used)]
    referencing::uri::from_str(DEFAULT_BASE).expect("a constant URI that parses")
}

/// How a dialect names a resource.
#[derive(Debug, Clone, Copy)]
struct IdRules {
    /// `id` in draft-04, `$id` after.
    keyword: &'static str,
    /// Draft-04 to draft-07: beside `$ref`, every other keyword (its id
    /// too) is ignored.
    ref_hides_siblings: bool,
}

impl IdRules {
    fn of(dialect: Option<Dialect>) -> IdRules {
        IdRules {
            keyword: if dialect == Some(Dialect::Draft4) {
                "id"
            } else {
                "$id"
            },
            ref_hides_siblings: matches!(
                dialect,
                Some(Dialect::Draft4 | Dialect::Draft6 | Dialect::Draft7)
            ),
        }
    }

    /// The base URI `schema` sets for what is below it, when it sets one:
    /// an id that is more than a fragment, not hidden by a `$ref`, resolved
    /// against `base`.
    fn base_of(self, schema: &Value, base: &Uri<String>) -> Option<Uri<String>> {
        if self.ref_hides_siblings && schema.get("$ref").is_some() {
            return None;
        }
        let id = schema.get(self.keyword).and_then(Value::as_str)?;
        if id.starts_with('#') {
            return None;
        }
        let resolved = referencing::uri::resolve_against(&base.borrow(), id).ok()?;
        Some(if resolved.has_fragment() {
            resolved.strip_fragment().into()
        } else {
            resolved
        })
    }
}

/// Whether `schema` or anything below it, embedded resources and the
/// objects under unknown keywords included, uses 2019-09's `$recursiveRef`
/// or `$recursiveAnchor`: their meaning
/// depends on which schema is a resource's root, so the wrapped schema must
/// stay one.
fn uses_recursive_keywords(schema: &Value) -> bool {
    let Value::Object(map) = schema else {
        return false;
    };
    if map.contains_key("$recursiveRef") || map.contains_key("$recursiveAnchor") {
        return true;
    }
    let mut found = false;
    walk::for_each_subschema(map, |edge| {
        found = found || uses_recursive_keywords(edge.schema);
    });
    found
        || objects_under_unknown_keywords(map).any(|(_, _, object)| uses_recursive_keywords(object))
}

/// Keywords whose values are data, never schemas, in every dialect.
const DATA_KEYWORDS: &[&str] = &["const", "enum", "default", "examples", "$vocabulary"];

/// The objects under the keywords of `map` that no dialect knows (an object,
/// or an array's objects, with their index): a reference may point into
/// them, and the validator then reads what it finds as a schema. Data
/// keywords are left out: a `$ref` in them is data.
fn objects_under_unknown_keywords(
    map: &Map<String, Value>,
) -> impl Iterator<Item = (&str, Option<usize>, &Value)> {
    map.iter()
        .filter(|(keyword, _)| {
            !walk::holds_subschemas(keyword) && !DATA_KEYWORDS.contains(&keyword.as_str())
        })
        .flat_map(|(keyword, value)| {
            let whole = value.is_object().then_some((None, value));
            let items = value.as_array().into_iter().flatten().enumerate();
            let objects = items.filter(|(_, item)| item.is_object());
            whole
                .into_iter()
                .chain(objects.map(|(index, item)| (Some(index), item)))
                .map(move |(index, object)| (keyword.as_str(), index, object))
        })
}

/// One subschema below a schema: where it is, and the base URI it sets.
struct Step {
    keyword: String,
    name: Option<String>,
    index: Option<usize>,
    base: Option<Uri<String>>,
}

/// Re-points references into the document by JSON Pointer: those under
/// `from` go under `to` instead (into `/properties/result` when wrapping,
/// out of it when unwrapping).
struct Rewrite {
    rules: IdRules,
    /// The base URI of the original document, and of the wrapper.
    document: Uri<String>,
    from: &'static str,
    to: &'static str,
}

impl Rewrite {
    /// Rewrites the references of `schema` (whose base URI is `base`) and
    /// of every subschema below it, embedded resources included.
    fn below(&self, schema: &mut Value, base: &Uri<String>) {
        let Value::Object(map) = schema else {
            return;
        };
        for keyword in ["$ref", "$dynamicRef"] {
            if let Some(Value::String(reference)) = map.get_mut(keyword)
                && let Some(rewritten) = self.reference(reference, base)
            {
                *reference = rewritten;
            }
        }
        // Collect the paths first: the walker borrows immutably.
        let mut steps: Vec<Step> = Vec::new();
        walk::for_each_subschema(map, |edge| {
            let (name, index) = match edge.key {
                Some(walk::Key::Name(name)) => (Some(name.to_owned()), None),
                Some(walk::Key::Index(index)) => (None, Some(index)),
                None => (None, None),
            };
            steps.push(Step {
                keyword: edge.keyword.to_owned(),
                name,
                index,
                base: self.rules.base_of(edge.schema, base),
            });
        });
        for (keyword, index, object) in objects_under_unknown_keywords(map) {
            steps.push(Step {
                keyword: keyword.to_owned(),
                name: None,
                index,
                base: self.rules.base_of(object, base),
            });
        }
        for Step {
            keyword,
            name,
            index,
            base: child_base,
        } in steps
        {
            let Some(holder) = map.get_mut(&keyword) else {
                continue;
            };
            let child = match (name, index) {
                (Some(name), _) => holder.get_mut(&name),
                (None, Some(index)) => holder.get_mut(index),
                (None, None) => Some(holder),
            };
            if let Some(child) = child {
                self.below(child, child_base.as_ref().unwrap_or(base));
            }
        }
    }

    /// The rewritten form of `reference` (found where the base URI is
    /// `base`) when it points into the original document by JSON Pointer.
    fn reference(&self, reference: &str, base: &Uri<String>) -> Option<String> {
        // An empty reference is left alone: the validator reads it as no
        // reference at all, in the original and the wrapper alike.
        if reference.is_empty() {
            return None;
        }
        let at_document = *base == self.document;
        // A fragment is read as written (the validator takes characters a
        // URI would need escaped): it reaches the document only from it.
        let pointer = match reference.strip_prefix('#') {
            Some(fragment) if at_document => fragment.to_owned(),
            Some(_) => return None,
            None => {
                let target = referencing::uri::resolve_against(&base.borrow(), reference).ok()?;
                let document = target.as_str().split('#').next().unwrap_or_default();
                if document != self.document.as_str() {
                    return None;
                }
                target
                    .fragment()
                    .map_or_else(String::new, |fragment| fragment.as_str().to_owned())
            }
        };
        let rest = pointer.strip_prefix(self.from)?;
        if !(rest.is_empty() || rest.starts_with('/')) {
            return None;
        }
        // Within an embedded resource only the full URI reaches the document.
        let mut rewritten = if at_document {
            String::from("#")
        } else {
            format!("{DEFAULT_BASE}#")
        };
        rewritten.push_str(self.to);
        rewritten.push_str(rest);
        Some(rewritten)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrapping_rewrites_pointers_but_not_data() {
        let schema = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "array",
            "items": {"$ref": "#/$defs/entry"},
            "$defs": {"entry": {"type": "object", "properties": {"next": {"$ref": "#"}}}},
            "examples": [{"$ref": "#/not/a/schema"}]
        });
        let wrapped = wrap_output_schema(&schema);
        assert_eq!(wrapped["$schema"], schema["$schema"]);
        assert_eq!(wrapped["required"], json!(["result"]));
        let inner = &wrapped["properties"]["result"];
        assert_eq!(inner["items"]["$ref"], "#/properties/result/$defs/entry");
        assert_eq!(
            inner["$defs"]["entry"]["properties"]["next"]["$ref"],
            "#/properties/result"
        );
        assert_eq!(inner["examples"][0]["$ref"], "#/not/a/schema");
        assert!(inner.get("$schema").is_none());
    }
}
