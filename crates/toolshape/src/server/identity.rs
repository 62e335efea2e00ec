//! The server's name and version in every 2026-07-28 result's `_meta`
//! (`io.modelcontextprotocol/serverInfo`): that revision's base protocol
//! says servers SHOULD identify themselves so, without relying on any
//! earlier exchange, unless configured not to
//! ([`ServerOptions::server_info_in_results`](crate::ServerOptions::server_info_in_results)).
//!
//! Put into the encoded response, once, at the two places every answer
//! passes (a request answered at once, work run): a result without a
//! `_meta` of its own (the usual case, a tool's result relayed as written
//! among them) gets the member written in after its opening brace; one with
//! a `_meta` has the key set there, the rest of the result kept as written.
//! The server's own identity replaces any the result carried (a relayed
//! result's, through the proxy): `io.modelcontextprotocol/` keys are the
//! protocol's, and the peer's `server/discover` names this server.

use std::borrow::Cow;
use std::fmt;

use memchr::memmem::Finder;
use serde::de::{Deserializer, MapAccess, Visitor};
use serde_json::Value;
use serde_json::value::RawValue;
use toolshape_protocol::lifecycle::Implementation;
use toolshape_protocol::meta::{Meta, keys};

/// How a response begins, as the protocol crate writes it; its id follows.
const ENVELOPE: &[u8] = b"{\"jsonrpc\":\"2.0\",\"id\":";

/// What follows a success response's id: its result comes next.
const RESULT_MEMBER: &[u8] = b",\"result\":";

/// Where the result of `response` starts, when it is a success response
/// as the protocol crate writes it (`{"jsonrpc":"2.0","id":…,"result":`);
/// `None` for an error (whose data may hold a member named `result`).
fn result_start(response: &[u8]) -> Option<usize> {
    let rest = response.strip_prefix(ENVELOPE)?;
    let id_len = match rest.first()? {
        // A string id, to its closing quote (an escape's next byte skipped).
        b'"' => {
            let mut at = 1;
            loop {
                match rest.get(at)? {
                    b'\\' => at += 2,
                    b'"' => break at + 1,
                    _ => at += 1,
                }
            }
        }
        _ => rest
            .iter()
            .position(|byte| !(byte.is_ascii_digit() || *byte == b'-'))?,
    };
    let result = rest.get(id_len..)?.strip_prefix(RESULT_MEMBER)?;
    Some(response.len() - result.len())
}

/// The server's identity, written once as the `_meta` member it adds.
#[derive(Debug, Clone)]
pub(crate) struct Identity {
    /// `"_meta":{"io.modelcontextprotocol/serverInfo":{…}}`.
    member: Box<[u8]>,
    /// The same `Implementation`, to set in a result's own `_meta`.
    info: Value,
    /// A searcher for `"_meta"`, built once.
    meta_name: Finder<'static>,
}

impl Identity {
    /// The identity of a server that calls itself `info`.
    pub(crate) fn new(info: &Implementation) -> Identity {
        // An `Implementation` (strings and optional strings) always serializes.
        let info = serde_json::to_value(info).unwrap_or(Value::Null);
        let mut meta = Meta::new();
        meta.insert(keys::SERVER_INFO.to_owned(), info.clone());
        let mut member = b"\"_meta\":".to_vec();
        // A map of strings to a value always serializes.
        let _ = serde_json::to_writer(&mut member, &meta);
        Identity {
            member: member.into_boxed_slice(),
            info,
            meta_name: Finder::new(b"\"_meta\""),
        }
    }

    /// Sets the identity in the `_meta` of `response`, a success response
    /// encoded by this crate; leaves anything else (an error, a result that
    /// is not an object) as it is.
    pub(crate) fn stamp(&self, response: &mut Vec<u8>) {
        let Some(start) = result_start(response) else {
            return;
        };
        // The result, without the envelope's closing brace.
        let end = response.len().saturating_sub(1);
        let Some(result) = response.get(start..end) else {
            return;
        };
        if result.first() != Some(&b'{') || response.last() != Some(&b'}') {
            return;
        }
        if self.meta_name.find(result).is_none() {
            // No `_meta` anywhere in it, so none at its top: the member goes
            // in after the opening brace.
            let empty = result.get(1..).is_some_and(|rest| {
                rest.iter()
                    .find(|b| !b.is_ascii_whitespace())
                    .is_some_and(|b| *b == b'}')
            });
            let at = start + 1;
            let mut stamped = Vec::with_capacity(response.len() + self.member.len() + 1);
            stamped.extend_from_slice(response.get(..at).unwrap_or_default());
            stamped.extend_from_slice(&self.member);
            if !empty {
                stamped.push(b',');
            }
            stamped.extend_from_slice(response.get(at..).unwrap_or_default());
            *response = stamped;
            return;
        }
        // A `_meta` somewhere (perhaps nested, perhaps text): the result's
        // members are read as written and its own `_meta` set.
        let Ok(result) = std::str::from_utf8(result) else {
            return;
        };
        if let Some(rewritten) = self.set_in_members(result) {
            response.truncate(start);
            response.extend_from_slice(&rewritten);
            response.push(b'}');
        }
    }

