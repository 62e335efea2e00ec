//! The client's cached listing: fetched once, and again (at most once a
//! second) for a tool it lacks or a call the server refuses with 400.

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

    pub(super) async fn listing(&self) -> Result<Arc<Listing>, OtcError> {
        if let Some((listing, _)) = self.cached() {
            return Ok(listing);
        }
        let _fetching = self.inner.listing.lock().await;
        if let Some((listing, _)) = self.cached() {
            return Ok(listing);
        }
        self.fetch_listing().await
    }

    /// Fetches the listing and caches it (the caller holds the fetch lock).
    async fn fetch_listing(&self) -> Result<Arc<Listing>, OtcError> {
        let (status, body) = self
            .exchange(self.inner.http.get(self.url("tools")?), MAX_LISTING_BYTES)
            .await?;
        if status != StatusCode::OK {
            return Err(refusal(status, &body));
        }
        let listing = Arc::new(Listing::from_json(&body)?);
        *self.cache_write() = Some((Arc::clone(&listing), Instant::now()));
        Ok(listing)
    }

    /// A newer listing than `seen`: the one cached since, or fetched now
    /// when `seen` is over [`MIN_RELIST_AGE`] old; `None` when there is none.
    pub(super) async fn relist(
        &self,
        seen: &Arc<Listing>,
    ) -> Result<Option<Arc<Listing>>, OtcError> {
        let _fetching = self.inner.listing.lock().await;
        match self.cached() {
            Some((cached, _)) if !Arc::ptr_eq(&cached, seen) => Ok(Some(cached)),
            Some((_, fetched)) if fetched.elapsed() < MIN_RELIST_AGE => Ok(None),
            _ => self.fetch_listing().await.map(Some),
        }
    }

    /// As [`OtcClient::resolve`], with the listing it was found in.
    pub(super) async fn resolve_in(
        &self,
        tool: &str,
    ) -> Result<(Arc<Listing>, Arc<ListedTool>), OtcError> {
        let listing = self.listing().await?;
        match listing.find(tool) {
            Ok(found) => Ok((listing, found)),
            Err(missing) if matches!(missing.kind(), OtcErrorKind::UnknownTool(_)) => {
                match self.relist(&listing).await? {
                    Some(fresh) => fresh.find(tool).map(|found| (fresh, found)),
                    None => Err(missing),
                }
            }
            Err(other) => Err(other),
        }
    }

    /// The definition `tool` names in a listing newer than `listing`, if it
    /// is another than `listed` (a listing that fails leaves the refusal).
    pub(super) async fn newer_definition(
        &self,
        listing: &Arc<Listing>,
        listed: &ListedTool,
        tool: &str,
    ) -> Option<Arc<ListedTool>> {
        let fresh = self.relist(listing).await.ok()??;
        let found = fresh.find(tool).ok()?;
        (found.definition != listed.definition).then_some(found)
    }
}
