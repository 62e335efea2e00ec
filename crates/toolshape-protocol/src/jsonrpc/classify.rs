//! Turning one raw message (a line of a stdio stream, an HTTP body) into a
//! request, notification or response, with JSON-RPC 2.0 error semantics.

use std::fmt;
use std::marker::PhantomData;
use std::ops::Deref;

use serde::de::{self, IgnoredAny, MapAccess, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;

use super::id::RequestId;
use super::message::{JSONRPC_VERSION, Notification, Request, Response};
use crate::error::ErrorObject;

/// One incoming JSON-RPC message, classified.
#[derive(Debug, Clone)]
pub enum Incoming {
    /// A request (has `method` and a valid `id`); it must be answered.
    Request(Request),
    /// A notification (has `method`, no `id`); it must not be answered.
    Notification(Notification),
    /// A response to one of our requests (has `result` or `error`).
    Response(Response),
    /// Not a valid message. `error` is the error to send back (code
    /// `-32700` for unparseable JSON, `-32600` otherwise) with `id`, the
    /// message's id when one could be read (`None`: sent without one).
    Invalid {
        /// The offending message's id, if it could be recovered.
        id: Option<RequestId>,
        /// The error describing the problem.
        error: ErrorObject,
    },
}

impl Incoming {
    /// Classifies one raw message; see [`classify`].
    pub fn classify(input: &[u8]) -> Self {
        classify(input)
    }

    /// For [`Incoming::Invalid`], the error response to send back.
    ///
    /// JSON-RPC forbids replying to a response, so a caller that wants to
    /// be strict may skip replying when it expected a response; this crate
    /// cannot tell (a malformed message has no reliable kind).
    pub fn error_response(&self) -> Option<Response> {
        match self {
            Self::Invalid { id, error } => Some(Response::Error {
                id: id.clone(),
                error: error.clone(),
            }),
            _ => None,
        }
    }
}

/// Classifies one raw message in a single parsing pass. Never panics.
///
/// - input that is not exactly one JSON value (bad syntax, invalid UTF-8,
///   trailing data, empty input, nesting deeper than serde_json allows)
///   gives `-32700 Parse error` with no id;
/// - valid JSON that is not a JSON-RPC 2.0 message gives
///   `-32600 Invalid Request`, with the message's id when it is readable:
///   a non-object (including any array: MCP forbids batches since
///   2025-06-18), a missing or wrong `jsonrpc`, a non-string `method`, an id
///   that is `null`, fractional, beyond `i64` or neither string nor number,
///   `params` that is neither object nor array, both `result` and `error`,
///   a result without an id, a malformed error object, or duplicate members;
/// - `"params": null` is read as absent params (lenient);
/// - unknown members are ignored.
pub fn classify(input: &[u8]) -> Incoming {
    match serde_json::from_slice::<Envelope<&RawValue>>(input) {
        Ok(envelope) => envelope.into_incoming(|raw| raw.to_owned()),
        Err(error) => classify_unreadable(input, &error),
    }
}

/// The input did not deserialize as a JSON object: tell bad JSON apart from
/// valid JSON of the wrong shape.
fn classify_unreadable(input: &[u8], error: &serde_json::Error) -> Incoming {
    let is_valid_json = error.classify() == serde_json::error::Category::Data
        && serde_json::from_slice::<IgnoredAny>(input).is_ok();
    if !is_valid_json {
        return invalid(
            None,
            ErrorObject::parse_error(format!("Parse error: {error}")),
        );
    }
    let first = input
        .iter()
        .copied()
        .find(|byte| !byte.is_ascii_whitespace());
    let reason = if first == Some(b'[') {
        "batch requests are not supported"
    } else {
        "a message must be a JSON object"
    };
    invalid_request(None, reason)
}

fn invalid(id: Option<RequestId>, error: ErrorObject) -> Incoming {
    Incoming::Invalid { id, error }
}

fn invalid_request(id: Option<RequestId>, reason: &str) -> Incoming {
    invalid(id, ErrorObject::invalid_request(reason))
}

/// The top-level members of a message, each kept as raw JSON text. `R` is
/// `&RawValue` (borrowed, zero-copy) or `Box<RawValue>` (owned, for
/// deserializers that cannot lend their input).
struct Envelope<R> {
    jsonrpc: Option<R>,
    id: Option<R>,
    method: Option<R>,
    params: Option<R>,
    result: Option<R>,
    error: Option<R>,
    has_duplicate_member: bool,
}

/// What the `id` member holds.
enum IdMember {
    /// No `id` member.
    Absent,
    /// `"id": null`.
    Null,
    /// A string or an integer that fits `i64`.
    Valid(RequestId),
    /// Anything else (boolean, fraction, huge number, object, array).
    Malformed,
}

impl IdMember {
    fn read(raw: Option<&RawValue>) -> Self {
        match raw {
            None => Self::Absent,
            Some(raw) if is_null(raw) => Self::Null,
            Some(raw) => serde_json::from_str(raw.get()).map_or(Self::Malformed, Self::Valid),
        }
    }

    /// The id, when it can be echoed in an error response.
    fn readable(&self) -> Option<RequestId> {
        match self {
            Self::Valid(id) => Some(id.clone()),
            _ => None,
        }
    }
}

const MALFORMED_ID: &str = "`id` must be a string or an integer";

impl<R: Deref<Target = RawValue>> Envelope<R> {
    /// Applies the JSON-RPC 2.0 rules. `own` turns a raw member into the
    /// owned form stored in the message.
    fn into_incoming(self, own: impl Fn(R) -> Box<RawValue>) -> Incoming {
        if self.has_duplicate_member {
            return invalid_request(None, "duplicate member");
        }
        let id = IdMember::read(self.id.as_deref());
        if !self.jsonrpc.as_deref().is_some_and(is_version_2_0) {
            return invalid_request(id.readable(), "`jsonrpc` must be \"2.0\"");
        }
        match (self.method, self.result, self.error) {
            (Some(method), None, None) => classify_call(&method, id, self.params, own),
            (None, Some(result), None) => match id {
                IdMember::Valid(id) => Incoming::Response(Response::Success {
                    id,
                    result: own(result),
                }),
                IdMember::Absent | IdMember::Null => {
                    invalid_request(None, "a result response must have an `id`")
                }
                IdMember::Malformed => invalid_request(None, MALFORMED_ID),
            },
            (None, None, Some(error)) => classify_error_response(&error, id),
            (None, Some(_), Some(_)) => invalid_request(
                id.readable(),
                "a response must not have both `result` and `error`",
            ),
            (Some(_), _, _) => invalid_request(
                id.readable(),
                "a message must not have both `method` and `result`/`error`",
            ),
            (None, None, None) => invalid_request(
                id.readable(),
                "a message needs `method`, `result` or `error`",
            ),
        }
    }
}

/// A message with `method`: a request, or a notification when `id` is absent.
fn classify_call<R: Deref<Target = RawValue>>(
    method: &RawValue,
    id: IdMember,
    params: Option<R>,
    own: impl Fn(R) -> Box<RawValue>,
) -> Incoming {
    let Some(method) = parse_string(method) else {
        return invalid_request(id.readable(), "`method` must be a string");
    };
    let params = match params {
        Some(params) if is_null(&params) => None,
        Some(params) if is_structured(&params) => Some(own(params)),
        Some(_) => return invalid_request(id.readable(), "`params` must be an object or an array"),
        None => None,
    };
    match id {
        IdMember::Absent => Incoming::Notification(Notification { method, params }),
        IdMember::Valid(id) => Incoming::Request(Request { id, method, params }),
        IdMember::Null => invalid_request(None, "`id` must not be null"),
        IdMember::Malformed => invalid_request(None, MALFORMED_ID),
    }
}

/// A message with `error`: an error response, whose id may be null or absent
/// when the failed request's id was unreadable.
fn classify_error_response(error: &RawValue, id: IdMember) -> Incoming {
    let id = match id {
        IdMember::Valid(id) => Some(id),
        IdMember::Absent | IdMember::Null => None,
        IdMember::Malformed => return invalid_request(None, MALFORMED_ID),
    };
    match serde_json::from_str::<ErrorObject>(error.get()) {
        Ok(error) => Incoming::Response(Response::Error { id, error }),
        Err(_) => invalid_request(
            id,
            "`error` must be an object with an integer `code` and a string `message`",
        ),
    }
}

/// The value of a raw JSON string, if `raw` is one. Strings without escapes
/// (nearly all method names) are copied without re-parsing.
fn parse_string(raw: &RawValue) -> Option<String> {
    let text = raw.get();
    match text
        .strip_prefix('"')
        .and_then(|rest| rest.strip_suffix('"'))
    {
        // The parser already rejected raw control characters, so an
        // escape-free string's text is its value.
        Some(inner) if !inner.contains('\\') => Some(inner.to_owned()),
        _ => serde_json::from_str(text).ok(),
    }
}

fn is_version_2_0(raw: &RawValue) -> bool {
    let text = raw.get();
    // Fast path for the only spelling seen in practice; escapes are legal.
    text == "\"2.0\""
        || serde_json::from_str::<String>(text).is_ok_and(|version| version == JSONRPC_VERSION)
}

fn is_null(raw: &RawValue) -> bool {
    raw.get() == "null"
}

fn is_structured(raw: &RawValue) -> bool {
    matches!(raw.get().as_bytes().first(), Some(b'{' | b'['))
}

/// Top-level member names; anything else is ignored.
#[derive(Deserialize)]
#[serde(field_identifier, rename_all = "lowercase")]
enum Member {
    Jsonrpc,
    Id,
    Method,
    Params,
    Result,
    Error,
    #[serde(other)]
    Unknown,
}

impl<'de, R: Deserialize<'de>> Deserialize<'de> for Envelope<R> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(EnvelopeVisitor(PhantomData))
    }
}

