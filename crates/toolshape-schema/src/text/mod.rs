//! An instance read from JSON text for validation without building a
//! `serde_json::Value`: one flat vector of entries whose strings borrow the
//! text (only a string with escapes is copied), read by serde_json's own
//! parser (so numbers, strings and errors are exactly those of a `Value`),
//! and handed to the validator through `jsonschema`'s custom-representation
//! traits.

mod node;

use std::fmt;

use jsonschema::json::Node as _;
use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Number, Value};

pub(crate) use node::TextJson;
use node::TextNode;

/// A JSON value read from text, for
/// [`CompiledSchema::validate_text`](crate::CompiledSchema::validate_text):
/// validated without building a `serde_json::Value` of it.
pub struct InstanceText<'a> {
    entries: Vec<Entry<'a>>,
    /// Values in it (member names not counted).
    values: u64,
    /// Deepest nesting of arrays and objects (a scalar root is 0).
    depth: usize,
    /// Whether some object repeats a member name.
    repeated: bool,
    /// The most members of one object in it.
    largest_object: usize,
}

/// One entry: a value, or an object's member name (names and values
/// alternate inside an object). A container's entries follow it, up to `end`.
enum Entry<'a> {
    Null,
    Bool(bool),
    Number(Number),
    Str(&'a str),
    String(Box<str>),
    Array { len: usize, end: usize },
    Object { len: usize, end: usize },
}

impl<'a> InstanceText<'a> {
    /// Reads `text`, one JSON value (whitespace around it allowed), as
    /// serde_json reads a `Value`.
    pub fn parse(text: &'a str) -> serde_json::Result<Self> {
        let mut deserializer = serde_json::Deserializer::from_str(text);
        let read = Self::read(&mut deserializer, text.len())?;
        deserializer.end()?;
        Ok(read)
    }

    /// Reads the one JSON value `text` starts with (after whitespace), as
    /// [`InstanceText::parse`] does, and says where in `text` it ends: for a
    /// value inside a larger text (what follows it is not read; a number
    /// or literal must be followed by whitespace or punctuation).
    pub fn parse_prefix(text: &'a str) -> serde_json::Result<(Self, usize)> {
        let mut values = serde_json::Deserializer::from_str(text).into_iter::<Prefix<'a>>();
        match values.next() {
            Some(read) => Ok((read?.0, values.byte_offset())),
            None => Err(<serde_json::Error as serde::de::Error>::custom(
                "no JSON value",
            )),
        }
    }

    fn read<'de: 'a, D: Deserializer<'de>>(deserializer: D, len: usize) -> Result<Self, D::Error> {
        let mut reader = Reader {
            entries: Vec::with_capacity(len / 8 + 1),
            values: 0,
            depth: 0,
            deepest: 0,
            repeated: false,
            largest_object: 0,
        };
        ValueSeed(&mut reader).deserialize(deserializer)?;
        Ok(InstanceText {
            entries: reader.entries,
            values: reader.values,
            depth: reader.deepest,
            repeated: reader.repeated,
            largest_object: reader.largest_object,
        })
    }

    /// Whether some object in it repeats a member name (a `Value` keeps the
    /// last; other readers keep the first).
    pub fn repeats_member_names(&self) -> bool {
        self.repeated
    }

    /// The number of values in it.
    pub(crate) fn values(&self) -> u64 {
        self.values
    }

    /// Its deepest nesting of arrays and objects.
    pub(crate) fn depth(&self) -> usize {
        self.depth
    }

    /// The most members of one object in it.
    pub(crate) fn largest_object(&self) -> usize {
        self.largest_object
    }

    /// The value as a `serde_json::Value` (a repeated member name keeps its
    /// last value, as serde_json does).
    pub fn to_value(&self) -> Value {
        TextNode::root(&self.entries).to_value().into_owned()
    }

    /// The root, for the validator.
    pub(crate) fn root(&self) -> TextNode<'_> {
        TextNode::root(&self.entries)
    }
}

impl fmt::Debug for InstanceText<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InstanceText")
            .field("values", &self.values)
            .field("depth", &self.depth)
            .finish_non_exhaustive()
    }
}

/// [`InstanceText::parse_prefix`]'s value, read through serde_json's
/// stream reader (which tells where a value ends).
struct Prefix<'a>(InstanceText<'a>);

impl<'de: 'a, 'a> serde::Deserialize<'de> for Prefix<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        // Its length is not known here: room for a value of about a
        // kilobyte of text (129 entries), as `parse` would make; a larger
        // one grows.
        InstanceText::read(deserializer, 1024).map(Prefix)
    }
}

