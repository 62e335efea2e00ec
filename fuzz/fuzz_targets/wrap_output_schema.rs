//! The legacy wrapping of non-object outputs (`mcp::wrap_output_schema`),
//! on `[schema, instance]` pairs: whenever the schema compiles, its wrapped
//! form compiles too (unless the wrapper's own two levels, subschema and
//! bytes take it over the engine's size bounds: registration refuses such a
//! tool), refuses anything but an object holding `result`, and accepts
//! `{"result": instance}` exactly when the schema accepts `instance`
//! (whenever both validations reach a verdict).

#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::{Value, json};
use toolshape_fuzz::{json_pair, untrusted_engine, verdict};
use toolshape_schema::SchemaErrorKind;
use toolshape_schema::mcp::{WRAPPED_RESULT_KEY, wrap_output_schema};

fuzz_target!(|data: &[u8]| {
    let Some((schema, instance)) = json_pair(data) else {
        return;
    };
    let engine = untrusted_engine();
    let Ok(original) = engine.compile(&schema) else {
        return;
    };
    let wrapped_schema = wrap_output_schema(&schema);
    let wrapped = match engine.compile(&wrapped_schema) {
        Ok(wrapped) => wrapped,
        Err(error)
            if matches!(
                error.kind(),
                SchemaErrorKind::TooDeep { .. }
                    | SchemaErrorKind::TooLarge { .. }
                    | SchemaErrorKind::TooManySubschemas { .. }
            ) =>
        {
            return;
        }
        Err(error) => panic!("the wrapped form of a schema that compiles is refused: {error}\n{wrapped_schema}"),
    };
    assert_eq!(verdict(&wrapped.validate(&json!({}))), Some(false));
    if !instance.is_object() {
        assert_eq!(verdict(&wrapped.validate(&instance)), Some(false));
    }
    let mut holder = serde_json::Map::new();
    holder.insert(WRAPPED_RESULT_KEY.into(), instance.clone());
    let bare = original.validate(&instance);
    let held = wrapped.validate(&Value::Object(holder));
    if let (Some(a), Some(b)) = (verdict(&bare), verdict(&held)) {
        assert_eq!(
            a, b,
            "the schema says {a} for the instance, its wrapped form {b} for the wrapped instance\nschema: {schema}\nwrapped: {wrapped_schema}\ninstance: {instance}"
        );
    }
});
