//! Every hostile schema or instance ends quickly with a clear error, and the
//! process survives to compile and validate the next one.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod hostile_common;

use std::io::Read;
use std::net::TcpListener;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use toolshape_schema::{Limits, SchemaEngine, SchemaErrorKind, ValidationErrorKind};

use hostile_common::{quickly, still_serves};

/// A listener on 127.0.0.1 that counts connections: proof that nothing was fetched.
struct Canary {
    port: u16,
    hits: Arc<AtomicUsize>,
}

impl Canary {
    fn start() -> Canary {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let hits = Arc::new(AtomicUsize::new(0));
        let counter = Arc::clone(&hits);
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                counter.fetch_add(1, Ordering::SeqCst);
                let mut buf = [0u8; 1024];
                let mut stream = stream;
                let _ = stream.read(&mut buf);
            }
        });
        Canary { port, hits }
    }
}

#[test]
fn remote_ref_is_refused_and_never_fetched() {
    let canary = Canary::start();
    let engine = SchemaEngine::default();
    for uri in [
        format!("http://127.0.0.1:{}/schema.json", canary.port),
        format!("http://localhost:{}/schema.json#/$defs/x", canary.port),
        "file:///etc/passwd".to_owned(),
        "urn:example:thing".to_owned(),
    ] {
        let schema = json!({"type": "object", "properties": {"a": {"$ref": uri}}});
        let error = quickly("remote ref", || engine.compile(&schema)).unwrap_err();
        match error.kind() {
            SchemaErrorKind::RemoteReference { uri: refused } => {
                assert!(
                    uri.starts_with(refused.as_str())
                        || refused.contains("etc/passwd")
                        || refused.starts_with("urn:"),
                    "{refused} vs {uri}"
                );
            }
            other => panic!("expected a refused reference, got {other:?}"),
        }
        assert!(error.to_string().contains("refused"), "{error}");
    }
    // Relative to a remote base.
    let schema =
        json!({"$id": format!("http://127.0.0.1:{}/root.json", canary.port), "$ref": "other.json"});
    let error = engine.compile(&schema).unwrap_err();
    assert!(
        matches!(error.kind(), SchemaErrorKind::RemoteReference { uri } if uri.ends_with("/other.json")),
        "{error}"
    );
    // The network resolver allowlist does not let loopback through either.
    #[cfg(feature = "network")]
    {
        let networked = SchemaEngine::builder()
            .network(toolshape_schema::NetworkPolicy::allow_hosts(["127.0.0.1"]))
            .build();
        let schema = json!({"$ref": format!("http://127.0.0.1:{}/x.json", canary.port)});
        assert!(networked.compile(&schema).is_err());
    }
    std::thread::sleep(Duration::from_millis(50));
    assert_eq!(
        canary.hits.load(Ordering::SeqCst),
        0,
        "something was fetched"
    );
    still_serves(&engine);
}

#[test]
fn registered_documents_resolve_without_fetching() {
    let engine = SchemaEngine::builder()
        .document(
            "https://schemas.example.com/point.json",
            json!({"type": "object", "required": ["x", "y"]}),
        )
        .try_build()
        .unwrap();
    let schema = engine
        .compile(
            &json!({"type": "array", "items": {"$ref": "https://schemas.example.com/point.json"}}),
        )
        .unwrap();
    assert!(schema.validate(&json!([{"x": 1, "y": 2}])).is_ok());
    assert!(schema.validate(&json!([{"x": 1}])).is_err());
}

