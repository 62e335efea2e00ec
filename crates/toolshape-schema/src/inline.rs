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
use crate::limits::Limits;
use crate::precheck::{check_document_depth, footprint};
use crate::walk::holds_subschemas;

/// An inlined schema is served only within what a reader with the default
/// [`Limits`] accepts (toolshape's own client, untrusted): its size, its
/// depth and its subschemas. Diamond-shaped definitions double with each
/// level, so the inlining stops as soon as its copies pass these.
fn bounds() -> Limits {
    Limits::default()
}

/// How many times its written size an inlined schema may take (at least
/// [`MIN_INLINED_BYTES`]): a listing of many small schemas each inlined
/// to the size bound would be far larger than the listing as written.
const MAX_GROWTH: usize = 4;

/// The size an inlined schema may take whatever its written size.
const MIN_INLINED_BYTES: usize = 8 * 1024;

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
    let limits = bounds();
    let written = footprint(schema, limits.max_schema_bytes).ok()?.bytes;
    let mut inliner = Inliner {
        root: schema,
        dialect,
        stack: Vec::new(),
        subschemas: 0,
        bytes: 0,
        max_bytes: written
            .saturating_mul(MAX_GROWTH)
            .max(MIN_INLINED_BYTES)
            .min(limits.max_schema_bytes),
        limits: &limits,
        found: false,
        dropped: false,
    };
    let mut inlined = inliner.object(root, 0, true)?;
    // Nothing to do without references or definitions (definitions no
    // reference uses are dropped all the same).
    if !inliner.found && !inliner.dropped {
        return None;
    }
    // A root reference before 2019-09 replaced the root with its target:
    // the dialect stays the declared one.
    if let (Some(declared), Value::Object(map)) = (root.get("$schema"), &mut inlined) {
        map.entry("$schema").or_insert_with(|| declared.clone());
    }
    // The counts above are close; these are exact.
    footprint(&inlined, inliner.max_bytes).ok()?;
    check_document_depth(&inlined, &limits).ok()?;
    Some(inlined)
}

/// Where `schema` first uses a reference (`$ref`, `$dynamicRef`,
/// `$recursiveRef`) or definitions (`$defs`, `definitions`), as a JSON
/// Pointer; `None` when it uses neither. Subschemas are found by keyword,
/// so instance data (`const`, `enum`, `default`, `examples`) is not read.
pub fn first_reference(schema: &Value) -> Option<String> {
    // Each subschema met, with its parent's index and the keyword (and
    // name or index) below it: the pointer is built for the one found only.
    let mut met: Vec<(&Value, Option<usize>, Option<crate::walk::Edge<'_>>)> =
        vec![(schema, None, None)];
    let mut next = 0;
    while let Some(&(value, _, _)) = met.get(next) {
        if let Value::Object(map) = value {
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
                let mut edges = Vec::new();
                let mut at = Some(next);
                while let Some(index) = at {
                    let (_, parent, edge) = met[index];
                    edges.extend(edge);
                    at = parent;
                }
                let mut pointer = String::new();
                for edge in edges.iter().rev() {
                    edge.push_pointer(&mut pointer);
                }
                crate::walk::push_segment(&mut pointer, keyword);
                return Some(pointer);
            }
            let parent = next;
            crate::walk::for_each_subschema(map, |edge| {
                met.push((edge.schema, Some(parent), Some(edge)))
            });
        }
        next += 1;
    }
    None
}

struct Inliner<'a> {
    root: &'a Value,
    dialect: Dialect,
    /// The pointers being inlined, outermost first: one met again is a cycle.
    stack: Vec<&'a str>,
    /// Subschemas made so far.
    subschemas: usize,
    /// About how many bytes the copies made so far take as JSON.
    bytes: usize,
    /// The most the inlined schema may take (see [`MAX_GROWTH`]).
    max_bytes: usize,
    limits: &'a Limits,
    /// A reference was inlined.
    found: bool,
    /// Definitions were left out.
    dropped: bool,
}

impl<'a> Inliner<'a> {
    fn count(&mut self) -> Option<()> {
        self.subschemas += 1;
        self.bytes += 2;
        (self.subschemas <= self.limits.max_subschemas && self.bytes <= self.max_bytes)
            .then_some(())
    }

