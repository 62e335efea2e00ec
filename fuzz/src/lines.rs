//! An independent model of stdio framing: which answers a peer's bytes must
//! get. Lines end at `\n` (a `\r` before it is dropped); blank lines are
//! skipped; a line longer than the limit is skipped with one error answer
//! (at most one when it may be an answer to the server's own request: it
//! names `result` or `error`, maybe escaped);
//! any other line is classified, and a request or an invalid message gets
//! exactly one answer with its id, a notification or response none; a
//! `subscriptions/listen` at most one (an opened stream is acknowledged by
//! a notification and answered only when it ends). A line that is a
//! JSON-RPC batch (an array) is answered as a 2025-03-26 session answers it
//! (each message as if alone) or as any other refuses it (one error without
//! an id): the model does not follow the negotiation, so it takes either,
//! each of those answers at most once.

use toolshape_protocol::{Incoming, RequestId, Response, classify, methods};

/// The answer one line must get.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expected {
    /// An answer with exactly this id (`None`: `"id": null`).
    Id(Option<RequestId>),
    /// An error answer whose id the server reads from the line's first bytes.
    Oversized,
    /// At most one error answer: an oversized line that may be an answer
    /// (the server fails its own request with that id instead of replying).
    MaybeOversized,
    /// At most one answer with this id (a `subscriptions/listen`, a
    /// message of a batch; `None`: no id).
    Maybe(Option<RequestId>),
}

/// What a peer's input must be answered with.
#[derive(Debug, Default)]
pub struct Expectation {
    /// One entry per answer owed.
    pub answers: Vec<Expected>,
    /// Whether the input cancels anything (a cancelled call may go unanswered).
    pub cancels: bool,
}

/// The answers `input` is owed, lines longer than `max` bytes being oversized.
pub fn expected(input: &[u8], max: usize) -> Expectation {
    let mut expectation = Expectation::default();
    let mut segments: Vec<&[u8]> = input.split(|&b| b == b'\n').collect();
    // The text after the last newline is a line only if it holds something.
    if input.ends_with(b"\n") {
        segments.pop();
    }
    for raw in segments {
        if raw.len() > max {
            expectation.answers.push(match may_be_an_answer(raw) {
                true => Expected::MaybeOversized,
                false => Expected::Oversized,
            });
            continue;
        }
        let line = raw.strip_suffix(b"\r").unwrap_or(raw);
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        if toolshape_protocol::is_batch(line) {
            batch(line, &mut expectation);
            continue;
        }
        match classify(line) {
            Incoming::Request(request) if request.method == methods::SUBSCRIPTIONS_LISTEN => {
                expectation.answers.push(Expected::Maybe(Some(request.id)));
            }
            Incoming::Request(request) => expectation.answers.push(Expected::Id(Some(request.id))),
            Incoming::Invalid { id, .. } => expectation.answers.push(Expected::Id(id)),
            Incoming::Notification(notification) => {
                if notification.method == methods::CANCELLED {
                    expectation.cancels = true;
                }
            }
            Incoming::Response(_) => {}
        }
    }
    expectation
}

/// A batch line: refused whole with one error (no id), or, in a 2025-03-26
/// session, each of its messages answered as if it came alone.
fn batch(line: &[u8], expectation: &mut Expectation) {
    expectation.answers.push(Expected::Maybe(None));
    let Ok(messages) =
        toolshape_protocol::split_batch(line, toolshape_protocol::MAX_BATCH_MESSAGES)
    else {
        return;
    };
    for message in messages {
        match classify(message.get().as_bytes()) {
            Incoming::Request(request) => {
                expectation.answers.push(Expected::Maybe(Some(request.id)))
            }
            Incoming::Invalid { id, .. } => expectation.answers.push(Expected::Maybe(id)),
            Incoming::Notification(notification) => {
                if notification.method == methods::CANCELLED {
                    expectation.cancels = true;
                }
            }
            Incoming::Response(_) => {}
        }
    }
}

/// Whether an oversized line may read as an answer from its first bytes: it
/// names `result` or `error` somewhere, or escapes something (a member's
/// name may be written with escapes).
fn may_be_an_answer(line: &[u8]) -> bool {
    // The server reads no further than this.
    let line = &line[..line.len().min(PREFIX_BYTES)];
    let names = |word: &[u8]| line.windows(word.len()).any(|window| window == word);
    names(b"result") || names(b"error") || line.contains(&b'\\')
}

/// How much of an over-long line the server reads (`transport/lines.rs`).
const PREFIX_BYTES: usize = 512;

/// Checks `answers` against `expectation`: every answer owed is given
/// exactly once (a cancelled call's may be missing), and nothing else.
pub fn check(expectation: &Expectation, answers: &[Response]) {
    let mut owed: Vec<Option<RequestId>> = Vec::new();
    let mut maybe: Vec<Option<RequestId>> = Vec::new();
    let mut oversized = 0usize;
    let mut maybe_oversized = 0usize;
    for expected in &expectation.answers {
        match expected {
            Expected::Id(id) => owed.push(id.clone()),
            Expected::Oversized => oversized += 1,
            Expected::MaybeOversized => maybe_oversized += 1,
            Expected::Maybe(id) => maybe.push(id.clone()),
        }
    }
    // Answers that are not owed by id: the oversized lines' (errors, whose
    // ids the server may or may not have found), or the listens' (which may
    // be answered, with an error, or not); an answer whose id a listen has
    // may be either.
    let (mut oversized_only, mut either) = (0usize, 0usize);
    let mut unmatched = Vec::new();
    for answer in answers {
        let id = answer.id().cloned();
        if let Some(index) = owed.iter().position(|owed| *owed == id) {
            owed.swap_remove(index);
        } else if let Some(index) = maybe.iter().position(|maybe| *maybe == id) {
            maybe.swap_remove(index);
            either += 1;
        } else {
            oversized_only += 1;
            unmatched.push(id);
        }
    }
    assert!(
        oversized_only <= oversized + maybe_oversized,
        "answers nobody asked for: {unmatched:?} (owed {:?})",
        expectation.answers
    );
    if !expectation.cancels {
        assert!(owed.is_empty(), "answers never given: {owed:?}");
        assert!(
            oversized <= oversized_only + either,
            "answers never given for {} oversized lines",
            oversized - oversized_only - either
        );
    }
}
