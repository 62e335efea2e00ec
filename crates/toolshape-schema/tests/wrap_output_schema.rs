//! The legacy wrapping of a non-object output schema must mean the same:
//! `{"result": v}` passes the wrapped schema exactly when `v` passes the
//! original. Cases found by the `wrap_output_schema` fuzz target (see
//! `docs/reliability.md`) and the corners around them: references to the
//! document root in every form each dialect has.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use serde_json::{Value, json};
use toolshape_schema::SchemaEngine;
use toolshape_schema::mcp::{unwrap_output_schema, wrap_output_schema};

/// Whether `schema` accepts `instance`; its wrapped form `{"result":
/// instance}`; and the wrapped form unwrapped again, `instance`.
fn verdicts(schema: &Value, instance: &Value) -> (bool, bool, bool) {
    let engine = SchemaEngine::default();
    let original = engine
        .compile(schema)
        .unwrap_or_else(|e| panic!("{schema}: {e}"));
    let wrapped_schema = wrap_output_schema(schema);
    let wrapped = engine.compile(&wrapped_schema).unwrap_or_else(|e| {
        panic!("the wrapped form of {schema} is refused: {e}\n{wrapped_schema}")
    });
    let unwrapped_schema = unwrap_output_schema(&wrapped_schema).unwrap();
    let unwrapped = engine.compile(&unwrapped_schema).unwrap_or_else(|e| {
        panic!("the unwrapped form of {wrapped_schema} is refused: {e}\n{unwrapped_schema}")
    });
    (
        original.validate(instance).is_ok(),
        wrapped.validate(&json!({"result": instance})).is_ok(),
        unwrapped.validate(instance).is_ok(),
    )
}

fn assert_same(schema: Value, accepted: &[Value], refused: &[Value]) {
    for (instances, expected) in [(accepted, true), (refused, false)] {
        for instance in instances {
            let (bare, held, unwrapped) = verdicts(&schema, instance);
            assert_eq!(bare, expected, "the original on {instance}: {schema}");
            assert_eq!(
                held,
                expected,
                "the wrapped form on {instance}: {}",
                wrap_output_schema(&schema)
            );
            assert_eq!(unwrapped, expected, "unwrapped again, on {instance}");
        }
    }
}

/// Found by the fuzzer: a 2019-09 `$recursiveRef` (which may only be `#`)
/// was rewritten to a pointer, and then resolved against the wrapper.
#[test]
fn a_2019_09_recursive_ref_keeps_pointing_at_the_wrapped_root() {
    assert_same(
        json!({
            "$schema": "https://json-schema.org/draft/2019-09/schema",
            "additionalProperties": false,
            "properties": {"foo": {"$recursiveRef": "#"}}
        }),
        &[json!({"foo": false}), json!({"foo": {"foo": 1}}), json!(3)],
        &[json!({"bar": 1}), json!({"foo": {"bar": 1}})],
    );
    assert_same(
        json!({
            "$schema": "https://json-schema.org/draft/2019-09/schema",
            "$recursiveAnchor": true,
            "type": ["integer", "array"],
            "items": {"$recursiveRef": "#"}
        }),
        &[json!(1), json!([1, [2, [3]]])],
        &[json!("x"), json!([1, ["x"]])],
    );
}

/// Found by the fuzzer (from the test suite's "unevaluatedItems with
/// $recursiveRef", its root `$id` mangled): a root `$recursiveAnchor` that a
/// `$recursiveRef` in an embedded resource reaches through the dynamic
/// scope; the wrapped schema must stay a resource root for the anchor to count.
#[test]
fn a_root_recursive_anchor_reached_from_an_embedded_resource_still_counts() {
    assert_same(
        json!({
            "$schema": "https://json-schema.org/draft/2019-09/schema",
            "$recursiveAnchor": true,
            "$ref": "./tree",
            "items": [true, true, {"type": "string"}],
            "$defs": {"tree": {
                "$id": "./tree",
                "$recursiveAnchor": true,
                "type": "array",
                "items": [
                    {"type": "number"},
                    {"$recursiveRef": "#", "unevaluatedItems": false}
                ]
            }}
        }),
        &[json!([1, [2, [], "b"], "a"])],
        &[json!([1, [2, [], 3], "a"]), json!([1, [2, [], "b"], 3])],
    );
}

#[test]
fn pointers_to_the_root_and_below_are_rewritten_in_every_dialect() {
    for dialect in [
        "https://json-schema.org/draft/2020-12/schema",
        "https://json-schema.org/draft/2019-09/schema",
        "http://json-schema.org/draft-07/schema#",
        "http://json-schema.org/draft-06/schema#",
        "http://json-schema.org/draft-04/schema#",
    ] {
        let definitions = if dialect.contains("draft/20") {
            "$defs"
        } else {
            "definitions"
        };
        assert_same(
            json!({
                "$schema": dialect,
                "type": ["array", "integer"],
                "items": {"anyOf": [{"$ref": format!("#/{definitions}/leaf")}, {"$ref": "#"}]},
                definitions: {"leaf": {"type": "string"}}
            }),
            &[json!(1), json!(["a", [2, "b"]])],
            &[json!(true), json!([1.5]), json!([[null]])],
        );
    }
}

