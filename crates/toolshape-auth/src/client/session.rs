//! The client's state machine: credentials for each request, and what a
//! `401` or `403` leads to (a nonce, a token renewed meanwhile, a refresh,
//! a new grant, a step-up).

use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use http::header::AUTHORIZATION;
use http::{HeaderMap, HeaderValue};
use toolshape::client::{AuthChallenge, AuthRequest};

use super::config::{Grant, TokenAuthMethod};
use super::discovery::{self, Discovered, canonical};
use super::keys::DpopKey;
use super::registration::{self, RegisteredClient, RegistrationSettings};
use super::store::StoredToken;
use super::token::{Issued, TokenEndpoint};
use super::{AuthError, Inner};
use crate::challenge::{self, Challenge};
use crate::jose::{b64url, now};

/// A token refused on its very first use this many times in a row ends the
/// attempts: the server does not take what its authorization server issues.
const MAX_FRESH_REFUSALS: usize = 2;
/// A token this close to its expiry is refreshed before use.
const REFRESH_MARGIN_SECS: u64 = 30;
/// Authorization servers whose latest DPoP nonce is kept: a server naming a
/// new one after each grant cannot grow the map past this.
const MAX_KEPT_NONCES: usize = 16;

/// The token in use.
#[derive(Debug)]
pub(crate) struct Active {
    pub(crate) token: StoredToken,
    dpop: Option<DpopKey>,
    authorization: String,
    uses: AtomicUsize,
}

impl Active {
    fn new(token: StoredToken) -> Result<Self, AuthError> {
        let dpop = match &token.dpop_key {
            Some(key) if token.token_type.eq_ignore_ascii_case("dpop") => {
                let der = URL_SAFE_NO_PAD
                    .decode(key.expose())
                    .map_err(|_| super::KeyError::Dpop)?;
                Some(DpopKey::from_pkcs8(&der)?)
            }
            _ => None,
        };
        let scheme = if dpop.is_some() { "DPoP" } else { "Bearer" };
        Ok(Active {
            authorization: format!("{scheme} {}", token.access_token.expose()),
            token,
            dpop,
            uses: AtomicUsize::new(0),
        })
    }

    fn expiring(&self) -> bool {
        self.token
            .expires_at
            .is_some_and(|at| at <= now() + REFRESH_MARGIN_SECS)
    }
}

/// What only one flow at a time touches.
#[derive(Debug, Default)]
pub(crate) struct FlowState {
    loaded: bool,
    discovered: Option<Discovered>,
    step_ups: Vec<BTreeSet<String>>,
    fresh_refusals: usize,
    /// The authorization servers' latest DPoP nonces, by issuer (at most
    /// [`MAX_KEPT_NONCES`]).
    nonces: HashMap<String, String>,
    /// A non-interactive grant that failed is not tried again.
    pub(super) grant_failed: bool,
}

impl FlowState {
    /// The latest DPoP nonce of `issuer`'s token endpoint.
    pub(super) fn nonce(&self, issuer: &str) -> Option<String> {
        self.nonces.get(issuer).cloned()
    }

    /// Keeps `nonce` as `issuer`'s latest; past [`MAX_KEPT_NONCES`]
    /// issuers one of the others is forgotten (a forgotten nonce costs one
    /// `use_dpop_nonce` round when that server is met again).
    pub(super) fn keep_nonce(&mut self, issuer: &str, nonce: String) {
        if self.nonces.len() >= MAX_KEPT_NONCES && !self.nonces.contains_key(issuer) {
            let other = self.nonces.keys().next().cloned();
            if let Some(other) = other {
                self.nonces.remove(&other);
            }
        }
        self.nonces.insert(issuer.to_owned(), nonce);
    }
}

pub(crate) struct Session<'a> {
    pub(crate) inner: &'a Inner,
}

