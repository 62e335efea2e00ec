//! `format` asserted (the default), annotated, or as each dialect specifies;
//! the internationalized formats are known.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};
use toolshape_schema::{FormatMode, SchemaEngine};

const DIALECTS: [&str; 3] = [
    "https://json-schema.org/draft/2020-12/schema",
    "https://json-schema.org/draft/2019-09/schema",
    "http://json-schema.org/draft-07/schema#",
];

/// Whether `engine` rejects a non-date where `dialect` asks for a date.
fn rejects_bad_date(engine: &SchemaEngine, dialect: &str) -> bool {
    let schema = engine
        .compile(&json!({"$schema": dialect, "type": "string", "format": "date"}))
        .unwrap();
    assert!(schema.validate(&json!("2026-07-28")).is_ok());
    schema.validate(&json!("the 28th of July")).is_err()
}

#[test]
fn the_default_asserts_in_every_dialect() {
    let engine = SchemaEngine::default();
    for dialect in DIALECTS {
        assert!(rejects_bad_date(&engine, dialect), "{dialect}");
    }
    let explicit = SchemaEngine::builder()
        .format_mode(FormatMode::Assert)
        .build();
    assert!(rejects_bad_date(&explicit, DIALECTS[0]));
}

#[test]
fn annotate_never_fails_an_instance() {
    for engine in [
        SchemaEngine::builder()
            .format_mode(FormatMode::Annotate)
            .build(),
        SchemaEngine::builder().validate_formats(false).build(),
    ] {
        for dialect in DIALECTS {
            assert!(!rejects_bad_date(&engine, dialect), "{dialect}");
        }
    }
}

#[test]
fn dialect_default_annotates_in_2019_09_and_2020_12_and_asserts_in_draft7() {
    let engine = SchemaEngine::builder()
        .format_mode(FormatMode::DialectDefault)
        .build();
    assert!(!rejects_bad_date(&engine, DIALECTS[0]));
    assert!(!rejects_bad_date(&engine, DIALECTS[1]));
    assert!(rejects_bad_date(&engine, DIALECTS[2]));
}

#[test]
fn dialect_default_asserts_when_the_meta_schema_requires_format_assertion() {
    let meta = "https://schemas.example.com/meta/format-assertion";
    let engine = SchemaEngine::builder()
        .format_mode(FormatMode::DialectDefault)
        .document(
            meta,
            json!({
                "$schema": "https://json-schema.org/draft/2020-12/schema",
                "$vocabulary": {
                    "https://json-schema.org/draft/2020-12/vocab/core": true,
                    "https://json-schema.org/draft/2020-12/vocab/format-assertion": true
                },
                "$dynamicAnchor": "meta",
                "allOf": [
                    {"$ref": "https://json-schema.org/draft/2020-12/meta/core"},
                    {"$ref": "https://json-schema.org/draft/2020-12/meta/format-assertion"}
                ]
            }),
        )
        .build();
    assert!(rejects_bad_date(&engine, meta));
}

fn verdicts(format: &str, instances: &[Value]) -> Vec<bool> {
    let engine = SchemaEngine::default();
    let schema = engine.compile(&json!({"format": format})).unwrap();
    instances
        .iter()
        .map(|instance| schema.validate(instance).is_ok())
        .collect()
}

#[test]
fn internationalized_host_names_and_emails_are_asserted() {
    assert_eq!(
        verdicts(
            "idn-hostname",
            &[
                json!("실례.테스트"),
                json!("bücher.example"),
                // A label may not start with a combining mark (RFC 5891 §4.2.3.2).
                json!("\u{302e}실례.테스트"),
                json!("not a host"),
            ]
        ),
        [true, true, false, false]
    );
    assert_eq!(
        verdicts("idn-email", &[json!("실례@실례.테스트"), json!("2962")]),
        [true, false]
    );
}
