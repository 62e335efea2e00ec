//! Schema and instance pairs (`[schema, instance]`). Validation ends with a
//! verdict or a typed, bounded refusal; a mismatch lists its violations
//! within the caps; the verdict is the same twice, and the same from a
//! trusted engine (inline, no budget) as from an untrusted one (bounded,
//! budgeted) whenever both reach one.

#![no_main]

use libfuzzer_sys::fuzz_target;
use toolshape_fuzz::{check_report, json_pair, trusted_engine, untrusted_engine, verdict};

fuzz_target!(|data: &[u8]| {
    let Some((schema, instance)) = json_pair(data) else {
        return;
    };
    let untrusted = untrusted_engine();
    let Ok(compiled) = untrusted.compile(&schema) else {
        return;
    };
    let first = compiled.validate(&instance);
    check_report(untrusted, &first);
    let second = compiled.validate(&instance);
    if let (Some(a), Some(b)) = (verdict(&first), verdict(&second)) {
        assert_eq!(a, b, "the same validation gave two verdicts");
    }
    let trusted = trusted_engine();
    let Ok(inline) = trusted.compile(&schema) else {
        panic!("a schema the untrusted engine compiles, the trusted one refuses");
    };
    let third = inline.validate(&instance);
    check_report(trusted, &third);
    if let (Some(a), Some(b)) = (verdict(&first), verdict(&third)) {
        assert_eq!(
            a, b,
            "trusted and untrusted engines disagree: {first:?} / {third:?}"
        );
    }
});
