//! What the fuzz targets share: one runtime, one server with a small
//! toolset served over in-memory streams, and the schema engines.
//!
//! Every helper here panics on a broken property: a panic is what libFuzzer
//! records as a finding.

#![forbid(unsafe_code)]

pub mod lines;
pub mod server;

use std::sync::OnceLock;

use serde_json::Value;
use toolshape_schema::{SchemaEngine, Trust, ValidationError, ValidationErrorKind};

/// The runtime every async target runs on: one thread, a timer.
pub fn runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        match tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
        {
            Ok(runtime) => runtime,
            Err(error) => panic!("no runtime: {error}"),
        }
    })
}

/// An engine for schemas from outside (the default: untrusted, bounded,
/// budgeted), with a small cache so that memory stays flat over millions of runs.
pub fn untrusted_engine() -> &'static SchemaEngine {
    static ENGINE: OnceLock<SchemaEngine> = OnceLock::new();
    ENGINE.get_or_init(|| SchemaEngine::builder().cache_capacity(32).build())
}

/// An engine for one's own schemas: validation runs inline, without a budget.
pub fn trusted_engine() -> &'static SchemaEngine {
    static ENGINE: OnceLock<SchemaEngine> = OnceLock::new();
    ENGINE.get_or_init(|| {
        SchemaEngine::builder()
            .trust(Trust::Trusted)
            .cache_capacity(32)
            .build()
    })
}

/// The input as one JSON value, if it is one.
pub fn json(data: &[u8]) -> Option<Value> {
    serde_json::from_slice(data).ok()
}

/// The input as a JSON array of exactly two values.
pub fn json_pair(data: &[u8]) -> Option<(Value, Value)> {
    match json(data)? {
        Value::Array(mut pair) if pair.len() == 2 => {
            let second = pair.pop()?;
            let first = pair.pop()?;
            Some((first, second))
        }
        _ => None,
    }
}

/// The input as a JSON array of exactly two values, the second as its text
/// (as written: repeated member names, escapes and spacing kept).
pub fn json_pair_text(data: &[u8]) -> Option<(Value, &str)> {
    let text = std::str::from_utf8(data).ok()?;
    let (first, second): (Value, &serde_json::value::RawValue) = serde_json::from_str(text).ok()?;
    Some((first, second.get()))
}

/// A validation's verdict when it reached one: `Some(true)` valid,
/// `Some(false)` a mismatch, `None` inconclusive (too deep, over budget,
/// quarantined, overloaded).
pub fn verdict(result: &Result<(), ValidationError>) -> Option<bool> {
    match result {
        Ok(()) => Some(true),
        Err(error) => match error.kind() {
            ValidationErrorKind::Mismatch { .. } => Some(false),
            _ => None,
        },
    }
}

/// Checks what every failed validation promises: a mismatch lists at least
/// one violation and at most the engine's cap, each message within its cap.
pub fn check_report(engine: &SchemaEngine, result: &Result<(), ValidationError>) {
    let Err(error) = result else {
        return;
    };
    if let ValidationErrorKind::Mismatch { violations, .. } = error.kind() {
        let limits = engine.limits();
        assert!(!violations.is_empty(), "a mismatch without violations");
        assert!(
            violations.len() <= limits.max_violations,
            "{} violations reported, over the cap of {}",
            violations.len(),
            limits.max_violations
        );
        for violation in violations {
            // The cap, plus the excerpt's ellipsis.
            for text in [
                &violation.message,
                &violation.instance_path,
                &violation.schema_path,
            ] {
                let chars = text.chars().count();
                assert!(
                    chars <= limits.max_message_chars + 1,
                    "a report field of {chars} characters: {text}"
                );
            }
        }
    }
}
