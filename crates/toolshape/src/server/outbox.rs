//! Where a request's answers go: the one stdio writer, or one HTTP response.

use serde::Serialize;
use tokio::sync::mpsc;
use toolshape_protocol::{ErrorObject, RequestId};

/// What travels to a peer: a serialized JSON-RPC message (no framing), or a
/// keep-alive for a stream that has nothing to say.
#[derive(Debug)]
#[cfg_attr(not(feature = "server-http"), allow(dead_code))]
pub(crate) enum Frame {
    Message(Vec<u8>),
    KeepAlive,
}

/// A channel of frames to one peer, in order.
#[derive(Debug, Clone)]
pub(crate) struct Outbox(pub(crate) mpsc::Sender<Frame>);

impl Outbox {
    /// Sends one serialized message; false when the receiving side is gone.
    pub(crate) async fn send(&self, message: Vec<u8>) -> bool {
        self.0.send(Frame::Message(message)).await.is_ok()
    }

    /// Sends a keep-alive; false when the receiving side is gone.
    #[cfg_attr(not(feature = "server-http"), allow(dead_code))]
    pub(crate) async fn keep_alive(&self) -> bool {
        self.0.send(Frame::KeepAlive).await.is_ok()
    }

    pub(crate) async fn error(&self, id: Option<&RequestId>, error: &ErrorObject) -> bool {
        self.send(encode_error(id, error)).await
    }

    pub(crate) async fn notification<P: Serialize + ?Sized>(
        &self,
        method: &str,
        params: &P,
    ) -> bool {
        let mut out = Vec::with_capacity(128);
        match toolshape_protocol::write_notification(&mut out, method, params) {
            Ok(()) => self.send(out).await,
            Err(_) => true,
        }
    }
}

/// A JSON-RPC batch's answers, serialized, as the one array that answers it
/// (2025-03-26); `None` when there are none (nothing is sent then).
pub(crate) fn batch_answer(answers: &[Vec<u8>]) -> Option<Vec<u8>> {
    if answers.is_empty() {
        return None;
    }
    let mut array = Vec::with_capacity(answers.iter().map(|a| a.len() + 1).sum::<usize>() + 1);
    array.push(b'[');
    for (index, answer) in answers.iter().enumerate() {
        if index > 0 {
            array.push(b',');
        }
        array.extend_from_slice(answer);
    }
    array.push(b']');
    Some(array)
}

/// A serialized success response (an internal error if the result does not serialize).
pub(crate) fn encode_result<R: Serialize + ?Sized>(id: &RequestId, result: &R) -> Vec<u8> {
    encode_result_sized(id, result, 256)
}

/// [`encode_result`] into a buffer of `capacity` bytes to begin with.
pub(crate) fn encode_result_sized<R: Serialize + ?Sized>(
    id: &RequestId,
    result: &R,
    capacity: usize,
) -> Vec<u8> {
    let mut out = Vec::with_capacity(capacity);
    match toolshape_protocol::write_result(&mut out, id, result) {
        Ok(()) => out,
        Err(e) => encode_error(
            Some(id),
            &ErrorObject::internal_error(format!("Internal error: {e}")),
        ),
    }
}

/// A serialized error response.
pub(crate) fn encode_error(id: Option<&RequestId>, error: &ErrorObject) -> Vec<u8> {
    let mut out = Vec::with_capacity(128);
    // An ErrorObject always serializes.
    let _ = toolshape_protocol::write_error(&mut out, id, error);
    out
}
