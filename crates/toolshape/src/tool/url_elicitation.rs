//! URL-mode elicitation beyond the question itself (2025-11-25): a handler
//! that cannot go on until the user has visited a URL
//! ([`UrlElicitationRequired`], the `-32042` error), and the server telling
//! the client that such a visit is over ([`UrlElicitations::complete`],
//! `notifications/elicitation/complete`).

use std::fmt;

use tokio::sync::broadcast;
use toolshape_protocol::asks::ElicitParams;

use super::ToolError;

/// How many completions a slow connection may fall behind by before it
/// misses some (each is a hint: the client may retry, or its user may).
const COMPLETIONS_QUEUED: usize = 256;

/// The longest elicitation id remembered, sent on or relayed, in bytes.
pub(crate) const MAX_ELICITATION_ID_BYTES: usize = 256;

/// How many URL-mode elicitations one peer is remembered to have been sent,
/// for their completions (the oldest forgotten first).
const ELICITATIONS_REMEMBERED: usize = 64;

/// The ids of the URL-mode elicitations one peer was sent and whose
/// completion it was not yet told: the last 64, ids of at most 256 bytes
/// (a longer one is never remembered, so never completed). Kept by a
/// server per session, and by a client for its connection.
#[derive(Debug, Default)]
pub(crate) struct SentElicitations(std::collections::VecDeque<String>);

impl SentElicitations {
    /// `id` was sent (again: remembered as the newest).
    pub(crate) fn remember(&mut self, id: &str) {
        if id.len() > MAX_ELICITATION_ID_BYTES {
            return;
        }
        self.take(id);
        if self.0.len() == ELICITATIONS_REMEMBERED {
            self.0.pop_front();
        }
        self.0.push_back(id.to_owned());
    }

    /// Whether `id` was sent and not yet completed; it is forgotten then.
    pub(crate) fn take(&mut self, id: &str) -> bool {
        match self.0.iter().position(|sent| sent == id) {
            Some(at) => self.0.remove(at).is_some(),
            None => false,
        }
    }
}

/// A handler's answer that it can go on only once the user has completed
/// these URL-mode elicitations (sign in elsewhere, pay, consent), then
/// retried the request. Return it as the handler's error (a tool's, a
/// prompt's or a resource reader's: it converts into a [`ToolError`]); the
/// server answers each client as its revision can:
///
/// - 2025-11-25, with URL elicitation declared: the `-32042`
///   `URLElicitationRequiredError` listing them; the session is then told
///   of each one's [`UrlElicitations::complete`].
/// - 2026-07-28, with URL elicitation declared: an `input_required` result
///   asking them (the client retries once the user is done; the handler
///   runs again and decides whether it now can). A visit the user declined
///   or cancelled is not asked again: the request fails as below. Without
///   URL elicitation declared: `-32021`, as for any question the client
///   cannot take.
/// - Otherwise: a tool error (for a prompt or a read, a protocol error)
///   whose text names each URL.
///
/// ```
/// use toolshape::tool::UrlElicitationRequired;
/// let required = UrlElicitationRequired::new("Sign in to your calendar first")
///     .elicitation("Sign in", "https://example.com/connect?id=e-1", "e-1");
/// assert_eq!(required.elicitations().len(), 1);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct UrlElicitationRequired {
    message: String,
    elicitations: Vec<ElicitParams>,
}

impl UrlElicitationRequired {
    /// The error, saying `message`; add what to visit with
    /// [`UrlElicitationRequired::elicitation`].
    pub fn new(message: impl Into<String>) -> Self {
        UrlElicitationRequired {
            message: message.into(),
            elicitations: Vec::new(),
        }
    }

    /// One more URL to visit: why (`message`), where (`url`), and the id
    /// its completion will name.
    #[must_use]
    pub fn elicitation(
        mut self,
        message: impl Into<String>,
        url: impl Into<String>,
        elicitation_id: impl Into<String>,
    ) -> Self {
        self.elicitations
            .push(ElicitParams::url(message, url, elicitation_id));
        self
    }

    /// The same error for elicitations given as parameters (a gateway
    /// relaying its upstream's): those in URL mode with a URL and an id of
    /// at most 256 bytes, the first 64 of them.
    pub fn from_params(message: impl Into<String>, elicitations: Vec<ElicitParams>) -> Self {
        let elicitations = elicitations
            .into_iter()
            .filter(|params| {
                params.is_url()
                    && params.url.is_some()
                    && params
                        .elicitation_id
                        .as_ref()
                        .is_some_and(|id| id.len() <= MAX_ELICITATION_ID_BYTES)
            })
            .take(super::MAX_QUESTIONS)
            .collect();
        UrlElicitationRequired {
            message: message.into(),
            elicitations,
        }
    }