#[test]
fn oversized_too_deep_and_too_many_subschemas_are_refused() {
    let mut limits = Limits::default();
    limits.max_schema_bytes = 100_000;
    limits.max_schema_depth = 32;
    limits.max_subschemas = 500;
    let engine = SchemaEngine::builder().limits(limits).build();

    let big = json!({"type": "string", "description": "x".repeat(200_000)});
    let error = quickly("oversized", || engine.compile(&big)).unwrap_err();
    assert!(
        matches!(error.kind(), SchemaErrorKind::TooLarge { limit: 100_000 }),
        "{error}"
    );

    let mut deep = json!({"type": "integer"});
    for _ in 0..40 {
        deep = json!({"type": "array", "items": deep});
    }
    let error = quickly("too deep", || engine.compile(&deep)).unwrap_err();
    assert!(
        matches!(error.kind(), SchemaErrorKind::TooDeep { .. }),
        "{error}"
    );
    assert!(error.to_string().contains("/items/items"), "{error}");

    let wide: serde_json::Map<String, Value> = (0..600)
        .map(|i| (format!("p{i}"), json!({"type": "integer"})))
        .collect();
    let error = quickly("too many", || {
        engine.compile(&json!({"type": "object", "properties": wide}))
    })
    .unwrap_err();
    assert!(
        matches!(
            error.kind(),
            SchemaErrorKind::TooManySubschemas { limit: 500 }
        ),
        "{error}"
    );
    still_serves(&engine);
}

#[test]
fn catastrophic_pattern_is_refused() {
    let schema = json!({
        "type": "object",
        "patternProperties": {r"^(\w+\s?)*(?<!x)$": {"type": "string"}}
    });
    let instance: serde_json::Map<String, Value> = (0..200)
        .map(|i| (format!("{}x", "word ".repeat(i % 30)), json!(1)))
        .collect();
    let engine = SchemaEngine::default();
    let error = quickly("catastrophic pattern", || engine.compile(&schema)).unwrap_err();
    assert!(
        matches!(error.kind(), SchemaErrorKind::BacktrackingPattern { .. }),
        "{error}"
    );
    assert!(error.to_string().contains("/patternProperties/"), "{error}");
    // Opting into backtracking runs it under a tight backtrack limit instead: still quick.
    let lenient = SchemaEngine::builder()
        .allow_backtracking_patterns(10_000)
        .build();
    let compiled = lenient.compile(&schema).unwrap();
    let _ = quickly("backtracking limit", || {
        compiled.validate(&Value::Object(instance))
    });
    still_serves(&engine);
}

#[test]
fn very_deep_instance_fails_without_overflowing() {
    let engine = SchemaEngine::default();
    let schema = engine
        .compile(&json!({"type": "array", "items": {"$ref": "#"}}))
        .unwrap();
    // Built and dropped on a large stack: serde_json's own Drop recurses.
    let result = std::thread::Builder::new()
        .stack_size(512 * 1024 * 1024)
        .spawn(move || {
            let mut instance = json!([]);
            for _ in 0..100_000 {
                instance = Value::Array(vec![instance]);
            }
            let outcome = quickly("deep instance", || schema.validate(&instance));
            outcome.map_err(|e| e.kind().clone())
        })
        .unwrap()
        .join()
        .unwrap();
    assert!(
        matches!(
            result,
            Err(ValidationErrorKind::InstanceTooDeep { limit: 128 })
        ),
        "{result:?}"
    );
    still_serves(&engine);
}

#[test]
fn overrunning_validation_is_cut_off_and_quarantined() {
    let mut limits = Limits::default();
    limits.validation_budget = Duration::from_millis(50);
    limits.inline_work = 0;
    let engine = SchemaEngine::builder()
        .limits(limits)
        .allow_backtracking_patterns(usize::MAX)
        .build();
    let schema = engine
        .compile(&json!({"type": "string", "pattern": r"^(a|aa)+\1$"}))
        .unwrap();
    // Exponential in a backtracking engine: seconds of work, cut off after 50 ms.
    let slow = json!(format!("{}!", "a".repeat(34)));
    let error = quickly("over budget", || schema.validate(&slow)).unwrap_err();
    assert!(
        matches!(error.kind(), ValidationErrorKind::BudgetExceeded { .. }),
        "{error}"
    );
    assert!(schema.is_quarantined());
    let error = quickly("quarantined", || schema.validate(&json!(["a"]))).unwrap_err();
    assert!(
        matches!(error.kind(), ValidationErrorKind::Quarantined),
        "{error}"
    );
    still_serves(&engine);
}