struct EnvelopeVisitor<R>(PhantomData<R>);

impl<'de, R: Deserialize<'de>> Visitor<'de> for EnvelopeVisitor<R> {
    type Value = Envelope<R>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON-RPC message object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Envelope<R>, A::Error> {
        let mut envelope = Envelope {
            jsonrpc: None,
            id: None,
            method: None,
            params: None,
            result: None,
            error: None,
            has_duplicate_member: false,
        };
        while let Some(member) = map.next_key::<Member>()? {
            let slot = match member {
                Member::Jsonrpc => &mut envelope.jsonrpc,
                Member::Id => &mut envelope.id,
                Member::Method => &mut envelope.method,
                Member::Params => &mut envelope.params,
                Member::Result => &mut envelope.result,
                Member::Error => &mut envelope.error,
                Member::Unknown => {
                    map.next_value::<IgnoredAny>()?;
                    continue;
                }
            };
            let value = map.next_value::<R>()?;
            envelope.has_duplicate_member |= slot.replace(value).is_some();
        }
        Ok(envelope)
    }
}

/// Deserializes through the owned envelope and keeps the wanted kind.
fn deserialize_kind<'de, D, T>(
    deserializer: D,
    pick: impl FnOnce(Incoming) -> Result<T, String>,
) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
{
    let envelope = Envelope::<Box<RawValue>>::deserialize(deserializer)?;
    pick(envelope.into_incoming(|raw| raw)).map_err(de::Error::custom)
}