    /// What the handler said.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The elicitations to complete, each in URL mode with an id.
    pub fn elicitations(&self) -> &[ElicitParams] {
        &self.elicitations
    }

    /// The error as text, for a client that cannot take URL elicitation:
    /// the message, then each URL to visit.
    pub fn text(&self) -> String {
        let mut text = self.message.clone();
        for elicitation in &self.elicitations {
            let url = elicitation.url.as_deref().unwrap_or_default();
            text.push_str(&format!("\n- {}: {url}", elicitation.message));
        }
        if !self.elicitations.is_empty() {
            text.push_str("\nVisit each, then try again.");
        }
        text
    }
}

impl fmt::Display for UrlElicitationRequired {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for UrlElicitationRequired {}

impl From<UrlElicitationRequired> for ToolError {
    fn from(required: UrlElicitationRequired) -> ToolError {
        // The text names the URLs: what any client that cannot take the
        // error as such (OTC, older revisions) is told.
        ToolError::with_source(required.text(), required).retryable(true)
    }
}

/// Where a server announces that the out-of-band interaction of a URL-mode
/// elicitation is over (`notifications/elicitation/complete`, 2025-11-25):
/// cheap to clone and shareable between servers
/// ([`crate::ServerBuilder::url_elicitations`]). Only a 2025-11-25 session
/// that was sent the elicitation is told, once (make ids unique: every
/// session sent the same id is told); an id no session holds is dropped.
/// Sessions remember the last 64 ids they were sent. Over stdio the session
/// is told on its connection; over HTTP, on its GET stream, so a client
/// without one open at that moment misses it (the notification is a hint:
/// the client may retry all the same).
///
/// ```
/// use toolshape::tool::UrlElicitations;
/// let elicitations = UrlElicitations::new();
/// // Later, when the browser comes back to the server's callback:
/// elicitations.complete("e-1");
/// ```
#[derive(Clone)]
pub struct UrlElicitations {
    completed: broadcast::Sender<std::sync::Arc<str>>,
}

impl Default for UrlElicitations {
    fn default() -> Self {
        UrlElicitations {
            completed: broadcast::channel(COMPLETIONS_QUEUED).0,
        }
    }
}

impl fmt::Debug for UrlElicitations {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UrlElicitations")
            .field("connections", &self.completed.receiver_count())
            .finish()
    }
}

impl UrlElicitations {
    /// A new, unshared place to announce completions.
    pub fn new() -> UrlElicitations {
        UrlElicitations::default()
    }

    /// Tells the sessions that were sent the elicitation `elicitation_id`
    /// (asked, or listed in a `-32042` error) that it is complete. An id
    /// longer than 256 bytes is never told (nor remembered).
    pub fn complete(&self, elicitation_id: &str) {
        if elicitation_id.len() > MAX_ELICITATION_ID_BYTES {
            return;
        }
        let _ = self.completed.send(std::sync::Arc::from(elicitation_id));
    }

    /// The completions announced from now on, for one connection or stream.
    pub(crate) fn watch(&self) -> broadcast::Receiver<std::sync::Arc<str>> {
        self.completed.subscribe()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_complete_url_elicitations_are_kept_and_the_text_names_each_url() {
        let form = ElicitParams::form("Name?", serde_json::json!({"type": "object"}));
        let mut no_id = ElicitParams::url("Go", "https://example.com/a", "x");
        no_id.elicitation_id = None;
        let kept = ElicitParams::url("Sign in", "https://example.com/b", "e-2");
        let required =
            UrlElicitationRequired::from_params("Needs sign-in", vec![form, no_id, kept.clone()]);
        assert_eq!(required.elicitations(), std::slice::from_ref(&kept));
        // Bounded: ids of at most 256 bytes, at most 64 elicitations.
        let long = ElicitParams::url("Go", "https://example.com/c", "x".repeat(257));
        let many = vec![kept.clone(); 70];
        assert!(
            UrlElicitationRequired::from_params("m", vec![long])
                .elicitations()
                .is_empty()
        );
        assert_eq!(
            UrlElicitationRequired::from_params("m", many)
                .elicitations()
                .len(),
            64
        );
        let text = required.text();
        assert!(text.starts_with("Needs sign-in"), "{text}");
        assert!(text.contains("Sign in: https://example.com/b"), "{text}");
        assert!(!text.contains("example.com/a"), "{text}");
        let error = ToolError::from(required.clone());
        assert_eq!(error.message(), text);
        let source = std::error::Error::source(&error).and_then(|s| s.downcast_ref());
        assert_eq!(source, Some(&required));
    }
}
