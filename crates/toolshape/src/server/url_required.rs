//! A handler's [`UrlElicitationRequired`], answered as the client's
//! revision can: the `-32042` error on 2025-11-25 (the session then told of
//! each completion), an `input_required` round asking the URLs on
//! 2026-07-28, or a tool error naming them to a client that cannot take URL
//! elicitation.

use toolshape_protocol::asks::Ask;
use toolshape_protocol::{ErrorObject, ProtocolVersion};

use super::asking::AskPlan;
use super::shape;
use super::work::{Answer, Running};
use crate::tool::{ToolError, ToolFailure, UrlElicitationRequired};

/// The answer of a tool (`tool`) that needs `required` completed first.
pub(super) fn answer(
    running: &Running<'_>,
    tool: &str,
    required: &UrlElicitationRequired,
) -> Answer {
    let can_visit = running
        .asking
        .context
        .capabilities
        .supports_url_elicitation()
        && !required.elicitations().is_empty();
    match (running.version, running.plan) {
        (ProtocolVersion::V2025_11_25, AskPlan::Session { requests, .. }) if can_visit => {
            for elicitation in required.elicitations() {
                if let Some(elicitation_id) = &elicitation.elicitation_id {
                    requests.sent_elicitation(elicitation_id);
                }
            }
            let error = ErrorObject::url_elicitation_required(
                required.message(),
                required.elicitations().to_vec(),
            );
            Answer::error(running.id, &error, false)
        }
        (version, AskPlan::Round { .. }) if version.is_stateless() && can_visit => {
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
            Answer::result(running.id, &result)
        }
        (version, _) => {
            let failure = ToolFailure::Tool(ToolError::new(required.text()));
            Answer::result(running.id, &shape::failure(&failure, tool, version))
        }
    }
}
