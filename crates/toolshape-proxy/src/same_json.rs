//! Whether a text is the JSON of a value already in hand, decided while the
//! text is read: nothing is built, so recognising an upstream's text block
//! as the mirror of its `structuredContent` costs a scan, not a second parse
//! into values.

use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};

/// Whether `text` is JSON equal to `expected` (numbers equal as `serde_json`
/// compares them; object members in any order, each once).
pub(crate) fn is_json_of(text: &str, expected: &Value) -> bool {
    matches_text(text, Expected::Value(expected))
}

/// Whether `text` is JSON equal to `{"result": expected}`.
pub(crate) fn is_wrapped_json_of(text: &str, expected: &Value, key: &str) -> bool {
    matches_text(text, Expected::Wrapped(key, expected))
}

fn matches_text(text: &str, expected: Expected<'_>) -> bool {
    let mut reader = serde_json::Deserializer::from_str(text);
    matches!(expected.deserialize(&mut reader), Ok(true)) && reader.end().is_ok()
}

/// What the text must be.
#[derive(Clone, Copy)]
enum Expected<'a> {
    /// This value.
    Value(&'a Value),
    /// An object with this one key, holding this value.
    Wrapped(&'a str, &'a Value),
}

impl<'de> DeserializeSeed<'de> for Expected<'_> {
    type Value = bool;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<bool, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Expected<'_> {
    type Value = bool;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<bool, E> {
        Ok(matches!(self, Expected::Value(Value::Bool(b)) if *b == v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<bool, E> {
        Ok(self.number_is(&Number::from(v)))
    }

    fn visit_u64<E>(self, v: u64) -> Result<bool, E> {
        Ok(self.number_is(&Number::from(v)))
    }

    fn visit_f64<E>(self, v: f64) -> Result<bool, E> {
        Ok(Number::from_f64(v).is_some_and(|n| self.number_is(&n)))
    }

    fn visit_str<E>(self, v: &str) -> Result<bool, E> {
        Ok(matches!(self, Expected::Value(Value::String(s)) if s == v))
    }

    fn visit_unit<E>(self) -> Result<bool, E> {
        Ok(matches!(self, Expected::Value(Value::Null)))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<bool, A::Error> {
        let Expected::Value(Value::Array(items)) = self else {
            while seq.next_element::<IgnoredAny>()?.is_some() {}
            return Ok(false);
        };
        let mut same = true;
        let mut seen = 0;
        loop {
            let element = match items.get(seen) {
                Some(item) if same => seq.next_element_seed(Expected::Value(item))?,
                _ => seq.next_element::<IgnoredAny>()?.map(|_| false),
            };
            let Some(element_same) = element else { break };
            same &= element_same;
            seen += 1;
        }
        Ok(same && seen == items.len())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<bool, A::Error> {
        let object: Option<ObjectView<'_>> = match self {
            Expected::Value(Value::Object(object)) => Some(ObjectView::Object(object)),
            Expected::Wrapped(key, value) => Some(ObjectView::One(key, value)),
            Expected::Value(_) => None,
        };
        let Some(object) = object else {
            while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
            return Ok(false);
        };
        let mut same = true;
        let mut seen = 0;
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            match object.get(&key) {
                Some(value) if same => same &= map.next_value_seed(Expected::Value(value))?,
                _ => {
                    map.next_value::<IgnoredAny>()?;
                    same = false;
                }
            }
            seen += 1;
        }
        // Each key once: as many members as expected, all of them found.
        Ok(same && seen == object.len())
    }
}

impl Expected<'_> {
    fn number_is(self, number: &Number) -> bool {
        matches!(self, Expected::Value(Value::Number(n)) if n == number)
    }
}

/// The members an object in the text must have.
enum ObjectView<'a> {
    Object(&'a Map<String, Value>),
    One(&'a str, &'a Value),
}

impl ObjectView<'_> {
    fn get(&self, key: &str) -> Option<&Value> {
        match self {
            ObjectView::Object(object) => object.get(key),
            ObjectView::One(only, value) => (*only == key).then_some(*value),
        }
    }

    fn len(&self) -> usize {
        match self {
            ObjectView::Object(object) => object.len(),
            ObjectView::One(..) => 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_same_json_in_any_member_order_and_spacing() {
        let value = json!({"b": [1, 2.5, "x", null, true], "a": {"c": -3}});
        assert!(is_json_of(
            r#"{"a":{"c":-3},"b":[1,2.5,"x",null,true]}"#,
            &value
        ));
        assert!(is_json_of(
            "{ \"b\" : [1, 2.5, \"x\", null, true] ,\n \"a\": {\"c\": -3} }",
            &value
        ));
        assert!(is_json_of(r#""\u0041""#, &json!("A")));
        assert!(is_json_of("3", &json!(3)));
    }

    #[test]
    fn anything_else_is_not() {
        let value = json!({"a": [1, 2]});
        for text in [
            r#"{"a":[1,2,3]}"#,
            r#"{"a":[1]}"#,
            r#"{"a":[1,2],"b":1}"#,
            r#"{"a":[1,2],"a":[1,2]}"#,
            r#"{"a":[2,1]}"#,
            r#"{"a":[1,2]} trailing"#,
            r#"{"a":[1,2.0]}"#,
            "not json",
            "",
            "[]",
        ] {
            assert!(!is_json_of(text, &value), "{text}");
        }
        assert!(!is_json_of("{}", &json!({"a": 1})));
        assert!(!is_json_of(&"[".repeat(10_000), &json!([])));
    }

    #[test]
    fn the_wrapped_form() {
        let value = json!([1, {"x": "y"}]);
        assert!(is_wrapped_json_of(
            r#"{"result":[1,{"x":"y"}]}"#,
            &value,
            "result"
        ));
        assert!(!is_wrapped_json_of(
            r#"{"result":[1,{"x":"y"}],"more":1}"#,
            &value,
            "result"
        ));
        assert!(!is_wrapped_json_of(
            r#"{"other":[1,{"x":"y"}]}"#,
            &value,
            "result"
        ));
        assert!(!is_wrapped_json_of(r#"[1,{"x":"y"}]"#, &value, "result"));
    }
}
