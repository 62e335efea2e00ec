//! Authorization for the HTTP transport: a hook that adds credentials to
//! every request and answers the server's challenges (401, 403). The hook
//! is where an OAuth client (discovery, registration, tokens, step-up,
//! DPoP) plugs in; the transport only asks it, and retries a bounded
//! number of times when it says it has new credentials.

use std::future::Future;
use std::pin::Pin;

use reqwest::header::HeaderMap;

use crate::tool::BoxError;

/// A boxed future borrowing from the hook.
pub type AuthFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, BoxError>> + Send + 'a>>;

/// What a request is, for the hook to authorize it (DPoP proofs sign the
/// method and URL).
#[derive(Debug, Clone, Copy)]
pub struct AuthRequest<'a> {
    /// The URL the request goes to.
    pub url: &'a reqwest::Url,
    /// The HTTP method (`POST`, `GET`, `DELETE`).
    pub method: &'a str,
}

/// The server refused a request: its status and headers (`WWW-Authenticate`,
/// `DPoP-Nonce`...).
#[derive(Debug, Clone, Copy)]
pub struct AuthChallenge<'a> {
    /// The request that was refused.
    pub request: AuthRequest<'a>,
    /// 401 or 403.
    pub status: u16,
    /// The response's headers.
    pub headers: &'a HeaderMap,
    /// The credentials [`HttpAuth::headers`] gave the refused request: a
    /// hook that renewed them meanwhile (another request's challenge) can
    /// resend at once instead of authorizing again.
    pub sent: &'a HeaderMap,
}

/// Supplies credentials to the HTTP transport and answers challenges.
pub trait HttpAuth: Send + Sync + std::fmt::Debug + 'static {
    /// The headers (`Authorization`, `DPoP`...) to send with `request`.
    fn headers<'a>(&'a self, request: AuthRequest<'a>) -> AuthFuture<'a, HeaderMap>;

    /// The server answered 401 or 403: obtain new credentials if possible.
    /// `Ok(true)` resends the request (a bounded number of times); `Ok(false)`
    /// gives the refusal to the caller; an error fails the request with it.
    fn challenge<'a>(&'a self, challenge: AuthChallenge<'a>) -> AuthFuture<'a, bool>;
}

/// Most times one request is resent after a challenge.
pub(crate) const MAX_AUTH_RETRIES: usize = 3;
