//! Multi round-trip requests (2026-07-28), on the client's side: when the
//! server answers `input_required`, the client's handlers answer its
//! questions and the request goes again, with the answers and the server's
//! `requestState`, under a new id, a bounded number of times.

use std::sync::{Arc, LazyLock};
use std::task::Poll;
use std::time::Duration;

use memchr::memmem::Finder;
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use toolshape_protocol::asks::Ask;
use toolshape_protocol::prompts::GetPromptParams;
use toolshape_protocol::resources::ReadResourceParams;
use toolshape_protocol::{CallToolParams, ErrorObject, InputRequiredResult};

use super::Client;
use super::answer::ResultJson;
use super::error::{ClientError, ClientErrorKind};
use super::outgoing::Route;
use super::peer::Peer;
use crate::tool::{BoxFuture, MAX_QUESTIONS, ToolContext};

/// Most rounds one request goes through.
pub(crate) const MAX_ROUNDS: usize = 8;

/// What the retry of a request carries.
#[derive(Debug, Default)]
pub(crate) struct RoundInput {
    pub(crate) input_responses: Option<Map<String, Value>>,
    pub(crate) request_state: Option<String>,
}

/// The params of a request that may go in rounds: built once, then given
/// each retry's answers and state.
pub(crate) trait RoundParams: Serialize {
    /// Sets the answers and state the next round carries.
    fn set_round(&mut self, round: RoundInput);
}

impl RoundParams for CallToolParams {
    fn set_round(&mut self, round: RoundInput) {
        self.input_responses = round.input_responses;
        self.request_state = round.request_state;
    }
}

impl RoundParams for ReadResourceParams {
    fn set_round(&mut self, round: RoundInput) {
        self.input_responses = round.input_responses;
        self.request_state = round.request_state;
    }
}

impl RoundParams for GetPromptParams {
    fn set_round(&mut self, round: RoundInput) {
        self.input_responses = round.input_responses;
        self.request_state = round.request_state;
    }
}

/// Whether `error` is the server's `HeaderMismatch` (-32020).
pub(crate) fn is_header_mismatch(error: &ClientError) -> bool {
    matches!(error.kind(), ClientErrorKind::Protocol(object)
        if object.code == toolshape_protocol::error_code::HEADER_MISMATCH)
}

/// Vector searches for the words the fast paths below look for, built once.
static INPUT_REQUIRED: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new("input_required"));
static ESCAPE: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new("\\u"));
static RESULT_TYPE: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new("resultType"));

/// Whether `text` holds a `\uXXXX` escape (which could spell any letter).
fn has_escape(text: &str) -> bool {
    ESCAPE.find(text.as_bytes()).is_some()
}

/// Whether a result's text may be an interim `input_required` one. Most
/// results are final and say so by not holding the word at all: letters can
/// only be escaped as `\uXXXX`, so a result with neither the word nor such
/// an escape is final without a read.
fn may_be_input_required(text: &str) -> bool {
    INPUT_REQUIRED.find(text.as_bytes()).is_some() || has_escape(text)
}

/// A result's `resultType`, read without parsing the rest.
#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct Probe {
    result_type: Option<String>,
}

/// Whether a result is an interim `input_required` one (read without
/// parsing the rest).
fn is_input_required(raw: &RawValue) -> bool {
    serde_json::from_str::<Probe>(raw.get())
        .is_ok_and(|probe| probe.result_type.as_deref() == Some("input_required"))
}

