//! A success response's `result`, handed to the request that waits for it,
//! which reads it into the type it expects: that reading is the only time
//! its text is parsed when the response has the usual layout.

use serde::de::DeserializeOwned;
use serde_json::value::RawValue;
use toolshape_protocol::{Incoming, RequestId, Response};

use super::error::{ClientError, ClientErrorKind};

/// The `result` of a success response.
#[derive(Debug)]
pub(crate) struct ResultJson(Source);

#[derive(Debug)]
enum Source {
    /// Read out of its message by the JSON-RPC reader: valid JSON.
    Read(Box<RawValue>),
    /// Cut out of its message by layout
    /// ([`split_success`](toolshape_protocol::split_success)): the result
    /// only if it parses as one JSON value, else the message is read whole.
    Cut { message: Box<str>, start: usize },
}

impl ResultJson {
    /// A result the JSON-RPC reader read.
    pub(crate) fn read(result: Box<RawValue>) -> Self {
        Self(Source::Read(result))
    }

    /// The id and result of `message` when it is a success response with the
    /// usual layout; `None` for any other message (read it with `classify`).
    pub(crate) fn cut(message: &[u8]) -> Option<(RequestId, Self)> {
        let message = std::str::from_utf8(message).ok()?;
        let (id, result) = toolshape_protocol::split_success(message)?;
        // `result` is a slice of `message`: where it starts, and it runs to
        // the message's end but for the closing brace and whitespace.
        let start = result.as_ptr() as usize - message.as_ptr() as usize;
        let message = message.get(..start + result.len())?.into();
        Some((id, Self(Source::Cut { message, start })))
    }

    /// The result's text: for a result cut by layout, valid only if it
    /// parses (see [`ResultJson::reread`]).
    pub(crate) fn text(&self) -> &str {
        match &self.0 {
            Source::Read(raw) => raw.get(),
            Source::Cut { message, start } => message.get(*start..).unwrap_or_default(),
        }
    }

    /// After the text failed to parse: the result read from the whole
    /// message, if it was cut by layout and the message holds one after all
    /// (more members follow it). `Ok(None)` when the text was the result.
    pub(crate) fn reread(&self) -> Result<Option<Box<RawValue>>, ClientError> {
        let Source::Cut { message, .. } = &self.0 else {
            return Ok(None);
        };
        // The message was cut before its closing brace.
        let whole = format!("{message}}}");
        match toolshape_protocol::classify(whole.as_bytes()) {
            Incoming::Response(Response::Success { result, .. }) => Ok(Some(result)),
            Incoming::Response(Response::Error { error, .. }) => {
                Err(ClientErrorKind::Protocol(error).into())
            }
            Incoming::Invalid { error, .. } => Err(ClientError::invalid(format!(
                "invalid response: {}",
                error.message
            ))),
            _ => Err(ClientError::invalid("invalid response")),
        }
    }

    /// The result read as `T`; `what` names it in the error.
    pub(crate) fn parse<T: DeserializeOwned>(&self, what: &str) -> Result<T, ClientError> {
        let bad = |e: serde_json::Error| ClientError::invalid(format!("bad {what} result: {e}"));
        match serde_json::from_str(self.text()) {
            Ok(value) => Ok(value),
            Err(error) => match self.reread()? {
                Some(result) => serde_json::from_str(result.get()).map_err(bad),
                None => Err(bad(error)),
            },
        }
    }

    /// The text of [`ResultJson::text`] where it lies: a buffer and where
    /// in it the result starts (it runs to the end).
    pub(crate) fn into_json(self) -> (Box<str>, usize) {
        match self.0 {
            Source::Read(raw) => (raw.into(), 0),
            Source::Cut { message, start } => (message, start),
        }
    }
}
