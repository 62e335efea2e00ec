//! A `$schema` may name a meta-schema registered with the engine: the schema is
//! checked against it and compiled in the dialect and vocabularies it declares.
//! Any other unknown `$schema` is still refused.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};
use toolshape_schema::{Dialect, SchemaEngine, SchemaErrorKind};

const NO_VALIDATION: &str = "https://schemas.example.com/meta/no-validation";

/// A 2020-12 meta-schema with the core and applicator vocabularies only.
fn no_validation() -> Value {
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": NO_VALIDATION,
        "$vocabulary": {
            "https://json-schema.org/draft/2020-12/vocab/core": true,
            "https://json-schema.org/draft/2020-12/vocab/applicator": true
        },
        "$dynamicAnchor": "meta",
        "allOf": [
            {"$ref": "https://json-schema.org/draft/2020-12/meta/core"},
            {"$ref": "https://json-schema.org/draft/2020-12/meta/applicator"}
        ]
    })
}

#[test]
fn vocabularies_of_a_registered_meta_schema_apply() {
    let engine = SchemaEngine::builder()
        .document(NO_VALIDATION, no_validation())
        .try_build()
        .unwrap();
    let schema = engine
        .compile(&json!({
            "$schema": NO_VALIDATION,
            "properties": {"forbidden": false, "n": {"minimum": 10}}
        }))
        .unwrap();
    assert_eq!(schema.dialect(), Dialect::Draft202012);
    // Applicator keywords work, validation keywords are not in force.
    assert!(schema.validate(&json!({"n": 1})).is_ok());
    assert!(schema.validate(&json!({"forbidden": 1})).is_err());
}

#[test]
fn unregistered_meta_schemas_are_still_refused() {
    let engine = SchemaEngine::builder()
        .document(NO_VALIDATION, no_validation())
        .build();
    let error = engine
        .compile(&json!({"$schema": "https://schemas.example.com/meta/other"}))
        .unwrap_err();
    assert!(
        matches!(error.kind(), SchemaErrorKind::UnknownDialect(uri) if uri.ends_with("/meta/other")),
        "{error}"
    );
    // Without the registration, the same `$schema` is unknown too.
    let error = SchemaEngine::default()
        .compile(&json!({"$schema": NO_VALIDATION}))
        .unwrap_err();
    assert!(
        matches!(error.kind(), SchemaErrorKind::UnknownDialect(_)),
        "{error}"
    );
}

#[test]
fn schemas_are_checked_against_the_custom_meta_schema() {
    let meta = "urn:example:meta:titled";
    let engine = SchemaEngine::builder()
        .document(
            meta,
            json!({
                "$schema": "https://json-schema.org/draft/2020-12/schema",
                "$dynamicAnchor": "meta",
                "allOf": [{"$ref": "https://json-schema.org/draft/2020-12/schema"}],
                "required": ["title"]
            }),
        )
        .build();
    let error = engine
        .compile(&json!({"$schema": meta, "type": "string"}))
        .unwrap_err();
    assert!(
        matches!(error.kind(), SchemaErrorKind::Invalid { .. }),
        "{error}"
    );
    assert!(error.to_string().contains("title"), "{error}");
    let schema = engine
        .compile(&json!({"$schema": meta, "title": "a name", "type": "string"}))
        .unwrap();
    assert!(schema.validate(&json!("x")).is_ok());
    assert!(schema.validate(&json!(1)).is_err());
}

#[test]
fn a_required_unknown_vocabulary_is_refused_an_optional_one_ignored() {
    let meta = |required: bool| {
        json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "$vocabulary": {
                "https://json-schema.org/draft/2020-12/vocab/core": true,
                "https://json-schema.org/draft/2020-12/vocab/validation": true,
                "https://schemas.example.com/vocab/custom": required
            },
            "$dynamicAnchor": "meta",
            "allOf": [
                {"$ref": "https://json-schema.org/draft/2020-12/meta/core"},
                {"$ref": "https://json-schema.org/draft/2020-12/meta/validation"}
            ]
        })
    };
    let engine = SchemaEngine::builder()
        .document("https://schemas.example.com/required", meta(true))
        .document("https://schemas.example.com/optional", meta(false))
        .build();
    let error = engine
        .compile(&json!({"$schema": "https://schemas.example.com/required", "type": "number"}))
        .unwrap_err();
    assert!(error.to_string().contains("vocab/custom"), "{error}");
    let schema = engine
        .compile(&json!({"$schema": "https://schemas.example.com/optional", "type": "number"}))
        .unwrap();
    assert!(schema.validate(&json!(20)).is_ok());
    assert!(schema.validate(&json!("twenty")).is_err());
}

#[test]
fn the_dialect_comes_from_the_end_of_the_chain() {
    // Registered under a URN, named by its `$id`, built on another custom
    // meta-schema, which is built on draft-07.
    let engine = SchemaEngine::builder()
        .document(
            "urn:example:outer",
            json!({"$id": "https://schemas.example.com/outer", "$schema": "https://schemas.example.com/inner"}),
        )
        .document(
            "https://schemas.example.com/inner",
            json!({"$schema": "http://json-schema.org/draft-07/schema#", "$ref": "http://json-schema.org/draft-07/schema#"}),
        )
        .build();
    let schema = engine
        .compile(&json!({
            "$schema": "https://schemas.example.com/outer#",
            "dependencies": {"a": ["b"]}
        }))
        .unwrap();
    assert_eq!(schema.dialect(), Dialect::Draft7);
    // `dependencies` is a draft-07 keyword: in force here, ignored in 2020-12.
    assert!(schema.validate(&json!({"a": 1})).is_err());
    assert!(schema.validate(&json!({"a": 1, "b": 2})).is_ok());
}

#[test]
fn cycles_and_dead_ends_in_the_chain_are_refused() {
    let cycle = SchemaEngine::builder()
        .document(
            "https://schemas.example.com/a",
            json!({"$schema": "https://schemas.example.com/b"}),
        )
        .document(
            "https://schemas.example.com/b",
            json!({"$schema": "https://schemas.example.com/a"}),
        );
    let dead_end = SchemaEngine::builder().document(
        "https://schemas.example.com/c",
        json!({"$schema": "https://schemas.example.com/nowhere"}),
    );
    for (builder, meta) in [
        (cycle, "https://schemas.example.com/a"),
        (dead_end, "https://schemas.example.com/c"),
    ] {
        let error = match builder.try_build() {
            Ok(engine) => engine.compile(&json!({"$schema": meta})).unwrap_err(),
            Err(error) => error,
        };
        assert!(
            matches!(
                error.kind(),
                SchemaErrorKind::MetaSchema { .. } | SchemaErrorKind::Unresolvable(_)
            ),
            "{error}"
        );
    }
}
