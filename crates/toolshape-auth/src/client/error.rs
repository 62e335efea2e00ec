//! Why authorization failed.

use super::keys::KeyError;
use crate::{BoxError, FetchError};

/// Why the client could not authorize.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AuthError {
    /// A URL given or found is not an absolute http(s) URL.
    #[error("{0:?} is not an absolute http(s) URL without a fragment")]
    Url(String),
    /// Fetching a document or a token failed.
    #[error(transparent)]
    Fetch(#[from] FetchError),
    /// The protected-resource metadata is about another resource.
    #[error(
        "the protected resource metadata is for {resource:?}, not for the server {server}; refusing to authorize"
    )]
    ResourceMismatch {
        /// The resource the metadata names.
        resource: String,
        /// The server connected to.
        server: String,
    },
    /// The protected-resource metadata the server named is not there.
    #[error("the server names its resource metadata {0}, and there is none there")]
    NoResourceMetadata(String),
    /// The protected-resource metadata names no authorization server.
    #[error("the protected resource metadata names no authorization server")]
    NoAuthorizationServer,
    /// No valid metadata was found for the authorization server.
    #[error("no usable metadata for the authorization server {issuer:?}{}", if detail.is_empty() { String::new() } else { format!(": {detail}") })]
    NoServerMetadata {
        /// The issuer looked up.
        issuer: String,
        /// What was wrong with what was found.
        detail: String,
    },
    /// The authorization server lacks an endpoint the flow needs.
    #[error("the authorization server {issuer} has no {what}")]
    MissingEndpoint {
        /// Its issuer.
        issuer: String,
        /// The endpoint.
        what: &'static str,
    },
    /// The authorization server does not advertise PKCE with S256.
    #[error(
        "the authorization server {0} does not advertise PKCE with S256 (code_challenge_methods_supported); refusing to authorize"
    )]
    PkceUnsupported(String),
    /// A user must consent, and there is no way to ask.
    #[error(
        "authorizing needs the user's consent, and no way to ask for it is configured (run at a terminal, or use client credentials)"
    )]
    NoConsent,
    /// No client id could be obtained.
    #[error(
        "no client id for the authorization server {0}: it offers neither client id metadata documents (or none is configured) nor dynamic registration; configure a pre-registered client"
    )]
    NoClient(String),
    /// The grant needs pre-registered credentials.
    #[error("this grant needs a pre-registered client (client id, and its secret or key)")]
    NoIdentity,
    /// The pre-registered client belongs to another authorization server.
    #[error(
        "the pre-registered client belongs to the authorization server {bound}, but the server now names {issuer}"
    )]
    IssuerChanged {
        /// The issuer the identity is bound to.
        bound: String,
        /// The issuer named now.
        issuer: String,
    },
    /// Dynamic registration failed.
    #[error("registering the client at {url} failed: {detail}")]
    Registration {
        /// The registration endpoint.
        url: String,
        /// Why.
        detail: String,
    },
    /// The authorization response was not a valid answer to our request.
    #[error("the authorization response is refused: {0}")]
    Callback(String),
    /// The authorization response's `iss` is missing or not the issuer (RFC 9207).
    #[error("the authorization response is refused: it {} (expected the issuer {expected:?})", match found { Some(found) => format!("comes from {found:?}"), None => "carries no iss although the server promised one".into() })]
    IssuerMismatch {
        /// The issuer recorded before redirecting.
        expected: String,
        /// The `iss` received.
        found: Option<String>,
    },
    /// The authorization server answered with an error.
    #[error("the authorization server refused: {error}{}", description.as_deref().map(|d| format!(" ({d})")).unwrap_or_default())]
    Denied {
        /// The OAuth error code.
        error: String,
        /// Its description.
        description: Option<String>,
    },
    /// A token request failed.
    #[error("the token request to {url} failed: {detail}")]
    Token {
        /// The token endpoint.
        url: String,
        /// Why.
        detail: String,
    },
    /// A key could not sign.
    #[error(transparent)]
    Key(#[from] KeyError),
    /// Asking for consent failed.
    #[error("asking for consent failed: {0}")]
    Consent(#[source] BoxError),
    /// The token store failed.
    #[error("the token store failed: {0}")]
    Store(#[source] BoxError),
    /// An assertion source failed.
    #[error("getting an assertion failed: {0}")]
    Assertion(#[source] BoxError),
    /// The HTTP client could not be built.
    #[error("cannot build the HTTP client: {0}")]
    Http(#[source] reqwest::Error),
}
