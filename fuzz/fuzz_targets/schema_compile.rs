//! Arbitrary JSON as a schema. Compiling must end, within the engine's
//! bounds (libFuzzer's time and memory limits catch what does not), in a
//! compiled schema or a typed refusal; compiling it again gives the same
//! answer (from the cache; but for the patterns' time budget, which load
//! may spend); a compiled schema validates the instances it
//! carries (`const`, `enum`, `default`, `examples`) and a few plain ones
//! without panicking, with bounded reports.

#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::{Value, json};
use toolshape_fuzz::{check_report, json, untrusted_engine};
use toolshape_schema::{SchemaError, SchemaErrorKind};

/// Instances worth trying against `schema`: the ones it names, and plain values.
fn probes(schema: &Value) -> Vec<Value> {
    let mut probes = vec![
        Value::Null,
        json!(0),
        json!(-1.5),
        json!(""),
        json!("a"),
        json!([]),
        json!({}),
        json!([1, "a", null]),
        json!({"a": 1, "b": [true]}),
    ];
    if let Value::Object(map) = schema {
        for keyword in ["const", "default"] {
            if let Some(value) = map.get(keyword) {
                probes.push(value.clone());
            }
        }
        for keyword in ["enum", "examples"] {
            if let Some(Value::Array(values)) = map.get(keyword) {
                probes.extend(values.iter().take(8).cloned());
            }
        }
    }
    probes
}

fuzz_target!(|data: &[u8]| {
    let Some(schema) = json(data) else {
        return;
    };
    let engine = untrusted_engine();
    let compiled = engine.compile(&schema);
    let again = engine.compile(&schema);
    // The patterns' budget is time, not cached (load may have spent it):
    // only a refusal for it may differ from one compile to the next.
    let timed = |result: &Result<_, SchemaError>| matches!(result, Err(refusal) if matches!(refusal.kind(), SchemaErrorKind::PatternsTooCostly { .. }));
    if !timed(&compiled) && !timed(&again) {
        assert_eq!(
            compiled.is_ok(),
            again.is_ok(),
            "compiling the same schema twice disagreed"
        );
    }
    match compiled {
        Ok(compiled) => {
            for instance in probes(&schema) {
                let result = compiled.validate(&instance);
                check_report(engine, &result);
            }
        }
        Err(refusal) => {
            // A typed refusal with a message.
            assert!(!refusal.to_string().is_empty());
            let _ = refusal.kind();
        }
    }
});