/// A final 2026-07-28 result whose `resultType` the revision does not
/// define is invalid ("A `resultType` of any value unrecognized by the
/// client MUST be considered invalid"). Read only when the text may hold
/// another: a text without `\u` escapes (which could spell the key) whose
/// one mention of the word is `"resultType":"complete"` has that member at
/// its top or none (which means complete), whatever its nesting. A result
/// that does not parse is left to its reader, which says why.
fn unknown_result_type(text: &str) -> Result<(), ClientError> {
    if !has_escape(text) {
        let mut mentions = RESULT_TYPE.find_iter(text.as_bytes());
        match (mentions.next(), mentions.next()) {
            (None, _) => return Ok(()),
            (Some(at), None)
                if text
                    .get(at.saturating_sub(1)..)
                    .is_some_and(|rest| rest.starts_with(r#""resultType":"complete""#)) =>
            {
                return Ok(());
            }
            _ => {}
        }
    }
    match serde_json::from_str::<Probe>(text) {
        Ok(Probe {
            result_type: Some(kind),
        }) if kind != "complete" && kind != "input_required" => Err(ClientError::invalid(format!(
            "the result's resultType {:?} is not one this revision defines (complete, input_required)",
            toolshape_protocol::text::excerpt(&kind, 40)
        ))),
        _ => Ok(()),
    }
}

/// The answers to one round's questions, asked all at once: of the
/// client of the call a gateway serves when `relay`, else of this client's
/// handlers. The first error fails the round (and stops the other questions).
async fn answer_all(
    peer: &Peer,
    relay: Option<&Arc<ToolContext>>,
    requests: Map<String, Value>,
) -> Result<Map<String, Value>, ClientError> {
    if requests.len() > MAX_QUESTIONS {
        return Err(ClientError::invalid(format!(
            "the server asked {} questions in one round; at most {MAX_QUESTIONS} are answered",
            requests.len()
        )));
    }
    let mut answering: Vec<Answering> = Vec::with_capacity(requests.len());
    for (key, request) in requests {
        let ask = Ask::from_input_request(&request).ok_or_else(|| {
            ClientError::invalid(format!(
                "input request {} is not one a client answers",
                toolshape_protocol::text::excerpt(&key, 100)
            ))
        })?;
        let relay = relay.filter(|_| !peer.handlers.answer_relayed(&ask));
        let answer: BoxFuture<Result<Value, ErrorObject>> = match relay {
            Some(context) => {
                let (context, key) = (Arc::clone(context), key.clone());
                Box::pin(async move { context.relay_ask(Some(key), ask).await })
            }
            None => {
                let handlers = peer.handlers.clone();
                Box::pin(async move { handlers.answer(ask).await })
            }
        };
        answering.push(Answering::Asked(key, answer));
    }
    all_answered(answering).await
}

/// One question of a round: being answered, or answered.
enum Answering {
    Asked(String, BoxFuture<Result<Value, ErrorObject>>),
    Answered,
}

/// Drives every question's answer in this task (so that each is asked at
/// once, as a gateway's round collects them), until all are answered or one
/// fails.
async fn all_answered(mut answering: Vec<Answering>) -> Result<Map<String, Value>, ClientError> {
    let mut responses = Map::new();
    std::future::poll_fn(|cx| {
        let mut waiting = false;
        for slot in &mut answering {
            let Answering::Asked(key, answer) = slot else {
                continue;
            };
            match answer.as_mut().poll(cx) {
                Poll::Pending => waiting = true,
                Poll::Ready(Err(error)) => {
                    return Poll::Ready(Err(ClientError::from(ClientErrorKind::Protocol(error))));
                }
                Poll::Ready(Ok(value)) => {
                    responses.insert(std::mem::take(key), value);
                    *slot = Answering::Answered;
                }
            }
        }
        if waiting {
            Poll::Pending
        } else {
            Poll::Ready(Ok(()))
        }
    })
    .await?;
    Ok(responses)
}

impl Client {
    /// Sends `method` with `params`, given each round's answers, until the
    /// server's answer is final.
    pub(crate) async fn request_in_rounds<P: RoundParams>(
        &self,
        method: &'static str,
        route: &Route,
        timeout: Duration,
        params: &mut P,
    ) -> Result<ResultJson, ClientError> {
        self.request_in_counted_rounds(method, route, timeout, params, &mut 0)
            .await
    }

    /// [`Self::request_in_rounds`], counting the rounds in `spent`: a
    /// request sent again (after `-32020`) goes on from the rounds its
    /// first sending used, [`MAX_ROUNDS`] in all.
    pub(crate) async fn request_in_counted_rounds<P: RoundParams>(
        &self,
        method: &'static str,
        route: &Route,
        timeout: Duration,
        params: &mut P,
        spent: &mut usize,
    ) -> Result<ResultJson, ClientError> {
        let peer = &self.inner.peer;
        // Only 2026-07-28 has interim results: on the handshake revisions a
        // result is final without looking.
        let rounds = self.protocol_version().is_stateless();
        while *spent < MAX_ROUNDS {
            *spent += 1;
            let answer = peer
                .request(
                    peer.next_id(),
                    method,
                    &*params,
                    route.clone(),
                    timeout,
                    true,
                )
                .await?;
            if !rounds {
                return Ok(answer);
            }
            if !may_be_input_required(answer.text()) {
                unknown_result_type(answer.text())?;
                return Ok(answer);
            }
            let raw: Box<RawValue> = answer.parse(method)?;
            if !is_input_required(&raw) {
                unknown_result_type(raw.get())?;
                return Ok(ResultJson::read(raw));
            }
            let interim: InputRequiredResult = serde_json::from_str(raw.get())
                .map_err(|e| ClientError::invalid(format!("bad input_required result: {e}")))?;
            if interim.input_requests.is_none() && interim.request_state.is_none() {
                return Err(ClientError::invalid(
                    "an input_required result with neither inputRequests nor requestState",
                ));
            }
            let requests = interim.input_requests.unwrap_or_default();
            let responses = answer_all(peer, route.asks.as_ref(), requests).await?;
            params.set_round(RoundInput {
                input_responses: (!responses.is_empty()).then_some(responses),
                request_state: interim.request_state,
            });
        }
        Err(ClientError::invalid(format!(
            "the server still asked for input after {MAX_ROUNDS} rounds"
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::{is_input_required, may_be_input_required, unknown_result_type};
    use serde_json::value::RawValue;

    fn probe(text: &str) -> bool {
        may_be_input_required(text)
            && is_input_required(&RawValue::from_string(text.to_owned()).expect("JSON"))
    }

    #[test]
    fn a_result_type_the_revision_does_not_define_is_invalid() {
        assert!(unknown_result_type(r#"{"resultType":"completed","tools":[]}"#).is_err());
        assert!(unknown_result_type(r#"{"resultType" : "c\u006fmplete"}"#).is_ok());
        assert!(unknown_result_type(r#"{"resultType":"complete","tools":[]}"#).is_ok());
        // The word nested, or the key escaped, does not vouch for the top.
        let nested = r#"{"resultType":"finished","structuredContent":{"resultType":"complete"}}"#;
        assert!(unknown_result_type(nested).is_err());
        let nested_first = r#"{"structuredContent":{"resultType":"complete"},"resultType":"x"}"#;
        assert!(unknown_result_type(nested_first).is_err());
        assert!(unknown_result_type(r#"{"result\u0054ype":"finished"}"#).is_err());
        let only_nested = r#"{"structuredContent":{"resultType":"complete"},"content":[]}"#;
        assert!(unknown_result_type(only_nested).is_ok());
        assert!(unknown_result_type(r#"{"tools":[]}"#).is_ok());
        // The word in a value is not the result's type.
        assert!(
            unknown_result_type(r#"{"content":[{"type":"text","text":"resultType"}]}"#).is_ok()
        );
    }

    #[test]
    fn only_a_result_type_of_input_required_is_interim() {
        assert!(probe(
            r#"{"resultType":"input_required","inputRequests":{}}"#
        ));
        // Spelled with an escape, as a hostile or unusual server may.
        assert!(probe(r#"{"resultType":"input\u005frequired"}"#));
        assert!(!probe(r#"{"resultType":"complete","content":[]}"#));
        // The word elsewhere is not the result's type.
        assert!(!probe(
            r#"{"content":[{"type":"text","text":"input_required"}]}"#
        ));
        assert!(!probe(
            r#"{"content":[{"type":"text","text":"caf\u00e9"}]}"#
        ));
        assert!(!probe(r#"{"isError":false}"#));
    }
}
