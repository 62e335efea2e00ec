//! Request identifiers.

use std::fmt;

use serde::de::{self, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The `id` of a JSON-RPC request: a string or an integer.
///
/// The variant is kept exactly as received, so a response echoes `"1"` for
/// `"1"` and `1` for `1`; the two are different ids (`!=`, different hashes).
/// MCP forbids `null` ids, and fractional or out-of-range (beyond `i64`)
/// numbers cannot be echoed faithfully, so deserialization rejects them.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RequestId {
    /// A string id, e.g. `"call-1"`.
    String(String),
    /// An integer id, e.g. `7`.
    Number(i64),
}

/// A progress token (`_meta.progressToken`): like a request id, a string or
/// an integer chosen by the requester.
pub type ProgressToken = RequestId;

impl RequestId {
    /// The id as a string slice, if it is a string id.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Self::String(text) => Some(text),
            Self::Number(_) => None,
        }
    }

    /// The id as an integer, if it is an integer id.
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Self::String(_) => None,
            Self::Number(number) => Some(*number),
        }
    }
}

/// Strings print verbatim (no quotes), integers in decimal.
impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::String(text) => f.write_str(text),
            Self::Number(number) => write!(f, "{number}"),
        }
    }
}

impl From<i64> for RequestId {
    fn from(number: i64) -> Self {
        Self::Number(number)
    }
}

impl From<i32> for RequestId {
    fn from(number: i32) -> Self {
        Self::Number(i64::from(number))
    }
}

impl From<String> for RequestId {
    fn from(text: String) -> Self {
        Self::String(text)
    }
}

impl From<&str> for RequestId {
    fn from(text: &str) -> Self {
        Self::String(text.to_owned())
    }
}

impl Serialize for RequestId {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::String(text) => serializer.serialize_str(text),
            Self::Number(number) => serializer.serialize_i64(*number),
        }
    }
}

impl<'de> Deserialize<'de> for RequestId {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(RequestIdVisitor)
    }
}

struct RequestIdVisitor;

impl Visitor<'_> for RequestIdVisitor {
    type Value = RequestId;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string or an integer that fits in 64 bits")
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<RequestId, E> {
        Ok(RequestId::String(text.to_owned()))
    }

    fn visit_string<E: de::Error>(self, text: String) -> Result<RequestId, E> {
        Ok(RequestId::String(text))
    }

    fn visit_i64<E: de::Error>(self, number: i64) -> Result<RequestId, E> {
        Ok(RequestId::Number(number))
    }

    fn visit_u64<E: de::Error>(self, number: u64) -> Result<RequestId, E> {
        i64::try_from(number)
            .map(RequestId::Number)
            .map_err(|_| E::invalid_value(de::Unexpected::Unsigned(number), &self))
    }
}
