//! One value for one subschema, and values at its bounds.

use std::collections::HashMap;

use serde_json::{Map, Number, Value, json};

/// Deepest nesting generated.
const MAX_DEPTH: usize = 8;
/// Most items in a generated array.
const MAX_ITEMS: usize = 3;
/// Longest generated string, in characters.
const MAX_STRING: usize = 256;
/// Most properties generated for one object.
const MAX_PROPERTIES: usize = 32;
/// Most `$ref` hops followed for one subschema.
const MAX_REF_HOPS: usize = 16;
/// Most values (of any depth) made, and `allOf` merges done, from one
/// schema document over every candidate: the bounds above cap each level,
/// not the whole, and a recursive schema with many properties would
/// otherwise make 32^8.
const MAX_STEPS: usize = 100_000;

/// Keywords `merged` leaves out: annotations and definitions no generated
/// value depends on (`examples`, `default` and `const` are read from the
/// schema itself, before merging).
const NOT_GENERATIVE: &[&str] = &[
    "description",
    "title",
    "$comment",
    "examples",
    "default",
    "$defs",
    "definitions",
    "deprecated",
    "readOnly",
    "writeOnly",
    "$id",
    "$schema",
    "$anchor",
    "$dynamicAnchor",
];

/// Kept merges: by reference, and the depth a bound cut the merge at (none
/// for a whole one).
type Merges = HashMap<(String, Option<usize>), Map<String, Value>>;

/// Makes values from one schema document (an `inputSchema`).
#[derive(Debug)]
pub(crate) struct Generator<'a> {
    root: &'a Value,
    /// Values made and merges done so far (see [`MAX_STEPS`]).
    steps: std::sync::atomic::AtomicUsize,
    /// The merged form of each `$ref`'s target, by the reference (and the
    /// depth it was merged at, when a bound cut the merge there): a
    /// subschema reached through many `allOf`s and `$ref`s (a diamond, a
    /// recursion, one value per candidate) is merged once, not once per path.
    merges: std::sync::Mutex<Merges>,
}

fn number(value: f64, integer: bool) -> Value {
    if (integer || value.fract() == 0.0) && value.abs() < 9.0e15 {
        // A whole value is written without a fraction.
        json!(value as i64)
    } else {
        Number::from_f64(value).map_or(Value::Null, Value::Number)
    }
}

fn as_f64(schema: &Value, key: &str) -> Option<f64> {
    schema.get(key).and_then(Value::as_f64)
}

/// The lowest and highest values `schema` allows, exclusive bounds moved
/// inward by `step` (draft-04's boolean `exclusiveMinimum` included).
fn bounds(schema: &Value, step: f64) -> (Option<f64>, Option<f64>) {
    let mut low = as_f64(schema, "minimum");
    let mut high = as_f64(schema, "maximum");
    match schema.get("exclusiveMinimum") {
        Some(Value::Bool(true)) => low = low.map(|l| l + step),
        Some(other) => {
            if let Some(bound) = other.as_f64() {
                low = Some(low.map_or(bound + step, |l| l.max(bound + step)));
            }
        }
        None => {}
    }
    match schema.get("exclusiveMaximum") {
        Some(Value::Bool(true)) => high = high.map(|h| h - step),
        Some(other) => {
            if let Some(bound) = other.as_f64() {
                high = Some(high.map_or(bound - step, |h| h.min(bound - step)));
            }
        }
        None => {}
    }
    (low, high)
}

/// `value` moved onto a multiple of `schema`'s `multipleOf`, staying within `high`.
fn aligned(schema: &Value, value: f64, high: Option<f64>) -> f64 {
    match as_f64(schema, "multipleOf") {
        Some(step) if step > 0.0 => {
            let up = (value / step).ceil() * step;
            match high {
                Some(high) if up > high => (value / step).floor() * step,
                _ => up,
            }
        }
        _ => value,
    }
}

fn format_example(format: &str) -> Option<&'static str> {
    Some(match format {
        "date-time" => "2026-01-01T00:00:00Z",
        "date" => "2026-01-01",
        "time" => "12:00:00Z",
        "duration" => "P1D",
        "email" | "idn-email" => "user@example.com",
        "hostname" | "idn-hostname" => "example.com",
        "ipv4" => "127.0.0.1",
        "ipv6" => "::1",
        "uri" | "iri" => "https://example.com/",
        "uri-reference" | "iri-reference" => "/example",
        "uuid" => "00000000-0000-4000-8000-000000000000",
        "uri-template" => "https://example.com/{id}",
        "json-pointer" => "/a",
        "relative-json-pointer" => "0",
        "regex" => "^a$",
        _ => return None,
    })
}

/// A string of exactly `length` characters, from `base` cut or padded.
fn string_of(base: &str, length: usize) -> String {
    let mut text: String = base.chars().take(length).collect();
    while text.chars().count() < length {
        text.push('x');
    }
    text
}

