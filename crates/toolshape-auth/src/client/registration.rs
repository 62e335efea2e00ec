//! Which client id to use with an authorization server, in MCP's order:
//! pre-registered, a Client ID Metadata Document when the server accepts
//! them, a registration kept from before, else dynamic registration
//! (RFC 7591). Registrations are kept per issuer and never presented to
//! another authorization server.

use std::sync::Arc;

use serde::Deserialize;
use serde_json::json;
use url::Url;

use super::AuthError;
use super::config::{ApplicationType, ClientIdentity, TokenAuthMethod};
use super::discovery::Discovered;
use super::keys::SigningKey;
use super::store::{StoredClient, TokenStore};
use crate::Secret;
use crate::fetch::Fetcher;
use crate::jose::now;
use crate::metadata::AuthorizationServerMetadata;

/// A client id with what authenticates it.
#[derive(Debug, Clone)]
pub(crate) struct RegisteredClient {
    pub(crate) client_id: String,
    pub(crate) secret: Option<Secret>,
    pub(crate) key: Option<Arc<SigningKey>>,
    pub(crate) method: TokenAuthMethod,
}

/// What registration needs from the client's configuration.
#[derive(Debug)]
pub(crate) struct RegistrationSettings<'a> {
    pub(crate) identity: Option<&'a ClientIdentity>,
    pub(crate) metadata_document: Option<&'a str>,
    pub(crate) dynamic: bool,
    pub(crate) client_name: &'a str,
    pub(crate) application_type: ApplicationType,
    pub(crate) offline_access: bool,
}

/// The pre-registered identity, if it may be used with `issuer`.
pub(crate) fn pre_registered(
    identity: Option<&ClientIdentity>,
    discovered: &Discovered,
) -> Result<Option<RegisteredClient>, AuthError> {
    let Some(identity) = identity else {
        return Ok(None);
    };
    if let Some(bound) = &identity.issuer
        && bound != &discovered.issuer
    {
        return Err(AuthError::IssuerChanged {
            bound: bound.clone(),
            issuer: discovered.issuer.clone(),
        });
    }
    let method = identity.method.unwrap_or_else(|| {
        choose_method(
            identity.secret.is_some(),
            identity.key.is_some(),
            None,
            &discovered.metadata,
        )
    });
    Ok(Some(RegisteredClient {
        client_id: identity.client_id.clone(),
        secret: identity.secret.clone(),
        key: identity.key.clone(),
        method,
    }))
}

/// The client for an authorization code flow redirecting to `redirect_uri`.
pub(crate) async fn client_for(
    settings: &RegistrationSettings<'_>,
    fetch: &Fetcher,
    store: &dyn TokenStore,
    discovered: &Discovered,
    redirect_uri: &Url,
) -> Result<RegisteredClient, AuthError> {
    if let Some(client) = pre_registered(settings.identity, discovered)? {
        return Ok(client);
    }
    let metadata = &discovered.metadata;
    if let Some(document) = settings.metadata_document
        && metadata.client_id_metadata_document_supported == Some(true)
    {
        return Ok(RegisteredClient {
            client_id: document.to_owned(),
            secret: None,
            key: None,
            method: TokenAuthMethod::None,
        });
    }
    let issuer = &discovered.issuer;
    if let Some(kept) = store.client(issuer).await.map_err(AuthError::Store)?
        && kept
            .redirect_uris
            .iter()
            .any(|uri| uri == redirect_uri.as_str())
        && kept
            .client_secret_expires_at
            .is_none_or(|at| at == 0 || at > now() + 60)
    {
        return Ok(from_stored(kept, metadata));
    }
    if !settings.dynamic || metadata.registration_endpoint.is_none() {
        return Err(AuthError::NoClient(issuer.clone()));
    }
    let endpoint = discovered.endpoint(
        fetch,
        &metadata.registration_endpoint,
        "registration endpoint",
    )?;
    let kept = register(settings, fetch, &endpoint, redirect_uri).await?;
    store
        .set_client(issuer, Some(kept.clone()))
        .await
        .map_err(AuthError::Store)?;
    Ok(from_stored(kept, metadata))
}

