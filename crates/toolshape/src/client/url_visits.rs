//! The URL-mode elicitations this client was sent (asked with
//! `elicitation/create`, or listed in a `-32042` error), so that only their
//! completions are passed on, each once: MCP 2025-11-25 has clients ignore
//! `notifications/elicitation/complete` for unknown or already-completed ids.
//! A completion that comes before the message naming its id (over HTTP the
//! two travel on different streams) is kept 5 s for it.

use std::collections::VecDeque;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use tokio::sync::broadcast;
use toolshape_protocol::ErrorObject;
use toolshape_protocol::asks::{Ask, ElicitParams};

use crate::tool::{MAX_ELICITATION_ID_BYTES, SentElicitations};

/// How many completions a watcher may fall behind by.
const QUEUED: usize = 256;
/// How many completions of ids not (yet) sent are kept, and for how long:
/// over HTTP one may come on the GET stream before the response naming
/// its id is read.
const EARLY_KEPT: usize = 16;
const EARLY_FOR: Duration = Duration::from_secs(5);

/// The URL visits a server asked for, and their completions.
#[derive(Debug)]
pub(crate) struct UrlVisits {
    sent: Mutex<Ids>,
    completions: broadcast::Sender<String>,
}

/// The ids sent and not completed, and the completions that came first.
#[derive(Debug, Default)]
struct Ids {
    sent: SentElicitations,
    early: VecDeque<(Instant, String)>,
}

impl Default for UrlVisits {
    fn default() -> Self {
        UrlVisits {
            sent: Mutex::default(),
            completions: broadcast::channel(QUEUED).0,
        }
    }
}

impl UrlVisits {
    /// The server asked `ask`: a URL-mode elicitation is remembered.
    pub(crate) fn asked(&self, ask: &Ask) {
        if let Ask::Elicit(params) = ask {
            self.remember(params);
        }
    }

    /// The server answered `error`: the elicitations of a `-32042` are
    /// remembered.
    pub(crate) fn refused(&self, error: &ErrorObject) {
        if let Some(data) = error.url_elicitation_required_data() {
            for params in &data.elicitations {
                self.remember(params);
            }
        }
    }

    fn remember(&self, params: &ElicitParams) {
        let Some(id) = params.elicitation_id.as_ref().filter(|_| params.is_url()) else {
            return;
        };
        let completed_first = {
            let mut ids = self.sent.lock().unwrap_or_else(PoisonError::into_inner);
            ids.forget_old_early();
            match ids.early.iter().position(|(_, early)| early == id) {
                Some(at) => ids.early.remove(at).is_some(),
                None => {
                    ids.sent.remember(id);
                    false
                }
            }
        };
        if completed_first {
            let _ = self.completions.send(id.clone());
        }
    }

    /// The server says the elicitation `id` is complete: passed on to the
    /// watchers if it was sent and not yet completed; kept a few seconds
    /// if not sent yet (it may be named in a response not read yet).
    pub(crate) fn completed(&self, id: String) {
        if id.len() > MAX_ELICITATION_ID_BYTES {
            return;
        }
        let known = {
            let mut ids = self.sent.lock().unwrap_or_else(PoisonError::into_inner);
            let known = ids.sent.take(&id);
            if !known {
                ids.forget_old_early();
                if ids.early.len() == EARLY_KEPT {
                    ids.early.pop_front();
                }
                ids.early.push_back((Instant::now(), id.clone()));
            }
            known
        };
        if known {
            let _ = self.completions.send(id);
        } else {
            tracing::debug!(
                id = %toolshape_protocol::text::excerpt(&id, 100),
                "a completion of an elicitation not sent (yet), or already complete: kept 5 s"
            );
        }
    }

    /// The completions from now on.
    pub(crate) fn watch(&self) -> broadcast::Receiver<String> {
        self.completions.subscribe()
    }
}

impl Ids {
    /// Drops the completions that came first more than [`EARLY_FOR`] ago.
    fn forget_old_early(&mut self) {
        while self
            .early
            .front()
            .is_some_and(|(at, _)| at.elapsed() > EARLY_FOR)
        {
            self.early.pop_front();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_sent_elicitation_completes_and_only_once() {
        let visits = UrlVisits::default();
        let mut completions = visits.watch();
        visits.completed("unknown".into());
        visits.asked(&Ask::Elicit(ElicitParams::url(
            "Go",
            "https://e.example",
            "a",
        )));
        let form = ElicitParams::form("Name?", serde_json::json!({"type": "object"}));
        visits.asked(&Ask::Elicit(form));
        let page = ElicitParams::url("Sign in", "https://e.example/s", "b");
        visits.refused(&ErrorObject::url_elicitation_required("first", vec![page]));
        let long = ElicitParams::url("Go", "https://e.example", "x".repeat(300));
        visits.asked(&Ask::Elicit(long));
        visits.completed("x".repeat(300));
        visits.completed("b".into());
        visits.completed("a".into());
        visits.completed("a".into());
        assert_eq!(completions.try_recv().ok().as_deref(), Some("b"));
        assert_eq!(completions.try_recv().ok().as_deref(), Some("a"));
        assert!(completions.try_recv().is_err());
        // A completion that comes before the response naming its id is
        // passed on once that is read (an unknown id never is).
        visits.completed("c".into());
        assert!(completions.try_recv().is_err());
        let page = ElicitParams::url("Sign in", "https://e.example/c", "c");
        visits.refused(&ErrorObject::url_elicitation_required("first", vec![page]));
        assert_eq!(completions.try_recv().ok().as_deref(), Some("c"));
        visits.completed("c".into());
        assert!(completions.try_recv().is_err(), "once");
    }
}