#[test]
fn a_dynamic_ref_resolves_as_before() {
    assert_same(
        json!({
            "$dynamicAnchor": "node",
            "type": ["integer", "array"],
            "items": {"$dynamicRef": "#node"}
        }),
        &[json!(1), json!([1, [2]])],
        &[json!([1, ["x"]])],
    );
    assert_same(
        json!({"type": ["integer", "array"], "items": {"$dynamicRef": "#"}}),
        &[json!([1, [2]])],
        &[json!(["x"])],
    );
}

#[test]
fn a_schema_with_its_own_id_keeps_its_references() {
    assert_same(
        json!({
            "$id": "https://example.com/output",
            "type": "array",
            "items": {"$ref": "#/$defs/leaf"},
            "$defs": {"leaf": {"type": "integer"}}
        }),
        &[json!([1, 2])],
        &[json!(["x"])],
    );
    // draft-04 spells it `id`.
    assert_same(
        json!({
            "$schema": "http://json-schema.org/draft-04/schema#",
            "id": "http://example.com/output",
            "type": "array",
            "items": {"$ref": "#/definitions/leaf"},
            "definitions": {"leaf": {"type": "integer"}}
        }),
        &[json!([1, 2])],
        &[json!(["x"])],
    );
}

/// Found by the fuzzer: before 2019-09, an id beside a root `$ref` is
/// ignored, so the `$ref` is relative to the document and must be rewritten.
#[test]
fn an_id_hidden_by_a_ref_does_not_make_a_resource() {
    for (dialect, id) in [
        ("http://json-schema.org/draft-04/schema#", "id"),
        ("http://json-schema.org/draft-07/schema#", "$id"),
    ] {
        assert_same(
            json!({
                "$schema": dialect,
                id: "http://x.example/s",
                "$ref": "#/definitions/a",
                "definitions": {"a": {"type": "string"}}
            }),
            &[json!("s")],
            &[json!(1)],
        );
    }
}

#[test]
fn boolean_schemas_wrap() {
    assert_same(json!(true), &[json!(1), json!(null)], &[]);
    assert_same(json!(false), &[], &[json!(1), json!(null)]);
}

/// Found by the fuzzer (CI's 20 s run): an `$id` that names the document
/// itself (`""`, or the validator's own base URI) made the wrapped schema
/// look like its own resource, so its pointers were left to resolve against
/// the wrapper, and the wrapped form did not compile. Such an id is no
/// resource: it is dropped and the pointers rewritten, in every spelling.
#[test]
fn an_id_naming_the_document_itself_is_no_resource() {
    for (dialect, id, value, definitions) in [
        (
            "https://json-schema.org/draft/2020-12/schema",
            "$id",
            "",
            "$defs",
        ),
        (
            "https://json-schema.org/draft/2020-12/schema",
            "$id",
            "json-schema:///",
            "$defs",
        ),
        (
            "https://json-schema.org/draft/2020-12/schema",
            "$id",
            ".",
            "$defs",
        ),
        (
            "http://json-schema.org/draft-07/schema#",
            "$id",
            "",
            "definitions",
        ),
        (
            "http://json-schema.org/draft-04/schema#",
            "id",
            "",
            "definitions",
        ),
    ] {
        let schema = json!({
            "$schema": dialect,
            id: value,
            "type": "array",
            "items": {"$ref": format!("#/{definitions}/leaf")},
            definitions: {"leaf": {"type": "string"}}
        });
        assert_same(schema.clone(), &[json!(["a"])], &[json!([1]), json!("a")]);
        let inner = &wrap_output_schema(&schema)["properties"]["result"];
        assert!(inner.get(id).is_none(), "{inner}");
    }
}

/// References that reach the document by a URI other than a bare fragment
/// (the validator's base URI, or from inside an embedded resource, or under
/// an embedded id that names the document) are re-pointed too.
#[test]
fn references_to_the_document_by_full_uri_are_rewritten() {
    let leaf = json!({"type": "string"});
    for schema in [
        json!({"items": {"$ref": "json-schema:///#/$defs/leaf"}, "$defs": {"leaf": leaf}}),
        json!({"items": {"$ref": "#/$defs/inner"}, "$defs": {
            "inner": {"$id": "https://example.com/inner", "$ref": "json-schema:///#/$defs/leaf"},
            "leaf": leaf
        }}),
        json!({"items": {"$ref": "#/$defs/inner"}, "$defs": {
            "inner": {"$id": "", "$ref": "#/$defs/leaf"},
            "leaf": leaf
        }}),
    ] {
        let mut schema = schema;
        schema["type"] = json!("array");
        assert_same(schema, &[json!(["a"])], &[json!([1])]);
    }
}

