//! The upstream's questions (elicitation, sampling, roots): each question
//! about a call is relayed to the client making it (see `forward.rs`, which
//! sets `CallOptions::relay_asks`); the upstream client declares the
//! capabilities to ask them, and answers a question no single call can be
//! told to be about with an error. Roots the operator gave
//! (`ProxyOptions::roots`) are the proxy's own answer instead, always.

use toolshape::client::ClientBuilder;
use toolshape::protocol::ErrorObject;

use crate::ProxyOptions;

/// `builder` declaring what `options` lets the upstream ask: elicitation
/// (form and URL), sampling and roots when questions are relayed (refusing
/// those that reach no call), and the operator's roots, kept, when given.
pub(crate) fn declared(builder: ClientBuilder, options: &ProxyOptions) -> ClientBuilder {
    let builder = match options.relay_asks {
        true => builder
            .on_elicit(true, |_| async { Err(unrouted("elicitation/create")) })
            .on_sample(|_| async { Err(unrouted("sampling/createMessage")) })
            .on_roots(|| async { Err(unrouted("roots/list")) }),
        false => builder,
    };
    match &options.roots {
        Some(roots) => builder.roots(roots.clone()).keep_roots(),
        None => builder,
    }
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
