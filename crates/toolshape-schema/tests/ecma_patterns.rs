//! `pattern` is an ECMA-262 regular expression (JSON Schema 2020-12 §6.4):
//! `.` matches any character but a line terminator (`\n`, `\r`, U+2028,
//! U+2029), whatever the regex engine underneath would do by default.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::json;
use toolshape_schema::SchemaEngine;

#[test]
fn a_dot_matches_no_line_terminator() {
    let engine = SchemaEngine::default();
    let schema = engine
        .compile(&json!({"type": "string", "pattern": "^a.b$"}))
        .unwrap();
    for matching in ["a-b", "a\tb", "aéb", "a\u{1F600}b"] {
        assert!(schema.validate(&json!(matching)).is_ok(), "{matching:?}");
    }
    for terminator in ["a\nb", "a\rb", "a\u{2028}b", "a\u{2029}b"] {
        assert!(
            schema.validate(&json!(terminator)).is_err(),
            "{terminator:?} matched"
        );
    }
}
