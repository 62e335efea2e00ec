//! Documents rendered from the registry (`GET /tools`, `GET /openapi.json`):
//! rendered once per change of the registry, on a blocking thread (a
//! gateway's listing may hold 10,000 tools), and handed out as shared
//! bytes, so that many requests at once cost one rendering, not one each.

use std::sync::Arc;

use axum::body::Bytes;
use serde_json::Value;

use super::state::OtcState;

/// One document and the registry version it was rendered for.
#[derive(Default)]
pub(crate) struct Rendered {
    kept: Arc<tokio::sync::Mutex<Option<(u64, Bytes)>>>,
}

impl Rendered {
    /// The document `render` makes of `state` now: the one kept if the
    /// registry has not changed since, else rendered anew (one request
    /// renders; the others wait for it, and a request dropped meanwhile
    /// leaves the rendering to be kept all the same). `None` if it could
    /// not be rendered.
    pub(crate) async fn get(
        &self,
        state: &Arc<OtcState>,
        render: fn(&OtcState) -> Value,
    ) -> Option<Bytes> {
        let mut kept = Arc::clone(&self.kept).lock_owned().await;
        // Read under the lock: versions only grow, and what is rendered
        // after this read is at least as new.
        let version = *state.registry.watch_changes().borrow();
        if let Some((at, bytes)) = kept.as_ref()
            && *at >= version
        {
            return Some(bytes.clone());
        }
        let state = Arc::clone(state);
        let rendering = tokio::task::spawn_blocking(move || {
            let bytes = Bytes::from(serde_json::to_vec(&render(&state)).ok()?);
            *kept = Some((version, bytes.clone()));
            Some(bytes)
        });
        // A rendering that failed is not kept: the next request tries again.
        rendering.await.ok().flatten()
    }
}
