//! Schemas whose cost to validate grows faster than their size (chains of
//! `anyOf`, recursive fan-out, references read again in every scope, cycles
//! that never descend) are refused at compile time, quickly, by counting
//! what the engine would do; legitimate recursive schemas compile.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod hostile_common;

use serde_json::{Value, json};
use toolshape_schema::{SchemaEngine, SchemaErrorKind, Trust};

use hostile_common::{quickly, still_serves};

#[test]
fn exponential_anyof_chain_is_refused() {
    // level_n: anyOf [level_{n-1}, level_{n-1}]: 2^40 evaluations for a failing instance.
    let mut defs = serde_json::Map::new();
    defs.insert("l0".into(), json!({"type": "integer"}));
    for level in 1..=40 {
        let below = format!("#/$defs/l{}", level - 1);
        defs.insert(
            format!("l{level}"),
            json!({"anyOf": [{"$ref": below}, {"$ref": below}]}),
        );
    }
    let schema = json!({"$defs": defs, "$ref": "#/$defs/l40"});
    let engine = SchemaEngine::default();
    let error = quickly("exponential chain", || engine.compile(&schema)).unwrap_err();
    assert!(
        matches!(error.kind(), SchemaErrorKind::ExpansionTooCostly { .. }),
        "{error}"
    );
    still_serves(&engine);
}

#[test]
fn recursive_fan_out_is_refused() {
    let schema = json!({"type": "array", "items": {"anyOf": [{"$ref": "#"}, {"$ref": "#"}]}});
    let mut instance = json!("leaf");
    for _ in 0..20 {
        instance = json!([instance]);
    }
    for trust in [Trust::Untrusted, Trust::Trusted] {
        let engine = SchemaEngine::builder().trust(trust).build();
        let outcome = quickly("recursive fan-out", || {
            engine.compile(&schema).map(|s| s.validate(&instance))
        });
        let error = outcome.unwrap_err();
        assert!(
            matches!(error.kind(), SchemaErrorKind::ExpansionTooCostly { .. }),
            "{error}"
        );
        still_serves(&engine);
    }
}

/// A 2019-09 `$recursiveRef` counts as the engine reads it: `#` through the
/// dynamic scope, or the target of a `$ref` to the same place compiled
/// first, the worse of the two; other values, which the draft leaves
/// undefined (and which the engine reads now as `#`, now as a `$ref`), are
/// refused; in other drafts it is no keyword at all.
#[test]
fn recursive_refs_count_as_the_engine_reads_them() {
    let engine = SchemaEngine::default();
    let draft = "https://json-schema.org/draft/2019-09/schema";
    // Found by review: a `$recursiveRef` naming a target a `$ref` reaches
    // first is wired to that target, which doubles each level.
    let aliased = json!({
        "$schema": draft, "$id": "https://example.com/a", "$ref": "#/$defs/x",
        "$defs": {
            "x": {"anyOf": [
                {"type": "object", "properties": {"a": {"$ref": "b"}}},
                {"type": "object", "properties": {"a": {"$ref": "b"}}, "required": ["a"]}
            ]},
            "b": {"$id": "b", "items": {"$recursiveRef": "https://example.com/a#/$defs/x"}}
        }
    });
    // Found by the fuzzer: `/` against a relative root `$id`.
    let slash = json!({
        "$schema": draft, "$id": "main.json", "$ref": "inner.json",
        "$defs": {"inner": {"$id": "inner.json", "$recursiveAnchor": true,
            "additionalProperties": {"$recursiveRef": "/"}}}
    });
    for schema in [aliased, slash] {
        let error = quickly("undefined $recursiveRef", || engine.compile(&schema)).unwrap_err();
        assert!(
            matches!(error.kind(), SchemaErrorKind::UndefinedRecursiveRef { .. }),
            "{error}"
        );
    }
    // `#` whose recursive target fans out per level is refused...
    let fan_out = json!({
        "$schema": draft, "$recursiveAnchor": true, "type": "array",
        "items": {"anyOf": [{"$recursiveRef": "#"}, {"$recursiveRef": "#"}]}
    });
    let error = quickly("recursive fan-out", || engine.compile(&fan_out)).unwrap_err();
    assert!(
        matches!(error.kind(), SchemaErrorKind::ExpansionTooCostly { .. }),
        "{error}"
    );
    // ...a plain recursive tree is not, and validates.
    let tree = json!({
        "$schema": draft, "$recursiveAnchor": true, "type": ["integer", "array"],
        "items": {"$recursiveRef": "#"}
    });
    let compiled = engine.compile(&tree).unwrap();
    assert!(compiled.validate(&json!([1, [2, [3]]])).is_ok());
    assert!(compiled.validate(&json!([1, ["x"]])).is_err());
    // In 2020-12 (and draft-07) `$recursiveRef` is an unknown keyword.
    for dialect in [
        "https://json-schema.org/draft/2020-12/schema",
        "http://json-schema.org/draft-07/schema#",
    ] {
        let schema = json!({"$schema": dialect, "$recursiveRef": "#/$defs/a", "$defs": {"a": {}}});
        assert!(engine.compile(&schema).is_ok(), "{dialect}");
    }
    still_serves(&engine);
}

