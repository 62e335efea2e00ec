//! The instance depth limit holds at its exact boundary, whatever the values at the bottom.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};
use toolshape_schema::{Limits, SchemaEngine, Trust, ValidationErrorKind};

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
