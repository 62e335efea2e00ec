//! The server's requests to this client: `ping`, and its questions
//! (elicitation, sampling, roots), answered by the client's handlers or, for
//! a question about a call a gateway serves, relayed to the client of that
//! call (`CallOptions::relay_asks`).

use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use tokio::sync::{mpsc, oneshot};
use toolshape_protocol::asks::Ask;
use toolshape_protocol::meta::keys;
use toolshape_protocol::{ErrorObject, Meta, Request, RequestId, methods};

use super::Client;
use super::outgoing::{Outbound, Outgoing, Route};
use super::peer::{Channel, Peer, Waiter, lock};
use crate::tool::{MAX_QUESTIONS, ToolContext};

/// Most questions about one call relayed at once; past it, the server's
/// further questions are refused until one is answered.
const MAX_OPEN_QUESTIONS: usize = 16;

/// Most answers to the server's requests waiting for room in the queue to
/// the server at once (a server that floods pings and reads nothing would
/// otherwise keep a task per ping; past it an answer is dropped), and most
/// of its questions this client's own handlers answer at once (past it a
/// question is refused).
pub(super) const MAX_ANSWERING: usize = 64;

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
/// question itself, and how many times the same question came before once
/// answered: the same question asked again while it is still open (asked
/// twice at once, or once more by a call that ended just before) shares its
/// key, and so its answer.
#[derive(Debug, Default)]
pub(crate) struct QuestionKeys {
    /// The latest key of each question.
    latest: HashMap<String, (usize, String)>,
    count: usize,
}

impl QuestionKeys {
    /// The key of the question whose [`base_key`] is `base`, given which
    /// keys are still being answered; `None` past [`MAX_QUESTIONS`]
    /// questions about one request.
    fn key(&mut self, base: String, open: impl Fn(&str) -> bool) -> Option<String> {
        if self.count >= MAX_QUESTIONS {
            return None;
        }
        self.count += 1;
        let (times, key) = self.latest.entry(base.clone()).or_default();
        if *times > 0 && open(key) {
            return Some(key.clone());
        }
        *times += 1;
        *key = if *times > 1 {
            format!("{base}-{times}")
        } else {
            base
        };
        Some(key.clone())
    }
}

/// The key a question (`{"method", "params"}`) gets the first time: a hash
/// of what it asks.
fn base_key(question: &Value) -> String {
    let text = serde_json::to_vec(&what_it_asks(question)).unwrap_or_default();
    let digest = Sha256::digest(&text);
    let mut base = String::from("question-");
    for byte in digest.iter().take(8) {
        base.push_str(&format!("{byte:02x}"));
    }
    base
}

/// What a question asks, without what a server makes anew each time it
/// asks (`_meta`; a URL elicitation's `elicitationId` and `url`, which
/// usually carry a fresh id or nonce): the part that stays the same when the
/// request runs again.
fn what_it_asks(question: &Value) -> Value {
    let mut asked = question.clone();
    if let Some(Value::Object(params)) = asked.get_mut("params") {
        params.remove("_meta");
        params.remove("elicitationId");
        if params.get("mode").and_then(Value::as_str) == Some("url") {
            params.remove("url");
        }
    }
    asked
}

