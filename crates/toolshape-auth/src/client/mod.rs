//! The authorizing client: an [`HttpAuth`] for [`toolshape::client`].
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! use toolshape::client::Client;
//! use toolshape_auth::client::{LoopbackConsent, OAuthClient};
//!
//! let url = "https://mcp.example.com/mcp";
//! let oauth = OAuthClient::builder(url)?
//!     .client_name("my tool")
//!     .consent(Arc::new(LoopbackConsent::bind(0)?))
//!     .build()?;
//! let client = Client::builder()
//!     .http_auth(Arc::new(oauth))
//!     .connect_http(url)
//!     .await?;
//! println!("{} tools", client.list_tools().await?.len());
//! # Ok(()) }
//! ```
//!
//! Nothing happens until the server answers `401`: then discovery,
//! registration and the grant run once (concurrent refusals wait for it),
//! and the request is sent again with the token. A `403
//! insufficient_scope` asks again for the union of the scopes held and the
//! ones challenged, at most [`OAuthClientBuilder::max_step_ups`] times and
//! never twice for the same set.

mod authorize;
mod config;
mod consent;
mod discovery;
mod error;
mod keys;
mod loopback;
mod memory_store;
mod obtain;
mod registration;
mod session;
mod store;
mod token;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use toolshape::client::{AuthChallenge, AuthFuture, AuthRequest, HttpAuth};
use url::Url;

pub use config::{
    ApplicationType, AssertionSource, ClientIdentity, Grant, IdentityAssertion, StaticAssertion,
    TokenAuthMethod,
};
pub use consent::{Consent, HeadlessConsent};
pub use error::AuthError;
pub use keys::{KeyError, SigningKey};
pub use loopback::{CALLBACK_PATH, LoopbackConsent};
pub use memory_store::{MAX_MEMORY_STORE_BYTES, MemoryTokenStore};
pub use store::{
    FileTokenStore, MAX_STORE_FILE_BYTES, StoreFuture, StoredClient, StoredToken, TokenStore,
};

use crate::fetch::{Fetcher, origin};
use session::{Active, FlowState};

/// Default number of step-up authorizations (`403 insufficient_scope`).
pub const DEFAULT_MAX_STEP_UPS: usize = 2;

/// Authorizes a [`toolshape::client::Client`] at one MCP server. Cheap to
/// clone; clones share tokens.
#[derive(Debug, Clone)]
pub struct OAuthClient {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    server: Url,
    origin: String,
    settings: Settings,
    fetch: Fetcher,
    store: Arc<dyn TokenStore>,
    consent: Option<Arc<dyn Consent>>,
    /// The token in use (read by every request).
    active: Mutex<Option<Arc<Active>>>,
    /// The MCP server's latest DPoP nonce.
    server_nonce: Mutex<Option<String>>,
    /// Whether the kept token was loaded from the store.
    loaded: std::sync::atomic::AtomicBool,
    /// One discovery/registration/grant at a time.
    flow: tokio::sync::Mutex<FlowState>,
}

#[derive(Debug)]
struct Settings {
    client_name: String,
    identity: Option<ClientIdentity>,
    metadata_document: Option<String>,
    dynamic_registration: bool,
    application_type: ApplicationType,
    grant: Grant,
    scopes: Vec<String>,
    offline_access: bool,
    dpop: bool,
    max_step_ups: usize,
}

/// Builds an [`OAuthClient`].
#[derive(Debug)]
pub struct OAuthClientBuilder {
    server: Url,
    settings: Settings,
    store: Option<Arc<dyn TokenStore>>,
    consent: Option<Arc<dyn Consent>>,
    allow_http: bool,
    timeout: Duration,
}

impl OAuthClient {
    /// Starts a client for the MCP endpoint at `server` (the URL the
    /// [`Client`](toolshape::client::Client) connects to). Its token goes to
    /// that origin only.
    pub fn builder(server: &str) -> Result<OAuthClientBuilder, AuthError> {
        let server = discovery::parse_url(server)?;
        Ok(OAuthClientBuilder {
            server,
            settings: Settings {
                client_name: "toolshape".into(),
                identity: None,
                metadata_document: None,
                dynamic_registration: true,
                application_type: ApplicationType::Native,
                grant: Grant::AuthorizationCode,
                scopes: Vec::new(),
                offline_access: true,
                dpop: true,
                max_step_ups: DEFAULT_MAX_STEP_UPS,
            },
            store: None,
            consent: None,
            allow_http: false,
            timeout: Duration::from_secs(30),
        })
    }

    /// Authorizes now, before any MCP request, if the server wants it and
    /// no usable token is kept: asks the endpoint (an unauthenticated GET)
    /// and answers its `401`. Returns whether it holds a token afterwards.
    /// Useful before connecting when consent is interactive (a browser),
    /// so that the wait for the user counts against no request timeout.
    pub async fn authorize(&self) -> Result<bool, AuthError> {
        self.authorize_with(&http::HeaderMap::new()).await
    }

    /// [`authorize`](Self::authorize), the endpoint asked with `headers`
    /// too: the fixed headers the connection will send (a tenant, or an API
    /// key that makes the endpoint answer without OAuth).
    pub async fn authorize_with(&self, headers: &http::HeaderMap) -> Result<bool, AuthError> {
        self.session().ensure_loaded().await?;
        if self.session().current().is_some() {
            return Ok(true);
        }
        let request = self
            .inner
            .fetch
            .client()
            .get(self.inner.server.clone())
            .headers(headers.clone())
            .header(http::header::ACCEPT, "text/event-stream");
        let answer = match self.inner.fetch.send(&self.inner.server, request).await {
            Ok(answer) => answer,
            Err(error) => {
                // Unreachable now: the connection itself will say so.
                tracing::debug!(%error, "the authorization probe failed");
                return Ok(false);
            }
        };
        if answer.status != 401 {
            return Ok(false);
        }
        // No credentials of ours went with the probe.
        let nothing = http::HeaderMap::new();
        let challenge = AuthChallenge {
            request: AuthRequest {
                url: &self.inner.server,
                method: "GET",
            },
            status: 401,
            headers: &answer.headers,
            sent: &nothing,
        };
        self.session().challenge(challenge).await?;
        Ok(self.session().current().is_some())
    }