    /// `result` (a JSON object) written again with the identity in its
    /// `_meta`, its other members as they were; `None` if it does not read.
    fn set_in_members(&self, result: &str) -> Option<Vec<u8>> {
        let mut deserializer = serde_json::Deserializer::from_str(result);
        let members = deserializer.deserialize_map(MembersVisitor).ok()?;
        deserializer.end().ok()?;
        let mut out = Vec::with_capacity(result.len() + self.member.len() + 1);
        out.push(b'{');
        let mut had_meta = false;
        for (index, (name, value)) in members.iter().enumerate() {
            if index > 0 {
                out.push(b',');
            }
            serde_json::to_writer(&mut out, name).ok()?;
            out.push(b':');
            if name == "_meta" && !had_meta {
                had_meta = true;
                let mut meta: Meta = match serde_json::from_str(value.get()) {
                    Ok(meta) => meta,
                    // A `_meta` that is no object is left as it is.
                    Err(_) => {
                        out.extend_from_slice(value.get().as_bytes());
                        continue;
                    }
                };
                meta.insert(keys::SERVER_INFO.to_owned(), self.info.clone());
                serde_json::to_writer(&mut out, &meta).ok()?;
            } else {
                out.extend_from_slice(value.get().as_bytes());
            }
        }
        if !had_meta {
            if !members.is_empty() {
                out.push(b',');
            }
            out.extend_from_slice(&self.member);
        }
        out.push(b'}');
        Some(out)
    }
}

/// An object's members in order, each value as written.
type Members<'a> = Vec<(Cow<'a, str>, &'a RawValue)>;

struct MembersVisitor;

impl<'de> Visitor<'de> for MembersVisitor {
    type Value = Members<'de>;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut members = Vec::with_capacity(map.size_hint().unwrap_or(8));
        while let Some(entry) = map.next_entry::<Cow<'de, str>, &'de RawValue>()? {
            members.push(entry);
        }
        Ok(members)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use toolshape_protocol::RequestId;

    use super::*;

    fn identity() -> Identity {
        Identity::new(&Implementation::new("srv", "1.2.3"))
    }

    fn stamped(result: &Value) -> Value {
        let mut response = Vec::new();
        toolshape_protocol::write_result(&mut response, &RequestId::Number(7), result).unwrap();
        identity().stamp(&mut response);
        serde_json::from_slice(&response).unwrap()
    }

    fn info() -> Value {
        json!({"name": "srv", "version": "1.2.3"})
    }

    #[test]
    fn a_result_without_meta_gets_one() {
        let response = stamped(&json!({"content": [], "isError": false}));
        assert_eq!(response["id"], 7);
        assert_eq!(response["result"]["_meta"][keys::SERVER_INFO], info());
        assert_eq!(response["result"]["content"], json!([]));
        assert_eq!(response["result"]["isError"], false);
        assert_eq!(
            stamped(&json!({}))["result"]["_meta"][keys::SERVER_INFO],
            info()
        );
    }

    #[test]
    fn a_result_with_meta_keeps_its_keys_and_gets_this_servers_identity() {
        let result = json!({
            "_meta": {"dev.example/trace": 1, keys::SERVER_INFO: {"name": "upstream", "version": "9"}},
            "content": [{"type": "text", "text": "\"_meta\"", "_meta": {"x": 1}}],
        });
        let response = stamped(&result);
        assert_eq!(response["result"]["_meta"][keys::SERVER_INFO], info());
        assert_eq!(response["result"]["_meta"]["dev.example/trace"], 1);
        assert_eq!(response["result"]["content"], result["content"]);
    }

    #[test]
    fn a_nested_meta_alone_adds_one_at_the_top() {
        let result = json!({"tools": [{"name": "t", "_meta": {"a": true}}]});
        let response = stamped(&result);
        assert_eq!(response["result"]["_meta"][keys::SERVER_INFO], info());
        assert_eq!(response["result"]["tools"], result["tools"]);
    }

    #[test]
    fn members_keep_their_order_and_text() {
        let mut response =
            br#"{"jsonrpc":"2.0","id":"a\",\"result\":{","result":{"z":1.0,"_meta":{},"a":[1, 2]}}"#
                .to_vec();
        identity().stamp(&mut response);
        let text = String::from_utf8(response).unwrap();
        assert_eq!(
            text,
            r#"{"jsonrpc":"2.0","id":"a\",\"result\":{","result":{"z":1.0,"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"srv","version":"1.2.3"}},"a":[1, 2]}}"#
        );
    }

    #[test]
    fn errors_and_non_objects_are_left_alone() {
        let mut error =
            br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"x"}}"#.to_vec();
        let before = error.clone();
        identity().stamp(&mut error);
        assert_eq!(error, before);
        // An error whose data has a member named `result`.
        let mut data = br#"{"jsonrpc":"2.0","id":"a","error":{"code":1,"message":"m","data":{"b":2,"result":{}}}}"#.to_vec();
        let before = data.clone();
        identity().stamp(&mut data);
        assert_eq!(data, before);
        let mut odd = br#"{"jsonrpc":"2.0","id":1,"result":[1]}"#.to_vec();
        let before = odd.clone();
        identity().stamp(&mut odd);
        assert_eq!(odd, before);
    }
}
