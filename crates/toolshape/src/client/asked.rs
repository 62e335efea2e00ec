//! The server's requests to this client: `ping`, and its questions
//! (elicitation, sampling, roots), answered by the client's handlers or, for
//! a question about a call a gateway serves, relayed to the client of that
//! call (`CallOptions::relay_asks`).

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use tokio::sync::{mpsc, oneshot};
use toolshape_protocol::asks::Ask;
use toolshape_protocol::meta::keys;
use toolshape_protocol::{ErrorObject, Meta, Request, RequestId, methods};

use super::Client;
use super::outgoing::{Outbound, Outgoing, Route};
use super::peer::{Channel, Peer, lock};
use crate::tool::{MAX_QUESTIONS, ToolContext};

/// Most questions about one call relayed at once; past it, the server's
/// further questions are refused until one is answered.
pub(crate) const MAX_OPEN_QUESTIONS: usize = 16;

/// How long after a request whose questions were relayed ends unanswered
/// a question over a shared channel may still be about it.
const ABANDONED_FOR: Duration = Duration::from_secs(2);

/// Most abandoned requests remembered (the oldest are forgotten first).
const MAX_ABANDONED: usize = 1024;

/// The keys given to the questions relayed about one request. A handshake
/// server's question has no key of its own; a 2026-07-28 client answers by
/// key, in a later round of a request that runs again from the start, and
/// the server asks again, maybe in another order (questions asked at once
/// arrive in the order the server's tasks ran). So the key is made of the
/// question itself, and how many times the same question came before.
#[derive(Debug, Default)]
pub(crate) struct QuestionKeys {
    seen: HashMap<String, usize>,
    count: usize,
}

impl QuestionKeys {
    /// The key of `question` (`{"method", "params"}`), or `None` past
    /// [`MAX_QUESTIONS`] questions about one request.
    fn key(&mut self, question: &Value) -> Option<String> {
        if self.count >= MAX_QUESTIONS {
            return None;
        }
        self.count += 1;
        let text = serde_json::to_vec(question).unwrap_or_default();
        let digest = Sha256::digest(&text);
        let mut key = String::from("question-");
        for byte in digest.iter().take(8) {
            key.push_str(&format!("{byte:02x}"));
        }
        let times = self.seen.entry(key.clone()).or_default();
        *times += 1;
        if *times > 1 {
            key.push_str(&format!("-{times}"));
        }
        Some(key)
    }
}

/// Who made the requests whose questions were relayed and that ended
/// lately without their answer: a question that arrives over a shared
/// channel (stdio) may be about one of them, so it goes to the one request
/// in flight only when every such request was made by the same caller.
#[derive(Debug, Default)]
pub(crate) struct Abandoned(VecDeque<(Instant, Option<Arc<str>>)>);

impl Abandoned {
    /// Notes that a request of `caller` ended unanswered.
    pub(super) fn record(&mut self, caller: Option<&str>) {
        if self.0.len() == MAX_ABANDONED {
            self.0.pop_front();
        }
        self.0.push_back((Instant::now(), caller.map(Arc::from)));
    }

    /// Whether every request abandoned lately was `caller`'s.
    fn all_by(&mut self, caller: Option<&str>) -> bool {
        while self
            .0
            .front()
            .is_some_and(|(when, _)| when.elapsed() > ABANDONED_FOR)
        {
            self.0.pop_front();
        }
        self.0.iter().all(|(_, by)| by.as_deref() == caller)
    }
}

