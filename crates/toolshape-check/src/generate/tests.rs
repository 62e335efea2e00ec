use serde_json::{Value, json};
use toolshape_schema::SchemaEngine;

use super::Generator;

fn valid(schema: &Value) -> Vec<Value> {
    let compiled = SchemaEngine::default().compile(schema).unwrap();
    Generator::new(schema)
        .valid_candidates(None)
        .into_iter()
        .map(Value::Object)
        .filter(|candidate| compiled.validate(candidate).is_ok())
        .collect()
}

#[test]
fn examples_and_defaults_come_first() {
    let schema = json!({
        "type": "object",
        "properties": {
            "city": {"type": "string", "examples": ["Paris"]},
            "units": {"type": "string", "enum": ["celsius", "fahrenheit"], "default": "celsius"}
        },
        "required": ["city"],
        "examples": [{"city": "Tokyo", "units": "fahrenheit"}]
    });
    let found = valid(&schema);
    assert_eq!(found[0], json!({"city": "Tokyo", "units": "fahrenheit"}));
    assert_eq!(found[1], json!({"city": "Paris"}));
    assert!(
        found.contains(&json!({"city": "Paris", "units": "celsius"})),
        "{found:?}"
    );
}

#[test]
fn edge_values_sit_on_the_bounds() {
    let schema = json!({
        "type": "object",
        "properties": {
            "n": {"type": "integer", "minimum": 3, "exclusiveMaximum": 10, "multipleOf": 3},
            "s": {"type": "string", "minLength": 2, "maxLength": 5},
            "x": {"type": "number", "exclusiveMinimum": 0}
        },
        "required": ["n", "s", "x"]
    });
    let found = valid(&schema);
    let ns: Vec<&Value> = found.iter().map(|c| &c["n"]).collect();
    assert!(
        ns.contains(&&json!(3)) && ns.contains(&&json!(9)),
        "{found:?}"
    );
    let lengths: Vec<usize> = found
        .iter()
        .filter_map(|c| c["s"].as_str().map(str::len))
        .collect();
    assert!(lengths.contains(&2) && lengths.contains(&5), "{found:?}");
    assert!(
        found
            .iter()
            .all(|c| c["x"].as_f64().is_some_and(|x| x > 0.0))
    );
}

