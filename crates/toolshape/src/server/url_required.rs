//! A handler's [`UrlElicitationRequired`], answered as the client's
//! revision can: the `-32042` error on 2025-11-25 (the session then told of
//! each completion), an `input_required` round asking the URLs on
//! 2026-07-28 (`-32021` to a client that did not declare URL elicitation,
//! as for any question it cannot take); any other client is answered as for
//! any failure, with a text that names the URLs, as is a 2026-07-28 client
//! that declined or cancelled a visit.

use serde_json::{Map, Value};
use toolshape_protocol::asks::{Ask, ElicitAction};
use toolshape_protocol::{ClientCapabilities, ErrorObject};

use super::asking::AskPlan;
use super::work::{Answer, Running};
use crate::tool::{MAX_QUESTIONS, UrlElicitationRequired};

/// The answer to a request whose handler needs `required` completed first,
/// when its client can take it: the `-32042` error (2025-11-25), an
/// `input_required` round (2026-07-28) or, on 2026-07-28 without URL
/// elicitation declared, `-32021`. `None` otherwise: the caller answers
/// with the failure's text, which names the URLs.
pub(super) fn answer(running: &Running<'_>, required: &UrlElicitationRequired) -> Option<Answer> {
    if required.elicitations().is_empty() {
        return None;
    }
    let can_visit = running
        .asking
        .context
        .capabilities
        .supports_url_elicitation();
    match (running.version, running.plan) {
        (version, AskPlan::Session { requests, .. })
            if version.has_url_elicitation_completion() && can_visit =>
        {
            for elicitation in required.elicitations() {
                if let Some(elicitation_id) = &elicitation.elicitation_id {
                    requests.sent_elicitation(elicitation_id);
                }
            }
            let error = ErrorObject::url_elicitation_required(
                required.message(),
                required.elicitations().to_vec(),
            );
            Some(Answer::error(running.id, &error, false))
        }
        (version, AskPlan::Round { .. }) if version.is_stateless() && !can_visit => {
            let mut needed = ClientCapabilities::default();
            let mut modes = Map::new();
            modes.insert("url".into(), Value::Object(Map::new()));
            needed.elicitation = Some(modes);
            let error = ErrorObject::missing_required_client_capability(required.text(), &needed);
            Some(Answer::error(running.id, &error, true))
        }
        (version, AskPlan::Round { .. }) if version.is_stateless() => {
            let questions: Vec<(String, Ask)> = required
                .elicitations()
                .iter()
                .take(MAX_QUESTIONS)
                .map(|elicitation| (question_key(elicitation), Ask::Elicit(elicitation.clone())))
                .collect();
            // A visit the user declined or cancelled is not asked again:
            // the request fails, its text naming the pages.
            let answers = running.asking.round.as_ref()?.answers();
            let refused = questions.iter().any(|(key, _)| {
                answers
                    .get(key)
                    .and_then(|answer| answer.get("action"))
                    .is_some_and(|action| action != &serde_json::json!(ElicitAction::Accept))
            });
            if refused {
                return None;
            }
            let result = running
                .plan
                .input_required(running.shared, &running.asking, questions);
            Some(Answer::result(running.id, &result))
        }
        _ => None,
    }
}

/// The key of a URL visit asked in a 2026-07-28 round: from its id, so that
/// each round asks it alike, and apart from the handler's own questions'
/// keys.
fn question_key(elicitation: &toolshape_protocol::asks::ElicitParams) -> String {
    format!(
        "url-visit:{}",
        elicitation.elicitation_id.as_deref().unwrap_or_default()
    )
}