#[test]
fn reports_are_capped_and_do_not_echo_large_data() {
    let engine = SchemaEngine::default();
    let schema = engine
        .compile(&json!({"type": "array", "items": {"type": "integer"}}))
        .unwrap();
    let secret = "s".repeat(10_000);
    let instance: Vec<Value> = (0..100).map(|_| json!(secret)).collect();
    let error = schema.validate(&Value::Array(instance)).unwrap_err();
    let violations = error.violations();
    assert_eq!(violations.len(), engine.limits().max_violations);
    assert!(matches!(
        error.kind(),
        ValidationErrorKind::Mismatch {
            truncated: true,
            ..
        }
    ));
    assert_eq!(violations[3].instance_path, "/3");
    assert_eq!(violations[3].keyword, "type");
    assert!(error.to_string().len() < 8_000);
    assert!(!error.to_string().contains(&"s".repeat(50)), "{error}");
    // Short scalars are quoted.
    let error = schema.validate(&json!([1, "x"])).unwrap_err();
    assert!(error.to_string().contains("\"x\""), "{error}");
}

#[test]
fn unknown_dialect_and_invalid_schema_say_why() {
    let engine = SchemaEngine::default();
    let error = engine
        .compile(&json!({"$schema": "https://example.com/my-dialect"}))
        .unwrap_err();
    assert!(
        matches!(error.kind(), SchemaErrorKind::UnknownDialect(_)),
        "{error}"
    );
    assert!(
        error.to_string().contains("example.com/my-dialect"),
        "{error}"
    );

    let error = engine
        .compile(&json!({"type": "object", "properties": {"a": {"minLength": -1}}}))
        .unwrap_err();
    assert!(
        matches!(error.kind(), SchemaErrorKind::Invalid { .. }),
        "{error}"
    );
    assert!(
        error.to_string().contains("/properties/a/minLength"),
        "{error}"
    );
}

/// A schema whose `$id` takes the URI of a document the engine holds (a
/// meta-schema, anything under json-schema.org, a registered document) is
/// refused: the validator library cannot tell the two apart (this fuzz
/// input made it fail). Other `$id`s compile as before.
/// Two resources resolving to one URI (the same relative `$id` under two
/// bases that agree): the fuzzer's input of 2026-11-28 made jsonschema
/// 0.61.2 panic (`ref_.rs:241`); refused before the library sees it.
#[test]
fn two_resources_at_one_uri_are_refused() {
    let engine = SchemaEngine::default();
    let found = json!({
        "$defs": {"A": {"$id": "child1", "allOf": [
            {"$anchor": "my_anchor", "$defs": {"A": {"$id": "child1", "allOf": [
                {"$anchor": "my_anchor", "$id": "child2", "type": "number"},
                {"$anchor": "my_anchor", "type": "string"}]}},
             "$id": "child2", "type": "number"},
            {"$anchor": "my_anchor", "type": "string"}]}},
        "$id": "http://localhost:1234/draft2020-12/foobar",
        "$ref": "child1#my_anchor",
        "$schema": "https://json-schema.org/draft/2020-12/schema"
    });
    let error = engine.compile(&found).unwrap_err();
    assert!(
        matches!(error.kind(), SchemaErrorKind::Unresolvable(why) if why.contains("two resources")),
        "{error}"
    );
    // The same relative `$id` under two different bases is two URIs.
    let apart = json!({
        "$id": "https://example.com/root/",
        "$defs": {
            "a": {"$id": "a/", "$defs": {"x": {"$id": "item", "type": "string"}}},
            "b": {"$id": "b/", "$defs": {"x": {"$id": "item", "type": "number"}}}
        },
        "$ref": "a/item"
    });
    assert!(engine.compile(&apart).is_ok());
}