fn usize_of(schema: &Value, key: &str) -> Option<usize> {
    schema
        .get(key)
        .and_then(Value::as_u64)
        .and_then(|n| usize::try_from(n).ok())
}

impl<'a> Generator<'a> {
    /// A generator for the schema document `root`.
    pub(crate) fn new(root: &'a Value) -> Self {
        Generator {
            root,
            steps: std::sync::atomic::AtomicUsize::new(0),
            merges: std::sync::Mutex::new(HashMap::new()),
        }
    }

    /// The document's root.
    pub(crate) fn root(&self) -> &'a Value {
        self.root
    }

    /// `schema` with same-document `$ref`s followed (a bounded number of hops).
    pub(crate) fn resolve<'b>(&self, mut schema: &'b Value) -> &'b Value
    where
        'a: 'b,
    {
        for _ in 0..MAX_REF_HOPS {
            let Some(reference) = schema.get("$ref").and_then(Value::as_str) else {
                break;
            };
            let target = match reference.strip_prefix('#') {
                Some("") => Some(self.root),
                Some(pointer) if pointer.starts_with('/') => self.root.pointer(pointer),
                _ => None,
            };
            match target {
                Some(target) => schema = target,
                None => break,
            }
        }
        schema
    }

    /// The schema's own keywords with its `allOf` branches' merged under
    /// them (its own win; `properties` and `required` are united), `$ref`s
    /// followed.
    fn merged(&self, schema: &Value, depth: usize) -> Map<String, Value> {
        self.merged_noting(schema, depth).0
    }

    /// [`Generator::merged`], and whether the merge is whole (not cut by
    /// the depth or step bound anywhere below).
    fn merged_noting(&self, schema: &Value, depth: usize) -> (Map<String, Value>, bool) {
        // A reference that resolves names the same target wherever it
        // appears in the document: its whole merge is kept, and a merge a
        // bound cut is kept for the depth it was cut at (other subschemas
        // are merged where they are, once per path through the document,
        // which its size bounds).
        let reference = schema
            .get("$ref")
            .and_then(Value::as_str)
            .filter(|_| !std::ptr::eq(self.resolve(schema), schema));
        let Some(reference) = reference else {
            return self.merge(schema, depth);
        };
        for (key, whole) in [(None, true), (Some(depth), false)] {
            if let Some(merged) = self.merges().get(&(reference.to_owned(), key)) {
                return (merged.clone(), whole);
            }
        }
        let (merged, whole) = self.merge(schema, depth);
        let key = (!whole).then_some(depth);
        self.merges()
            .insert((reference.to_owned(), key), merged.clone());
        (merged, whole)
    }

    fn merges(&self) -> std::sync::MutexGuard<'_, Merges> {
        self.merges
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Counts one step; the steps taken before it.
    fn step(&self) -> usize {
        self.steps
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    }

    /// The steps taken so far.
    #[cfg(test)]
    pub(crate) fn steps(&self) -> usize {
        self.steps.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// [`Generator::merged_noting`] without the kept merges.
    fn merge(&self, schema: &Value, depth: usize) -> (Map<String, Value>, bool) {
        let schema = self.resolve(schema);
        // Only what generating reads: a schema's words for people (and its
        // definitions, reached through `$ref`) may be large, and a merge
        // runs for every value made.
        let mut merged: Map<String, Value> = match schema {
            Value::Object(map) => map
                .iter()
                .filter(|(key, _)| !NOT_GENERATIVE.contains(&key.as_str()))
                .map(|(key, value)| (key.clone(), value.clone()))
                .collect(),
            _ => Map::new(),
        };
        merged.remove("allOf");
        let Some(Value::Array(branches)) = schema.get("allOf") else {
            return (merged, true);
        };
        if depth > MAX_DEPTH || self.step() >= MAX_STEPS {
            return (merged, false);
        }
        // (The first branches only, wherever the schema is met: a fixed rule.)
        let mut whole = true;
        for branch in branches.iter().take(MAX_PROPERTIES) {
            let (branch, branch_whole) = self.merged_noting(branch, depth + 1);
            whole &= branch_whole;
            for (key, value) in branch {
                match (merged.get_mut(&key), value) {
                    (Some(Value::Object(own)), Value::Object(theirs)) if key == "properties" => {
                        for (name, property) in theirs {
                            own.entry(name).or_insert(property);
                        }
                    }
                    (Some(Value::Array(own)), Value::Array(theirs)) if key == "required" => {
                        for name in theirs {
                            if !own.contains(&name) {
                                own.push(name);
                            }
                        }
                    }
                    (None, value) => {
                        merged.insert(key, value);
                    }
                    _ => {}
                }
            }
        }
        (merged, whole)
    }

    /// The object schema's properties (its own and its `allOf` branches').
    pub(crate) fn properties(&self, schema: &Value) -> Map<String, Value> {
        properties_of(&self.merged(schema, 0))
            .map(|(name, schema)| (name.clone(), schema.clone()))
            .collect()
    }

    /// The object schema's required property names.
    pub(crate) fn required(&self, schema: &Value) -> Vec<String> {
        required_of(&self.merged(schema, 0))
    }

    /// An object for `schema`: its required properties (and with `full`,
    /// every property), each from its `examples`, `default`, `const`,
    /// `enum`, or made from its type.
    pub(crate) fn object(&self, schema: &Value, depth: usize, full: bool) -> Option<Value> {
        self.object_from(&self.merged(schema, depth), depth, full)
    }

    fn object_from(&self, merged: &Map<String, Value>, depth: usize, full: bool) -> Option<Value> {
        if depth > MAX_DEPTH {
            return None;
        }
        let properties: Vec<(&String, &Value)> = properties_of(merged).collect();
        let mut object = Map::new();
        for name in required_of(merged) {
            let property = properties
                .iter()
                .find(|(listed, _)| **listed == name)
                .map_or(&Value::Bool(true), |(_, schema)| *schema);
            let value = self.value(property, depth + 1)?;
            object.insert(name, value);
        }
        let wanted = merged
            .get("minProperties")
            .and_then(Value::as_u64)
            .and_then(|n| usize::try_from(n).ok())
            .unwrap_or(0);
        for (name, property) in properties {
            if object.contains_key(name) || (!full && object.len() >= wanted) {
                continue;
            }
            if let Some(value) = self.value(property, depth + 1) {
                object.insert(name.clone(), value);
            }
        }
        Some(Value::Object(object))
    }

    /// One value `schema` is likely to accept: its `const`, first example,
    /// `default` or first `enum` value, its first workable `anyOf`/`oneOf`
    /// branch, or a value of its type within its bounds.
    pub(crate) fn value(&self, schema: &Value, depth: usize) -> Option<Value> {
        if depth > MAX_DEPTH || self.step() >= MAX_STEPS {
            return None;
        }
        let schema = match self.resolve(schema) {
            Value::Bool(true) => return Some(json!("test")),
            object @ Value::Object(_) => object,
            _ => return None,
        };
        if let Some(constant) = schema.get("const") {
            return Some(constant.clone());
        }
        if let Some(Value::Array(examples)) = schema.get("examples")
            && let Some(first) = examples.first()
        {
            return Some(first.clone());
        }
        if let Some(default) = schema.get("default") {
            return Some(default.clone());
        }
        if let Some(Value::Array(choices)) = schema.get("enum")
            && let Some(first) = choices.first()
        {
            return Some(first.clone());
        }
        for keyword in ["anyOf", "oneOf"] {
            if let Some(Value::Array(branches)) = schema.get(keyword) {
                return branches
                    .iter()
                    .take(MAX_PROPERTIES)
                    .find_map(|branch| self.value(branch, depth + 1));
            }
        }
        let merged_value = Value::Object(self.merged(schema, depth));
        let Value::Object(merged) = &merged_value else {
            return None;
        };
        match kind(&merged_value) {
            "object" => self.object_from(merged, depth, false),
            "array" => self.array(&merged_value, depth),
            "string" => Some(string(&merged_value)),
            "integer" => Some(numeric(&merged_value, true)),
            "number" => Some(numeric(&merged_value, false)),
            "boolean" => Some(Value::Bool(true)),
            "null" => Some(Value::Null),
            _ => Some(json!("test")),
        }
    }

    fn array(&self, schema: &Value, depth: usize) -> Option<Value> {
        let min = usize_of(schema, "minItems").unwrap_or(0);
        let max = usize_of(schema, "maxItems").unwrap_or(usize::MAX);
        let unique = schema.get("uniqueItems") == Some(&Value::Bool(true));
        let prefix: &[Value] = match (schema.get("prefixItems"), schema.get("items")) {
            (Some(Value::Array(prefix)), _) | (None, Some(Value::Array(prefix))) => prefix,
            _ => &[],
        };
        let rest = match schema.get("items") {
            Some(items @ (Value::Object(_) | Value::Bool(true))) => Some(items),
            _ => None,
        };
        if min > MAX_ITEMS * 4 {
            return None;
        }
        let mut wanted = min.max(1).min(max);
        if unique && min <= 1 {
            wanted = wanted.min(1);
        }
        let mut items = Vec::new();
        for index in 0..wanted {
            let item_schema = match (prefix.get(index), rest) {
                (Some(schema), _) | (None, Some(schema)) => schema,
                (None, None) if index < min => &Value::Bool(true),
                (None, None) => break,
            };
            items.push(self.value(item_schema, depth + 1)?);
        }
        Some(Value::Array(items))
    }

    /// Values at the bounds of the root object's properties, one property
    /// each: each numeric bound, each string length bound, the last `enum`
    /// value, `false` for a boolean, each array length bound.
    pub(crate) fn edges(&self, schema: &Value) -> Vec<(String, Value)> {
        let mut edges = Vec::new();
        for (name, property) in self.properties(schema) {
            let property = Value::Object(self.merged(&property, 0));
            let mut add = |value: Value| edges.push((name.clone(), value));
            if let Some(Value::Array(choices)) = property.get("enum") {
                if choices.len() > 1
                    && let Some(last) = choices.last()
                {
                    add(last.clone());
                }
                continue;
            }
            match kind(&property) {
                kind @ ("integer" | "number") => {
                    let integer = kind == "integer";
                    let (low, high) = bounds(&property, if integer { 1.0 } else { 0.5 });
                    if let Some(low) = low {
                        let low = if integer { low.ceil() } else { low };
                        add(number(aligned(&property, low, high), integer));
                    }
                    if let Some(high) = high {
                        let high = if integer { high.floor() } else { high };
                        add(number(high, integer));
                    }
                }
                "string" => {
                    let base = base_string(&property);
                    if let Some(min) = usize_of(&property, "minLength") {
                        add(Value::String(string_of(base, min.min(MAX_STRING))));
                    }
                    if let Some(max) = usize_of(&property, "maxLength").filter(|m| *m <= MAX_STRING)
                    {
                        add(Value::String(string_of(base, max)));
                    }
                }
                "boolean" => add(Value::Bool(false)),
                "array" => {
                    let item = property
                        .get("items")
                        .filter(|items| items.is_object())
                        .and_then(|items| self.value(items, 1))
                        .unwrap_or(json!("test"));
                    for key in ["minItems", "maxItems"] {
                        if let Some(length) =
                            usize_of(&property, key).filter(|l| *l <= MAX_ITEMS * 4)
                        {
                            add(Value::Array(vec![item.clone(); length]));
                        }
                    }
                }
                _ => {}
            }
        }
        edges
    }
}

