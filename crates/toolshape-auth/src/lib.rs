//! OAuth 2.1 authorization for MCP over HTTP, on both ends.
//!
//! - [`client::OAuthClient`] (feature `client`) is an
//!   [`HttpAuth`](toolshape::client::HttpAuth) for [`toolshape::client`]: on
//!   the server's `401` it discovers the protected resource (RFC 9728) and its
//!   authorization server (RFC 8414, OpenID discovery, issuer checked),
//!   obtains a client id (pre-registered, Client ID Metadata Document, or
//!   dynamic registration, RFC 7591), gets a token (authorization code with
//!   PKCE S256 and RFC 8707 `resource`, client credentials, JWT bearer
//!   assertions), refreshes it, steps up on `403 insufficient_scope` a
//!   bounded number of times, and binds it with DPoP (RFC 9449) when the
//!   authorization server offers it. Tokens are kept per server
//!   ([`client::TokenStore`]) and only ever sent to the origin they were
//!   issued for; the user's consent goes through [`client::Consent`].
//! - [`server::BearerAuth`] (feature `server`) protects any axum router (the
//!   MCP endpoint of [`toolshape::Server::router`], or your own): the
//!   protected-resource metadata at its well-known path, `401` with
//!   `WWW-Authenticate: Bearer resource_metadata=...`, `403
//!   insufficient_scope`, tokens checked by [`server::JwksVerifier`]
//!   (signature, `iss`, `aud` = the resource, `exp`) or by your own
//!   [`server::TokenVerifier`], and scopes per tool.
//!
//! The discovery documents ([`metadata`]) and the `WWW-Authenticate` grammar
//! ([`challenge`]) are shared by both.

#[cfg(feature = "client")]
pub mod client;
#[cfg(feature = "server")]
pub mod server;

pub mod challenge;
#[cfg(any(feature = "client", feature = "server"))]
mod fetch;
#[cfg(feature = "client")]
mod jose;
pub mod metadata;
mod public_dns;
mod secret;

#[cfg(any(feature = "client", feature = "server"))]
pub use fetch::FetchError;
pub use secret::Secret;

/// A boxed error from a pluggable part (store, consent, verifier).
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;
