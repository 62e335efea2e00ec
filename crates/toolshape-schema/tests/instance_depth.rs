//! The instance depth limit holds at its exact boundary, whatever the values at the bottom.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};
use toolshape_schema::{InstanceText, Limits, SchemaEngine, Trust, ValidationErrorKind};

fn too_deep(schema: &toolshape_schema::CompiledSchema, instance: &Value) -> bool {
    matches!(
        schema.validate(instance).map_err(|e| e.kind().clone()),
        Err(ValidationErrorKind::InstanceTooDeep { limit: 3 })
    )
}

#[test]
fn depth_limit_counts_containers_not_scalars() {
    for trust in [Trust::Trusted, Trust::Untrusted] {
        let mut limits = Limits::default();
        limits.max_instance_depth = 3;
        let engine = SchemaEngine::builder().limits(limits).trust(trust).build();
        let schema = engine.compile(&json!({})).unwrap();
        for fits in [
            json!(1),
            json!("s"),
            json!([]),
            json!([[[1, "x", null]]]),
            json!([[[]]]),
            json!({"a": {"b": {"c": 1}}}),
            json!({"a": {"b": {}}, "z": [1, [2, "x"]]}),
        ] {
            assert!(schema.validate(&fits).is_ok(), "{fits} fits");
        }
        for deep in [
            json!([[[[1]]]]),
            json!([[[[]]]]),
            json!({"a": {"b": {"c": {}}}}),
            json!([1, 2, {"a": [3, {"b": null}]}]),
            json!({"ok": 1, "deep": [[[{}]]]}),
            json!({"a": {"b": {}}, "z": [1, [2, []]]}),
        ] {
            assert!(too_deep(&schema, &deep), "{deep} is too deep");
        }
    }
}

/// Read from its text, an instance gets the verdict of its `Value`: the
/// depth of the same instances, and of a repeated member name whose first
/// value is too deep but is not the one a `Value` keeps.
#[test]
fn depth_limit_holds_for_instances_read_from_text() {
    for trust in [Trust::Trusted, Trust::Untrusted] {
        let mut limits = Limits::default();
        limits.max_instance_depth = 3;
        let engine = SchemaEngine::builder().limits(limits).trust(trust).build();
        let schema = engine.compile(&json!({})).unwrap();
        for (text, fits) in [
            ("[[[1]]]", true),
            (r#"{"a": {"b": {}}, "z": [1, [2, "x"]]}"#, true),
            ("[[[[1]]]]", false),
            (r#"{"ok": 1, "deep": [[[{}]]]}"#, false),
            (r#"{"a": [[[[1]]]], "a": 1}"#, true),
            (r#"{"a": 1, "a": [[[[1]]]]}"#, false),
        ] {
            let value: Value = serde_json::from_str(text).unwrap();
            let read = InstanceText::parse(text).unwrap();
            let from_text = schema.validate_text(&read);
            assert_eq!(schema.validate(&value).is_ok(), fits, "{text}");
            assert_eq!(
                from_text.is_ok(),
                fits,
                "{text} read from text: {from_text:?}"
            );
        }
    }
}
