//! Where the subschemas of a schema are, and how each applies to the instance.
//!
//! One table serves every dialect: a keyword that a dialect does not know is
//! walked as if it did, which only makes counts and estimates more cautious.

use serde_json::{Map, Value};

/// How a subschema applies to the instance its parent applies to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Applies {
    /// To the same instance location (`allOf`, `anyOf`, `not`, `if`, ...).
    InPlace,
    /// To a child of the instance, in one of the groups below.
    Child(ChildGroup),
    /// Never by itself: only through a reference (`$defs`, `definitions`, `contentSchema`).
    Definition,
}

/// Which children of the instance a child subschema applies to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ChildGroup {
    /// One named property (`properties`): at most one applies to a given child.
    Property,
    /// Properties by pattern: several may apply to one child.
    PatternProperty,
    /// Properties nothing else claimed, and property names.
    OtherProperty,
    /// One array position (`items`, `prefixItems`): at most one applies to a given child.
    Item,
    /// Items applied on top of the positional ones (`contains`, `additionalItems`, `unevaluatedItems`).
    OtherItem,
}

/// A subschema found one level below a schema.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Edge<'a> {
    /// The keyword that holds it.
    pub(crate) keyword: &'a str,
    /// The property name or array index under the keyword, if any.
    pub(crate) key: Option<Key<'a>>,
    /// How it applies.
    pub(crate) applies: Applies,
    /// The subschema itself (an object or a boolean).
    pub(crate) schema: &'a Value,
}

/// A property name or array index on the way to a subschema.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Key<'a> {
    Name(&'a str),
    Index(usize),
}

impl Edge<'_> {
    /// Appends this edge's JSON Pointer segments to `pointer`.
    pub(crate) fn push_pointer(&self, pointer: &mut String) {
        push_segment(pointer, self.keyword);
        match self.key {
            Some(Key::Name(name)) => push_segment(pointer, name),
            Some(Key::Index(index)) => {
                pointer.push('/');
                pointer.push_str(&index.to_string());
            }
            None => {}
        }
    }
}

/// Appends one escaped JSON Pointer segment.
pub(crate) fn push_segment(pointer: &mut String, segment: &str) {
    pointer.push('/');
    for c in segment.chars() {
        match c {
            '~' => pointer.push_str("~0"),
            '/' => pointer.push_str("~1"),
            c => pointer.push(c),
        }
    }
}

enum Shape {
    One,
    Many,
    Named,
    /// `items`: one schema, or an array of positional schemas (before 2020-12).
    OneOrMany,
    /// `dependencies`: values are schemas or arrays of property names.
    NamedOrNames,
}

const TABLE: &[(&str, Shape, Applies)] = {
    use Applies::{Child, Definition, InPlace};
    use ChildGroup::{Item, OtherItem, OtherProperty, PatternProperty, Property};
    &[
        ("allOf", Shape::Many, InPlace),
        ("anyOf", Shape::Many, InPlace),
        ("oneOf", Shape::Many, InPlace),
        ("not", Shape::One, InPlace),
        ("if", Shape::One, InPlace),
        ("then", Shape::One, InPlace),
        ("else", Shape::One, InPlace),
        ("dependentSchemas", Shape::Named, InPlace),
        ("dependencies", Shape::NamedOrNames, InPlace),
        ("properties", Shape::Named, Child(Property)),
        ("patternProperties", Shape::Named, Child(PatternProperty)),
        ("additionalProperties", Shape::One, Child(OtherProperty)),
        ("unevaluatedProperties", Shape::One, Child(OtherProperty)),
        ("propertyNames", Shape::One, Child(OtherProperty)),
        ("items", Shape::OneOrMany, Child(Item)),
        ("prefixItems", Shape::Many, Child(Item)),
        ("additionalItems", Shape::One, Child(OtherItem)),
        ("unevaluatedItems", Shape::One, Child(OtherItem)),
        ("contains", Shape::One, Child(OtherItem)),
        ("$defs", Shape::Named, Definition),
        ("definitions", Shape::Named, Definition),
        ("contentSchema", Shape::One, Definition),
    ]
};

fn is_schema(value: &Value) -> bool {
    value.is_object() || value.is_boolean()
}

/// Calls `visit` for every subschema one level below `schema`.
pub(crate) fn for_each_subschema<'a>(
    schema: &'a Map<String, Value>,
    mut visit: impl FnMut(Edge<'a>),
) {
    for (keyword, shape, applies) in TABLE {
        let Some(value) = schema.get(*keyword) else {
            continue;
        };
        let mut edge = |key, schema| {
            visit(Edge {
                keyword,
                key,
                applies: *applies,
                schema,
            })
        };
        match (shape, value) {
            (Shape::One | Shape::OneOrMany, v) if is_schema(v) => edge(None, v),
            (Shape::Many | Shape::OneOrMany, Value::Array(items)) => {
                for (index, item) in items.iter().enumerate() {
                    if is_schema(item) {
                        edge(Some(Key::Index(index)), item);
                    }
                }
            }
            (Shape::Named | Shape::NamedOrNames, Value::Object(entries)) => {
                for (name, item) in entries {
                    if is_schema(item) {
                        edge(Some(Key::Name(name)), item);
                    }
                }
            }
            _ => {}
        }
    }
}

/// Whether `keyword` holds subschemas in some dialect (as walked by
/// [`for_each_subschema`]).
pub(crate) fn holds_subschemas(keyword: &str) -> bool {
    TABLE.iter().any(|(known, _, _)| *known == keyword)
}

/// The reference keywords of a schema object, with their targets.
pub(crate) fn references(
    schema: &Map<String, Value>,
) -> impl Iterator<Item = (&'static str, &str)> {
    ["$ref", "$dynamicRef", "$recursiveRef"]
        .into_iter()
        .filter_map(|keyword| Some((keyword, schema.get(keyword)?.as_str()?)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn finds_subschemas_with_their_application() {
        let schema = json!({
            "properties": {"a": {"type": "string"}},
            "anyOf": [{"minimum": 1}, true],
            "items": [{"type": "integer"}],
            "dependencies": {"a": ["b"], "c": {"required": ["d"]}},
            "$defs": {"x": {}},
            "enum": [{"type": "not a schema"}]
        });
        let mut found = Vec::new();
        if let Some(map) = schema.as_object() {
            for_each_subschema(map, |edge| {
                let mut pointer = String::new();
                edge.push_pointer(&mut pointer);
                found.push((pointer, edge.applies));
            });
        }
        found.sort_by(|a, b| a.0.cmp(&b.0));
        let pointers: Vec<&str> = found.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(
            pointers,
            [
                "/$defs/x",
                "/anyOf/0",
                "/anyOf/1",
                "/dependencies/c",
                "/items/0",
                "/properties/a"
            ]
        );
    }

    #[test]
    fn escapes_pointer_segments() {
        let mut pointer = String::new();
        push_segment(&mut pointer, "a/b~c");
        assert_eq!(pointer, "/a~1b~0c");
    }
}
