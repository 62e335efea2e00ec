//! A tool result kept exactly as its server sent it, for a gateway to relay
//! unchanged to a peer on the same revision, and the reading that tells
//! whether it can be.

use std::cell::Cell;
use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Number, Value};
use toolshape_protocol::ProtocolVersion;

/// A checked tool result as its server wrote it, with the revision it was
/// written for. A client keeps one ([`ToolResult::take_received`]) only when
/// nothing in the result needs reshaping and every part of it reads one way
/// only: `isError` false, its `structuredContent` matched the tool's
/// outputSchema and was not wrapped, no object in it repeats a member name,
/// its content is nothing but the text block repeating `structuredContent`,
/// it has no `_meta`, its `resultType` is the one its revision requires, and
/// it holds no line break outside strings (it fits one line of stdio).
///
/// A server writes it as it came to a peer on the same revision
/// ([`ToolOutput::relaying`](crate::ToolOutput::relaying)), instead of
/// serializing the values again.
///
/// [`ToolResult::take_received`]: super::ToolResult::take_received
#[derive(Clone)]
pub struct ReceivedResult {
    pub(crate) version: ProtocolVersion,
    /// Holds the result's text from `start` on: JSON text a JSON parser
    /// read as exactly one value.
    pub(crate) json: Box<str>,
    pub(crate) start: usize,
    /// What its `structuredContent` is.
    pub(crate) structured: ReceivedValue,
}

/// What a received result's `structuredContent` is, as far as a revision's
/// shape rules ask.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ReceivedValue {
    /// It has none.
    None,
    /// A JSON object.
    Object,
    /// Any other JSON value (`null` included).
    Other,
}

impl ReceivedValue {
    /// Of `structuredContent`'s JSON text, if the result has one.
    pub(crate) fn of(json: Option<&str>) -> Self {
        match json {
            None => Self::None,
            Some(json) if json.trim_start().starts_with('{') => Self::Object,
            Some(_) => Self::Other,
        }
    }
}

impl ReceivedResult {
    /// The revision the result was written for.
    pub fn version(&self) -> ProtocolVersion {
        self.version
    }

    /// Whether it can go as written to a peer on `version`, for a tool whose
    /// output schema is `object_rooted` (or absent): written for that
    /// revision, and a `structuredContent` the revision has, of a kind it
    /// allows, as this server would send it unwrapped. A result of an older
    /// revision's server may hold what that revision forbids (an array
    /// before 2026-07-28, any value before 2025-06-18), and a tool whose
    /// schema is not object-rooted is listed wrapped before 2026-07-28.
    pub(crate) fn fits(&self, version: ProtocolVersion, object_rooted: bool) -> bool {
        self.version == version
            && match self.structured {
                ReceivedValue::None => true,
                _ if version.allows_any_structured_content() => true,
                ReceivedValue::Object => version.supports_structured_output() && object_rooted,
                ReceivedValue::Other => false,
            }
    }

    /// The result's JSON text.
    pub fn json(&self) -> &str {
        self.json.get(self.start..).unwrap_or_default()
    }

    /// Its `structuredContent` as a value, read again from its text (for a
    /// peer on another revision, when the relaying caller kept no value).
    pub(crate) fn structured_value(&self) -> Option<Value> {
        #[derive(serde::Deserialize)]
        struct Structured<'a> {
            /// Present as `null` is `Some`, not `None`; kept as text, so that
            /// its depth counts from itself, as when it was first read.
            #[serde(
                rename = "structuredContent",
                borrow,
                default,
                deserialize_with = "present"
            )]
            structured_content: Option<&'a RawValue>,
        }
        fn present<'de, D: serde::Deserializer<'de>>(
            deserializer: D,
        ) -> Result<Option<&'de RawValue>, D::Error> {
            <&RawValue as serde::Deserialize>::deserialize(deserializer).map(Some)
        }
        let raw = serde_json::from_str::<Structured<'_>>(self.json())
            .ok()?
            .structured_content?;
        serde_json::from_str(raw.get()).ok()
    }
}

impl fmt::Debug for ReceivedResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReceivedResult")
            .field("version", &self.version)
            .field("bytes", &self.json().len())
            .finish()
    }
}

impl PartialEq for ReceivedResult {
    fn eq(&self, other: &Self) -> bool {
        self.version == other.version && self.json() == other.json()
    }
}

/// Whether a result's JSON text fits one line: a line break can only be
/// whitespace between tokens (inside strings it is escaped).
pub(super) fn is_one_line(json: &str) -> bool {
    memchr::memchr2(b'\n', b'\r', json.as_bytes()).is_none()
}

/// Reads JSON text into a value, and says whether it reads one way only:
/// `false` when an object repeats a member name (this reader keeps the last
/// one, as serde_json does; other readers keep the first).
pub(super) fn read_value(json: &str) -> serde_json::Result<(Value, bool)> {
    let repeated = Cell::new(false);
    let mut deserializer = serde_json::Deserializer::from_str(json);
    let value = Noting(&repeated).deserialize(&mut deserializer)?;
    deserializer.end()?;
    Ok((value, !repeated.get()))
}

/// A value's reader that notes repeated member names.
#[derive(Clone, Copy)]
struct Noting<'a>(&'a Cell<bool>);

