//! How the validator reads an [`InstanceText`](super::InstanceText): its
//! entries seen through `jsonschema`'s custom-representation traits.

use std::borrow::Cow;

use jsonschema::JsonType;
use jsonschema::json::{Array, Json, Node, NodeIdentity, Object};
use serde_json::{Map, Number, Value};

use super::Entry;

/// The representation [`InstanceText`] is validated as.
pub(crate) struct TextJson;

impl Json for TextJson {
    type Node<'a> = TextNode<'a>;
    type PreparedKey = String;
    type StringBuffer = ();

    // A member is found by a scan: a pass over the members is as cheap as one lookup.
    const KEYS_PER_LOOKUP: usize = 64;

    fn prepare_key(key: &str) -> String {
        key.to_owned()
    }

    fn with_string_node<T>(_: &mut (), string: &str, f: impl FnOnce(TextNode<'_>) -> T) -> T {
        let entries = [Entry::Str(string)];
        f(TextNode::root(&entries))
    }
}

/// One value of an [`InstanceText`].
#[derive(Clone, Copy)]
pub(crate) struct TextNode<'a> {
    pub(super) entries: &'a [Entry<'a>],
    pub(super) at: usize,
}

impl<'a> TextNode<'a> {
    pub(super) fn root(entries: &'a [Entry<'a>]) -> Self {
        TextNode { entries, at: 0 }
    }

    pub(super) fn entry(&self) -> &'a Entry<'a> {
        // Nodes are made only at entries that exist; an empty text has none
        // and reads as null.
        self.entries.get(self.at).unwrap_or(&Entry::Null)
    }

    /// The index after this value and everything in it.
    fn end(&self) -> usize {
        match self.entry() {
            Entry::Array { end, .. } | Entry::Object { end, .. } => *end,
            _ => self.at + 1,
        }
    }

    fn str(&self) -> Option<&'a str> {
        match self.entry() {
            Entry::Str(string) => Some(string),
            Entry::String(string) => Some(string),
            _ => None,
        }
    }

    /// The entries directly inside this container (none for a scalar).
    fn children(self) -> Elements<'a> {
        Elements {
            entries: self.entries,
            next: self.at + 1,
            end: self.end(),
        }
    }

    pub(super) fn members(self) -> Members<'a> {
        Members(self.children())
    }
}

impl<'a> Node<'a, TextJson> for TextNode<'a> {
    type Object = TextNode<'a>;
    type Array = TextNode<'a>;
    type Number = &'a Number;

    fn as_object(&self) -> Option<TextNode<'a>> {
        matches!(self.entry(), Entry::Object { .. }).then_some(*self)
    }

    fn as_array(&self) -> Option<TextNode<'a>> {
        matches!(self.entry(), Entry::Array { .. }).then_some(*self)
    }

    fn as_string(&self) -> Option<Cow<'a, str>> {
        self.str().map(Cow::Borrowed)
    }

    fn as_number(&self) -> Option<&'a Number> {
        match self.entry() {
            Entry::Number(number) => Some(number),
            _ => None,
        }
    }

    fn as_boolean(&self) -> Option<bool> {
        match self.entry() {
            Entry::Bool(value) => Some(*value),
            _ => None,
        }
    }

    fn is_null(&self) -> bool {
        matches!(self.entry(), Entry::Null)
    }

    fn json_type(&self) -> JsonType {
        match self.entry() {
            Entry::Null => JsonType::Null,
            Entry::Bool(_) => JsonType::Boolean,
            Entry::Number(_) => JsonType::Number,
            Entry::Str(_) | Entry::String(_) => JsonType::String,
            Entry::Array { .. } => JsonType::Array,
            Entry::Object { .. } => JsonType::Object,
        }
    }

    fn equals_value(&self, expected: &Value) -> bool {
        match (self.entry(), expected) {
            (Entry::Null, _) => expected.is_null(),
            (Entry::Bool(value), _) => expected.as_bool() == Some(*value),
            (Entry::Str(_) | Entry::String(_), _) => expected.as_str() == self.str(),
            (Entry::Number(number), _) => {
                jsonschema::json::cmp::equal(&Value::Number(number.clone()), expected)
            }
            _ => jsonschema::json::cmp::equal(&self.to_value(), expected),
        }
    }

    fn to_value(&self) -> Cow<'a, Value> {
        let value = match self.entry() {
            Entry::Null => Value::Null,
            Entry::Bool(value) => Value::Bool(*value),
            Entry::Number(number) => Value::Number(number.clone()),
            Entry::Str(_) | Entry::String(_) => {
                Value::String(self.str().unwrap_or_default().into())
            }
            Entry::Array { .. } => Value::Array(
                self.children()
                    .map(|item| item.to_value().into_owned())
                    .collect(),
            ),
            Entry::Object { .. } => {
                let mut object = Map::new();
                for (name, member) in self.members() {
                    object.insert(name.to_owned(), member.to_value().into_owned());
                }
                Value::Object(object)
            }
        };
        Cow::Owned(value)
    }

    fn identity(&self) -> Option<NodeIdentity> {
        let tag = u32::try_from(self.at).ok()?;
        Some(NodeIdentity::tagged(self.entries.as_ptr() as usize, tag))
    }
}

impl<'a> Object<'a, TextJson> for TextNode<'a> {
    type Node = TextNode<'a>;
    type MemberName = &'a str;
    type MembersIter = Members<'a>;

    fn len(&self) -> usize {
        match self.entry() {
            Entry::Object { len, .. } => *len,
            _ => 0,
        }
    }

    fn get(&self, key: &String) -> Option<TextNode<'a>> {
        TextNode::members(*self)
            .find(|(name, _)| *name == key.as_str())
            .map(|(_, member)| member)
    }

    fn members(&self) -> Members<'a> {
        TextNode::members(*self)
    }
}

impl<'a> Array<'a, TextJson> for TextNode<'a> {
    type Node = TextNode<'a>;
    type ElementsIter = Elements<'a>;

    fn len(&self) -> usize {
        match self.entry() {
            Entry::Array { len, .. } => *len,
            _ => 0,
        }
    }

    fn elements(&self) -> Elements<'a> {
        self.children()
    }
}

/// The entries directly inside a container, in the order written: an
/// array's items, or an object's names and values in turn.
pub(crate) struct Elements<'a> {
    entries: &'a [Entry<'a>],
    next: usize,
    end: usize,
}

impl<'a> Iterator for Elements<'a> {
    type Item = TextNode<'a>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.next >= self.end {
            return None;
        }
        let item = TextNode {
            entries: self.entries,
            at: self.next,
        };
        self.next = item.end();
        Some(item)
    }
}

/// An object's members in the order written: its children taken in pairs.
pub(crate) struct Members<'a>(Elements<'a>);

impl<'a> Iterator for Members<'a> {
    type Item = (&'a str, TextNode<'a>);

    fn next(&mut self) -> Option<Self::Item> {
        let name = self.0.next()?.str()?;
        Some((name, self.0.next()?))
    }
}
