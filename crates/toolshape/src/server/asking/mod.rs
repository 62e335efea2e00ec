//! How a request's handler asks the client (see
//! [`ToolContext::elicit`](crate::ToolContext::elicit)): on a handshake
//! session, by a server-to-client request over the connection (stdio) or the
//! request's event stream (HTTP); on 2026-07-28, by ending the round with an
//! `input_required` result whose integrity-protected `requestState` carries
//! the answers so far, so that any instance can take the retry.

mod plan;
mod requests;
mod state;

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value};
use toolshape_protocol::asks::Ask;
use toolshape_protocol::{ClientCapabilities, ProtocolVersion};

pub(crate) use plan::{AskPlan, RequestIdentity, Retry};
pub(crate) use requests::{ServerRequests, over_long_answer};
pub(crate) use state::{RequestState, StateKey};

use super::outbox::Outbox;
use crate::tool::{AskContext, AskError, Asker, Asking, BoxFuture, Round};

/// Asks over a handshake session: a request to the client, then its answer
/// (within `timeout`).
#[derive(Debug)]
struct SessionAsker {
    requests: Arc<ServerRequests>,
    outbox: Option<Outbox>,
    timeout: Duration,
}

impl Asker for SessionAsker {
    fn ask(&self, _key: Option<String>, ask: Ask) -> BoxFuture<Result<Value, AskError>> {
        let requests = Arc::clone(&self.requests);
        let outbox = self.outbox.clone();
        let timeout = self.timeout;
        Box::pin(async move {
            let outbox = outbox.ok_or(AskError::Closed)?;
            tokio::time::timeout(timeout, requests.ask(&outbox, &ask))
                .await
                .map_err(|_| AskError::TimedOut(timeout))?
        })
    }
}

/// The asking of a request on a handshake session: server-to-client
/// requests sent through `outbox`.
pub(crate) fn over_session(
    capabilities: Arc<ClientCapabilities>,
    version: ProtocolVersion,
    requests: Arc<ServerRequests>,
    outbox: Option<Outbox>,
    timeout: Duration,
) -> Asking {
    Asking {
        context: AskContext {
            capabilities,
            version,
            asker: Arc::new(SessionAsker {
                requests,
                outbox,
                timeout,
            }),
        },
        round: None,
    }
}

/// The asking of a 2026-07-28 request: one round, knowing `answers`.
pub(crate) fn in_round(
    capabilities: Arc<ClientCapabilities>,
    version: ProtocolVersion,
    answers: Map<String, Value>,
) -> Asking {
    let round = Arc::new(Round::new(answers));
    Asking {
        context: AskContext {
            capabilities,
            version,
            asker: Arc::clone(&round) as Arc<dyn Asker>,
        },
        round: Some(round),
    }
}
