//! Schemas whose cost to validate grows faster than their size (chains of
//! `anyOf`, recursive fan-out, references read again in every scope, cycles
//! that never descend) are refused at compile time, quickly, by counting
//! what the engine would do; legitimate recursive schemas compile.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod hostile_common;

use serde_json::{Value, json};
use toolshape_schema::{SchemaEngine, SchemaErrorKind, Trust, ValidationErrorKind};

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

/// `n` links of `$ref`s, each to the next, at one instance location, kept
/// in `under` (a member no keyword names), the last an array of itself.
fn reference_chain(n: usize, under: &str) -> Value {
    let mut links: Vec<Value> = (1..=n)
        .map(|next| json!({"$ref": format!("#/{under}/{next}")}))
        .collect();
    links.push(json!({"type": "array", "items": {"$ref": "#"}}));
    let mut schema = json!({"$ref": format!("#/{under}/0")});
    schema[under] = Value::Array(links);
    schema
}

/// Runs `f` on a thread with an async runtime worker's 2 MiB stack.
fn on_small_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new()
        .stack_size(2 * 1024 * 1024)
        .spawn(f)
        .unwrap()
        .join()
        .unwrap()
}

/// A chain of references at one place recurses as deep in the validator:
/// a long one is refused (9,000 links overflowed the stack of the thread
/// validating and ended the process), and a shorter one with a deep
/// instance runs on a worker with a large stack.
#[test]
fn a_long_reference_chain_is_refused_and_a_deep_one_runs_on_a_large_stack() {
    let refused = on_small_stack(|| {
        let engine = SchemaEngine::default();
        let refused = engine.compile(&reference_chain(9_000, "x")).unwrap_err();
        still_serves(&engine);
        refused
    });
    assert!(
        matches!(
            refused.kind(),
            SchemaErrorKind::ReferenceChainTooLong { .. }
                | SchemaErrorKind::TooManySubschemas { .. }
        ),
        "{refused}"
    );
    let refused = SchemaEngine::default()
        .compile(&reference_chain(300, "x"))
        .unwrap_err();
    assert!(
        matches!(
            refused.kind(),
            SchemaErrorKind::ReferenceChainTooLong { .. }
        ),
        "{refused}"
    );

    // 100 links at each of 70 levels: 7,000 deep (little work: 71 values).
    let mut instance = json!([]);
    for _ in 0..70 {
        instance = json!([instance]);
    }
    let validated = on_small_stack(move || {
        let engine = SchemaEngine::default();
        let compiled = engine.compile(&reference_chain(100, "x")).unwrap();
        compiled.validate(&instance).map_err(|e| e.to_string())
    });
    assert_eq!(validated, Ok(()));
}

/// Subschemas reached only by references into members no keyword names
/// count toward the subschema limit, and their patterns are checked.
#[test]
fn subschemas_reached_only_by_reference_are_counted_and_checked() {
    let branches: Vec<Value> = (0..5_000)
        .map(|at| json!({"$ref": format!("#/x/{at}")}))
        .collect();
    let targets: Vec<Value> = (0..5_000).map(|_| json!({"type": "string"})).collect();
    let schema = json!({"anyOf": branches, "x": targets});
    let refused = SchemaEngine::default().compile(&schema).unwrap_err();
    assert!(
        matches!(refused.kind(), SchemaErrorKind::TooManySubschemas { .. }),
        "{refused}"
    );
    let schema = json!({"$ref": "#/x/0", "x": [{"pattern": "(a)\\1"}]});
    let refused = SchemaEngine::default().compile(&schema).unwrap_err();
    assert!(
        matches!(refused.kind(), SchemaErrorKind::BacktrackingPattern { at, .. } if at.contains("pattern")),
        "{refused}"
    );
}

/// A pattern the translation to the regex engine's syntax reads again for
/// each `\c` escape is refused before it is read.
#[test]
fn a_pattern_of_many_control_escapes_is_refused() {
    let engine = SchemaEngine::default();
    let pattern = "\\cA".repeat(40_000);
    let schema = json!({"type": "string", "pattern": pattern});
    let refused = quickly("control escapes", || engine.compile(&schema)).unwrap_err();
    assert!(
        matches!(refused.kind(), SchemaErrorKind::PatternOverBounds { .. }),
        "{refused}"
    );
    let few = json!({"type": "string", "pattern": "^\\cA\\cB$"});
    assert!(engine.compile(&few).is_ok());
    still_serves(&engine);
}