#[test]
fn references_compositions_and_formats_are_followed() {
    let schema = json!({
        "type": "object",
        "$defs": {"when": {"type": "string", "format": "date-time"}},
        "properties": {
            "at": {"$ref": "#/$defs/when"},
            "target": {"oneOf": [{"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}, {"type": "null"}]},
            "tags": {"type": "array", "items": {"type": "string", "format": "email"}, "minItems": 2},
            "mode": {"allOf": [{"type": "string"}, {"minLength": 6}]}
        },
        "required": ["at", "target", "tags", "mode"]
    });
    let found = valid(&schema);
    assert!(!found.is_empty());
    assert_eq!(found[0]["at"], json!("2026-01-01T00:00:00Z"));
    assert_eq!(found[0]["target"], json!({"path": "test"}));
    assert_eq!(found[0]["tags"].as_array().map(Vec::len), Some(2));
}

#[test]
fn invalid_candidates_drop_a_required_property_and_mistype_one() {
    let schema = json!({
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "object"}},
        "required": ["a"]
    });
    let generator = Generator::new(&schema);
    let base = generator.valid_candidates(None).remove(0);
    let invalid = generator.invalid_candidates(&base);
    assert_eq!(invalid.len(), 2);
    assert!(!invalid[0].contains_key("a"));
    assert!(invalid[1]["a"].is_object());
}

#[test]
fn hostile_schemas_stay_bounded() {
    // Self-referencing and very deep schemas end.
    let looping =
        json!({"type": "object", "properties": {"next": {"$ref": "#"}}, "required": ["next"]});
    assert!(Generator::new(&looping).valid_candidates(None).is_empty());
    let mut deep = json!({"type": "integer"});
    for _ in 0..500 {
        deep = json!({"type": "object", "properties": {"x": deep}, "required": ["x"]});
    }
    let _ = Generator::new(&deep).valid_candidates(None);
    let cycle = json!({"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}, "type": "object",
        "properties": {"v": {"$ref": "#/$defs/a"}}, "required": ["v"]});
    let _ = Generator::new(&cycle).valid_candidates(None);
    // Recursive with many properties: 32 branches at each of 8 levels
    // (before the total bound, about 10^12 values: it never ended).
    let properties: serde_json::Map<String, Value> = (1..=32)
        .map(|n| (format!("p{n}"), json!({"$ref": "#"})))
        .collect();
    // And with a long description (left out of every merge).
    let wide = json!({"type": "object", "minProperties": 32, "properties": properties,
        "description": "d".repeat(400_000)});
    let found = Generator::new(&wide).valid_candidates(None);
    assert!(!found.is_empty(), "the first values still make candidates");
}

#[test]
fn a_seed_comes_first_with_its_edges() {
    let schema = json!({
        "type": "object",
        "properties": {"path": {"type": "string"}, "depth": {"type": "integer", "minimum": 0, "maximum": 3}},
        "required": ["path"]
    });
    let seed = json!({"path": "src"});
    let found = Generator::new(&schema).valid_candidates(seed.as_object());
    assert_eq!(found[0], *seed.as_object().unwrap());
    assert_eq!(
        Value::Object(found[1].clone()),
        json!({"path": "src", "depth": 0})
    );
}

#[test]
fn a_shared_definition_is_merged_once_not_once_per_path() {
    // Each level an `allOf` of 12 references to the level below: 12^4
    // paths to the leaf, which the untrusted engine accepts.
    let mut defs = serde_json::Map::new();
    defs.insert(
        "L4".into(),
        json!({"type": "object", "properties": {"p": {"type": "string"}}, "required": ["p"]}),
    );
    for level in (0..4).rev() {
        let below = format!("#/$defs/L{}", level + 1);
        let branches: Vec<Value> = (0..12).map(|_| json!({"$ref": below})).collect();
        defs.insert(format!("L{level}"), json!({"allOf": branches}));
    }
    let schema = json!({
        "$defs": defs,
        "type": "object",
        "properties": {"x": {"$ref": "#/$defs/L0"}},
        "required": ["x"]
    });
    let untrusted = SchemaEngine::builder()
        .trust(toolshape_schema::Trust::Untrusted)
        .build();
    assert!(untrusted.compile(&schema).is_ok());
    let generator = Generator::new(&schema);
    let found = generator.valid_candidates(None);
    assert!(found.contains(&serde_json::Map::from_iter([(
        "x".to_owned(),
        json!({"p": "test"})
    )])));
    // About a dozen values and merges, where a merge per path took 12^4.
    assert!(generator.steps() < 1_000, "{}", generator.steps());
}

#[test]
fn a_merge_cut_by_the_depth_bound_is_not_kept_for_other_places() {
    // The root reaches Q under eight nested `allOf`s, where the merge's
    // depth bound cuts Q's own `allOf`; `b` merges Q near the top and needs
    // all of it. The root has `z` of its own, so it is valid either way.
    let mut deep = json!({"$ref": "#/$defs/Q"});
    for _ in 0..8 {
        deep = json!({"allOf": [deep]});
    }
    let schema = json!({
        "$defs": {"Q": {"type": "object", "allOf": [{"properties": {"z": {"type": "integer"}}, "required": ["z"]}]}},
        "type": "object",
        "properties": {"z": {"type": "integer"}, "b": {"allOf": [{"$ref": "#/$defs/Q"}]}},
        "required": ["z", "b"],
        "allOf": [deep]
    });
    let found = valid(&schema);
    assert!(
        found.iter().any(|candidate| candidate["b"]["z"].is_i64()),
        "{found:?}"
    );
}