struct Reader<'a> {
    entries: Vec<Entry<'a>>,
    values: u64,
    depth: usize,
    deepest: usize,
    repeated: bool,
    largest_object: usize,
}

impl<'a> Reader<'a> {
    fn push(&mut self, entry: Entry<'a>) {
        self.values += 1;
        self.entries.push(entry);
    }

    /// Opens a container at the next index, to be closed by [`Reader::close`].
    fn open(&mut self) -> usize {
        self.values += 1;
        self.depth += 1;
        self.deepest = self.deepest.max(self.depth);
        self.entries.push(Entry::Null);
        self.entries.len() - 1
    }

    fn close(&mut self, at: usize, entry: Entry<'a>) {
        self.depth -= 1;
        if let Some(slot) = self.entries.get_mut(at) {
            *slot = entry;
        }
    }

    /// Notes whether the object opened at `at`, of `len` members, repeats
    /// a member name.
    fn check_names(&mut self, at: usize, len: usize) {
        if self.repeated {
            return;
        }
        let object = TextNode {
            entries: &self.entries,
            at,
        };
        self.repeated = if len <= 16 {
            object
                .members()
                .enumerate()
                .any(|(i, (name, _))| object.members().take(i).any(|(other, _)| other == name))
        } else {
            let mut names: Vec<&str> = object.members().map(|(name, _)| name).collect();
            names.sort_unstable();
            names.windows(2).any(|pair| pair[0] == pair[1])
        };
    }
}

/// Reads one value into the reader.
struct ValueSeed<'r, 'a>(&'r mut Reader<'a>);

impl<'de: 'a, 'a> DeserializeSeed<'de> for ValueSeed<'_, 'a> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de: 'a, 'a> Visitor<'de> for ValueSeed<'_, 'a> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, value: bool) -> Result<(), E> {
        self.0.push(Entry::Bool(value));
        Ok(())
    }

    fn visit_i64<E>(self, value: i64) -> Result<(), E> {
        self.0.push(Entry::Number(value.into()));
        Ok(())
    }

    fn visit_u64<E>(self, value: u64) -> Result<(), E> {
        self.0.push(Entry::Number(value.into()));
        Ok(())
    }

    fn visit_f64<E>(self, value: f64) -> Result<(), E> {
        // As a `Value` reads it: a number out of range is null.
        self.0
            .push(Number::from_f64(value).map_or(Entry::Null, Entry::Number));
        Ok(())
    }

    fn visit_borrowed_str<E>(self, value: &'de str) -> Result<(), E> {
        self.0.push(Entry::Str(value));
        Ok(())
    }

    fn visit_str<E>(self, value: &str) -> Result<(), E> {
        self.0.push(Entry::String(value.into()));
        Ok(())
    }

    fn visit_unit<E>(self) -> Result<(), E> {
        self.0.push(Entry::Null);
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut items: A) -> Result<(), A::Error> {
        let at = self.0.open();
        let mut len = 0;
        while items.next_element_seed(ValueSeed(self.0))?.is_some() {
            len += 1;
        }
        let end = self.0.entries.len();
        self.0.close(at, Entry::Array { len, end });
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut members: A) -> Result<(), A::Error> {
        let at = self.0.open();
        let mut len = 0;
        while members.next_key_seed(NameSeed(self.0))?.is_some() {
            members.next_value_seed(ValueSeed(self.0))?;
            len += 1;
        }
        let end = self.0.entries.len();
        self.0.close(at, Entry::Object { len, end });
        self.0.largest_object = self.0.largest_object.max(len);
        if len > 1 {
            self.0.check_names(at, len);
        }
        Ok(())
    }
}

/// Reads one member name into the reader.
struct NameSeed<'r, 'a>(&'r mut Reader<'a>);