#[test]
fn an_id_taking_a_held_documents_uri_is_refused() {
    let engine = SchemaEngine::default();
    let found = json!({
        "$defs": {"foo": {"$dynamicAnchor": "items", "type": "string"}},
        "$id": "https://json-schema.org/draft/2020-12/schema",
        "items": {"$ref": "#items"},
        "type": "array"
    });
    let nested = json!({
        "type": "object",
        "properties": {"a": {"$id": "http://json-schema.org/draft-07/schema#", "type": "string"}}
    });
    for schema in [found, nested] {
        let error = engine.compile(&schema).unwrap_err();
        assert!(
            matches!(error.kind(), SchemaErrorKind::Unresolvable(why) if why.contains("already holds")),
            "{error}"
        );
    }
    // A property named like a data keyword is a schema all the same.
    let named_default = json!({
        "properties": {"default": {"$id": "https://json-schema.org/draft/2020-12/schema"}}
    });
    assert!(engine.compile(&named_default).is_err());
    // Instance data that happens to hold such an `$id` is data.
    let held_uri = json!({"$id": "https://json-schema.org/draft/2020-12/schema"});
    for data in [
        json!({"const": held_uri}),
        json!({"enum": [held_uri, 1]}),
        json!({"type": "object", "default": held_uri, "examples": [held_uri]}),
        json!({"properties": {"a": {"default": {"nested": [held_uri]}}}}),
    ] {
        let compiled = engine.compile(&data).unwrap();
        assert!(compiled.validate(&held_uri).is_ok(), "{data}");
    }
    let registered = SchemaEngine::builder()
        .document("https://example.com/shared", json!({"type": "string"}))
        .build();
    let taken = json!({"$id": "https://example.com/shared#", "type": "integer"});
    assert!(registered.compile(&taken).is_err());
    still_serves(&registered);
    let own = json!({"$id": "https://example.com/own", "items": {"$ref": "#/$defs/s"}, "$defs": {"s": {"type": "string"}}});
    let compiled = engine.compile(&own).unwrap();
    assert!(compiled.validate(&json!(["a"])).is_ok());
    assert!(compiled.validate(&json!([1])).is_err());
    still_serves(&engine);
}

#[test]
fn patterns_costly_to_compile_are_refused_within_their_budget() {
    let mut limits = Limits::default();
    limits.pattern_budget = Duration::from_millis(200);
    let engine = SchemaEngine::builder().limits(limits).try_build().unwrap();
    // Each of these takes about 6 ms to compile in a release build (more
    // in a debug one): 2,000 of them, under 100 KB of schema, about 12 s
    // unbounded, more when each is costlier. Any order of the keys works.
    let costly: serde_json::Map<String, Value> = (0..2_000)
        .map(|i| {
            (
                format!("p{i}(\\p{{L}}|\\p{{N}}){{20}}"),
                json!({"type": "string"}),
            )
        })
        .collect();
    let error = quickly("costly patterns", || {
        engine.compile(&json!({"type": "object", "patternProperties": costly}))
    })
    .unwrap_err();
    assert!(
        matches!(
            error.kind(),
            SchemaErrorKind::PatternsTooCostly { budget_ms: 200, .. }
        ),
        "{error}"
    );
    assert!(error.to_string().contains("/patternProperties/"), "{error}");
    // A cheap pattern used many times is checked once.
    let repeated: serde_json::Map<String, Value> = (0..2_000)
        .map(|i| {
            (
                format!("p{i}"),
                json!({"type": "string", "pattern": "^[a-z]{1,64}$"}),
            )
        })
        .collect();
    let compiled = engine.compile(&json!({"type": "object", "properties": repeated}));
    assert!(compiled.is_ok(), "{:?}", compiled.err());
    still_serves(&engine);
}
