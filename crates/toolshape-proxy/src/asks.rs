//! The upstream's questions (elicitation, sampling, roots): each question
//! about a call is relayed to the client making it (see `forward.rs`, which
//! sets `CallOptions::relay_asks`); the upstream client declares the
//! capabilities to ask them, and answers a question no single call can be
//! told to be about with an error.

use toolshape::client::ClientBuilder;
use toolshape::protocol::ErrorObject;

/// `builder` declaring elicitation (form and URL), sampling and roots to
/// the upstream, refusing the questions that reach no call.
pub(crate) fn declared(builder: ClientBuilder) -> ClientBuilder {
    builder
        .on_elicit(true, |_| async { Err(unrouted("elicitation/create")) })
        .on_sample(|_| async { Err(unrouted("sampling/createMessage")) })
        .on_roots(|| async { Err(unrouted("roots/list")) })
}

/// The answer to a question the proxy cannot pass on.
fn unrouted(method: &str) -> ErrorObject {
    ErrorObject::internal_error(format!(
        "the proxy relays {method} only while the call it is about is the only one in flight \
         on this connection (or, over HTTP, on the call's own stream)"
    ))
}