impl Client {
    /// The `_meta` of a request whose questions are relayed to `context`'s
    /// client, and its route set to relay them: on 2026-07-28 the request
    /// declares what that client can be asked (elicitation, sampling,
    /// roots) instead of what this one can; before, the connection declared
    /// its own at the handshake.
    pub(super) fn relaying(&self, route: &mut Route, context: ToolContext) -> Option<Meta> {
        let mut meta = self.inner.relay_meta.clone();
        let declared = meta
            .as_mut()
            .and_then(|meta| meta.get_mut(keys::CLIENT_CAPABILITIES));
        if let Some(Value::Object(declared)) = declared {
            let relayed = context.ask_capabilities();
            if let Some(elicitation) = relayed.elicitation {
                declared.insert("elicitation".into(), Value::Object(elicitation));
            }
            if let Some(sampling) = relayed.sampling {
                declared.insert("sampling".into(), Value::Object(sampling));
            }
            if let Some(roots) = relayed
                .roots
                .and_then(|roots| serde_json::to_value(roots).ok())
            {
                declared.insert("roots".into(), roots);
            }
        }
        route.asks = Some(Arc::new(context));
        meta
    }
}

impl Peer {
    /// Answers a request of the server's that arrived on `channel`, each
    /// question on its own task.
    pub(super) fn answer_request(&self, request: Request, channel: Channel<'_>) {
        if request.method == methods::PING {
            return reply(&self.outgoing, &request.id, Ok(json!({})));
        }
        let params: Value = request
            .params
            .as_deref()
            .and_then(|raw| serde_json::from_str(raw.get()).ok())
            .unwrap_or(Value::Null);
        let question = json!({"method": request.method, "params": params});
        let Some(ask) = Ask::from_input_request(&question) else {
            return reply(
                &self.outgoing,
                &request.id,
                Err(ErrorObject::method_not_found(&request.method)),
            );
        };
        match self.ask_route(channel) {
            Some((call, context)) => self.relay(&call, context, request.id, &question, ask),
            None => {
                let (handlers, outgoing) = (self.handlers.clone(), self.outgoing.clone());
                tokio::spawn(async move {
                    let answer = handlers.answer(ask).await;
                    send_reply(&outgoing, &request.id, answer).await;
                });
            }
        }
    }

    /// The call a question that arrived on `channel` is about, when it is
    /// known and its questions are relayed: the request whose stream it came
    /// on, or over a shared channel the only request in flight.
    fn ask_route(&self, channel: Channel<'_>) -> Option<(RequestId, Arc<ToolContext>)> {
        let pending = lock(&self.pending);
        let (id, waiter) = match channel {
            Channel::RequestStream(id) => pending.get_key_value(id)?,
            Channel::Shared if pending.len() == 1 => {
                let (id, waiter) = pending.iter().next()?;
                let caller = waiter.asks.as_deref()?.caller();
                if !lock(&self.abandoned).all_by(caller) {
                    tracing::warn!(
                        "a question came while another caller's request had just ended; not relayed"
                    );
                    return None;
                }
                (id, waiter)
            }
            Channel::Shared | Channel::Standalone => return None,
        };
        Some((id.clone(), waiter.asks.clone()?))
    }

    /// Asks the question `id` about the request `call` of `context`'s client,
    /// until that request ends.
    fn relay(
        &self,
        call: &RequestId,
        context: Arc<ToolContext>,
        id: RequestId,
        question: &Value,
        ask: Ask,
    ) {
        let (open, ended) = oneshot::channel::<()>();
        // The key is given here, in the order the questions arrived.
        let key = {
            let mut pending = lock(&self.pending);
            let Some(waiter) = pending.get_mut(call) else {
                drop(pending);
                return reply(&self.outgoing, &id, Err(call_ended()));
            };
            waiter.answering.retain(|open| !open.is_closed());
            let key = (waiter.answering.len() < MAX_OPEN_QUESTIONS)
                .then(|| waiter.keys.key(question))
                .flatten();
            let Some(key) = key else {
                drop(pending);
                let refusal = ErrorObject::internal_error(format!(
                    "more than {MAX_OPEN_QUESTIONS} questions about one call at once, \
                     or more than {MAX_QUESTIONS} in all"
                ));
                return reply(&self.outgoing, &id, Err(refusal));
            };
            waiter.answering.push(open);
            key
        };
        let outgoing = self.outgoing.clone();
        tokio::spawn(async move {
            let answer = tokio::select! {
                answer = context.relay_ask(Some(key), ask) => answer,
                _ = ended => Err(call_ended()),
            };
            send_reply(&outgoing, &id, answer).await;
        });
    }
}

