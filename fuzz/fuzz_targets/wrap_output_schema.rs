//! The legacy wrapping of non-object outputs (`mcp::wrap_output_schema`),
//! on `[schema, instance]` pairs: whenever the schema compiles, its wrapped
//! form compiles too (unless the wrapper's own two levels, subschema and
//! bytes take it over the engine's size bounds: registration refuses such a
//! tool), refuses anything but an object holding `result`, and accepts
//! `{"result": instance}` exactly when the schema accepts `instance`
//! (whenever both validations reach a verdict); and unwrapped again
//! (`mcp::unwrap_output_schema`), it compiles and says what the schema says.

#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::{Value, json};
use toolshape_fuzz::{json_pair, untrusted_engine, verdict};
use toolshape_schema::SchemaErrorKind;
use toolshape_schema::mcp::{WRAPPED_RESULT_KEY, unwrap_output_schema, wrap_output_schema};

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
        Err(error) => panic!(
            "the wrapped form of a schema that compiles is refused: {error}\n{wrapped_schema}"
        ),
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
    let Some(unwrapped_schema) = unwrap_output_schema(&wrapped_schema) else {
        panic!("a wrapped schema without its result: {wrapped_schema}");
    };
    let unwrapped = match engine.compile(&unwrapped_schema) {
        Ok(unwrapped) => unwrapped,
        Err(error) => panic!(
            "the unwrapped form of a wrapped schema is refused: {error}\nschema: {schema}\nunwrapped: {unwrapped_schema}"
        ),
    };
    if let (Some(a), Some(b)) = (verdict(&bare), verdict(&unwrapped.validate(&instance))) {
        assert_eq!(
            a, b,
            "the schema says {a} for the instance, unwrapped again {b}\nschema: {schema}\nunwrapped: {unwrapped_schema}\ninstance: {instance}"
        );
    }
});
