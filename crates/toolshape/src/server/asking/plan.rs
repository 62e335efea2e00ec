//! Deciding, for one request, how its handler asks the client, and ending a
//! 2026-07-28 round with an `input_required` result.

use std::sync::Arc;

use serde_json::{Map, Value};
use toolshape_protocol::asks::Ask;
use toolshape_protocol::{ClientCapabilities, ErrorObject, InputRequiredResult, ProtocolVersion};

use super::super::Shared;
use super::super::outbox::Outbox;
use super::super::session::Session;
use super::{RequestState, ServerRequests, in_round, over_session};
use crate::tool::Asking;

/// What a request is, for its `requestState`: method, name (tool, prompt or
/// resource URI) and arguments.
#[derive(Debug, Clone)]
pub(crate) struct RequestIdentity {
    pub(crate) method: &'static str,
    pub(crate) name: String,
    pub(crate) arguments: Option<Map<String, Value>>,
}

/// How one request's handler asks the client.
#[derive(Debug)]
pub(crate) enum AskPlan {
    /// A handshake session: server-to-client requests.
    Session {
        capabilities: Arc<ClientCapabilities>,
        version: ProtocolVersion,
        requests: Arc<ServerRequests>,
    },
    /// A 2026-07-28 request: one round, with the answers given so far.
    Round {
        capabilities: Arc<ClientCapabilities>,
        version: ProtocolVersion,
        answers: Map<String, Value>,
        identity: RequestIdentity,
    },
}

/// What a 2026-07-28 retry carries.
#[derive(Debug, Default)]
pub(crate) struct Retry {
    pub(crate) input_responses: Option<Map<String, Value>>,
    pub(crate) request_state: Option<String>,
}

impl AskPlan {
    /// The plan of a request served under `version`.
    pub(crate) fn new(
        shared: &Shared,
        session: &Session,
        version: ProtocolVersion,
        client_capabilities: Option<&ClientCapabilities>,
        identity: RequestIdentity,
        retry: Retry,
    ) -> Result<AskPlan, ErrorObject> {
        if !version.is_stateless() {
            return Ok(AskPlan::Session {
                // As its revision has them (`ClientCapabilities::for_revision`).
                capabilities: session.client_capabilities(),
                version,
                requests: Arc::clone(&session.requests),
            });
        }
        let mut answers = Map::new();
        let questions = match &retry.request_state {
            Some(sealed) => {
                let state = RequestState::open(
                    sealed,
                    &shared.state_key,
                    identity.method,
                    &identity.name,
                    identity.arguments.as_ref(),
                )
                .map_err(ErrorObject::invalid_params)?;
                answers = state.answers;
                Some(state.questions)
            }
            None => None,
        };
        // Only answers to the questions asked count; anything else the
        // client sends is ignored. Without a state, the first round's keys
        // are taken as given (they are the client's own answers).
        for (key, answer) in retry.input_responses.unwrap_or_default() {
            let asked = questions
                .as_ref()
                .is_none_or(|questions| questions.iter().any(|q| q == &key));
            if !asked {
                continue;
            }
            // A response is the result of the request asked: an object.
            if !answer.is_object() {
                return Err(ErrorObject::invalid_params(format!(
                    "inputResponses.{}: a response is the result object of the request it \
                     answers, not {}",
                    toolshape_protocol::text::excerpt(&key, 64),
                    json_kind(&answer)
                )));
            }
            if answers.len() < crate::tool::MAX_QUESTIONS {
                answers.insert(key, answer);
            }
        }
        Ok(AskPlan::Round {
            capabilities: Arc::new(client_capabilities.cloned().unwrap_or_default()),
            version,
            answers,
            identity,
        })
    }

    /// The handler's way to ask; `outbox` carries a session's requests.
    pub(crate) fn asking(&self, shared: &Shared, outbox: Option<&Outbox>) -> Asking {
        match self {
            AskPlan::Session {
                capabilities,
                version,
                requests,
            } => over_session(
                Arc::clone(capabilities),
                *version,
                Arc::clone(requests),
                outbox.cloned(),
                shared.options.ask_timeout,
            ),
            AskPlan::Round {
                capabilities,
                version,
                answers,
                ..
            } => in_round(Arc::clone(capabilities), *version, answers.clone()),
        }
    }

    /// Whether the handler may send the client requests over a handshake
    /// session (an HTTP answer must then be an event stream).
    #[cfg_attr(not(feature = "server-http"), allow(dead_code))]
    pub(crate) fn may_ask_over_session(&self) -> bool {
        match self {
            AskPlan::Session { capabilities, .. } => {
                capabilities.elicitation.is_some()
                    || capabilities.sampling.is_some()
                    || capabilities.roots.is_some()
            }
            AskPlan::Round { .. } => false,
        }
    }

    /// The `input_required` result ending a round that asked `questions`.
    pub(crate) fn input_required(
        &self,
        shared: &Shared,
        asking: &Asking,
        questions: Vec<(String, Ask)>,
    ) -> InputRequiredResult {
        let AskPlan::Round { identity, .. } = self else {
            return InputRequiredResult::new(Map::new(), None);
        };
        let answers = asking
            .round
            .as_ref()
            .map(|round| round.answers().clone())
            .unwrap_or_default();
        let mut requests = Map::new();
        for (key, ask) in &questions {
            requests.insert(key.clone(), modern_ask(ask).to_input_request());
        }
        let state = RequestState::new(
            identity.method,
            &identity.name,
            identity.arguments.as_ref(),
            answers,
            questions.into_iter().map(|(key, _)| key).collect(),
            shared.options.request_state_ttl,
        );
        InputRequiredResult::new(requests, Some(state.seal(&shared.state_key)))
    }
}

/// `ask` as 2026-07-28 words it: a URL-mode elicitation has no
/// `elicitationId` there (the client learns the outcome by retrying).
fn modern_ask(ask: &Ask) -> std::borrow::Cow<'_, Ask> {
    match ask {
        Ask::Elicit(params) if params.elicitation_id.is_some() => {
            let mut params = params.clone();
            params.elicitation_id = None;
            std::borrow::Cow::Owned(Ask::Elicit(params))
        }
        _ => std::borrow::Cow::Borrowed(ask),
    }
}

/// The JSON type of `value`, for messages.
fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
