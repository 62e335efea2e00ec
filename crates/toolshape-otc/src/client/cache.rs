//! The client's cached listing: fetched once, and again (at most once a
//! second) for a tool it lacks, a call the server refuses with 400, or a
//! value its cached schema refuses.

use std::sync::Arc;
use std::time::{Duration, Instant};

use reqwest::StatusCode;

use super::tools::{ListedTool, Listing};
use super::{MAX_LISTING_BYTES, OtcClient, OtcError, OtcErrorKind, refusal};

/// How old a listing must be before a tool it lacks, or a call the server
/// refuses with 400, fetches it again (so that a name that is not there
/// costs one listing a second at most).
const MIN_RELIST_AGE: Duration = Duration::from_secs(1);

impl OtcClient {
    pub(super) fn cached(&self) -> Option<(Arc<Listing>, Instant)> {
        self.inner
            .cached
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    pub(super) fn cache_write(
        &self,
    ) -> std::sync::RwLockWriteGuard<'_, Option<(Arc<Listing>, Instant)>> {
        self.inner
            .cached
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    pub(super) async fn listing(&self) -> Result<(Arc<Listing>, Instant), OtcError> {
        if let Some(cached) = self.cached() {
            return Ok(cached);
        }
        let _fetching = self.inner.listing.lock().await;
        if let Some(cached) = self.cached() {
            return Ok(cached);
        }
        self.fetch_listing().await
    }

    /// Fetches the listing and caches it (the caller holds the fetch lock);
    /// the tools listed as before keep their compiled output schemas.
    async fn fetch_listing(&self) -> Result<(Arc<Listing>, Instant), OtcError> {
        // When the request left: what the listing can know of.
        let fetched = Instant::now();
        let (status, body) = self
            .exchange(self.inner.http.get(self.url("tools")?), MAX_LISTING_BYTES)
            .await?;
        if status != StatusCode::OK {
            return Err(refusal(status, &body));
        }
        let previous = self.cached().map(|(listing, _)| listing);
        let listing = Arc::new(Listing::from_json(&body, previous.as_deref())?);
        *self.cache_write() = Some((Arc::clone(&listing), fetched));
        Ok((listing, fetched))
    }

    /// A listing requested after `since`: the one cached, if it was, else
    /// fetched now unless the cached one is under [`MIN_RELIST_AGE`] old
    /// (`None` then).
    async fn relist(&self, since: Instant) -> Result<Option<Arc<Listing>>, OtcError> {
        let _fetching = self.inner.listing.lock().await;
        match self.cached() {
            Some((cached, fetched)) if fetched > since => Ok(Some(cached)),
            Some((_, fetched)) if fetched.elapsed() < MIN_RELIST_AGE => Ok(None),
            _ => self.fetch_listing().await.map(|(listing, _)| Some(listing)),
        }
    }

    /// The listed tool `tool` names (see [`OtcClient::resolve`]), listing
    /// again once when the cached listing lacks it.
    pub(super) async fn resolve_listed(&self, tool: &str) -> Result<Arc<ListedTool>, OtcError> {
        let (listing, fetched) = self.listing().await?;
        match listing.find(tool) {
            Err(missing) if matches!(missing.kind(), OtcErrorKind::UnknownTool(_)) => {
                match self.relist(fetched).await? {
                    Some(fresh) => fresh.find(tool),
                    None => Err(missing),
                }
            }
            found => found,
        }
    }

    /// The tool `wanted` names in a listing asked for after `since` (when a
    /// call sent then was refused or answered out of its schema), if there
    /// is one: at most one listing a second.
    pub(super) async fn relisted(&self, since: Instant, wanted: &str) -> Option<Arc<ListedTool>> {
        self.relist(since).await.ok()??.find(wanted).ok()
    }
}
