//! Small serde helpers shared by the wire types (crate-private).

use serde::{Deserialize, Deserializer, Serializer};

/// Largest integer an IEEE-754 double represents exactly (2^53 - 1).
const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_991.0;

/// Serializes an `f64` the way JavaScript's `JSON.stringify` does: integral
/// values in the safe-integer range are written without a fractional part
/// (`50`, not `50.0`), so numbers survive a round trip unchanged.
pub(crate) fn serialize_js_number<S: Serializer>(
    value: &f64,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    let value = *value;
    if value.fract() == 0.0 && value.abs() <= MAX_SAFE_INTEGER {
        // Exact: the value is integral and within i64 range.
        serializer.serialize_i64(value as i64)
    } else {
        serializer.serialize_f64(value)
    }
}

/// [`serialize_js_number`] for optional fields (used with
/// `skip_serializing_if = "Option::is_none"`, so `None` is never written).
pub(crate) fn serialize_opt_js_number<S: Serializer>(
    value: &Option<f64>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    match value {
        Some(number) => serialize_js_number(number, serializer),
        None => serializer.serialize_none(),
    }
}

/// Deserializes a field that is present into `Some`, even when its value is
/// JSON `null`. Combined with `#[serde(default)]`, this distinguishes an
/// absent field (`None`) from an explicit `null` (`Some(Value::Null)`).
pub(crate) fn deserialize_present<'de, T, D>(deserializer: D) -> Result<Option<T>, D::Error>
where
    T: Deserialize<'de>,
    D: Deserializer<'de>,
{
    T::deserialize(deserializer).map(Some)
}

/// Declares a string-valued enum that keeps values it does not know in an
/// `Other(String)` variant, so newer peers never make deserialization fail.
macro_rules! open_string_enum {
    (
        $(#[$meta:meta])*
        pub enum $name:ident {
            $( $(#[$vmeta:meta])* $variant:ident => $text:literal, )+
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash)]
        pub enum $name {
            $( $(#[$vmeta])* $variant, )+
            /// A value this crate does not know (kept verbatim).
            Other(String),
        }

        impl $name {
            /// The wire spelling of this value.
            pub fn as_str(&self) -> &str {
                match self {
                    $( Self::$variant => $text, )+
                    Self::Other(text) => text,
                }
            }
        }

        impl From<&str> for $name {
            fn from(text: &str) -> Self {
                match text {
                    $( $text => Self::$variant, )+
                    other => Self::Other(other.to_owned()),
                }
            }
        }

        impl From<String> for $name {
            fn from(text: String) -> Self {
                match text.as_str() {
                    $( $text => Self::$variant, )+
                    _ => Self::Other(text),
                }
            }
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl ::serde::Serialize for $name {
            fn serialize<S: ::serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(self.as_str())
            }
        }

        impl<'de> ::serde::Deserialize<'de> for $name {
            fn deserialize<D: ::serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let text = <String as ::serde::Deserialize>::deserialize(deserializer)?;
                Ok(Self::from(text))
            }
        }
    };
}

pub(crate) use open_string_enum;
