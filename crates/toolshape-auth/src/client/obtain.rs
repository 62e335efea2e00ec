//! Obtaining a new token by the configured grant: the authorization code
//! flow (registration, consent, the code's checks and redemption), client
//! credentials, or a JWT bearer assertion (workload identity, or the
//! identity assertion an enterprise identity provider exchanges an ID token
//! for).

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

use super::AuthError;
use super::authorize;
use super::config::{Grant, TokenAuthMethod};
use super::discovery::{self, Discovered};
use super::keys::DpopKey;
use super::registration::{self, RegisteredClient};
use super::session::{FlowState, Session, lock};
use super::token::{TokenEndpoint, exchange_id_token};
use crate::metadata::AuthorizationServerMetadata;

impl Session<'_> {
    /// A new token by the configured grant.
    pub(super) async fn obtain(
        &self,
        flow: &mut FlowState,
        discovered: &Discovered,
        mut scopes: BTreeSet<String>,
    ) -> Result<(), AuthError> {
        let settings = &self.inner.settings;
        let fetch = &self.inner.fetch;
        scopes.extend(settings.scopes.iter().cloned());
        let metadata = &discovered.metadata;
        let token_url = discovered.endpoint(fetch, &metadata.token_endpoint, "token endpoint")?;
        let dpop = (settings.dpop
            && AuthorizationServerMetadata::lists(
                &metadata.dpop_signing_alg_values_supported,
                "ES256",
            ))
        .then(DpopKey::generate)
        .transpose()?;
        let nonce = Mutex::new(flow.nonce(&discovered.issuer));
        let at = Endpoint {
            fetch,
            url: &token_url,
            discovered,
            dpop: dpop.as_ref(),
            nonce: &nonce,
        };
        let registration = self.registration();
        let (client, issued) = match &settings.grant {
            Grant::AuthorizationCode => {
                if settings.offline_access
                    && AuthorizationServerMetadata::lists(
                        &metadata.scopes_supported,
                        "offline_access",
                    )
                {
                    scopes.insert("offline_access".into());
                }
                let consent = Arc::clone(self.inner.consent.as_ref().ok_or(AuthError::NoConsent)?);
                let redirect = consent.redirect_uri().clone();
                let client = registration::client_for(
                    &registration,
                    fetch,
                    self.inner.store.as_ref(),
                    discovered,
                    &redirect,
                )
                .await?;
                let pending = authorize::start(fetch, discovered, &client, &redirect, &scopes)?;
                let callback = consent
                    .authorize(&pending.url)
                    .await
                    .map_err(AuthError::Consent)?;
                let code = pending.code(&callback)?;
                let issued = at
                    .with(&client)
                    .code(code, pending.verifier, &redirect)
                    .await?;
                (client, issued)
            }
            grant => {
                let client = registration::pre_registered(settings.identity.as_ref(), discovered)?
                    .ok_or(AuthError::NoIdentity)?;
                let issued = match grant {
                    Grant::JwtBearer(source) => {
                        let assertion = source
                            .assertion(&discovered.issuer)
                            .await
                            .map_err(AuthError::Assertion)?;
                        at.with(&client).jwt_bearer(&assertion, &scopes).await
                    }
                    Grant::IdentityAssertion(idp) => {
                        let idp_url = discovery::parse_url(&idp.idp_token_endpoint)?;
                        let idp_client = RegisteredClient {
                            client_id: idp.idp_client_id.clone().unwrap_or_default(),
                            method: if idp.idp_client_secret.is_some() {
                                TokenAuthMethod::ClientSecretPost
                            } else {
                                TokenAuthMethod::None
                            },
                            secret: idp.idp_client_secret.clone(),
                            key: None,
                        };
                        let id_token = idp
                            .id_token
                            .assertion(&idp.idp_token_endpoint)
                            .await
                            .map_err(AuthError::Assertion)?;
                        let grant = exchange_id_token(
                            fetch,
                            &idp_url,
                            &idp_client,
                            &id_token,
                            &discovered.issuer,
                            &discovered.resource,
                            &scopes,
                        )
                        .await;
                        match grant {
                            Ok(grant) => at.with(&client).jwt_bearer(&grant, &scopes).await,
                            Err(error) => Err(error),
                        }
                    }
                    _ => at.with(&client).client_credentials(&scopes).await,
                };
                if issued.is_err() && !matches!(grant, Grant::ClientCredentials) {
                    // RFC 7523 grants are not retried (SEP-1933): the assertion was refused.
                    flow.grant_failed = true;
                }
                (client, issued?)
            }
        };
        if let Some(nonce) = lock(&nonce).clone() {
            flow.keep_nonce(&discovered.issuer, nonce);
        }
        self.install(discovered, &client.client_id, scopes, issued, dpop, None)
            .await
    }
}

/// What every token request of one grant shares.
struct Endpoint<'e> {
    fetch: &'e crate::fetch::Fetcher,
    url: &'e url::Url,
    discovered: &'e Discovered,
    dpop: Option<&'e DpopKey>,
    nonce: &'e Mutex<Option<String>>,
}

impl<'e> Endpoint<'e> {
    fn with(&self, client: &'e RegisteredClient) -> TokenEndpoint<'e> {
        TokenEndpoint {
            fetch: self.fetch,
            url: self.url.clone(),
            issuer: &self.discovered.issuer,
            resource: &self.discovered.resource,
            client,
            dpop: self.dpop,
            nonce: self.nonce,
        }
    }
}
