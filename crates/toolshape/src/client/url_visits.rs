//! The URL-mode elicitations this client was sent (asked with
//! `elicitation/create`, or listed in a `-32042` error), so that only their
//! completions are passed on, each once: MCP 2025-11-25 has clients ignore
//! `notifications/elicitation/complete` for unknown or already-completed ids.

use std::collections::VecDeque;
use std::sync::{Mutex, PoisonError};

use tokio::sync::broadcast;
use toolshape_protocol::ErrorObject;
use toolshape_protocol::asks::{Ask, ElicitParams};

use crate::tool::MAX_ELICITATION_ID_BYTES;

/// How many URL-mode elicitations the client remembers (the oldest
/// forgotten first).
const REMEMBERED: usize = 64;
/// How many completions a watcher may fall behind by.
const QUEUED: usize = 256;

/// The URL visits a server asked for, and their completions.
#[derive(Debug)]
pub(crate) struct UrlVisits {
    sent: Mutex<VecDeque<String>>,
    completions: broadcast::Sender<String>,
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
        if id.len() > MAX_ELICITATION_ID_BYTES {
            return;
        }
        let mut sent = self.sent.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(at) = sent.iter().position(|known| known == id) {
            sent.remove(at);
        }
        if sent.len() == REMEMBERED {
            sent.pop_front();
        }
        sent.push_back(id.clone());
    }

    /// The server says the elicitation `id` is complete: passed on to the
    /// watchers if it was sent and not yet completed.
    pub(crate) fn completed(&self, id: String) {
        let known = {
            let mut sent = self.sent.lock().unwrap_or_else(PoisonError::into_inner);
            match sent.iter().position(|known| known == &id) {
                Some(at) => sent.remove(at).is_some(),
                None => false,
            }
        };
        if known {
            let _ = self.completions.send(id);
        } else {
            tracing::debug!(
                id = %toolshape_protocol::text::excerpt(&id, 100),
                "ignored the completion of an elicitation not sent, or already complete"
            );
        }
    }

    /// The completions from now on.
    pub(crate) fn watch(&self) -> broadcast::Receiver<String> {
        self.completions.subscribe()
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
    }
}