fn call_ended() -> ErrorObject {
    ErrorObject::internal_error("the call this question is about has ended")
}

/// How long an answer may wait for room in the queue to the server.
const REPLY_WAIT: Duration = Duration::from_secs(10);

/// Sends the server the answer to its request `id`, waiting (a bounded
/// time) for room in the queue: an answer a user took time to give is not
/// dropped because the queue is full at that moment.
async fn send_reply(
    outgoing: &mpsc::Sender<Outbound>,
    id: &RequestId,
    answer: Result<Value, ErrorObject>,
) {
    if let Some(message) = reply_message(id, &answer) {
        let sent = tokio::time::timeout(REPLY_WAIT, outgoing.send(message)).await;
        if !matches!(sent, Ok(Ok(()))) {
            tracing::warn!(%id, "the answer to the server's question could not be queued");
        }
    }
}

/// Sends the server the answer to its request `id` if the queue has room.
fn reply(outgoing: &mpsc::Sender<Outbound>, id: &RequestId, answer: Result<Value, ErrorObject>) {
    if let Some(message) = reply_message(id, &answer) {
        let _ = outgoing.try_send(message);
    }
}

/// The message answering the server's request `id`.
fn reply_message(id: &RequestId, answer: &Result<Value, ErrorObject>) -> Option<Outbound> {
    let mut body = Vec::with_capacity(128);
    let written = match answer {
        Ok(result) => toolshape_protocol::write_result(&mut body, id, result),
        Err(error) => toolshape_protocol::write_error(&mut body, Some(id), error),
    };
    written.ok()?;
    Some(Outbound::Message(Outgoing {
        id: None,
        method: "",
        body,
        route: Route::default(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_question_is_keyed_by_what_it_asks_and_how_often_it_came() {
        let ask = |message: &str| json!({"method": "elicitation/create", "params": {"message": message, "requestedSchema": {}}});
        let mut first = QuestionKeys::default();
        let (a, b) = (first.key(&ask("A?")), first.key(&ask("B?")));
        // Asked again in the other order (another round), each gets its key.
        let mut second = QuestionKeys::default();
        assert_eq!(second.key(&ask("B?")), b);
        assert_eq!(second.key(&ask("A?")), a);
        assert_ne!(a, b);
        // The same question twice: two keys, the same in every round.
        let again = first.key(&ask("A?")).unwrap_or_default();
        assert_eq!(again, format!("{}-2", a.unwrap_or_default()));
        // Bounded: no key past the most questions about one request.
        let mut many = QuestionKeys::default();
        for n in 0..MAX_QUESTIONS {
            assert!(many.key(&ask(&n.to_string())).is_some());
        }
        assert!(many.key(&ask("one more")).is_none());
    }

    #[test]
    fn a_shared_channels_question_waits_out_another_callers_ended_request() {
        let mut abandoned = Abandoned::default();
        assert!(abandoned.all_by(Some("a")));
        abandoned.record(Some("a"));
        assert!(abandoned.all_by(Some("a")));
        assert!(!abandoned.all_by(Some("b")));
        assert!(!abandoned.all_by(None));
        // Ended long enough ago: forgotten.
        let long_ago = Instant::now().checked_sub(ABANDONED_FOR * 2);
        if let Some(long_ago) = long_ago {
            abandoned.0 = VecDeque::from([(long_ago, Some(Arc::from("a")))]);
            assert!(abandoned.all_by(Some("b")));
            assert!(abandoned.0.is_empty());
        }
        // Bounded.
        for _ in 0..MAX_ABANDONED + 10 {
            abandoned.record(None);
        }
        assert_eq!(abandoned.0.len(), MAX_ABANDONED);
    }
}