impl<'de> DeserializeSeed<'de> for Noting<'_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Noting<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, value: bool) -> Result<Value, E> {
        Ok(Value::Bool(value))
    }

    fn visit_i64<E>(self, value: i64) -> Result<Value, E> {
        Ok(Value::Number(value.into()))
    }

    fn visit_u64<E>(self, value: u64) -> Result<Value, E> {
        Ok(Value::Number(value.into()))
    }

    fn visit_f64<E>(self, value: f64) -> Result<Value, E> {
        Ok(Number::from_f64(value).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E>(self, value: &str) -> Result<Value, E> {
        Ok(Value::String(value.to_owned()))
    }

    fn visit_string<E>(self, value: String) -> Result<Value, E> {
        Ok(Value::String(value))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut items: A) -> Result<Value, A::Error> {
        let mut array = Vec::with_capacity(items.size_hint().unwrap_or(0).min(64));
        while let Some(item) = items.next_element_seed(self)? {
            array.push(item);
        }
        Ok(Value::Array(array))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut members: A) -> Result<Value, A::Error> {
        let mut object = Map::new();
        while let Some(name) = members.next_key::<String>()? {
            let value = members.next_value_seed(self)?;
            if object.insert(name, value).is_some() {
                self.0.set(true);
            }
        }
        Ok(Value::Object(object))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn values_read_as_serde_json_reads_them() {
        let text = r#"{"a":[1,-2,3.5,1e400,"x\"y",null,true,{"b":{}}],"c":18446744073709551615}"#;
        // 1e400 is out of range for serde_json: both readers refuse it.
        assert!(read_value(text).is_err());
        assert!(serde_json::from_str::<Value>(text).is_err());
        let text = r#" {"a":[1,-2,3.5,"x\"y\u00e9",null,true,{"b":{}}],"c":18446744073709551615} "#;
        let (value, one_way) = read_value(text).unwrap();
        assert_eq!(value, serde_json::from_str::<Value>(text).unwrap());
        assert!(one_way);
        assert!(read_value(r#"{"a":1} x"#).is_err());
    }

    #[test]
    fn a_repeated_member_name_anywhere_is_noted() {
        let (value, one_way) = read_value(r#"{"a":1,"a":2}"#).unwrap();
        assert_eq!(value, json!({"a": 2}));
        assert!(!one_way);
        let (_, one_way) = read_value(r#"[{"x":{"b":1,"c":2,"b":3}}]"#).unwrap();
        assert!(!one_way);
        // The same name in different objects is not a repetition.
        let (_, one_way) = read_value(r#"{"a":{"a":1},"b":{"a":2}}"#).unwrap();
        assert!(one_way);
    }

    #[test]
    fn a_result_goes_as_written_only_in_the_shape_its_revision_allows() {
        use ProtocolVersion::{V2025_03_26, V2025_11_25, V2026_07_28};
        let of = |version, structured| ReceivedResult {
            version,
            json: "{}".into(),
            start: 0,
            structured,
        };
        let object = of(V2025_11_25, ReceivedValue::Object);
        assert!(object.fits(V2025_11_25, true));
        // Listed wrapped (its schema is not object-rooted), or another revision.
        assert!(!object.fits(V2025_11_25, false));
        assert!(!object.fits(V2026_07_28, true));
        assert!(!of(V2025_11_25, ReceivedValue::Other).fits(V2025_11_25, true));
        assert!(of(V2026_07_28, ReceivedValue::Other).fits(V2026_07_28, false));
        // 2025-03-26 has no structuredContent at all.
        assert!(!of(V2025_03_26, ReceivedValue::Object).fits(V2025_03_26, true));
        assert!(of(V2025_03_26, ReceivedValue::None).fits(V2025_03_26, true));
        assert_eq!(ReceivedValue::of(Some(" {}")), ReceivedValue::Object);
        assert_eq!(ReceivedValue::of(Some("null")), ReceivedValue::Other);
        assert_eq!(ReceivedValue::of(None), ReceivedValue::None);
    }

    #[test]
    fn a_relayed_results_structured_content_is_read_again_null_included() {
        let received = |json: &str| ReceivedResult {
            version: ProtocolVersion::V2026_07_28,
            json: json.into(),
            start: 0,
            structured: ReceivedValue::Other,
        };
        let null = received(r#"{"content":[],"structuredContent":null}"#);
        assert_eq!(null.structured_value(), Some(Value::Null));
        let array = received(r#"{"structuredContent":[1,{"a":2}],"content":[]}"#);
        assert_eq!(array.structured_value(), Some(json!([1, {"a": 2}])));
        assert_eq!(received(r#"{"content":[]}"#).structured_value(), None);
        // As deep as a `Value` read on its own allows: the result around it
        // does not count.
        let deep = format!("{}1{}", "[".repeat(127), "]".repeat(127));
        let expected: Value = serde_json::from_str(&deep).unwrap();
        let result = format!(r#"{{"content":[],"structuredContent":{deep}}}"#);
        assert_eq!(received(&result).structured_value(), Some(expected));
    }

    #[test]
    fn only_line_breaks_outside_strings_are_found() {
        assert!(is_one_line(r#"{"text":"two\nlines"}"#));
        assert!(!is_one_line("{\"a\":\n1}"));
        assert!(!is_one_line("{\"a\":\r1}"));
    }
}