impl Session<'_> {
    pub(crate) fn current(&self) -> Option<Arc<Active>> {
        lock(&self.inner.active).clone()
    }

    fn set(&self, active: Option<Arc<Active>>) {
        *lock(&self.inner.active) = active;
    }

    fn key(&self) -> String {
        canonical(&self.inner.server)
    }

    /// Loads the kept token once.
    pub(crate) async fn ensure_loaded(&self) -> Result<(), AuthError> {
        let mut flow = self.inner.flow.lock().await;
        self.load(&mut flow).await
    }

    async fn load(&self, flow: &mut FlowState) -> Result<(), AuthError> {
        if flow.loaded {
            return Ok(());
        }
        flow.loaded = true;
        self.inner.loaded.store(true, Ordering::Release);
        let kept = self
            .inner
            .store
            .token(&self.key())
            .await
            .map_err(AuthError::Store)?;
        if let Some(token) = kept {
            match Active::new(token) {
                Ok(active) => self.set(Some(Arc::new(active))),
                Err(error) => {
                    tracing::warn!(%error, "the kept token is unusable; authorizing anew")
                }
            }
        }
        Ok(())
    }

    /// The headers of one request: the token (and its DPoP proof).
    pub(crate) async fn credentials(
        &self,
        request: AuthRequest<'_>,
    ) -> Result<HeaderMap, AuthError> {
        if !self.inner.loaded.load(Ordering::Acquire) {
            self.ensure_loaded().await?;
        }
        let mut active = self.current();
        if let Some(expiring) = active
            .as_ref()
            .filter(|a| a.expiring() && a.token.refresh_token.is_some())
        {
            let mut flow = self.inner.flow.lock().await;
            let still_current = self.current().is_some_and(|c| Arc::ptr_eq(&c, expiring));
            if still_current && let Err(error) = self.refresh_kept(&mut flow, expiring).await {
                tracing::debug!(%error, "refreshing the token failed; the server will say whether it still works");
            }
            drop(flow);
            active = self.current();
        }
        let mut headers = HeaderMap::new();
        let Some(active) = active else {
            return Ok(headers);
        };
        active.uses.fetch_add(1, Ordering::Relaxed);
        let value = HeaderValue::from_str(&active.authorization)
            .map_err(|_| AuthError::Callback("the access token cannot go in a header".into()))?;
        headers.insert(AUTHORIZATION, value);
        if let Some(key) = &active.dpop {
            let nonce = lock(&self.inner.server_nonce).clone();
            let proof = key.proof(
                request.method,
                request.url,
                Some(active.token.access_token.expose()),
                nonce.as_deref(),
            )?;
            if let Ok(proof) = HeaderValue::from_str(&proof) {
                headers.insert("dpop", proof);
            }
        }
        Ok(headers)
    }

    /// Answers a refusal: whether the request should be sent again.
    pub(crate) async fn challenge(&self, refused: AuthChallenge<'_>) -> Result<bool, AuthError> {
        let challenges = challenge::from_headers(refused.headers);
        let oauth: Option<&Challenge> = challenge::oauth_challenge(&challenges);
        let error = oauth.and_then(|c| c.param("error"));
        let named = oauth.and_then(|c| c.param("resource_metadata"));
        let scope = oauth.and_then(|c| c.param("scope"));
        let mut flow = self.inner.flow.lock().await;
        self.load(&mut flow).await?;
        if let Some(nonce) = refused
            .headers
            .get("dpop-nonce")
            .and_then(|v| v.to_str().ok())
        {
            *lock(&self.inner.server_nonce) = Some(nonce.to_owned());
            if error == Some("use_dpop_nonce") {
                return Ok(true);
            }
        }
        // Another request renewed the token since this one was sent.
        let current = self.current();
        let sent = refused
            .sent
            .get(AUTHORIZATION)
            .and_then(|v| v.to_str().ok());
        if let Some(active) = &current
            && Some(active.authorization.as_str()) != sent
        {
            return Ok(true);
        }
        match refused.status {
            401 => {
                self.reauthorize(&mut flow, current, named, scope).await?;
                Ok(self.current().is_some())
            }
            403 if error == Some("insufficient_scope") => {
                self.step_up(&mut flow, current, named, scope).await
            }
            _ => Ok(false),
        }
    }

    /// After a `401`: refresh the refused token if possible, else a new grant.
    async fn reauthorize(
        &self,
        flow: &mut FlowState,
        refused: Option<Arc<Active>>,
        named: Option<&str>,
        scope: Option<&str>,
    ) -> Result<(), AuthError> {
        self.set(None);
        if let Some(refused) = &refused {
            if refused.uses.load(Ordering::Relaxed) <= 1 {
                flow.fresh_refusals += 1;
                if flow.fresh_refusals >= MAX_FRESH_REFUSALS {
                    return Err(AuthError::Token {
                        url: self.inner.server.to_string(),
                        detail: "the server refuses the tokens its authorization server issues"
                            .into(),
                    });
                }
            } else {
                flow.fresh_refusals = 0;
            }
        }
        if flow.grant_failed {
            return Ok(());
        }
        let renewable = refused
            .as_ref()
            .is_some_and(|r| r.token.refresh_token.is_some());
        if matches!(self.inner.settings.grant, Grant::AuthorizationCode)
            && self.inner.consent.is_none()
            && !renewable
        {
            return Err(AuthError::NoConsent);
        }
        let discovered = discovery::discover(&self.inner.fetch, &self.inner.server, named).await?;
        flow.discovered = Some(discovered.clone());
        let mut wanted = initial_scopes(scope, &discovered);
        if let Some(refused) = refused.filter(|r| r.token.issuer == discovered.issuer) {
            if refused.token.refresh_token.is_some() {
                match self.refresh(flow, &discovered, &refused).await {
                    Ok(()) => return Ok(()),
                    Err(error) => tracing::debug!(%error, "refreshing failed; authorizing anew"),
                }
            }
            // Keep what was granted before (scopes challenged per operation add up).
            wanted.extend(refused.token.scopes.iter().cloned());
        }
        self.obtain(flow, &discovered, wanted).await
    }

    /// After a `403 insufficient_scope`: ask for the scopes held plus the
    /// ones challenged, unless that asks for nothing new or was tried.
    async fn step_up(
        &self,
        flow: &mut FlowState,
        current: Option<Arc<Active>>,
        named: Option<&str>,
        scope: Option<&str>,
    ) -> Result<bool, AuthError> {
        let Some(current) = current else {
            self.reauthorize(flow, None, named, scope).await?;
            return Ok(self.current().is_some());
        };
        let held: BTreeSet<String> = current.token.scopes.iter().cloned().collect();
        let mut wanted = held.clone();
        wanted.extend(parse_scopes(scope.unwrap_or_default()));
        if wanted == held {
            tracing::warn!(
                scope = scope.unwrap_or_default(),
                "the server wants scopes already asked for; giving up"
            );
            return Ok(false);
        }
        if flow.step_ups.len() >= self.inner.settings.max_step_ups
            || flow.step_ups.contains(&wanted)
        {
            tracing::warn!("step-up limit reached; giving up");
            return Ok(false);
        }
        flow.step_ups.push(wanted.clone());
        let discovered = discovery::discover(&self.inner.fetch, &self.inner.server, named).await?;
        flow.discovered = Some(discovered.clone());
        self.obtain(flow, &discovered, wanted).await?;
        Ok(true)
    }

    /// Refreshes `refused` (a kept token) with the authorization server found.
    async fn refresh(
        &self,
        flow: &mut FlowState,
        discovered: &Discovered,
        previous: &Active,
    ) -> Result<(), AuthError> {
        let refresh_token = previous
            .token
            .refresh_token
            .clone()
            .ok_or(AuthError::NoIdentity)?;
        let registration = self.registration();
        let client = registration::client_by_id(
            &registration,
            self.inner.store.as_ref(),
            discovered,
            &previous.token.client_id,
        )
        .await?
        .unwrap_or_else(|| RegisteredClient {
            client_id: previous.token.client_id.clone(),
            secret: None,
            key: None,
            method: TokenAuthMethod::None,
        });
        let token_url = discovered.endpoint(
            &self.inner.fetch,
            &discovered.metadata.token_endpoint,
            "token endpoint",
        )?;
        let nonce = Mutex::new(flow.nonce(&discovered.issuer));
        let endpoint = TokenEndpoint {
            fetch: &self.inner.fetch,
            url: token_url,
            issuer: &discovered.issuer,
            resource: &previous.token.resource,
            client: &client,
            dpop: previous.dpop.as_ref(),
            nonce: &nonce,
        };
        let issued = endpoint.refresh(&refresh_token).await;
        if let Some(nonce) = lock(&nonce).clone() {
            flow.keep_nonce(&discovered.issuer, nonce);
        }
        let scopes = previous.token.scopes.iter().cloned().collect();
        self.install(
            discovered,
            &client.client_id,
            scopes,
            issued?,
            previous.dpop.clone(),
            Some(refresh_token),
        )
        .await
    }

    /// Refreshes the token in use before it expires (no refusal yet).
    async fn refresh_kept(
        &self,
        flow: &mut FlowState,
        active: &Arc<Active>,
    ) -> Result<(), AuthError> {
        let issuer = &active.token.issuer;
        let discovered = match &flow.discovered {
            Some(found) if &found.issuer == issuer => found.clone(),
            _ => Discovered {
                resource: active.token.resource.clone(),
                resource_metadata: None,
                issuer: issuer.clone(),
                metadata: discovery::server_metadata(&self.inner.fetch, issuer).await?,
            },
        };
        let outcome = self.refresh(flow, &discovered, active).await;
        if outcome.is_err() {
            // Do not try this refresh token again before each request.
            let mut token = active.token.clone();
            token.refresh_token = None;
            self.set(Some(Arc::new(Active::new(token)?)));
        }
        outcome
    }

    /// Makes `issued` the token in use, and keeps it.
    pub(super) async fn install(
        &self,
        discovered: &Discovered,
        client_id: &str,
        scopes: BTreeSet<String>,
        issued: Issued,
        dpop: Option<DpopKey>,
        old_refresh: Option<crate::Secret>,
    ) -> Result<(), AuthError> {
        // A token the server issued as Bearer despite a proof is used as Bearer.
        let dpop = dpop.filter(|_| issued.token_type.eq_ignore_ascii_case("dpop"));
        let token = StoredToken {
            issuer: discovered.issuer.clone(),
            resource: discovered.resource.clone(),
            client_id: client_id.to_owned(),
            access_token: issued.access_token,
            token_type: if dpop.is_some() { "DPoP" } else { "Bearer" }.into(),
            refresh_token: issued.refresh_token.or(old_refresh),
            expires_at: issued
                .expires_in
                .map(|seconds| now().saturating_add(seconds)),
            scopes: scopes.into_iter().collect(),
            dpop_key: dpop
                .as_ref()
                .map(|key| crate::Secret::new(b64url(key.pkcs8()))),
        };
        let active = Active::new(token.clone())?;
        // Used from now on even if it cannot be kept: a refresh token may
        // have been spent to get it.
        self.set(Some(Arc::new(active)));
        if let Err(error) = self.inner.store.set_token(&self.key(), Some(token)).await {
            tracing::warn!(%error, "the new token is used but could not be stored");
        }
        Ok(())
    }

    pub(super) fn registration(&self) -> RegistrationSettings<'_> {
        let settings = &self.inner.settings;
        RegistrationSettings {
            identity: settings.identity.as_ref(),
            metadata_document: settings.metadata_document.as_deref(),
            dynamic: settings.dynamic_registration,
            client_name: &settings.client_name,
            application_type: settings.application_type,
            offline_access: settings.offline_access,
        }
    }
}

