//! One finding: a rule broken at one place, on one revision, by one tool.

use serde::Serialize;
use serde_json::Value;
use toolshape_protocol::ProtocolVersion;

use crate::rules::{Rule, Severity};

/// Longest message a finding carries, in characters.
pub(crate) const MAX_MESSAGE_CHARS: usize = 600;

/// What a finding's JSON Pointer points into.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Document {
    /// The server as a whole: the `initialize` or `server/discover` result.
    Server,
    /// One page of the `tools/list` result.
    Listing,
    /// One tool's definition, as listed.
    Tool,
    /// A `tools/call` result.
    Result,
    /// A whole JSON-RPC message as received.
    Message,
    /// An OTC HTTP response body.
    Otc,
}

impl Document {
    /// Its spelling in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Document::Server => "server",
            Document::Listing => "listing",
            Document::Tool => "tool",
            Document::Result => "result",
            Document::Message => "message",
            Document::Otc => "otc",
        }
    }
}

/// Where a finding is: a JSON Pointer into a document.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct Location {
    /// What the pointer points into.
    pub document: Document,
    /// A JSON Pointer (RFC 6901); empty for the whole document.
    pub pointer: String,
}

impl Location {
    /// `pointer` into `document`.
    pub fn new(document: Document, pointer: impl Into<String>) -> Self {
        Location {
            document,
            pointer: pointer.into(),
        }
    }
}

/// A rule broken at one place.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Finding {
    /// The rule.
    pub rule: Rule,
    /// Its severity (the rule's).
    pub severity: Severity,
    /// The tool it concerns, if one.
    pub tool: Option<String>,
    /// The protocol revision it was seen on (none for OTC and for findings across revisions).
    #[serde(serialize_with = "serialize_revision")]
    pub revision: Option<ProtocolVersion>,
    /// Where.
    pub location: Location,
    /// What was seen.
    pub message: String,
    /// The arguments of the call it was seen on, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub arguments: Option<Value>,
}

fn serialize_revision<S: serde::Serializer>(
    revision: &Option<ProtocolVersion>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    match revision {
        Some(version) => serializer.serialize_str(version.as_str()),
        None => serializer.serialize_none(),
    }
}

impl Finding {
    /// A finding of `rule` at `location`, saying `message`.
    pub fn new(rule: Rule, location: Location, message: impl Into<String>) -> Self {
        Finding {
            rule,
            severity: rule.severity(),
            tool: None,
            revision: None,
            location,
            message: toolshape_protocol::text::excerpt(&message.into(), MAX_MESSAGE_CHARS),
            arguments: None,
        }
    }

    /// Concerning `tool`.
    #[must_use]
    pub fn tool(mut self, tool: impl Into<String>) -> Self {
        self.tool = Some(tool.into());
        self
    }

    /// Seen on `revision`.
    #[must_use]
    pub fn revision(mut self, revision: Option<ProtocolVersion>) -> Self {
        self.revision = revision;
        self
    }

    /// Seen on a call with `arguments`.
    #[must_use]
    pub fn arguments(mut self, arguments: &Value) -> Self {
        self.arguments = Some(arguments.clone());
        self
    }

    /// The short fix of its rule.
    pub fn fix(&self) -> &'static str {
        self.rule.fix()
    }
}

/// Whether `prefix` is `pointer` or one of its ancestors (segment-wise).
pub(crate) fn is_within(pointer: &str, prefix: &str) -> bool {
    pointer == prefix
        || (pointer.starts_with(prefix) && pointer.as_bytes().get(prefix.len()) == Some(&b'/'))
}

/// Appends one reference token to a JSON Pointer, escaped (RFC 6901).
pub(crate) fn push_token(pointer: &mut String, token: &str) {
    pointer.push('/');
    for c in token.chars() {
        match c {
            '~' => pointer.push_str("~0"),
            '/' => pointer.push_str("~1"),
            other => pointer.push(other),
        }
    }
}

/// `pointer` with one more reference token.
pub(crate) fn join(pointer: &str, token: &str) -> String {
    let mut joined = pointer.to_owned();
    push_token(&mut joined, token);
    joined
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pointers_nest_by_segment() {
        assert!(is_within("/a/b", "/a"));
        assert!(is_within("/a", "/a"));
        assert!(!is_within("/ab", "/a"));
        assert!(is_within("/a", ""));
        assert_eq!(join("/x", "a/b~c"), "/x/a~1b~0c");
    }
}
