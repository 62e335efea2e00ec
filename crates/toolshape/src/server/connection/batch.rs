//! JSON-RPC batches over stdio, in a 2025-03-26 session (that revision's
//! MUST): each message handled as if it came alone, the answers written
//! together as one array.

use tokio::sync::mpsc;
use toolshape_protocol::{MAX_BATCH_MESSAGES, RequestId, split_batch};

use super::super::outbox::{Frame, Outbox, batch_answer};
use super::Connection;

impl Connection {
    /// Serves a batch: its calls start together (one batch may pass the
    /// in-flight bound by its at most [`MAX_BATCH_MESSAGES`] messages;
    /// reading then pauses until the calls are back under it), and the
    /// answers go out as one array once the last is in (none when the batch
    /// held only notifications and answers). A batch refused whole (broken,
    /// empty, over [`MAX_BATCH_MESSAGES`]) gets one error. False when the
    /// output is gone.
    pub(super) async fn batch(&mut self, bytes: &[u8]) -> bool {
        let messages = match split_batch(bytes, MAX_BATCH_MESSAGES) {
            Ok(messages) => messages,
            Err(error) => return self.outbox.error(None, &error).await,
        };
        // One answer at most per message: sending never waits.
        let (sender, answers) = mpsc::channel(messages.len());
        let reply = Outbox(sender);
        for message in messages {
            if !self
                .handle_one(message.get().as_bytes(), &reply, true)
                .await
            {
                return false;
            }
        }
        // The calls still running hold the rest of `reply`: the array is
        // written when the last of them has answered (or ended without).
        drop(reply);
        self.batches
            .spawn(answer_batch(answers, self.outbox.clone()));
        true
    }
}

/// Writes a batch's answers, as they come from `answers`, as one array
/// once every sender is gone; nothing when none came.
async fn answer_batch(mut answers: mpsc::Receiver<Frame>, outbox: Outbox) {
    let mut answered = Vec::new();
    while let Some(frame) = answers.recv().await {
        if let Frame::Message(answer) = frame {
            answered.push(answer);
        }
    }
    if let Some(array) = batch_answer(&answered) {
        outbox.send(array).await;
    }
}

/// Adds to `ids` the requests of a batch read as the server stops (each
/// then answered that the server stops); one already among them is not
/// added twice. A batch that cannot be read adds nothing.
pub(super) fn requests_of(bytes: &[u8], ids: &mut Vec<RequestId>) {
    let Ok(messages) = split_batch(bytes, MAX_BATCH_MESSAGES) else {
        return;
    };
    for message in messages {
        super::request_of(message.get().as_bytes(), ids);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_read_at_the_stop_names_its_requests_once() {
        let mut ids = vec![RequestId::Number(1)];
        let batch = br#"[{"jsonrpc":"2.0","id":1,"method":"ping"},
            {"jsonrpc":"2.0","id":"b","method":"tools/list"},
            {"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}},
            {"jsonrpc":"2.0","id":7,"result":{}}]"#;
        requests_of(batch, &mut ids);
        assert_eq!(ids, [RequestId::Number(1), RequestId::String("b".into())]);
        requests_of(b"[", &mut ids);
        assert_eq!(ids.len(), 2);
    }
}