/// The wrapper's two levels: a schema at the depth bound compiles, its
/// wrapped form does not (registration refuses such a tool, see
/// `crates/toolshape/tests/registration.rs`).
#[test]
fn the_wrapper_adds_two_levels() {
    let engine = SchemaEngine::default();
    let depth = toolshape_schema::Limits::default().max_schema_depth;
    let mut nested = json!(1);
    // `const` is one level, the array around the value one more each.
    for _ in 0..depth - 1 {
        nested = Value::Array(vec![nested]);
    }
    let schema = json!({"const": nested});
    assert!(engine.compile(&schema).is_ok());
    let refused = engine.compile(&wrap_output_schema(&schema));
    assert!(
        matches!(
            refused.as_ref().err().map(|e| e.kind()),
            Some(toolshape_schema::SchemaErrorKind::TooDeep { .. })
        ),
        "{refused:?}"
    );
}

/// Percent-escaped pointers (`a%20b` for the name `a b`) keep their escapes.
#[test]
fn escaped_pointers_are_rewritten_as_written() {
    for (escaped, name) in [("a%20b", "a b"), ("%C3%A9", "é"), ("a~1b", "a/b")] {
        for reference in [
            format!("#/$defs/{escaped}"),
            format!("json-schema:///#/$defs/{escaped}"),
        ] {
            assert_same(
                json!({
                    "type": "array",
                    "items": {"$ref": reference},
                    "$defs": {name: {"type": "string"}}
                }),
                &[json!(["a"])],
                &[json!([1])],
            );
        }
    }
}

/// The original's own `result` property, referred to by pointer: wrapping
/// puts it under `/properties/result/properties/result`, unwrapping takes
/// one `/properties/result` off, not two.
#[test]
fn a_result_property_of_the_original_survives_the_round_trip() {
    assert_same(
        json!({
            "type": ["object", "array"],
            "properties": {"result": {"type": "string"}},
            "items": {"$ref": "#/properties/result"}
        }),
        &[json!(["a"]), json!({"result": "a"})],
        &[json!([1]), json!({"result": 1})],
    );
}

/// Another server's wrapper (FastMCP's) keeps the definitions at its root
/// and refers to them from inside `result`: unwrapping carries them along,
/// beside the inner schema's own.
#[test]
fn unwrapping_carries_the_wrappers_root_definitions() {
    let engine = SchemaEngine::default();
    let wrapper = json!({
        "type": "object",
        "properties": {"result": {"type": "array", "items": {"$ref": "#/$defs/Leaf"}}},
        "required": ["result"],
        "$defs": {"Leaf": {"type": "string"}},
        "x-fastmcp-wrap-result": true
    });
    let mut with_own = wrapper.clone();
    with_own["$defs"]["Leaf"] = json!({"$ref": "#/properties/result/$defs/Inner"});
    with_own["properties"]["result"]["$defs"] = json!({"Inner": {"type": "string"}});
    for wrapper in [wrapper, with_own] {
        let unwrapped = unwrap_output_schema(&wrapper).unwrap();
        let compiled = engine
            .compile(&unwrapped)
            .unwrap_or_else(|e| panic!("{unwrapped}: {e}"));
        assert!(compiled.validate(&json!(["a"])).is_ok(), "{unwrapped}");
        assert!(compiled.validate(&json!([1])).is_err(), "{unwrapped}");
    }
    assert_eq!(unwrap_output_schema(&json!({"type": "object"})), None);
}

/// Found by the fuzzer (5 minutes on the local corpus, after the fixes
/// above): a reference into a keyword no dialect knows, whose value holds a
/// reference of its own. The validator reads what a pointer reaches as a
/// schema, so the wrapping re-points references inside unknown keywords
/// too (never inside data: `const`, `enum`, `default`, `examples`).
#[test]
fn references_inside_unknown_keywords_are_rewritten() {
    assert_same(
        json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "properties": {"bar": {"$ref": "#/unknown~1keyword"}},
            "unknown/keyword": {
                "properties": {"bar": {"$ref": "#/unknown~1keyword"}},
                "type": "object"
            }
        }),
        &[json!({"bar": {}}), json!({"bar": {"bar": {}}}), json!(3)],
        &[json!({"bar": 3}), json!({"bar": {"bar": 3}})],
    );
    assert_same(
        json!({
            "type": "array",
            "items": {"$ref": "#/x-parts/1"},
            "x-parts": [{"type": "integer"}, {"$ref": "#/x-parts/0"}]
        }),
        &[json!([1, 2])],
        &[json!(["a"])],
    );
}

/// A 2019-09 `$recursiveRef` that only a pointer into a keyword no dialect
/// knows reaches: it still means the document's root, so the wrapped schema
/// must stay a resource root, as for one among the schema keywords.
#[test]
fn a_recursive_ref_inside_an_unknown_keyword_still_counts() {
    assert_same(
        json!({
            "$schema": "https://json-schema.org/draft/2019-09/schema",
            "type": ["integer", "array"],
            "items": {"$ref": "#/x-parts/item"},
            "x-parts": {"item": {"$recursiveRef": "#"}}
        }),
        &[json!(1), json!([1, [2, [3]]])],
        &[json!("x"), json!([1, ["x"]])],
    );
}