/// An evaluation costs a comparison per `enum` value: a large enum counts
/// in the work that decides whether a validation runs under the budget.
#[test]
fn enum_values_count_in_the_expansion() {
    let values: Vec<Value> = (0..20_000).map(|i| json!(f64::from(i) + 0.5)).collect();
    let schema = json!({"type": "array", "items": {"enum": values}});
    let compiled = SchemaEngine::default().compile(&schema).unwrap();
    assert!(compiled.expansion() > 20_000, "{}", compiled.expansion());
}

/// Ordered trees of empty arrays with `nodes` nodes each, all of them.
fn trees(nodes: usize, memo: &mut Vec<Vec<Vec<Value>>>) -> Vec<Value> {
    forests(nodes - 1, memo)
        .into_iter()
        .map(Value::Array)
        .collect()
}

/// Ordered sequences of such trees with `nodes` nodes in all.
fn forests(nodes: usize, memo: &mut Vec<Vec<Vec<Value>>>) -> Vec<Vec<Value>> {
    if let Some(known) = memo.get(nodes) {
        return known.clone();
    }
    let mut all = Vec::new();
    if nodes == 0 {
        all.push(Vec::new());
    }
    for first in 1..=nodes {
        for tree in trees(first, memo) {
            for rest in forests(nodes - first, memo) {
                let mut forest = vec![tree.clone()];
                forest.extend(rest);
                all.push(forest);
            }
        }
    }
    memo.push(all.clone());
    all
}

/// `uniqueItems` over values the validator library hashes alike (arrays
/// of empty arrays) compares every pair: such a validation runs under the
/// time budget, not inline for as long as it takes.
#[test]
fn unique_items_runs_under_the_budget() {
    let mut memo = Vec::new();
    // 23,714 of them: pairwise, a debug build takes seconds (the worker it
    // is left on goes on for them after the test).
    let distinct: Vec<Value> = (1..=11).flat_map(|n| trees(n, &mut memo)).collect();
    assert!(distinct.len() > 20_000);
    let engine = SchemaEngine::default();
    let compiled = engine.compile(&json!({"uniqueItems": true})).unwrap();
    let instance = Value::Array(distinct);
    let outcome = quickly("uniqueItems", || compiled.validate(&instance));
    let error = outcome.unwrap_err();
    assert!(
        matches!(error.kind(), ValidationErrorKind::BudgetExceeded { .. }),
        "{error}"
    );
    assert!(compiled.is_quarantined());
}

/// A chain assembled from parts already worked out (a reference into its
/// middle met first) is as long as it is: still refused.
#[test]
fn a_long_chain_met_in_parts_is_refused() {
    let chain = reference_chain(300, "x");
    let schema = json!({"allOf": [{"$ref": "#/x/200"}, {"$ref": "#/x/0"}], "x": chain["x"]});
    let refused = SchemaEngine::default().compile(&schema).unwrap_err();
    assert!(
        matches!(
            refused.kind(),
            SchemaErrorKind::ReferenceChainTooLong { .. }
        ),
        "{refused}"
    );
}

/// Subschemas past the deepest instance the estimate follows are still
/// compiled by the validator: their patterns are checked too.
#[test]
fn patterns_past_the_deepest_instance_are_checked() {
    let mut links: Vec<Value> = (1..=130)
        .map(|next| json!({"properties": {"a": {"$ref": format!("#/x/{next}")}}}))
        .collect();
    links.push(json!({"type": "string", "pattern": "(a)\\1"}));
    let schema = json!({"$ref": "#/x/0", "x": links});
    let refused = SchemaEngine::default().compile(&schema).unwrap_err();
    assert!(
        matches!(refused.kind(), SchemaErrorKind::BacktrackingPattern { .. }),
        "{refused}"
    );
}