fn describe(incoming: &Incoming) -> String {
    match incoming {
        Incoming::Request(_) => "found a request".to_owned(),
        Incoming::Notification(_) => "found a notification".to_owned(),
        Incoming::Response(_) => "found a response".to_owned(),
        Incoming::Invalid { error, .. } => error.message.clone(),
    }
}

/// Accepts only a valid JSON-RPC request (see [`classify`] for the rules).
impl<'de> Deserialize<'de> for Request {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserialize_kind(deserializer, |incoming| match incoming {
            Incoming::Request(request) => Ok(request),
            other => Err(format!("expected a JSON-RPC request, {}", describe(&other))),
        })
    }
}

/// Accepts only a valid JSON-RPC notification (see [`classify`]).
impl<'de> Deserialize<'de> for Notification {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserialize_kind(deserializer, |incoming| match incoming {
            Incoming::Notification(notification) => Ok(notification),
            other => Err(format!(
                "expected a JSON-RPC notification, {}",
                describe(&other)
            )),
        })
    }
}

/// Accepts only a valid JSON-RPC response (see [`classify`]).
impl<'de> Deserialize<'de> for Response {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserialize_kind(deserializer, |incoming| match incoming {
            Incoming::Response(response) => Ok(response),
            other => Err(format!(
                "expected a JSON-RPC response, {}",
                describe(&other)
            )),
        })
    }
}