    /// A copy of `value` (instance data, or words for people), counted.
    fn copy(&mut self, key: &str, value: &Value) -> Option<Value> {
        self.bytes += key.len() + 4 + approximate_bytes(value, self.max_bytes);
        (self.bytes <= self.max_bytes).then(|| value.clone())
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
        if depth > self.limits.max_schema_depth || (!is_root && self.sets_base_uri(map)) {
            return None;
        }
        self.count()?;
        let mut out = Map::new();
        for (keyword, value) in map {
            match keyword.as_str() {
                "$dynamicRef" | "$recursiveRef" | "$anchor" | "$dynamicAnchor"
                | "$recursiveAnchor" => return None,
                // Definitions are reached only through references, all of
                // which are inlined (or the whole is declined).
                "$ref" => {}
                "$defs" | "definitions" => self.dropped = true,
                _ if holds_subschemas(keyword) => {
                    let held = self.holder(keyword, value, depth)?;
                    self.bytes += keyword.len() + 4;
                    out.insert(keyword.clone(), held);
                }
                _ => {
                    let copied = self.copy(keyword, value)?;
                    out.insert(keyword.clone(), copied);
                }
            }
        }
        let Some(reference) = map.get("$ref") else {
            return Some(Value::Object(out));
        };
        // Siblings of a reference before 2019-09 are ignored; after, both
        // apply: the target goes into an `allOf`, two levels down.
        let replaces = self.dialect < Dialect::Draft201909 || out.is_empty();
        let target = self.target(
            reference.as_str()?,
            if replaces { depth } else { depth + 2 },
        )?;
        if replaces {
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
                    self.bytes += name.len() + 4;
                    let item = if item.is_object() || item.is_boolean() {
                        self.schema(item, depth + 2)?
                    } else {
                        self.copy(name, item)?
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
        // A chain of references each replacing the last nests no deeper:
        // bounded by its own length.
        if self.stack.contains(&pointer) || self.stack.len() >= self.limits.max_schema_depth {
            return None;
        }
        let target = self.root.pointer(pointer)?;
        if self.passes_a_base_uri(pointer) {
            return None;
        }
        self.found = true;
        self.stack.push(pointer);
        let inlined = self.schema(target, depth);
        self.stack.pop();
        inlined
    }

    /// Whether `map` gives its subschemas a base URI of their own (`$id`,
    /// draft-04's `id`): references inside resolve against it.
    fn sets_base_uri(&self, map: &Map<String, Value>) -> bool {
        let ids: &[&str] = if self.dialect == Dialect::Draft4 {
            &["$id", "id"]
        } else {
            &["$id"]
        };
        ids.iter()
            .any(|id| map.get(*id).is_some_and(Value::is_string))
    }

    /// Whether the way to `pointer`'s target passes a subschema below the
    /// root with a base URI of its own.
    fn passes_a_base_uri(&self, pointer: &str) -> bool {
        // Each prefix of the pointer but the root's, the whole one last.
        let below_root = pointer
            .match_indices('/')
            .skip(1)
            .map(|(at, _)| &pointer[..at]);
        below_root
            .chain(std::iter::once(pointer))
            .filter_map(|prefix| self.root.pointer(prefix)?.as_object())
            .any(|map| self.sets_base_uri(map))
    }
}

/// About how many bytes `value` takes as JSON, counted up to `limit`.
fn approximate_bytes(value: &Value, limit: usize) -> usize {
    let mut bytes = 0;
    let mut pending = vec![value];
    while let Some(value) = pending.pop() {
        bytes += match value {
            Value::String(text) => text.len() + 2,
            Value::Array(items) => {
                pending.extend(items);
                2 + items.len()
            }
            Value::Object(map) => {
                pending.extend(map.values());
                2 + map.keys().map(|key| key.len() + 4).sum::<usize>()
            }
            _ => 8,
        };
        if bytes > limit {
            break;
        }
    }
    bytes
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
    fn a_root_reference_before_2019_09_keeps_the_dialect() {
        let schema = json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "$ref": "#/definitions/T",
            "definitions": {"T": {"type": "array", "items": [{"type": "integer"}]}}
        });
        assert_eq!(
            inline_local_refs(&schema),
            Some(json!({
                "$schema": "http://json-schema.org/draft-07/schema#",
                "type": "array",
                "items": [{"type": "integer"}]
            }))
        );
    }

    #[test]
    fn a_target_below_another_base_uri_is_declined() {
        let schema = json!({
            "$defs": {
                "B": {"$id": "https://x/b", "$defs": {"C": {"type": "integer"}}},
                "C": {"type": "string"}
            },
            "properties": {"c": {"$ref": "#/$defs/B/$defs/C"}}
        });
        assert_eq!(inline_local_refs(&schema), None);
    }

