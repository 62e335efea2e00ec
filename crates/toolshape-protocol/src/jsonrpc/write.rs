//! Writing messages straight to a byte buffer, without building a
//! `serde_json::Value` first.
//!
//! Every function appends one compact JSON object (no trailing newline: add
//! `b'\n'` yourself for the stdio transport; serde_json never emits raw
//! newlines, though raw `params`/`result` text is written as it was
//! received). If serialization fails (a custom `Serialize` impl returning an
//! error, a map with non-string keys), the buffer is restored to its
//! previous length.

use serde::Serialize;

use super::id::RequestId;
use super::message::JSONRPC_VERSION;
use crate::error::ErrorObject;

#[derive(Serialize)]
struct ResultEnvelope<'a, R: ?Sized> {
    jsonrpc: &'static str,
    id: &'a RequestId,
    result: &'a R,
}

#[derive(Serialize)]
struct ErrorEnvelope<'a> {
    jsonrpc: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<&'a RequestId>,
    error: &'a ErrorObject,
}

#[derive(Serialize)]
struct RequestEnvelope<'a, P: ?Sized> {
    jsonrpc: &'static str,
    id: &'a RequestId,
    method: &'a str,
    params: &'a P,
}

#[derive(Serialize)]
struct NotificationEnvelope<'a, P: ?Sized> {
    jsonrpc: &'static str,
    method: &'a str,
    params: &'a P,
}

/// Appends `message` (any [`Serialize`] value, e.g. a
/// [`Request`](super::Request), [`Notification`](super::Notification) or
/// [`Response`](super::Response)) to `out`.
pub fn write_message<M: Serialize + ?Sized>(
    out: &mut Vec<u8>,
    message: &M,
) -> Result<(), serde_json::Error> {
    let start = out.len();
    serde_json::to_writer(&mut *out, message).inspect_err(|_| out.truncate(start))
}

/// Appends a success response `{"jsonrpc":"2.0","id":…,"result":…}`.
pub fn write_result<R: Serialize + ?Sized>(
    out: &mut Vec<u8>,
    id: &RequestId,
    result: &R,
) -> Result<(), serde_json::Error> {
    write_message(
        out,
        &ResultEnvelope {
            jsonrpc: JSONRPC_VERSION,
            id,
            result,
        },
    )
}

/// Appends a success response whose result is `result_json`, JSON text
/// written as it is, not checked: pass only text a JSON parser has read as
/// exactly one value (a relayed result), or the message will not be JSON.
pub fn write_result_json(
    out: &mut Vec<u8>,
    id: &RequestId,
    result_json: &str,
) -> Result<(), serde_json::Error> {
    let start = out.len();
    out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    serde_json::to_writer(&mut *out, id).inspect_err(|_| out.truncate(start))?;
    out.extend_from_slice(br#","result":"#);
    out.extend_from_slice(result_json.as_bytes());
    out.push(b'}');
    Ok(())
}

/// Appends an error response `{"jsonrpc":"2.0","id":…,"error":…}`; one
/// whose request's id is not known has no `id` (MCP's `schema.json` since
/// 2025-11-25 allows no `null` id, where JSON-RPC 2.0 wrote one).
pub fn write_error(
    out: &mut Vec<u8>,
    id: Option<&RequestId>,
    error: &ErrorObject,
) -> Result<(), serde_json::Error> {
    write_message(
        out,
        &ErrorEnvelope {
            jsonrpc: JSONRPC_VERSION,
            id,
            error,
        },
    )
}

/// Appends a request `{"jsonrpc":"2.0","id":…,"method":…,"params":…}`.
pub fn write_request<P: Serialize + ?Sized>(
    out: &mut Vec<u8>,
    id: &RequestId,
    method: &str,
    params: &P,
) -> Result<(), serde_json::Error> {
    write_message(
        out,
        &RequestEnvelope {
            jsonrpc: JSONRPC_VERSION,
            id,
            method,
            params,
        },
    )
}

/// Appends a notification `{"jsonrpc":"2.0","method":…,"params":…}`. For a
/// notification without params, write
/// [`Notification::without_params`](super::Notification::without_params)
/// with [`write_message`].
pub fn write_notification<P: Serialize + ?Sized>(
    out: &mut Vec<u8>,
    method: &str,
    params: &P,
) -> Result<(), serde_json::Error> {
    write_message(
        out,
        &NotificationEnvelope {
            jsonrpc: JSONRPC_VERSION,
            method,
            params,
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_result_written_from_its_text_is_the_result_written_from_its_value() {
        let text =
            r#"{"content":[{"text":"{\"a\":1}","type":"text"}],"structuredContent":{"a":1}}"#;
        let value: serde_json::Value = serde_json::from_str(text).unwrap();
        for id in [RequestId::Number(3), RequestId::String("x\"y".into())] {
            let (mut from_text, mut from_value) = (Vec::new(), Vec::new());
            write_result_json(&mut from_text, &id, text).unwrap();
            write_result(&mut from_value, &id, &value).unwrap();
            assert_eq!(from_text, from_value);
        }
    }
}
