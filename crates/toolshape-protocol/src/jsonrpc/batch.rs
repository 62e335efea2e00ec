//! JSON-RPC batches: an array of messages, which MCP allowed in 2025-03-26
//! only ("implementations MUST support receiving JSON-RPC batches"). Each
//! message of a batch is then classified on its own, with
//! [`classify`](super::classify).

use std::fmt;

use serde::Deserializer;
use serde::de::{self, SeqAccess, Visitor};
use serde_json::value::RawValue;

use crate::ErrorObject;

/// Most messages one batch may hold; a longer batch is refused whole, before
/// any of its messages is read as more than JSON text.
pub const MAX_BATCH_MESSAGES: usize = 64;

/// Whether `input` is an array, read from its first byte that is not white
/// space: a batch, where the revision allows them.
pub fn is_batch(input: &[u8]) -> bool {
    input
        .iter()
        .find(|byte| !byte.is_ascii_whitespace())
        .is_some_and(|byte| *byte == b'[')
}

/// The messages of a batch, each as its raw JSON text, in order. Refused
/// (the error to answer, without an id) when `input` is not one JSON array
/// (`-32700` when it is not JSON at all), when the array is empty or when it
/// holds more than `max` messages (`-32600`); counting stops at `max + 1`,
/// so a huge array costs no more than its text's scan.
pub fn split_batch(input: &[u8], max: usize) -> Result<Vec<&RawValue>, ErrorObject> {
    let mut reader = serde_json::Deserializer::from_slice(input);
    let messages = reader
        .deserialize_seq(Messages { max })
        .and_then(|messages| reader.end().map(|()| messages));
    match messages {
        Ok(messages) if messages.is_empty() => Err(ErrorObject::invalid_request("an empty batch")),
        Ok(messages) => Ok(messages),
        Err(error) if error.is_data() => Err(ErrorObject::invalid_request(error.to_string())),
        Err(error) => Err(ErrorObject::parse_error(format!("Parse error: {error}"))),
    }
}

/// Reads an array's elements as raw text, at most `max` of them.
struct Messages {
    max: usize,
}

impl<'de> Visitor<'de> for Messages {
    type Value = Vec<&'de RawValue>;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "a batch of at most {} messages", self.max)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut messages = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(self.max));
        while let Some(message) = seq.next_element::<&'de RawValue>()? {
            if messages.len() == self.max {
                return Err(de::Error::custom(format_args!(
                    "a batch of more than {} messages",
                    self.max
                )));
            }
            messages.push(message);
        }
        Ok(messages)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Incoming, classify};

    #[test]
    fn a_batch_splits_into_its_messages_in_order() {
        let input = br#" [{"jsonrpc":"2.0","id":1,"method":"ping"},
            {"jsonrpc":"2.0","method":"notifications/initialized"}, 7 ] "#;
        assert!(is_batch(input));
        let messages = split_batch(input, MAX_BATCH_MESSAGES).unwrap();
        assert_eq!(messages.len(), 3);
        assert!(matches!(
            classify(messages[0].get().as_bytes()),
            Incoming::Request(_)
        ));
        assert!(matches!(
            classify(messages[1].get().as_bytes()),
            Incoming::Notification(_)
        ));
        assert!(matches!(
            classify(messages[2].get().as_bytes()),
            Incoming::Invalid { .. }
        ));
    }

    #[test]
    fn empty_long_and_broken_batches_are_refused() {
        assert!(!is_batch(br#"{"jsonrpc":"2.0"}"#));
        assert!(!is_batch(b"   "));
        let empty = split_batch(b"[ ]", 4).unwrap_err();
        assert_eq!(empty.code, -32600);
        assert!(empty.message.contains("empty"), "{}", empty.message);

        let five = b"[1,2,3,4,5]";
        let long = split_batch(five, 4).unwrap_err();
        assert_eq!(long.code, -32600);
        assert!(long.message.contains("more than 4"), "{}", long.message);
        assert_eq!(split_batch(five, 5).unwrap().len(), 5);
        // A huge array is refused at its fifth element.
        let huge = format!("[{}0]", "0,".repeat(1_000_000));
        assert_eq!(split_batch(huge.as_bytes(), 4).unwrap_err().code, -32600);

        for broken in [&b"[1,2"[..], b"[1,]", b"[1] 2", b"[\xff]"] {
            assert_eq!(split_batch(broken, 4).unwrap_err().code, -32700);
        }
        // Valid JSON but no array.
        assert_eq!(split_batch(b"{}", 4).unwrap_err().code, -32600);
    }
}