    /// A chain of references with siblings: each link nests two levels
    /// deeper once inlined (`allOf`, its array).
    fn chain(links: usize) -> Value {
        let mut defs = Map::new();
        for i in 0..links {
            defs.insert(
                format!("A{i}"),
                json!({"description": "d", "$ref": format!("#/$defs/A{}", i + 1)}),
            );
        }
        defs.insert(format!("A{links}"), json!({"type": "integer"}));
        json!({"$defs": defs, "properties": {"a": {"$ref": "#/$defs/A0"}}})
    }

    #[test]
    fn the_depth_counts_the_allof_a_reference_goes_into() {
        let short = inline_local_refs(&chain(20))
            .map(|inlined| check_document_depth(&inlined, &Limits::default()).is_ok());
        assert_eq!(short, Some(true));
        assert_eq!(inline_local_refs(&chain(40)), None);
        // A chain without siblings nests no deeper, but stops at its length.
        let mut defs = Map::new();
        for i in 0..100 {
            defs.insert(
                format!("R{i}"),
                json!({"$ref": format!("#/$defs/R{}", i + 1)}),
            );
        }
        defs.insert("R100".into(), json!({"type": "integer"}));
        assert_eq!(
            inline_local_refs(&json!({"$defs": defs, "$ref": "#/$defs/R0"})),
            None
        );
    }

    /// `leaf` reached through `levels` definitions, each an `anyOf` of two
    /// references to the one below: 2^levels copies once inlined.
    fn doubling(leaf: Value, levels: usize) -> Value {
        let mut defs = Map::new();
        defs.insert("D0".into(), leaf);
        for level in 1..=levels {
            let below = format!("#/$defs/D{}", level - 1);
            defs.insert(
                format!("D{level}"),
                json!({"anyOf": [{"$ref": below}, {"$ref": below}]}),
            );
        }
        json!({"$defs": defs, "$ref": format!("#/$defs/D{levels}")})
    }

    #[test]
    fn copies_stop_at_the_size_a_reader_takes() {
        // 2^10 copies of a 4 KB description: 4 MB, past 512 KiB.
        let schema = doubling(
            json!({"type": "integer", "description": "x".repeat(4096)}),
            10,
        );
        assert_eq!(inline_local_refs(&schema), None);
    }

    #[test]
    fn property_names_count_in_the_size() {
        // 2^10 copies of a 4 KB property name: about 4 MB, past 512 KiB,
        // with few subschemas.
        let mut properties = Map::new();
        properties.insert("n".repeat(4096), json!({}));
        let schema = doubling(json!({"properties": properties}), 10);
        let mut inliner = Inliner {
            root: &schema,
            dialect: Dialect::Draft202012,
            stack: Vec::new(),
            subschemas: 0,
            bytes: 0,
            max_bytes: bounds().max_schema_bytes,
            limits: &bounds(),
            found: false,
            dropped: false,
        };
        let Value::Object(root) = &schema else {
            unreachable!()
        };
        // Stopped while copying, not only by the exact check at the end.
        assert_eq!(inliner.object(root, 0, true), None);
        assert!(
            inliner.bytes <= bounds().max_schema_bytes + 8192,
            "{}",
            inliner.bytes
        );
    }

    #[test]
    fn an_inlined_schema_grows_at_most_four_times_its_written_size() {
        // 2^6 copies of a 1 KB description: 64 KB from 1.4 KB written.
        let schema = doubling(
            json!({"type": "integer", "description": "x".repeat(1024)}),
            6,
        );
        assert_eq!(inline_local_refs(&schema), None);
        // 2^2 copies: 4 KB from 1.3 KB written, within 8 KiB.
        let schema = doubling(
            json!({"type": "integer", "description": "x".repeat(1024)}),
            2,
        );
        assert!(inline_local_refs(&schema).is_some());
    }

    #[test]
    fn definitions_no_reference_uses_are_dropped() {
        assert_eq!(
            inline_local_refs(&json!({"$defs": {"A": {"type": "string"}}, "type": "object"})),
            Some(json!({"type": "object"}))
        );
    }

    #[test]
    fn doubling_definitions_hit_the_size_bound() {
        let schema = doubling(json!({"type": "integer"}), 39);
        assert_eq!(inline_local_refs(&schema), None);
    }
}
