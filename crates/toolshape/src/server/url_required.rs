//! A handler's [`UrlElicitationRequired`], answered as the client's
//! revision can: the `-32042` error on 2025-11-25 (the session then told of
//! each completion), an `input_required` round asking the URLs on
//! 2026-07-28; a client that cannot take URL elicitation is answered as for
//! any failure, with a text that names them.

use toolshape_protocol::asks::Ask;
use toolshape_protocol::{ErrorObject, ProtocolVersion};

use super::asking::AskPlan;
use super::work::{Answer, Running};
use crate::tool::UrlElicitationRequired;

/// The answer to a request whose handler needs `required` completed first,
/// when its client can take it: the `-32042` error (2025-11-25) or an
/// `input_required` round (2026-07-28). `None` otherwise: the caller
/// answers with the failure's text, which names the URLs.
pub(super) fn answer(running: &Running<'_>, required: &UrlElicitationRequired) -> Option<Answer> {
    let can_visit = running
        .asking
        .context
        .capabilities
        .supports_url_elicitation()
        && !required.elicitations().is_empty();
    if !can_visit {
        return None;
    }
    match (running.version, running.plan) {
        (ProtocolVersion::V2025_11_25, AskPlan::Session { requests, .. }) => {
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
        (version, AskPlan::Round { .. }) if version.is_stateless() => {
            // Keyed by their ids, so that each round asks them alike.
            let questions = required
                .elicitations()
                .iter()
                .map(|elicitation| {
                    let key = elicitation.elicitation_id.clone().unwrap_or_default();
                    (key, Ask::Elicit(elicitation.clone()))
                })
                .collect();
            let result = running
                .plan
                .input_required(running.shared, &running.asking, questions);
            Some(Answer::result(running.id, &result))
        }
        _ => None,
    }
}