/// MCP's scope selection: the challenge's `scope`, else the resource's
/// `scopes_supported`, else none (the parameter is left out).
fn initial_scopes(challenged: Option<&str>, discovered: &Discovered) -> BTreeSet<String> {
    match challenged.filter(|s| !s.trim().is_empty()) {
        Some(scope) => parse_scopes(scope),
        None => discovered
            .resource_metadata
            .as_ref()
            .and_then(|m| m.scopes_supported.clone())
            .unwrap_or_default()
            .into_iter()
            .collect(),
    }
}

fn parse_scopes(text: &str) -> BTreeSet<String> {
    text.split_ascii_whitespace().map(str::to_owned).collect()
}

pub(super) fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::{FlowState, MAX_KEPT_NONCES};

    #[test]
    fn nonces_are_kept_for_a_bounded_number_of_issuers() {
        let mut flow = FlowState::default();
        for n in 0..10 * MAX_KEPT_NONCES {
            flow.keep_nonce(&format!("https://as{n}.example"), format!("nonce {n}"));
            assert!(flow.nonces.len() <= MAX_KEPT_NONCES);
        }
        assert_eq!(flow.nonces.len(), MAX_KEPT_NONCES);
        let last = 10 * MAX_KEPT_NONCES - 1;
        let issuer = format!("https://as{last}.example");
        assert_eq!(flow.nonce(&issuer), Some(format!("nonce {last}")));
        // A known issuer's nonce is replaced in place, whatever the count.
        flow.keep_nonce(&issuer, "newer".into());
        assert_eq!(flow.nonce(&issuer).as_deref(), Some("newer"));
    }
}
