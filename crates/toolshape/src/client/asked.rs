//! The server's requests to this client: `ping`, and its questions
//! (elicitation, sampling, roots), answered by the client's handlers or, for
//! a question about a call a gateway serves, relayed to the client of that
//! call (`CallOptions::relay_asks`).

use std::sync::Arc;

use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};
use toolshape_protocol::asks::Ask;
use toolshape_protocol::meta::keys;
use toolshape_protocol::{ErrorObject, Meta, Request, RequestId, methods};

use super::outgoing::{Outbound, Outgoing, Route};
use super::peer::{Channel, Peer, lock};
use crate::tool::ToolContext;

/// Most questions about one call relayed at once; past it, the server's
/// further questions are refused until one is answered.
pub(crate) const MAX_OPEN_QUESTIONS: usize = 16;

/// Sets a request to relay the server's questions about it to `context`'s
/// client: its route carries the context, and on 2026-07-28 (`meta`) the
/// request declares what that client can be asked (before, the connection
/// declared its own at the handshake).
pub(super) fn relay_asks(route: &mut Route, meta: Option<&mut Meta>, context: ToolContext) {
    if let Some(meta) = meta {
        relay_capabilities(meta, &context);
    }
    route.asks = Some(Arc::new(context));
}

/// A 2026-07-28 request's declared capabilities with those a server asks
/// through (elicitation, sampling, roots) replaced by what `context`'s
/// client declared, the connection's others kept.
fn relay_capabilities(meta: &mut Meta, context: &ToolContext) {
    let relayed = context.ask_capabilities();
    let declared = meta
        .entry(keys::CLIENT_CAPABILITIES)
        .or_insert_with(|| json!({}));
    if let Value::Object(declared) = declared {
        for (name, value) in [
            ("elicitation", relayed.elicitation.map(Value::Object)),
            ("sampling", relayed.sampling.map(Value::Object)),
            (
                "roots",
                relayed
                    .roots
                    .and_then(|roots| serde_json::to_value(roots).ok()),
            ),
        ] {
            match value {
                Some(value) => declared.insert(name.into(), value),
                None => declared.remove(name),
            };
        }
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
            Some((call, context)) => self.relay(&call, context, request.id, ask),
            None => {
                let (handlers, outgoing) = (self.handlers.clone(), self.outgoing.clone());
                tokio::spawn(async move {
                    let answer = handlers.answer(ask).await;
                    reply(&outgoing, &request.id, answer);
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
            Channel::Shared if pending.len() == 1 => pending.iter().next()?,
            Channel::Shared | Channel::Standalone => return None,
        };
        Some((id.clone(), waiter.asks.clone()?))
    }

    /// Asks the question `id` about the request `call` of `context`'s client,
    /// until that request ends.
    fn relay(&self, call: &RequestId, context: Arc<ToolContext>, id: RequestId, ask: Ask) {
        let (open, ended) = oneshot::channel::<()>();
        {
            let mut pending = lock(&self.pending);
            let Some(waiter) = pending.get_mut(call) else {
                drop(pending);
                return reply(&self.outgoing, &id, Err(call_ended()));
            };
            waiter.answering.retain(|open| !open.is_closed());
            if waiter.answering.len() >= MAX_OPEN_QUESTIONS {
                drop(pending);
                let refusal = ErrorObject::internal_error(format!(
                    "more than {MAX_OPEN_QUESTIONS} questions about one call at once"
                ));
                return reply(&self.outgoing, &id, Err(refusal));
            }
            waiter.answering.push(open);
        }
        let outgoing = self.outgoing.clone();
        tokio::spawn(async move {
            let answer = tokio::select! {
                answer = context.relay_ask(None, ask) => answer,
                _ = ended => Err(call_ended()),
            };
            reply(&outgoing, &id, answer);
        });
    }
}

fn call_ended() -> ErrorObject {
    ErrorObject::internal_error("the call this question is about has ended")
}

/// Sends the server the answer to its request `id`.
fn reply(outgoing: &mpsc::Sender<Outbound>, id: &RequestId, answer: Result<Value, ErrorObject>) {
    let mut body = Vec::with_capacity(128);
    let written = match &answer {
        Ok(result) => toolshape_protocol::write_result(&mut body, id, result),
        Err(error) => toolshape_protocol::write_error(&mut body, Some(id), error),
    };
    if written.is_ok() {
        let reply = Outgoing {
            id: None,
            method: "",
            body,
            route: Route::default(),
        };
        let _ = outgoing.try_send(Outbound::Message(reply));
    }
}