/// Who a request's caller is, as well as the front can tell: the caller it
/// names (an IP address over HTTP, `stdio`) and the user id its
/// credentials carry, when any.
pub(super) fn caller_identity(context: &ToolContext) -> Option<String> {
    match (context.caller(), context.user_id()) {
        (None, None) => None,
        (caller, user) => Some(format!("{}|{}", caller.unwrap_or(""), user.unwrap_or(""))),
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
            let roots = relayed
                .roots
                .filter(|_| !self.inner.peer.handlers.keeps_roots());
            if let Some(roots) = roots.and_then(|roots| serde_json::to_value(roots).ok()) {
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
            return self.reply(request.id, Ok(json!({})));
        }
        let params: Value = request
            .params
            .as_deref()
            .and_then(|raw| serde_json::from_str(raw.get()).ok())
            .unwrap_or(Value::Null);
        let question = json!({"method": request.method, "params": params});
        let Some(ask) = Ask::from_input_request(&question) else {
            // A question this client knows, asked with parameters it cannot
            // read, is the server's mistake of parameters (-32602), not an
            // unknown method.
            let known = [
                methods::ELICITATION_CREATE,
                methods::SAMPLING_CREATE_MESSAGE,
                methods::ROOTS_LIST,
            ];
            let refusal = match known.contains(&request.method.as_str()) {
                true => {
                    ErrorObject::invalid_params(format!("not the parameters of {}", request.method))
                }
                false => ErrorObject::method_not_found(&request.method),
            };
            return self.reply(request.id, Err(refusal));
        };
        self.url_visits.asked(&ask);
        let route = match self.handlers.answer_relayed(&ask) {
            true => None,
            false => self.ask_route(channel),
        };
        match route {
            Some((call, context)) => self.relay(&call, context, request.id, &question, ask),
            None => {
                let handlers = self.handlers.clone();
                self.answer_with(request.id, async move { handlers.answer(ask).await });
            }
        }
    }

    /// The call a question that arrived on `channel` is about, when it is
    /// known and its questions are relayed: the request whose stream it came
    /// on, or over a shared channel the only request in flight that passes
    /// questions on (`only_request`).
    fn ask_route(&self, channel: Channel<'_>) -> Option<(RequestId, Arc<ToolContext>)> {
        let pending = lock(&self.pending);
        let (id, waiter) = match channel {
            Channel::RequestStream(id) => pending.get_key_value(id)?,
            Channel::Shared => self.only_request(&pending)?,
            Channel::Standalone => return None,
        };
        Some((id.clone(), waiter.asks.clone()?))
    }

    /// The request a request-scoped message (a question, a log message) that
    /// arrived over a shared channel (stdio) is about: the only one in
    /// flight that passes such messages on (relays questions, or wants log
    /// messages: the client's own listings and subscriptions beside it do
    /// not count), unless another caller's relaying request ended just
    /// before (the server may still be sending about that one).
    pub(super) fn only_request<'a>(
        &self,
        pending: &'a HashMap<RequestId, Waiter>,
    ) -> Option<(&'a RequestId, &'a Waiter)> {
        let mut passing_on = pending
            .iter()
            .filter(|(_, waiter)| waiter.asks.is_some() || waiter.log.is_some());
        let (id, waiter) = passing_on.next()?;
        if passing_on.next().is_some() {
            return None;
        }
        let caller = waiter.asks.as_deref().and_then(caller_identity);
        if !lock(&self.abandoned).all_by(caller.as_deref()) {
            tracing::warn!(
                "a message about a request came while another caller's request had just ended; \
                 not passed on"
            );
            return None;
        }
        Some((id, waiter))
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
        // Hashed before the lock (a question may be large); the key is given
        // under it, in the order the questions arrived.
        let base = base_key(question);
        let key = {
            let mut pending = lock(&self.pending);
            let Some(waiter) = pending.get_mut(call) else {
                drop(pending);
                return self.reply(id, Err(call_ended()));
            };
            waiter.answering.retain(|(_, open)| !open.is_closed());
            let answering = &waiter.answering;
            let is_open = |key: &str| answering.iter().any(|(asked, _)| asked == key);
            let key = (answering.len() < MAX_OPEN_QUESTIONS)
                .then(|| waiter.keys.key(base, is_open))
                .flatten();
            let Some(key) = key else {
                drop(pending);
                let refusal = ErrorObject::internal_error(format!(
                    "more than {MAX_OPEN_QUESTIONS} questions about one call at once, \
                     or more than {MAX_QUESTIONS} in all"
                ));
                return self.reply(id, Err(refusal));
            };
            waiter.answering.push((key.clone(), open));
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

    /// Answers the server's request `id` at once when the queue to the
    /// server has room; else from a task that waits for room, at most
    /// [`MAX_ANSWERING`] such tasks at once (past it the answer is dropped:
    /// the server is not reading what it is sent).
    fn reply(&self, id: RequestId, answer: Result<Value, ErrorObject>) {
        let Some(message) = reply_message(&id, &answer) else {
            return;
        };
        let message = match self.outgoing.try_send(message) {
            Err(mpsc::error::TrySendError::Full(message)) => message,
            _ => return,
        };
        let Ok(permit) = Arc::clone(&self.answering).try_acquire_owned() else {
            let dropped = self.answers_dropped.fetch_add(1, Ordering::Relaxed);
            if dropped.is_multiple_of(1000) {
                tracing::warn!(
                    %id,
                    dropped = dropped + 1,
                    "the server is not reading its input and has more than {MAX_ANSWERING} \
                     answers waiting; answer dropped"
                );
            }
            return;
        };
        let outgoing = self.outgoing.clone();
        tokio::spawn(async move {
            queue_reply(&outgoing, &id, message).await;
            drop(permit);
        });
    }

    /// Refuses the server's request `id` with `error`.
    pub(super) fn refuse(&self, id: RequestId, error: ErrorObject) {
        self.reply(id, Err(error));
    }

    /// Answers the server's question `id` with this client's own handlers,
    /// on a task of its own, at most [`MAX_ANSWERING`] at once: past it the
    /// question is refused (a ping is never held up by them).
    fn answer_with(
        &self,
        id: RequestId,
        answer: impl Future<Output = Result<Value, ErrorObject>> + Send + 'static,
    ) {
        let Ok(permit) = Arc::clone(&self.handling).try_acquire_owned() else {
            let busy = ErrorObject::internal_error(format!(
                "more than {MAX_ANSWERING} questions to this client at once"
            ));
            return self.reply(id, Err(busy));
        };
        let outgoing = self.outgoing.clone();
        tokio::spawn(async move {
            let answer = answer.await;
            send_reply(&outgoing, &id, answer).await;
            drop(permit);
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
        queue_reply(outgoing, id, message).await;
    }
}

/// Queues the answer `message` to the server's request `id`, waiting at most
/// [`REPLY_WAIT`] for room.
async fn queue_reply(outgoing: &mpsc::Sender<Outbound>, id: &RequestId, message: Outbound) {
    let sent = tokio::time::timeout(REPLY_WAIT, outgoing.send(message)).await;
    if !matches!(sent, Ok(Ok(()))) {
        tracing::warn!(%id, "the answer to the server's question could not be queued");
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
        let closed = |_: &str| false;
        let mut first = QuestionKeys::default();
        let (a, b) = (
            first.key(base_key(&ask("A?")), closed),
            first.key(base_key(&ask("B?")), closed),
        );
        // Asked again in the other order (another round), each gets its key.
        let mut second = QuestionKeys::default();
        assert_eq!(second.key(base_key(&ask("B?")), closed), b);
        assert_eq!(second.key(base_key(&ask("A?")), closed), a);
        assert_ne!(a, b);
        // The same question again once answered: another key, the same in
        // every round; while the first is still open: the same key.
        let a = a.unwrap_or_default();
        assert_eq!(first.key(base_key(&ask("A?")), |k| k == a), Some(a.clone()));
        let again = first.key(base_key(&ask("A?")), closed).unwrap_or_default();
        assert_eq!(again, format!("{a}-2"));
        assert_eq!(
            first.key(base_key(&ask("A?")), |k| k == again),
            Some(again.clone())
        );
        assert_eq!(
            first.key(base_key(&ask("A?")), closed),
            Some(format!("{a}-3"))
        );
        // What a server makes anew each time it asks is left out.
        let url = |id: &str| {
            json!({"method": "elicitation/create", "params": {"mode": "url", "message": "Sign in",
                "url": format!("https://example.com/auth?state={id}"), "elicitationId": id,
                "_meta": {"progressToken": id}}})
        };
        let mut round_one = QuestionKeys::default();
        let mut round_two = QuestionKeys::default();
        assert_eq!(
            round_one.key(base_key(&url("1")), closed),
            round_two.key(base_key(&url("2")), closed)
        );
        let other = json!({"method": "elicitation/create", "params": {"mode": "url",
            "message": "Sign in elsewhere", "url": "https://example.com", "elicitationId": "3"}});
        assert_ne!(
            round_one.key(base_key(&other), closed),
            round_two.key(base_key(&url("4")), closed)
        );
        // Bounded: no key past the most questions about one request.
        let mut many = QuestionKeys::default();
        for n in 0..MAX_QUESTIONS {
            assert!(many.key(base_key(&ask(&n.to_string())), closed).is_some());
        }
        assert!(many.key(base_key(&ask("one more")), closed).is_none());
    }

    #[test]
    fn a_message_over_a_shared_channel_goes_to_the_one_request_unless_another_caller_just_left() {
        let (outgoing, _queue) = mpsc::channel(4);
        let peer = Peer::new(outgoing, super::super::handlers::Handlers::default(), None);
        let context =
            |caller: &str| Arc::new(ToolContext::default().with_caller(Some(Arc::from(caller))));
        let mut pending = HashMap::new();
        // Nothing in flight, or two: nobody.
        assert!(peer.only_request(&pending).is_none());
        pending.insert(
            RequestId::Number(1),
            Waiter::relaying_to(Some(context("b"))),
        );
        assert!(peer.only_request(&pending).is_some());
        // Beside a request that passes nothing on (the client's own
        // listing): still the one.
        pending.insert(RequestId::Number(2), Waiter::relaying_to(None));
        assert!(peer.only_request(&pending).is_some());
        // Beside another that relays: nobody.
        pending.insert(
            RequestId::Number(3),
            Waiter::relaying_to(Some(context("c"))),
        );
        assert!(peer.only_request(&pending).is_none());
        pending.remove(&RequestId::Number(2));
        pending.remove(&RequestId::Number(3));
        // The same caller's request ended: still the one in flight.
        lock(&peer.abandoned).record(caller_identity(&context("b")).as_deref());
        assert!(peer.only_request(&pending).is_some());
        // Another caller's: not until it is forgotten.
        lock(&peer.abandoned).record(caller_identity(&context("a")).as_deref());
        assert!(peer.only_request(&pending).is_none());
        // A request that relays to no caller is not another caller's either.
        pending.insert(RequestId::Number(1), Waiter::relaying_to(None));
        assert!(peer.only_request(&pending).is_none());
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