impl<'de: 'a, 'a> DeserializeSeed<'de> for NameSeed<'_, 'a> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de: 'a, 'a> Visitor<'de> for NameSeed<'_, 'a> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a member name")
    }

    fn visit_borrowed_str<E>(self, value: &'de str) -> Result<(), E> {
        self.0.entries.push(Entry::Str(value));
        Ok(())
    }

    fn visit_str<E>(self, value: &str) -> Result<(), E> {
        self.0.entries.push(Entry::String(value.into()));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use jsonschema::json::{Node, Object};
    use serde_json::json;

    #[test]
    fn reads_what_serde_json_reads() {
        for text in [
            r#"{"a":[1,-2,3.5,"x\"y\u00e9",null,true,{"b":{}}],"c":18446744073709551615}"#,
            r#" [ {"k\n":"v"} , [] , {} , -0 , 1e2 , 0.1 ] "#,
            r#""just a string""#,
            "12",
            "null",
        ] {
            let read = InstanceText::parse(text).unwrap();
            let value: Value = serde_json::from_str(text).unwrap();
            assert_eq!(read.to_value(), value, "{text}");
            assert!(!read.repeats_member_names(), "{text}");
        }
        for text in ["", "{", r#"{"a":1} x"#, "[1,]", "1e400"] {
            assert!(InstanceText::parse(text).is_err(), "{text:?}");
            assert!(serde_json::from_str::<Value>(text).is_err(), "{text:?}");
        }
    }

    #[test]
    fn counts_values_and_depth_as_validation_bounds_them() {
        let read = InstanceText::parse(r#"{"a": [1, 2], "b": null}"#).unwrap();
        assert_eq!((read.values(), read.depth()), (5, 2));
        let read = InstanceText::parse("[[[1]]]").unwrap();
        assert_eq!((read.values(), read.depth()), (4, 3));
        let read = InstanceText::parse("7").unwrap();
        assert_eq!((read.values(), read.depth()), (1, 0));
    }

    #[test]
    fn a_repeated_member_name_anywhere_is_noted_and_the_last_kept() {
        let read = InstanceText::parse(r#"[{"x":{"b":1,"c":2,"b":3}}]"#).unwrap();
        assert!(read.repeats_member_names());
        assert_eq!(read.to_value(), json!([{"x": {"b": 3, "c": 2}}]));
        // An escaped spelling of the same name is the same name.
        let read = InstanceText::parse(r#"{"a":1,"\u0061":2}"#).unwrap();
        assert!(read.repeats_member_names());
        // Past 16 members the names are sorted to compare them.
        let many: Vec<String> = (0..20).map(|i| format!("\"m{i}\":{i}")).collect();
        let text = format!("{{{}}}", many.join(","));
        assert!(!InstanceText::parse(&text).unwrap().repeats_member_names());
        let text = format!("{{{},\"m7\":0}}", many.join(","));
        assert!(InstanceText::parse(&text).unwrap().repeats_member_names());
        // The same name in different objects is no repetition.
        let read = InstanceText::parse(r#"{"a":{"a":1},"b":{"a":2}}"#).unwrap();
        assert!(!read.repeats_member_names());
    }

    #[test]
    fn only_a_string_with_escapes_is_copied() {
        let text = r#"{"plain":"abc","escaped":"a\tb"}"#;
        let read = InstanceText::parse(text).unwrap();
        let root = read.root();
        let object = root.as_object().unwrap();
        let plain = Object::get(&object, &"plain".to_owned()).unwrap();
        let escaped = Object::get(&object, &"escaped".to_owned()).unwrap();
        assert!(matches!(plain.entry(), Entry::Str(_)));
        assert!(matches!(escaped.entry(), Entry::String(_)));
        assert_eq!(escaped.as_string().as_deref(), Some("a\tb"));
        assert!(escaped.equals_value(&json!("a\tb")));
        assert!(!escaped.equals_value(&json!("a\\tb")));
    }

    #[test]
    fn a_prefix_is_read_up_to_the_end_of_its_value() {
        fn read(text: &str) -> serde_json::Result<(Value, usize)> {
            InstanceText::parse_prefix(text).map(|(value, end)| (value.to_value(), end))
        }
        assert_eq!(read("  1").unwrap(), (json!(1), 3));
        assert_eq!(read("1 ,x").unwrap(), (json!(1), 1));
        assert_eq!(read("[1]x").unwrap(), (json!([1]), 3));
        assert_eq!(
            read(r#" {"a":"}"} , "b""#).unwrap(),
            (json!({"a": "}"}), 10)
        );
        // A number or literal must end before what follows.
        assert!(read("1x").is_err());
        assert!(read("truex").is_err());
        // No value, or a broken one.
        assert!(read("").is_err());
        assert!(read("  ").is_err());
        assert!(read("[1,]").is_err());
        // As deep as `parse` reads, no deeper.
        let deep = |n| format!("{}{}", "[".repeat(n), "]".repeat(n));
        assert!(read(&deep(127)).is_ok());
        assert!(read(&deep(128)).is_err());
        assert_eq!(
            InstanceText::parse(&deep(128)).is_ok(),
            read(&deep(128)).is_ok()
        );
    }
}
