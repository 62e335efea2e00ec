//! Completion of prompt arguments and resource template variables
//! (`completion/complete`).

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::tool::BoxFuture;

/// Suggests values: given what is typed so far and the other arguments, the
/// candidates (at most 100 are sent).
pub(crate) type Completer =
    Arc<dyn Fn(String, BTreeMap<String, String>) -> BoxFuture<Vec<String>> + Send + Sync>;
