//! Which tools a request body calls, for scopes per tool. Read from the
//! JSON-RPC body itself (a single message or a batch), never from the
//! `Mcp-Name` header: on handshake revisions the server does not compare
//! that header with the body, so trusting it would let a request name one
//! tool and call another.

use serde::Deserialize;
use serde_json::value::RawValue;

/// What the layer learnt from a body.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Called {
    /// The tools the `tools/call` requests in it name (empty: none).
    Tools(Vec<String>),
    /// Not a JSON-RPC message this layer can read with certainty (the
    /// server would refuse it too); refused with `400`.
    Unreadable,
}

#[derive(Deserialize)]
struct Message<'a> {
    #[serde(default, borrow)]
    method: Option<std::borrow::Cow<'a, str>>,
    #[serde(default, borrow)]
    params: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct CallParams<'a> {
    #[serde(default, borrow)]
    name: Option<&'a RawValue>,
}

/// The tools `body` calls.
pub(crate) fn tools_called(body: &[u8]) -> Called {
    let start = body.iter().find(|b| !b.is_ascii_whitespace());
    let messages: Vec<Message<'_>> = match start {
        Some(b'[') => match serde_json::from_slice(body) {
            Ok(batch) => batch,
            Err(_) => return Called::Unreadable,
        },
        Some(b'{') => match serde_json::from_slice(body) {
            Ok(one) => vec![one],
            Err(_) => return Called::Unreadable,
        },
        _ => return Called::Unreadable,
    };
    let mut tools = Vec::new();
    for message in messages {
        if message.method.as_deref() != Some("tools/call") {
            continue;
        }
        let Some(params) = message.params else {
            continue;
        };
        let Ok(params) = serde_json::from_str::<CallParams<'_>>(params.get()) else {
            return Called::Unreadable;
        };
        // A name that is not a string calls nothing (the server refuses it).
        if let Some(name) = params.name
            && let Ok(name) = serde_json::from_str::<String>(name.get())
        {
            tools.push(name);
        }
    }
    Called::Tools(tools)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tools(body: &str) -> Called {
        tools_called(body.as_bytes())
    }

    fn named(names: &[&str]) -> Called {
        Called::Tools(names.iter().map(|n| (*n).to_owned()).collect())
    }

    #[test]
    fn single_batch_and_other_methods() {
        assert_eq!(
            tools(
                r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"x"}}}"#
            ),
            named(&["read_file"])
        );
        assert_eq!(
            tools(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#),
            named(&[])
        );
        assert_eq!(
            tools(
                r#" [{"method":"tools/call","params":{"name":"a"}},{"method":"ping"},{"method":"tools/call","params":{"name":"b\u0021"}}]"#
            ),
            named(&["a", "b!"])
        );
        assert_eq!(tools(r#"{"jsonrpc":"2.0","result":{}}"#), named(&[]));
        assert_eq!(
            tools(r#"{"method":"tools/call","params":{"name":7}}"#),
            named(&[])
        );
    }

    #[test]
    fn ambiguous_bodies_are_unreadable() {
        // Two names: which one would the server run? Refused instead.
        assert_eq!(
            tools(r#"{"method":"tools/call","params":{"name":"harmless","name":"dangerous"}}"#),
            Called::Unreadable
        );
        assert_eq!(
            tools(r#"{"method":"tools/list","method":"tools/call","params":{"name":"x"}}"#),
            Called::Unreadable
        );
        assert_eq!(
            tools(r#"{"method":"tools/call","params":"x"}"#),
            Called::Unreadable
        );
        // Positional params are read as serde reads them (the name first),
        // never as no tool at all.
        assert_eq!(
            tools(r#"{"method":"tools/call","params":["x"]}"#),
            named(&["x"])
        );
        assert_eq!(tools("not json"), Called::Unreadable);
        assert_eq!(tools(""), Called::Unreadable);
        let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
        assert_eq!(tools(&deep), Called::Unreadable);
    }
}