/// The client that holds `client_id` (for refreshing a kept token).
pub(crate) async fn client_by_id(
    settings: &RegistrationSettings<'_>,
    store: &dyn TokenStore,
    discovered: &Discovered,
    client_id: &str,
) -> Result<Option<RegisteredClient>, AuthError> {
    if let Some(client) = pre_registered(settings.identity, discovered)?
        && client.client_id == client_id
    {
        return Ok(Some(client));
    }
    if settings.metadata_document == Some(client_id) {
        return Ok(Some(RegisteredClient {
            client_id: client_id.to_owned(),
            secret: None,
            key: None,
            method: TokenAuthMethod::None,
        }));
    }
    let kept = store
        .client(&discovered.issuer)
        .await
        .map_err(AuthError::Store)?;
    Ok(kept
        .filter(|kept| kept.client_id == client_id)
        .map(|kept| from_stored(kept, &discovered.metadata)))
}

#[derive(Deserialize)]
struct RegistrationResponse {
    client_id: String,
    #[serde(default)]
    client_secret: Option<String>,
    #[serde(default)]
    token_endpoint_auth_method: Option<String>,
    #[serde(default)]
    client_secret_expires_at: Option<u64>,
}

async fn register(
    settings: &RegistrationSettings<'_>,
    fetch: &Fetcher,
    endpoint: &Url,
    redirect_uri: &Url,
) -> Result<StoredClient, AuthError> {
    let mut grant_types = vec!["authorization_code"];
    if settings.offline_access {
        grant_types.push("refresh_token");
    }
    let body = json!({
        "client_name": settings.client_name,
        "redirect_uris": [redirect_uri.as_str()],
        "grant_types": grant_types,
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
        "application_type": settings.application_type.as_str(),
    });
    let request = fetch
        .client()
        .post(endpoint.clone())
        .header(http::header::ACCEPT, "application/json")
        .header(http::header::CONTENT_TYPE, "application/json")
        .body(body.to_string());
    let answer = fetch.send(endpoint, request).await?;
    let failed = |detail: String| AuthError::Registration {
        url: endpoint.to_string(),
        detail,
    };
    if !matches!(answer.status, 200 | 201) {
        return Err(failed(format!(
            "HTTP {}: {}",
            answer.status,
            answer.excerpt()
        )));
    }
    let registered: RegistrationResponse =
        answer.json(endpoint).map_err(|e| failed(e.to_string()))?;
    if registered.client_id.is_empty() {
        return Err(failed("the answer has an empty client_id".into()));
    }
    Ok(StoredClient {
        client_id: registered.client_id,
        client_secret: registered.client_secret.map(Secret::new),
        token_endpoint_auth_method: registered.token_endpoint_auth_method,
        redirect_uris: vec![redirect_uri.to_string()],
        client_secret_expires_at: registered.client_secret_expires_at,
    })
}

fn from_stored(kept: StoredClient, metadata: &AuthorizationServerMetadata) -> RegisteredClient {
    let registered = kept
        .token_endpoint_auth_method
        .as_deref()
        .and_then(TokenAuthMethod::parse)
        .filter(|m| *m != TokenAuthMethod::PrivateKeyJwt);
    let method = choose_method(kept.client_secret.is_some(), false, registered, metadata);
    RegisteredClient {
        client_id: kept.client_id,
        secret: kept.client_secret,
        key: None,
        method,
    }
}

/// The token endpoint authentication: the one registered when known; a key
/// means `private_key_jwt`; a secret goes by the first of
/// `client_secret_basic` and `client_secret_post` the server lists (basic
/// when it lists none: the RFC 8414 default), unless it only lists `none`.
pub(crate) fn choose_method(
    has_secret: bool,
    has_key: bool,
    registered: Option<TokenAuthMethod>,
    metadata: &AuthorizationServerMetadata,
) -> TokenAuthMethod {
    if let Some(method) = registered {
        return method;
    }
    if has_key {
        return TokenAuthMethod::PrivateKeyJwt;
    }
    if !has_secret {
        return TokenAuthMethod::None;
    }
    let Some(supported) = &metadata.token_endpoint_auth_methods_supported else {
        return TokenAuthMethod::ClientSecretBasic;
    };
    supported
        .iter()
        .filter_map(|name| TokenAuthMethod::parse(name))
        .find(|m| {
            matches!(
                m,
                TokenAuthMethod::ClientSecretBasic | TokenAuthMethod::ClientSecretPost
            )
        })
        .or_else(|| {
            supported
                .iter()
                .any(|name| name == "none")
                .then_some(TokenAuthMethod::None)
        })
        .unwrap_or(TokenAuthMethod::ClientSecretBasic)
}
