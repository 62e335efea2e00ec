//! Shared by the tests of hostile schemas (`refusals.rs`, `schema_cost.rs`):
//! the time they allow, and the check that the engine still serves.

#![allow(dead_code, unreachable_pub)]

use std::time::{Duration, Instant};

use serde_json::json;
use toolshape_schema::SchemaEngine;

/// What "quickly" allows. Not a speed target (benchmarks measure those): a
/// hostile schema left unchecked runs for minutes or forever, while a debug
/// build on a loaded 2-core machine has been seen to need 6.7 s for the
/// intricate schema (beside other test builds; 1.3 s for the bounded
/// backtracking case on a faster one), so the bound leaves room for load.
pub const QUICKLY: Duration = Duration::from_secs(20);

/// Fails the test when `f` takes [`QUICKLY`] or more; returns what it returned.
pub fn quickly<T>(what: &str, f: impl FnOnce() -> T) -> T {
    let start = Instant::now();
    let result = f();
    let took = start.elapsed();
    assert!(took < QUICKLY, "{what} took {took:?}");
    result
}

/// The engine still works after whatever came before.
pub fn still_serves(engine: &SchemaEngine) {
    let schema = engine
        .compile(&json!({"type": "object", "required": ["a"]}))
        .unwrap();
    assert!(schema.validate(&json!({"a": 1})).is_ok());
    assert!(schema.validate(&json!({})).is_err());
}
