//! Arguments made from an `inputSchema`: valid instances (examples and
//! defaults first, then values at the schema's bounds) and a few invalid
//! ones (a required property left out, a property of the wrong type).
//!
//! Small and bounded, not a fuzzer: nesting, array lengths, string lengths
//! and the number of candidates are all capped. Every candidate is checked
//! against the compiled schema by the caller; what does not validate (a
//! `pattern` this generator cannot satisfy, say) is dropped.

mod value;

use serde_json::{Map, Value, json};

pub(crate) use value::Generator;

/// Most candidates of either kind made before validation.
const MAX_CANDIDATES: usize = 12;

/// The value given to a property to make its type wrong: an object for
/// anything but an object (no lax coercion turns an object into a string,
/// a number or a boolean), a string for an object.
fn wrong_type_value(schema: &Value) -> Option<Value> {
    let declared = match schema.get("type") {
        Some(Value::String(kind)) => vec![kind.as_str()],
        Some(Value::Array(kinds)) => kinds.iter().filter_map(Value::as_str).collect(),
        _ => return None,
    };
    if declared.is_empty() {
        return None;
    }
    if declared.contains(&"object") {
        (!declared.contains(&"string")).then(|| json!("toolshape-check: not an object"))
    } else {
        Some(json!({"toolshape-check": "wrong type"}))
    }
}

impl Generator<'_> {
    /// Valid-argument candidates for a tool whose inputSchema is `self`'s
    /// root, most typical first: the caller's `seed` and values at bounds
    /// set on it, the schema's own `examples`, then the minimal instance
    /// (required properties, from `examples`/`default` where given), then
    /// one with every property, then values at bounds.
    pub(crate) fn valid_candidates(
        &self,
        seed: Option<&Map<String, Value>>,
    ) -> Vec<Map<String, Value>> {
        let root = self.root();
        let mut candidates: Vec<Map<String, Value>> = Vec::new();
        if let Some(seed) = seed {
            candidates.push(seed.clone());
            for (name, edge) in self.edges(root) {
                let mut candidate = seed.clone();
                candidate.insert(name, edge);
                if candidates.len() < MAX_CANDIDATES && !candidates.contains(&candidate) {
                    candidates.push(candidate);
                }
            }
        }
        let mut push = |candidate: Option<Value>| {
            if let Some(Value::Object(map)) = candidate
                && candidates.len() < MAX_CANDIDATES
                && !candidates.contains(&map)
            {
                candidates.push(map);
            }
        };
        if let Some(Value::Array(examples)) = root.get("examples") {
            for example in examples.iter().take(3) {
                push(Some(example.clone()));
            }
        }
        if let Some(default) = root.get("default") {
            push(Some(default.clone()));
        }
        let minimal = self.object(root, 0, false);
        push(minimal.clone());
        push(self.object(root, 0, true));
        // A root `oneOf`/`anyOf` of object shapes: one instance per branch.
        let mut minimal = minimal;
        for keyword in ["oneOf", "anyOf"] {
            let Some(Value::Array(branches)) = root.get(keyword) else {
                continue;
            };
            let mut rest = root.clone();
            if let Some(map) = rest.as_object_mut() {
                map.remove("oneOf");
                map.remove("anyOf");
            }
            for branch in branches.iter().take(8) {
                let combined = json!({"allOf": [rest, branch]});
                let candidate = self.object(&combined, 0, false);
                if minimal
                    .as_ref()
                    .is_none_or(|m| m.as_object().is_some_and(Map::is_empty))
                {
                    minimal.clone_from(&candidate);
                }
                push(candidate);
            }
        }
        if let Some(Value::Object(base)) = minimal {
            for (name, edge) in self.edges(root) {
                let mut candidate = base.clone();
                candidate.insert(name, edge);
                push(Some(Value::Object(candidate)));
            }
        }
        candidates
    }

    /// Invalid-argument candidates: `base` without a required property,
    /// and `base` with a property of the wrong type (required ones first).
    pub(crate) fn invalid_candidates(&self, base: &Map<String, Value>) -> Vec<Map<String, Value>> {
        let root = self.root();
        let properties = self.properties(root);
        let required = self.required(root);
        let mut candidates = Vec::new();
        if let Some(name) = required.first() {
            let mut candidate = base.clone();
            candidate.remove(name.as_str());
            candidates.push(candidate);
        }
        let mut typed: Vec<(&String, &Value)> = properties.iter().collect();
        // Required properties first: a server must look at those.
        typed.sort_by_key(|(name, _)| !required.contains(name));
        for (name, schema) in typed {
            let schema = self.resolve(schema);
            if let Some(wrong) = wrong_type_value(schema) {
                let mut candidate = base.clone();
                candidate.insert(name.clone(), wrong);
                candidates.push(candidate);
                break;
            }
        }
        candidates
    }
}

#[cfg(test)]
mod tests;
