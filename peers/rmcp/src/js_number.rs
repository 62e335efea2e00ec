//! A JSON number written the way JavaScript writes one, so this peer's
//! values read exactly like the other peers'.

use std::borrow::Cow;

use rmcp::schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Serialize, Serializer};

/// Largest magnitude below which every integral `f64` is an exact integer (2^53).
const EXACT_INTEGER_LIMIT: f64 = 9_007_199_254_740_992.0;

/// An `f64` serialized without a fraction when it is integral (`68`, not
/// `68.0`) and as the shortest round-trip decimal otherwise (`79.7`).
/// Its schema is `{"type": "number"}`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct JsNumber(pub f64);

impl Serialize for JsNumber {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let value = self.0;
        if value.fract() == 0.0 && value.abs() < EXACT_INTEGER_LIMIT {
            // Integral and below 2^53: the conversion is exact.
            #[allow(clippy::cast_possible_truncation)]
            let integral = value as i64;
            serializer.serialize_i64(integral)
        } else {
            serializer.serialize_f64(value)
        }
    }
}

impl JsonSchema for JsNumber {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> Cow<'static, str> {
        Cow::Borrowed("JsNumber")
    }

    fn json_schema(_generator: &mut SchemaGenerator) -> Schema {
        json_schema!({ "type": "number" })
    }
}
