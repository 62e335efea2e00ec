//! Schema and instance pairs (`[schema, instance]`). Validation ends with a
//! verdict or a typed, bounded refusal; a mismatch lists its violations
//! within the caps; the verdict is the same twice, and the same from a
//! trusted engine (inline, no budget) as from an untrusted one (bounded,
//! budgeted) whenever both reach one, and the same for the instance read
//! from its text ([`InstanceText`], no `Value` built when valid) as for the
//! `Value` serde_json reads from that text; read as the start of a longer
//! text ([`InstanceText::parse_prefix`]), the value is the same and ends
//! where its text does.

#![no_main]

use libfuzzer_sys::fuzz_target;
use toolshape_fuzz::{check_report, json_pair_text, trusted_engine, untrusted_engine, verdict};
use toolshape_schema::InstanceText;

fuzz_target!(|data: &[u8]| {
    let Some((schema, text)) = json_pair_text(data) else {
        return;
    };
    let Ok(instance) = serde_json::from_str::<serde_json::Value>(text) else {
        return;
    };
    let untrusted = untrusted_engine();
    let Ok(compiled) = untrusted.compile(&schema) else {
        return;
    };
    let first = compiled.validate(&instance);
    check_report(untrusted, &first);
    let Ok(read) = InstanceText::parse(text) else {
        panic!("serde_json reads a value from text that InstanceText refuses");
    };
    assert_eq!(
        read.to_value(),
        instance,
        "InstanceText reads another value"
    );
    let followed = format!("{text},0");
    let Ok((prefix, end)) = InstanceText::parse_prefix(&followed) else {
        panic!("InstanceText reads a value it refuses as the start of a text");
    };
    assert_eq!(prefix.to_value(), instance, "a prefix reads another value");
    assert_eq!(end, text.trim_end().len(), "a prefix ends elsewhere");
    let from_text = compiled.validate_text(&read);
    check_report(untrusted, &from_text);
    if let (Some(a), Some(b)) = (verdict(&first), verdict(&from_text)) {
        assert_eq!(
            a, b,
            "the value and its text disagree: {first:?} / {from_text:?}"
        );
    }
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
