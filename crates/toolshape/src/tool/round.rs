//! One round of a 2026-07-28 multi round-trip request, seen from the
//! handler: the answers the client already gave (from the retry) are handed
//! out in the order the handler asks; a question without an answer is
//! recorded and never resolves, and the call then ends with an
//! `input_required` result listing every question recorded.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};

use serde_json::{Map, Value};
use tokio::sync::Notify;
use toolshape_protocol::asks::Ask;

use super::ask::{AskError, Asker};
use super::handler::BoxFuture;

/// Most questions one request may ask over all its rounds.
pub(crate) const MAX_QUESTIONS: usize = 64;

/// The answers of earlier rounds and the questions of this one.
#[derive(Debug, Default)]
pub(crate) struct Round {
    answers: Map<String, Value>,
    asked: AtomicUsize,
    pending: Mutex<Vec<(String, Ask)>>,
    wake: Notify,
    /// Its questions were taken: the run ends with them.
    ended: AtomicBool,
}

/// The key of the `n`th question (from 1) a request asks.
fn generated_key(ask: &Ask, n: usize) -> String {
    let kind = match ask {
        Ask::Elicit(_) => "elicitation",
        Ask::Sample(_) => "sampling",
        Ask::Roots => "roots",
        #[allow(unreachable_patterns)]
        _ => "input",
    };
    format!("{kind}-{n}")
}

impl Round {
    /// A round knowing `answers` (by key).
    pub(crate) fn new(answers: Map<String, Value>) -> Round {
        Round {
            answers,
            ..Round::default()
        }
    }

    /// Resolves once a question went unanswered.
    pub(crate) async fn asked(&self) {
        loop {
            let notified = self.wake.notified();
            if !self.pending().is_empty() {
                return;
            }
            notified.await;
        }
    }

    fn pending(&self) -> std::sync::MutexGuard<'_, Vec<(String, Ask)>> {
        self.pending.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The questions of this round, by key.
    pub(crate) fn take_questions(&self) -> Vec<(String, Ask)> {
        let questions = std::mem::take(&mut *self.pending());
        if !questions.is_empty() {
            self.ended.store(true, Ordering::Release);
        }
        questions
    }

    /// The answers handed out or known so far.
    pub(crate) fn answers(&self) -> &Map<String, Value> {
        &self.answers
    }
}

impl Asker for Round {
    fn ask(&self, key: Option<String>, ask: Ask) -> BoxFuture<Result<Value, AskError>> {
        let n = self.asked.fetch_add(1, Ordering::AcqRel) + 1;
        if n > MAX_QUESTIONS {
            return Box::pin(async {
                Err(AskError::Malformed {
                    method: "input",
                    reason: format!("more than {MAX_QUESTIONS} questions in one request"),
                })
            });
        }
        let key = key.unwrap_or_else(|| generated_key(&ask, n));
        if let Some(answer) = self.answers.get(&key) {
            let answer = answer.clone();
            return Box::pin(async move { Ok(answer) });
        }
        self.pending().push((key, ask));
        self.wake.notify_waiters();
        // The call ends with this round; the answer comes with the retry.
        Box::pin(std::future::pending())
    }

    fn ended_for_input(&self) -> bool {
        self.ended.load(Ordering::Acquire)
    }
}
