//! Completion of prompt arguments and resource template variables
//! (`completion/complete`).

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;

use toolshape_protocol::completion::Completion;

use crate::tool::BoxFuture;

/// Suggests values: given what is typed so far and the other arguments, the
/// candidates (at most 100 are sent), and how many there are in all when
/// known.
pub(crate) type Completer =
    Arc<dyn Fn(String, BTreeMap<String, String>) -> BoxFuture<Completion> + Send + Sync>;

/// A completer from a function giving values (at most 100 sent, with how
/// many there were).
pub(crate) fn of_values<F, Fut>(complete: F) -> Completer
where
    F: Fn(String, BTreeMap<String, String>) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Vec<String>> + Send + 'static,
{
    Arc::new(move |partial, others| {
        let completed = complete(partial, others);
        Box::pin(async move { Completion::from_values(completed.await) })
    })
}

/// A completer from a function giving the whole completion.
pub(crate) fn counted<F, Fut>(complete: F) -> Completer
where
    F: Fn(String, BTreeMap<String, String>) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Completion> + Send + 'static,
{
    Arc::new(move |partial, others| Box::pin(complete(partial, others)))
}
