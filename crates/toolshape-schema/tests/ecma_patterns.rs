//! `pattern` is an ECMA-262 regular expression (JSON Schema 2020-12 §6.4):
//! `.` matches any character but a line terminator (`\n`, `\r`, U+2028,
//! U+2029), whatever the regex engine underneath would do by default, with
//! the linear engine (the default) and with backtracking allowed alike.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::json;
use toolshape_schema::SchemaEngine;

fn dot_matches_no_line_terminator(engine: &SchemaEngine, pattern: &str) {
    let schema = engine
        .compile(&json!({"type": "string", "pattern": pattern}))
        .unwrap();
    for matching in ["a-b", "a\tb", "aéb", "a\u{1F600}b"] {
        assert!(
            schema.validate(&json!(matching)).is_ok(),
            "{pattern}: {matching:?}"
        );
    }
    for terminator in ["a\nb", "a\rb", "a\u{2028}b", "a\u{2029}b"] {
        assert!(
            schema.validate(&json!(terminator)).is_err(),
            "{pattern}: {terminator:?} matched"
        );
    }
}

#[test]
fn a_dot_matches_no_line_terminator() {
    dot_matches_no_line_terminator(&SchemaEngine::default(), "^a.b$");
}

#[test]
fn a_dot_matches_no_line_terminator_with_backtracking_allowed() {
    let engine = SchemaEngine::builder()
        .allow_backtracking_patterns(10_000)
        .build();
    dot_matches_no_line_terminator(&engine, "^a.b$");
    // A pattern only the backtracking engine takes (a lookahead).
    dot_matches_no_line_terminator(&engine, "^(?=a)a.b$");
}
