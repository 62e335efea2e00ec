//! The upstream's questions (elicitation, sampling, roots): each question
//! about a call is relayed to the client making it (see `forward.rs`, which
//! sets `CallOptions::relay_asks`); the upstream client declares the
//! capabilities to ask them, and answers a question no single call can be
//! told to be about to its sole client (`ProxyOptions::sole_client`) or
//! with an error. Roots the operator gave (`ProxyOptions::roots`) are the
//! proxy's own answer instead, always.

use std::future::Future;
use std::time::Duration;

use toolshape::client::ClientBuilder;
use toolshape::protocol::ErrorObject;
use toolshape::tool::AskError;
use toolshape::{ConnectedClient, ToolContext};

use crate::ProxyOptions;

/// How long a question outside any call waits for the sole client to
/// finish its own handshake (the upstream starts first, and may ask at once).
const SOLE_CLIENT_WAIT: Duration = Duration::from_secs(30);

/// `builder` declaring what `options` lets the upstream ask: elicitation
/// (form and URL), sampling and roots when questions are relayed (those
/// outside any call go to the sole client, if there is one, or are
/// refused), and the operator's roots, kept, when given.
pub(crate) fn declared(builder: ClientBuilder, options: &ProxyOptions) -> ClientBuilder {
    let builder = match options.relay_asks {
        true => {
            let (user, model, roots) = (
                options.sole_client.clone(),
                options.sole_client.clone(),
                options.sole_client.clone(),
            );
            let builder = builder
                .on_elicit(true, move |params| {
                    outside_calls(
                        user.clone(),
                        "elicitation/create",
                        move |client| async move { client.elicit_form(params).await },
                    )
                })
                .on_sample(move |params| {
                    outside_calls(
                        model.clone(),
                        "sampling/createMessage",
                        move |client| async move { client.sample(params).await },
                    )
                })
                .on_roots(move || {
                    outside_calls(roots.clone(), "roots/list", |client| async move {
                        client.roots().await
                    })
                });
            // Only a sole client's roots changes are passed on: with many
            // clients, each call's roots are its caller's, and no change is
            // ever told.
            match options.sole_client {
                Some(_) => builder,
                None => builder.unannounced_roots_changes(),
            }
        }
        false => builder,
    };
    match &options.roots {
        Some(roots) => builder.roots(roots.clone()).keep_roots(),
        None => builder,
    }
}

/// The answer to a question the upstream asked outside any call: `ask`ed
/// of the sole client once it can be asked, else an error saying why not.
async fn outside_calls<T, F, Fut>(
    sole_client: Option<ConnectedClient>,
    method: &'static str,
    ask: F,
) -> Result<T, ErrorObject>
where
    F: FnOnce(ToolContext) -> Fut,
    Fut: Future<Output = Result<T, AskError>>,
{
    let Some(sole_client) = sole_client else {
        return Err(unrouted(method));
    };
    let Some(client) = sole_client.connected(SOLE_CLIENT_WAIT).await else {
        return Err(ErrorObject::internal_error(format!(
            "the proxy's client cannot be asked {method} outside a call: it speaks 2026-07-28, \
             or it did not finish its handshake within {} s, or it is gone",
            SOLE_CLIENT_WAIT.as_secs()
        )));
    };
    ask(client).await.map_err(AskError::into_answer)
}

/// The answer to a question the proxy cannot pass on.
fn unrouted(method: &str) -> ErrorObject {
    ErrorObject::internal_error(format!(
        "the proxy cannot tell which of its clients this {method} is for: it relays a question \
         over a shared connection only while one client's request is in flight on it and no \
         other client's request ended in the 2 s before (over HTTP, by the request's own stream); \
         asked again later it may get through"
    ))
}
