//! The engine against the bare `jsonschema` validator on the spec's
//! `get_weather_data` output schema: compiling, validating a valid and an
//! invalid instance, and parsing the instance as a yardstick.
//!
//! `cargo bench -p toolshape-schema --bench validation -- --warm-up-time 1 --measurement-time 3`

#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use jsonschema::{Draft, PatternOptions, Validator};
use serde_json::{Value, json};
use toolshape_schema::{SchemaEngine, Trust};

/// The `get_weather_data` output schema of the structured-output spec change, exactly.
const SCHEMA: &str = r#"{
  "type": "object",
  "properties": {
    "current": {
      "type": "object",
      "properties": {
        "temperature": { "type": "number" },
        "humidity": { "type": "number" },
        "conditions": { "type": "string" },
        "wind": {
          "type": "object",
          "properties": {
            "speed": { "type": "number" },
            "direction": { "type": "string" }
          },
          "required": ["speed", "direction"]
        }
      },
      "required": ["temperature", "humidity", "conditions", "wind"]
    },
    "forecast": {
      "type": "array",
      "items": {
        "type": "object",
        "properties": {
          "date": { "type": "string", "format": "date" },
          "high": { "type": "number" },
          "low": { "type": "number" },
          "conditions": { "type": "string" }
        },
        "required": ["date", "high", "low", "conditions"]
      }
    },
    "location": {
      "type": "object",
      "properties": {
        "city": { "type": "string" },
        "country": { "type": "string" },
        "coordinates": {
          "type": "object",
          "properties": {
            "latitude": { "type": "number" },
            "longitude": { "type": "number" }
          },
          "required": ["latitude", "longitude"]
        }
      },
      "required": ["city", "country", "coordinates"]
    }
  },
  "required": ["current", "forecast", "location"]
}"#;

/// The peers' deterministic value for `{"location": "Paris"}` (658 bytes compact).
const VALID: &str = r#"{"current":{"temperature":26.5,"humidity":11,"conditions":"Rain","wind":{"speed":1,"direction":"NW"}},"forecast":[{"date":"2026-01-01","high":21,"low":13,"conditions":"Rain"},{"date":"2026-01-02","high":22,"low":14,"conditions":"Sunny"},{"date":"2026-01-03","high":23,"low":15,"conditions":"Partly cloudy"},{"date":"2026-01-04","high":24,"low":16,"conditions":"Cloudy"},{"date":"2026-01-05","high":25,"low":17,"conditions":"Rain"},{"date":"2026-01-06","high":26,"low":18,"conditions":"Sunny"},{"date":"2026-01-07","high":27,"low":19,"conditions":"Partly cloudy"}],"location":{"city":"Paris","country":"US","coordinates":{"latitude":61.25,"longitude":-28.5}}}"#;

/// Wrong types, missing fields and a malformed date: eight violations.
const INVALID: &str = r#"{"current":{"temperature":"26.5","conditions":"Rain","wind":{"speed":1}},"forecast":[{"date":"2026-01-01","high":21,"low":13,"conditions":"Rain"},{"date":"01/02/2026","high":"22","low":14,"conditions":"Sunny"},{"date":"2026-01-03","high":23,"low":15}],"location":{"city":"Paris","country":42,"coordinates":{"latitude":61.25}}}"#;

fn parse(text: &str) -> Value {
    serde_json::from_str(text).expect("valid JSON")
}

fn bare(schema: &Value) -> Validator {
    jsonschema::options()
        .with_draft(Draft::Draft202012)
        .should_validate_formats(true)
        .with_pattern_options(PatternOptions::regex())
        .build(schema)
        .expect("the schema compiles")
}

fn benches(c: &mut Criterion) {
    let schema = parse(SCHEMA);
    let valid = parse(VALID);
    let invalid = parse(INVALID);

    let fresh = SchemaEngine::builder().cache_capacity(0).build();
    let trusted = SchemaEngine::builder()
        .trust(Trust::Trusted)
        .build()
        .compile(&schema)
        .expect("the schema compiles");
    let untrusted = SchemaEngine::builder()
        .trust(Trust::Untrusted)
        .build()
        .compile(&schema)
        .expect("the schema compiles");
    let validator = bare(&schema);

    // The instances are what the benchmarks say they are.
    assert!(trusted.validate(&valid).is_ok());
    assert!(untrusted.validate(&valid).is_ok());
    assert!(validator.is_valid(&valid));
    let report = untrusted.validate(&invalid).expect_err("invalid");
    assert_eq!(report.violations().len(), 8, "{report}");
    assert_eq!(validator.iter_errors(&invalid).count(), 8);

    let mut group = c.benchmark_group("get_weather_data");
    group.bench_function("compile/engine", |b| {
        b.iter(|| fresh.compile(black_box(&schema)).expect("compiles"))
    });
    group.bench_function("compile/bare_jsonschema", |b| {
        b.iter(|| bare(black_box(&schema)))
    });
    group.bench_function("validate_valid/engine_trusted", |b| {
        b.iter(|| trusted.validate(black_box(&valid)).is_ok())
    });
    group.bench_function("validate_valid/engine_untrusted", |b| {
        b.iter(|| untrusted.validate(black_box(&valid)).is_ok())
    });
    group.bench_function("validate_valid/bare_is_valid", |b| {
        b.iter(|| validator.is_valid(black_box(&valid)))
    });
    group.bench_function("validate_invalid/engine", |b| {
        b.iter(|| {
            untrusted
                .validate(black_box(&invalid))
                .expect_err("invalid")
        })
    });
    group.bench_function("validate_invalid/bare_iter_errors", |b| {
        b.iter(|| {
            validator
                .iter_errors(black_box(&invalid))
                .map(|error| error.to_string())
                .collect::<Vec<String>>()
        })
    });
    group.bench_function("parse/serde_json", |b| b.iter(|| parse(black_box(VALID))));
    group.finish();

    // A schema a hostile server can list as often as it likes: a reference to
    // the 2020-12 meta-schema, a large recursive schema (registered locally,
    // nothing fetched). The engine's extra work is its bounds, above all the
    // expansion estimate, which unrolls the recursion to the instance depth.
    let meta_ref = json!({"$ref": "https://json-schema.org/draft/2020-12/schema"});
    let mut group = c.benchmark_group("meta_schema_ref");
    group.sample_size(20);
    group.bench_function("compile/engine", |b| {
        b.iter(|| fresh.compile(black_box(&meta_ref)).expect("compiles"))
    });
    group.bench_function("compile/bare_jsonschema", |b| {
        b.iter(|| bare(black_box(&meta_ref)))
    });
    group.finish();
}

criterion_group!(validation, benches);
criterion_main!(validation);
