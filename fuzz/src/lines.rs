//! An independent model of stdio framing: which answers a peer's bytes must
//! get. Lines end at `\n` (a `\r` before it is dropped); blank lines are
//! skipped; a line longer than the limit is skipped with one error answer;
//! any other line is classified, and a request or an invalid message gets
//! exactly one answer with its id, a notification or response none.

use toolshape_protocol::{Incoming, RequestId, Response, classify, methods};

/// The answer one line must get.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expected {
    /// An answer with exactly this id (`None`: `"id": null`).
    Id(Option<RequestId>),
    /// An error answer whose id the server reads from the line's first bytes.
    Oversized,
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
            expectation.answers.push(Expected::Oversized);
            continue;
        }
        let line = raw.strip_suffix(b"\r").unwrap_or(raw);
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match classify(line) {
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

/// Checks `answers` against `expectation`: every answer owed is given
/// exactly once (a cancelled call's may be missing), and nothing else.
pub fn check(expectation: &Expectation, answers: &[Response]) {
    let mut owed: Vec<Option<RequestId>> = Vec::new();
    let mut oversized = 0usize;
    for expected in &expectation.answers {
        match expected {
            Expected::Id(id) => owed.push(id.clone()),
            Expected::Oversized => oversized += 1,
        }
    }
    let mut unmatched = Vec::new();
    for answer in answers {
        let id = answer.id().cloned();
        match owed.iter().position(|owed| *owed == id) {
            Some(index) => {
                owed.swap_remove(index);
            }
            None => unmatched.push(id),
        }
    }
    // What is left over must be the oversized lines' answers (errors, whose
    // ids the server may or may not have found).
    assert!(
        unmatched.len() <= oversized,
        "answers nobody asked for: {unmatched:?} (owed {:?})",
        expectation.answers
    );
    let missing = owed.len() + (oversized - unmatched.len());
    if !expectation.cancels {
        assert_eq!(
            missing,
            0,
            "answers never given: {owed:?} and {} for oversized lines",
            oversized - unmatched.len()
        );
    }
}
