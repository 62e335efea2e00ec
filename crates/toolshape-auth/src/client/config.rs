//! How an [`OAuthClient`](super::OAuthClient) identifies itself and which
//! grant it uses.

use std::sync::Arc;

use toolshape::client::AuthFuture;

use super::keys::SigningKey;
use crate::Secret;

/// How tokens are obtained.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub enum Grant {
    /// Authorization code with PKCE S256 (the default): a user consents
    /// through the [`Consent`](super::Consent).
    #[default]
    AuthorizationCode,
    /// Client credentials (RFC 6749 §4.4): the client acts on its own
    /// behalf, authenticated by the secret or key of its
    /// [`ClientIdentity`].
    ClientCredentials,
    /// A JWT assertion as the grant (RFC 7523 §2.1), e.g. a workload
    /// identity token (SEP-1933); the client id comes from the
    /// [`ClientIdentity`].
    JwtBearer(Arc<dyn AssertionSource>),
    /// Enterprise-managed authorization (SEP-990): the identity provider's
    /// ID token is exchanged there for an identity assertion (RFC 8693),
    /// which the MCP server's authorization server takes as a JWT bearer
    /// grant (RFC 7523), with the [`ClientIdentity`]'s authentication.
    IdentityAssertion(IdentityAssertion),
}

/// The identity provider side of [`Grant::IdentityAssertion`].
#[derive(Debug, Clone)]
pub struct IdentityAssertion {
    /// The identity provider's token endpoint.
    pub idp_token_endpoint: String,
    /// The client id at the identity provider.
    pub idp_client_id: Option<String>,
    /// The client secret at the identity provider, if it wants one.
    pub idp_client_secret: Option<Secret>,
    /// The user's ID token from the identity provider.
    pub id_token: Arc<dyn AssertionSource>,
}

/// Supplies an assertion (a signed JWT) on demand.
pub trait AssertionSource: Send + Sync + std::fmt::Debug + 'static {
    /// A current assertion; `audience` is the authorization server's issuer.
    fn assertion<'a>(&'a self, audience: &'a str) -> AuthFuture<'a, Secret>;
}

/// An assertion given once.
#[derive(Debug, Clone)]
pub struct StaticAssertion(pub Secret);

impl AssertionSource for StaticAssertion {
    fn assertion<'a>(&'a self, _audience: &'a str) -> AuthFuture<'a, Secret> {
        let assertion = self.0.clone();
        Box::pin(async move { Ok(assertion) })
    }
}

/// How the client authenticates at the token endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum TokenAuthMethod {
    /// A public client: only its id.
    None,
    /// The secret in HTTP Basic authentication.
    ClientSecretBasic,
    /// The secret in the form body.
    ClientSecretPost,
    /// A JWT signed with the client's key.
    PrivateKeyJwt,
}

impl TokenAuthMethod {
    /// The registered name (`client_secret_basic`...).
    pub fn as_str(self) -> &'static str {
        match self {
            TokenAuthMethod::None => "none",
            TokenAuthMethod::ClientSecretBasic => "client_secret_basic",
            TokenAuthMethod::ClientSecretPost => "client_secret_post",
            TokenAuthMethod::PrivateKeyJwt => "private_key_jwt",
        }
    }

    /// The method a registered name means.
    pub fn parse(name: &str) -> Option<Self> {
        Some(match name {
            "none" => TokenAuthMethod::None,
            "client_secret_basic" => TokenAuthMethod::ClientSecretBasic,
            "client_secret_post" => TokenAuthMethod::ClientSecretPost,
            "private_key_jwt" => TokenAuthMethod::PrivateKeyJwt,
            _ => return None,
        })
    }
}

/// A client registered ahead of time (pre-registration): its id and, for a
/// confidential client, a secret or a private key.
#[derive(Debug, Clone)]
pub struct ClientIdentity {
    pub(crate) client_id: String,
    pub(crate) secret: Option<Secret>,
    pub(crate) key: Option<Arc<SigningKey>>,
    pub(crate) method: Option<TokenAuthMethod>,
    pub(crate) issuer: Option<String>,
}

impl ClientIdentity {
    /// A client id (a public client until a secret or key is added).
    pub fn new(client_id: impl Into<String>) -> Self {
        ClientIdentity {
            client_id: client_id.into(),
            secret: None,
            key: None,
            method: None,
            issuer: None,
        }
    }

    /// The client secret. Bind the identity with [`ClientIdentity::issuer`]
    /// too: unbound, the secret goes to whichever authorization server the
    /// MCP server names (2026-07-28: pre-registered credentials MUST NOT be
    /// used with another authorization server; `toolshape`'s commands
    /// refuse a secret without it).
    #[must_use]
    pub fn secret(mut self, secret: impl Into<Secret>) -> Self {
        self.secret = Some(secret.into());
        self
    }

    /// The private key (`private_key_jwt`).
    #[must_use]
    pub fn private_key(mut self, key: SigningKey) -> Self {
        self.key = Some(Arc::new(key));
        self
    }

    /// Forces the token endpoint authentication (default: the key if any,
    /// else the secret by the method the server lists first of
    /// `client_secret_basic` and `client_secret_post`, else none).
    #[must_use]
    pub fn auth_method(mut self, method: TokenAuthMethod) -> Self {
        self.method = Some(method);
        self
    }

    /// Binds the identity to the authorization server that issued it (its
    /// `issuer`, exactly as its metadata names it): with another issuer
    /// named by the server, authorization fails instead of presenting these
    /// credentials, or a [`Grant::JwtBearer`] assertion, elsewhere.
    #[must_use]
    pub fn issuer(mut self, issuer: impl Into<String>) -> Self {
        self.issuer = Some(issuer.into());
        self
    }

    /// The client id.
    pub fn client_id(&self) -> &str {
        &self.client_id
    }
}

/// The `application_type` sent with dynamic registration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ApplicationType {
    /// Desktop and command-line clients with loopback redirects (default).
    #[default]
    Native,
    /// Clients served from a web origin.
    Web,
}

impl ApplicationType {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            ApplicationType::Native => "native",
            ApplicationType::Web => "web",
        }
    }
}
