//! Local references replaced by what they point at, for readers that take
//! no `$ref` (OXP's `GET /tools` schemas "exclude `$ref` and definitions").
//!
//! [`inline_local_refs`] copies each `#/...` target in place of its `$ref`
//! and drops `$defs` / `definitions`, or declines (the caller keeps the
//! schema as it is) when the result could mean something else or grow
//! without bound: a recursive schema, a base URI or anchor below the root,
//! a dynamic or non-local reference, a result over the size or depth bound.

use serde_json::{Map, Value};

use crate::dialect::Dialect;
use crate::walk::holds_subschemas;

/// The most values an inlined schema may hold (diamond-shaped definitions
/// double with each level).
const MAX_INLINED_VALUES: usize = 50_000;

/// The deepest an inlined schema may nest (a reader with serde_json's
/// default recursion limit reads a listing of such schemas).
const MAX_INLINED_DEPTH: usize = 64;

/// `schema` with every local `$ref` replaced by a copy of its target and its
/// definitions dropped, or `None` when it has no reference or one that
/// cannot be inlined faithfully within the bounds (see the module docs).
///
/// In 2019-09 and 2020-12 a `$ref` beside other keywords becomes an `allOf`
/// member (both apply); before 2019-09 the siblings of a `$ref` are ignored,
/// so the target replaces the object.
pub fn inline_local_refs(schema: &Value) -> Option<Value> {
    let root = schema.as_object()?;
    let dialect = Dialect::of(schema).ok()?;
    let mut inliner = Inliner {
        root: schema,
        dialect,
        stack: Vec::new(),
        values: 0,
        found: false,
    };
    let inlined = inliner.object(root, 0, true)?;
    inliner.found.then_some(inlined)
}

/// Where `schema` first uses a reference (`$ref`, `$dynamicRef`,
/// `$recursiveRef`) or definitions (`$defs`, `definitions`), as a JSON
/// Pointer; `None` when it uses neither. Subschemas are found by keyword,
/// so instance data (`const`, `enum`, `default`, `examples`) is not read.
pub fn first_reference(schema: &Value) -> Option<String> {
    let mut pending = vec![(schema, String::new())];
    while let Some((value, pointer)) = pending.pop() {
        let Value::Object(map) = value else {
            continue;
        };
        if let Some(keyword) = [
            "$ref",
            "$dynamicRef",
            "$recursiveRef",
            "$defs",
            "definitions",
        ]
        .into_iter()
        .find(|keyword| map.contains_key(*keyword))
        {
            let mut at = pointer;
            crate::walk::push_segment(&mut at, keyword);
            return Some(at);
        }
        crate::walk::for_each_subschema(map, |edge| {
            let mut below = pointer.clone();
            edge.push_pointer(&mut below);
            pending.push((edge.schema, below));
        });
    }
    None
}

struct Inliner<'a> {
    root: &'a Value,
    dialect: Dialect,
    /// The pointers being inlined, outermost first: one met again is a cycle.
    stack: Vec<&'a str>,
    values: usize,
    found: bool,
}

impl<'a> Inliner<'a> {
    fn count(&mut self) -> Option<()> {
        self.values += 1;
        (self.values <= MAX_INLINED_VALUES).then_some(())
    }

    /// A subschema (object or boolean) at `depth`.
    fn schema(&mut self, value: &'a Value, depth: usize) -> Option<Value> {
        match value {
            Value::Object(map) => self.object(map, depth, false),
            other => {
                self.count()?;
                Some(other.clone())
            }
        }
    }

    fn object(
        &mut self,
        map: &'a Map<String, Value>,
        depth: usize,
        is_root: bool,
    ) -> Option<Value> {
        if depth > MAX_INLINED_DEPTH {
            return None;
        }
        self.count()?;
        let mut out = Map::new();
        for (keyword, value) in map {
            match keyword.as_str() {
                "$dynamicRef" | "$recursiveRef" | "$anchor" | "$dynamicAnchor"
                | "$recursiveAnchor" => return None,
                "$id" if !is_root => return None,
                "id" if !is_root && self.dialect == Dialect::Draft4 && value.is_string() => {
                    return None;
                }
                // Definitions are reached only through references, all of
                // which are inlined (or the whole is declined).
                "$ref" | "$defs" | "definitions" => {}
                _ if holds_subschemas(keyword) => {
                    out.insert(keyword.clone(), self.holder(keyword, value, depth)?);
                }
                _ => {
                    out.insert(keyword.clone(), value.clone());
                }
            }
        }
        let Some(reference) = map.get("$ref") else {
            return Some(Value::Object(out));
        };
        let target = self.target(reference.as_str()?, depth)?;
        // Siblings of a reference before 2019-09 are ignored.
        if self.dialect < Dialect::Draft201909 || out.is_empty() {
            return Some(target);
        }
        match out.get_mut("allOf") {
            Some(Value::Array(all)) => all.push(target),
            _ => {
                out.insert("allOf".into(), Value::Array(vec![target]));
            }
        }
        Some(Value::Object(out))
    }