/// The merged schema's properties (at most [`MAX_PROPERTIES`]), borrowed:
/// a property's schema may be large, and this runs for every object made.
fn properties_of(merged: &Map<String, Value>) -> impl Iterator<Item = (&String, &Value)> {
    let properties = match merged.get("properties") {
        Some(Value::Object(properties)) => Some(properties.iter().take(MAX_PROPERTIES)),
        _ => None,
    };
    properties.into_iter().flatten()
}

fn required_of(merged: &Map<String, Value>) -> Vec<String> {
    match merged.get("required") {
        Some(Value::Array(names)) => names
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .take(MAX_PROPERTIES)
            .collect(),
        _ => Vec::new(),
    }
}

/// The type to make for `schema`: its declared one (the first that is not
/// `null`), else what its keywords suggest.
fn kind(schema: &Value) -> &'static str {
    const KINDS: [&str; 7] = [
        "object", "array", "string", "integer", "number", "boolean", "null",
    ];
    let declared: Vec<&str> = match schema.get("type") {
        Some(Value::String(kind)) => vec![kind.as_str()],
        Some(Value::Array(kinds)) => kinds.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    let pick = declared
        .iter()
        .find(|kind| **kind != "null")
        .or(declared.first());
    if let Some(kind) = pick.and_then(|kind| KINDS.iter().find(|k| *k == kind)) {
        return kind;
    }
    let has = |key: &str| schema.get(key).is_some();
    if has("properties") || has("required") || has("additionalProperties") {
        "object"
    } else if has("items") || has("prefixItems") || has("minItems") {
        "array"
    } else if has("minimum") || has("maximum") || has("multipleOf") {
        "number"
    } else {
        "string"
    }
}

fn base_string(schema: &Value) -> &'static str {
    schema
        .get("format")
        .and_then(Value::as_str)
        .and_then(format_example)
        .unwrap_or("test")
}

fn string(schema: &Value) -> Value {
    let base = base_string(schema);
    let min = usize_of(schema, "minLength").unwrap_or(0).min(MAX_STRING);
    let max = usize_of(schema, "maxLength").unwrap_or(usize::MAX);
    let length = base.chars().count().max(min).min(max);
    Value::String(string_of(base, length))
}

fn numeric(schema: &Value, integer: bool) -> Value {
    let step = if integer { 1.0 } else { 0.5 };
    let (low, high) = bounds(schema, step);
    let low = low.map(|l| if integer { l.ceil() } else { l });
    let high = high.map(|h| if integer { h.floor() } else { h });
    let value = match (low, high) {
        (Some(low), _) => low,
        (None, Some(high)) if high < 1.0 => high,
        _ => 1.0,
    };
    number(aligned(schema, value, high), integer)
}