/// Found by review: a dynamic reference lands on a different place in each
/// dynamic scope, and one of them fans out per level. The estimate counts
/// the worst place, whichever scope it meets first (before, one order of
/// the two `anyOf` branches was accepted, and validating a 60-deep instance
/// ran inline for over a minute).
#[test]
fn dynamic_references_count_their_worst_landing_in_any_scope() {
    let engine = SchemaEngine::default();
    // (draft, the anchor, the reference to it) for 2019-09 and 2020-12.
    let schema = |dialect: &str, anchor: (&str, Value), reference: Value, first: &str| {
        let second = if first == "e1" { "e2" } else { "e1" };
        let mut e1 =
            json!({"$id": "e1", "anyOf": [{"$ref": "r"}, {"$ref": "r", "required": ["c"]}]});
        let mut r = json!({"$id": "r", "type": "object", "properties": {"c": reference}});
        e1[anchor.0] = anchor.1.clone();
        r[anchor.0] = anchor.1;
        json!({
            "$schema": dialect,
            "$id": "https://example.com/root",
            "anyOf": [{"$ref": first}, {"$ref": second}],
            "$defs": {"e2": {"$id": "e2", "$ref": "r"}, "e1": e1, "r": r}
        })
    };
    let draft2019 = "https://json-schema.org/draft/2019-09/schema";
    let draft2020 = "https://json-schema.org/draft/2020-12/schema";
    let kinds = [
        (
            draft2019,
            ("$recursiveAnchor", json!(true)),
            json!({"$recursiveRef": "#"}),
        ),
        (
            draft2020,
            ("$dynamicAnchor", json!("n")),
            json!({"$dynamicRef": "#n"}),
        ),
        // A plain `$ref` to a dynamic anchor by name goes through the scope too.
        (
            draft2020,
            ("$dynamicAnchor", json!("n")),
            json!({"$ref": "#n"}),
        ),
    ];
    let cases = kinds.iter().flat_map(|(dialect, anchor, reference)| {
        ["e2", "e1"].map(|first| schema(dialect, anchor.clone(), reference.clone(), first))
    });
    for schema in cases {
        let error = quickly("dynamic fan-out", || engine.compile(&schema)).unwrap_err();
        assert!(
            matches!(error.kind(), SchemaErrorKind::ExpansionTooCostly { .. }),
            "{error}\n{schema}"
        );
    }
    // Before 2020-12 `$dynamicAnchor` and `$dynamicRef` are no keywords
    // (found by review: these were refused as reference cycles).
    for schema in [
        json!({
            "$schema": "https://json-schema.org/draft/2019-09/schema",
            "$id": "https://example.com/a", "$ref": "#/$defs/x",
            "$defs": {"x": {"$dynamicAnchor": "x", "allOf": [{"$dynamicRef": "#x"}]}}
        }),
        json!({"$schema": "http://json-schema.org/draft-07/schema#", "type": "object", "$dynamicRef": "#"}),
    ] {
        assert!(engine.compile(&schema).is_ok(), "{schema}");
    }
    still_serves(&engine);
}

/// Working out a schema's cost is bounded too: thousands of same-named
/// `$dynamicAnchor`s, each reached again at every instance depth, took 1.1 s
/// (release) to estimate before the bound; now they are refused at once.
#[test]
fn a_schema_too_intricate_to_bound_is_refused_quickly() {
    let mut defs = serde_json::Map::new();
    for i in 0..3000 {
        let def = json!({"$dynamicAnchor": "n", "properties": {"c": {"$dynamicRef": "#n"}}});
        defs.insert(format!("d{i}"), def);
    }
    let schema = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$dynamicAnchor": "n", "$defs": defs,
        "properties": {"c": {"$dynamicRef": "#n"}}
    });
    let engine = SchemaEngine::default();
    let error = quickly("intricate schema", || engine.compile(&schema)).unwrap_err();
    assert!(
        matches!(
            error.kind(),
            SchemaErrorKind::EstimateTooCostly { limit: 200_000 }
        ),
        "{error}"
    );
    still_serves(&engine);
}

#[test]
fn reference_cycle_that_never_descends_is_refused() {
    let engine = SchemaEngine::default();
    let schema = json!({"anyOf": [{"type": "string"}, {"$ref": "#"}]});
    let error = quickly("cycle", || engine.compile(&schema)).unwrap_err();
    assert!(
        matches!(error.kind(), SchemaErrorKind::ReferenceCycle { .. }),
        "{error}"
    );
}

#[test]
fn legitimate_recursive_schemas_compile_under_default_limits() {
    let engine = SchemaEngine::default();
    // Any JSON value, as MCP's schema.json defines it: linear in the instance, not exponential.
    let json_value = json!({
        "$defs": {"JSONValue": {"anyOf": [
            {"type": "string"}, {"type": "number"}, {"type": "boolean"}, {"type": "null"},
            {"type": "array", "items": {"$ref": "#/$defs/JSONValue"}},
            {"type": "object", "additionalProperties": {"$ref": "#/$defs/JSONValue"}}
        ]}},
        "$ref": "#/$defs/JSONValue"
    });
    let compiled = engine.compile(&json_value).unwrap();
    assert!(compiled.validate(&json!({"a": [1, {"b": null}]})).is_ok());
    // A tree whose children are trees.
    let tree = json!({
        "type": "object",
        "properties": {"name": {"type": "string"}, "children": {"type": "array", "items": {"$ref": "#"}}},
        "required": ["name"]
    });
    let compiled = engine.compile(&tree).unwrap();
    assert!(
        compiled
            .validate(&json!({"name": "a", "children": [{"name": "b", "children": []}]}))
            .is_ok()
    );
    assert!(
        compiled
            .validate(&json!({"name": "a", "children": [{"children": []}]}))
            .is_err()
    );
}