    /// The value under a keyword that holds subschemas: one, an array of
    /// them, or a map of them (`dependencies` may also hold name lists).
    fn holder(&mut self, keyword: &str, value: &'a Value, depth: usize) -> Option<Value> {
        let named = matches!(
            keyword,
            "properties" | "patternProperties" | "dependentSchemas" | "dependencies"
        );
        match value {
            Value::Object(map) if named => {
                let mut out = Map::new();
                for (name, item) in map {
                    let item = if item.is_object() || item.is_boolean() {
                        self.schema(item, depth + 2)?
                    } else {
                        item.clone()
                    };
                    out.insert(name.clone(), item);
                }
                Some(Value::Object(out))
            }
            Value::Array(items) => items
                .iter()
                .map(|item| self.schema(item, depth + 2))
                .collect::<Option<Vec<_>>>()
                .map(Value::Array),
            other => self.schema(other, depth + 1),
        }
    }

    /// The inlined target of a `$ref`: a local JSON Pointer only.
    fn target(&mut self, reference: &'a str, depth: usize) -> Option<Value> {
        let pointer = reference.strip_prefix('#')?;
        if !(pointer.is_empty() || pointer.starts_with('/')) || pointer.contains('%') {
            return None;
        }
        if self.stack.contains(&pointer) {
            return None;
        }
        let target = self.root.pointer(pointer)?;
        self.found = true;
        self.stack.push(pointer);
        let inlined = self.schema(target, depth);
        self.stack.pop();
        inlined
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn references_are_replaced_and_definitions_dropped() {
        let schema = json!({
            "type": "object",
            "$defs": {"Unit": {"enum": ["c", "f"]}, "Pair": {"type": "array", "items": {"$ref": "#/$defs/Unit"}}},
            "properties": {
                "unit": {"$ref": "#/$defs/Unit"},
                "pair": {"$ref": "#/$defs/Pair", "description": "two units"},
                "enum_data": {"const": {"$ref": "#/nowhere"}}
            }
        });
        let inlined = inline_local_refs(&schema);
        assert_eq!(
            inlined,
            Some(json!({
                "type": "object",
                "properties": {
                    "unit": {"enum": ["c", "f"]},
                    "pair": {"description": "two units", "allOf": [{"type": "array", "items": {"enum": ["c", "f"]}}]},
                    "enum_data": {"const": {"$ref": "#/nowhere"}}
                }
            }))
        );
    }

    #[test]
    fn the_first_reference_is_found_by_keyword() {
        assert_eq!(first_reference(&json!({"type": "object"})), None);
        assert_eq!(
            first_reference(&json!({"const": {"$ref": "#"}, "enum": [{"$defs": {}}]})),
            None
        );
        assert_eq!(
            first_reference(&json!({"properties": {"a/b": {"items": {"$ref": "#/x"}}}})),
            Some("/properties/a~1b/items/$ref".into())
        );
        assert_eq!(
            first_reference(&json!({"$defs": {}, "type": "object"})),
            Some("/$defs".into())
        );
    }

    #[test]
    fn draft_7_siblings_of_a_reference_are_ignored() {
        let schema = json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "definitions": {"N": {"type": "number"}},
            "properties": {"n": {"$ref": "#/definitions/N", "type": "string"}}
        });
        assert_eq!(
            inline_local_refs(&schema),
            Some(json!({
                "$schema": "http://json-schema.org/draft-07/schema#",
                "properties": {"n": {"type": "number"}}
            }))
        );
    }

    #[test]
    fn declines_what_cannot_be_inlined_faithfully() {
        for schema in [
            json!({"type": "object"}),
            json!({"$defs": {"Tree": {"items": {"$ref": "#/$defs/Tree"}}}, "$ref": "#/$defs/Tree"}),
            json!({"properties": {"again": {"$ref": "#"}}}),
            json!({"$defs": {"A": {"$id": "a.json"}}, "$ref": "#/$defs/A"}),
            json!({"$defs": {"A": {"$anchor": "a"}}, "$ref": "#a"}),
            json!({"$ref": "other.json"}),
            json!({"$ref": "#/$defs/missing"}),
            json!({"$dynamicRef": "#node"}),
            json!({"$ref": "#/$defs/A%20B", "$defs": {"A B": {}}}),
        ] {
            assert_eq!(inline_local_refs(&schema), None, "{schema}");
        }
    }

    #[test]
    fn an_unused_recursive_definition_does_not_stop_the_rest() {
        let schema = json!({
            "$defs": {"Tree": {"items": {"$ref": "#/$defs/Tree"}}, "S": {"type": "string"}},
            "properties": {"s": {"$ref": "#/$defs/S"}}
        });
        assert_eq!(
            inline_local_refs(&schema),
            Some(json!({"properties": {"s": {"type": "string"}}}))
        );
    }

    #[test]
    fn doubling_definitions_hit_the_size_bound() {
        let mut defs = Map::new();
        defs.insert("D0".into(), json!({"type": "integer"}));
        for level in 1..40 {
            let below = format!("#/$defs/D{}", level - 1);
            defs.insert(
                format!("D{level}"),
                json!({"anyOf": [{"$ref": below}, {"$ref": below}]}),
            );
        }
        let schema = json!({"$defs": defs, "$ref": "#/$defs/D39"});
        assert_eq!(inline_local_refs(&schema), None);
    }
}