    /// The token in use, if any (for display or a store of your own).
    pub fn token(&self) -> Option<StoredToken> {
        self.session().current().map(|active| active.token.clone())
    }

    fn session(&self) -> session::Session<'_> {
        session::Session { inner: &self.inner }
    }
}

impl HttpAuth for OAuthClient {
    fn headers<'a>(&'a self, request: AuthRequest<'a>) -> AuthFuture<'a, http::HeaderMap> {
        Box::pin(async move {
            // Tokens are for their server's origin only.
            if origin(request.url) != self.inner.origin {
                return Ok(http::HeaderMap::new());
            }
            Ok(self.session().credentials(request).await?)
        })
    }

    fn challenge<'a>(&'a self, challenge: AuthChallenge<'a>) -> AuthFuture<'a, bool> {
        Box::pin(async move {
            if origin(challenge.request.url) != self.inner.origin {
                return Ok(false);
            }
            Ok(self.session().challenge(challenge).await?)
        })
    }
}

impl OAuthClientBuilder {
    /// The `client_name` registered (default `toolshape`).
    #[must_use]
    pub fn client_name(mut self, name: impl Into<String>) -> Self {
        self.settings.client_name = name.into();
        self
    }

    /// A pre-registered client: used with every authorization server, or
    /// only with the one it is bound to ([`ClientIdentity::issuer`]).
    #[must_use]
    pub fn identity(mut self, identity: ClientIdentity) -> Self {
        self.settings.identity = Some(identity);
        self
    }

    /// The URL of this client's Client ID Metadata Document (an https URL
    /// with a path, serving a document whose `client_id` is that URL): used
    /// as the client id with authorization servers that accept them.
    pub fn client_metadata_url(mut self, url: &str) -> Result<Self, AuthError> {
        match Url::parse(url) {
            Ok(parsed) if parsed.scheme() == "https" && parsed.path().len() > 1 => {
                self.settings.metadata_document = Some(url.to_owned());
                Ok(self)
            }
            _ => Err(AuthError::Url(url.to_owned())),
        }
    }

    /// Whether dynamic client registration may be used (default yes).
    #[must_use]
    pub fn dynamic_registration(mut self, allowed: bool) -> Self {
        self.settings.dynamic_registration = allowed;
        self
    }

    /// The `application_type` of dynamic registration (default native).
    #[must_use]
    pub fn application_type(mut self, kind: ApplicationType) -> Self {
        self.settings.application_type = kind;
        self
    }

    /// How tokens are obtained (default: authorization code).
    #[must_use]
    pub fn grant(mut self, grant: Grant) -> Self {
        self.settings.grant = grant;
        self
    }

    /// Scopes to ask for besides the ones the server names.
    #[must_use]
    pub fn scopes<I, S>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.settings
            .scopes
            .extend(scopes.into_iter().map(Into::into));
        self
    }

    /// Whether to ask for `offline_access` (refresh tokens) when the
    /// authorization server lists it (default yes).
    #[must_use]
    pub fn offline_access(mut self, wanted: bool) -> Self {
        self.settings.offline_access = wanted;
        self
    }

    /// Whether to bind tokens with DPoP when the authorization server
    /// offers ES256 proofs (default yes).
    #[must_use]
    pub fn dpop(mut self, wanted: bool) -> Self {
        self.settings.dpop = wanted;
        self
    }

    /// Most step-up authorizations over the client's life (default
    /// [`DEFAULT_MAX_STEP_UPS`]).
    #[must_use]
    pub fn max_step_ups(mut self, limit: usize) -> Self {
        self.settings.max_step_ups = limit;
        self
    }

    /// How the user's consent is asked for (none: the authorization code
    /// grant fails with [`AuthError::NoConsent`]).
    #[must_use]
    pub fn consent(mut self, consent: Arc<dyn Consent>) -> Self {
        self.consent = Some(consent);
        self
    }

    /// Where tokens and registrations are kept (default: in memory).
    #[must_use]
    pub fn store(mut self, store: Arc<dyn TokenStore>) -> Self {
        self.store = Some(store);
        self
    }

    /// Lets discovery, registration and token requests use plain http to
    /// hosts that are not loopback (default: https only, http to loopback),
    /// and reach private or link-local addresses for a server that is not
    /// on one (default: refused).
    #[must_use]
    pub fn allow_http(mut self, allowed: bool) -> Self {
        self.allow_http = allowed;
        self
    }

    /// Time limit of each request to the authorization server.
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The client.
    pub fn build(self) -> Result<OAuthClient, AuthError> {
        let fetch = Fetcher::new(self.timeout, self.allow_http)
            .and_then(|fetch| fetch.for_server(&self.server))
            .map_err(AuthError::Http)?;
        fetch.check(&self.server)?;
        Ok(OAuthClient {
            inner: Arc::new(Inner {
                origin: origin(&self.server),
                server: self.server,
                settings: self.settings,
                fetch,
                store: self
                    .store
                    .unwrap_or_else(|| Arc::new(MemoryTokenStore::new())),
                consent: self.consent,
                active: Mutex::new(None),
                server_nonce: Mutex::new(None),
                loaded: std::sync::atomic::AtomicBool::new(false),
                flow: tokio::sync::Mutex::new(FlowState::default()),
            }),
        })
    }
}
