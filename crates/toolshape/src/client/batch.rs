//! JSON-RPC batches from a 2025-03-26 server, whose clients MUST take them:
//! each message of one is handled as if it came alone.

use std::sync::atomic::Ordering;

use toolshape_protocol::{MAX_BATCH_MESSAGES, split_batch};

use super::peer::{Channel, Peer, Received};

impl Peer {
    /// Takes batches from now on: the server speaks 2025-03-26.
    pub(crate) fn take_batches(&self) {
        self.takes_batches.store(true, Ordering::Relaxed);
    }

    /// Handles a batch's messages in order, and says what it held: the ids
    /// of the requests it answers, or, when it answers none, an error
    /// without an id it carried. A batch that is not one (broken, empty,
    /// over [`MAX_BATCH_MESSAGES`]) is warned of and dropped.
    pub(super) fn receive_batch(&self, bytes: &[u8], channel: Channel<'_>) -> Received {
        let messages = match split_batch(bytes, MAX_BATCH_MESSAGES) {
            Ok(messages) => messages,
            Err(error) => {
                tracing::warn!(%error, "the server sent a batch that cannot be read");
                return Received::Invalid;
            }
        };
        let mut answered = Vec::new();
        let mut unaddressed = None;
        for message in messages {
            match self.receive_one(message.get().as_bytes(), channel) {
                Received::Answer(id) => answered.push(id),
                Received::UnaddressedError(error) => unaddressed = Some(error),
                _ => {}
            }
        }
        match unaddressed {
            Some(error) if answered.is_empty() => Received::UnaddressedError(error),
            _ => Received::Batch(answered),
        }
    }
}
