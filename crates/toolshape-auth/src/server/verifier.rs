//! What a verified token grants, and the trait that verifies one.

use std::collections::BTreeSet;
use std::future::Future;
use std::pin::Pin;

use serde_json::{Map, Value};

/// A boxed future of a verification.
pub type VerifyFuture<'a> =
    Pin<Box<dyn Future<Output = Result<AccessGrant, VerifyError>> + Send + 'a>>;

/// Checks an access token presented to the protected resource.
///
/// [`JwksVerifier`](super::JwksVerifier) checks JWTs against the
/// authorization server's keys; implement this for opaque tokens
/// (introspection) or your own rules. A verifier must check that the token
/// was issued for this resource (its audience) — the layer only checks
/// scopes.
pub trait TokenVerifier: Send + Sync + std::fmt::Debug + 'static {
    /// What `token` grants, or why it grants nothing.
    fn verify<'a>(&'a self, token: &'a str) -> VerifyFuture<'a>;
}

/// What a valid token grants; handlers behind the layer find it in the
/// request's extensions (`axum::Extension<AccessGrant>`).
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct AccessGrant {
    /// The `sub` claim: whom the token acts for.
    pub subject: Option<String>,
    /// The `client_id` (or `azp`) claim: the client it was issued to.
    pub client_id: Option<String>,
    /// The scopes granted (`scope`, space-separated, or `scp`).
    pub scopes: BTreeSet<String>,
    /// The `exp` claim, seconds since the epoch.
    pub expires_at: Option<u64>,
    /// Every claim, for rules of your own.
    pub claims: Map<String, Value>,
}

impl AccessGrant {
    /// A grant of `scopes` (for verifiers of your own).
    pub fn with_scopes<I, S>(scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        AccessGrant {
            scopes: scopes.into_iter().map(Into::into).collect(),
            ..AccessGrant::default()
        }
    }

    /// The grant a JWT's claims describe.
    pub fn from_claims(claims: Map<String, Value>) -> Self {
        let text = |name: &str| claims.get(name).and_then(Value::as_str).map(str::to_owned);
        let mut scopes = BTreeSet::new();
        for name in ["scope", "scp"] {
            match claims.get(name) {
                Some(Value::String(list)) => {
                    scopes.extend(list.split_ascii_whitespace().map(str::to_owned));
                }
                Some(Value::Array(list)) => {
                    scopes.extend(list.iter().filter_map(Value::as_str).map(str::to_owned));
                }
                _ => {}
            }
        }
        AccessGrant {
            subject: text("sub"),
            client_id: text("client_id").or_else(|| text("azp")),
            scopes,
            expires_at: claims.get("exp").and_then(Value::as_u64),
            claims,
        }
    }
}

/// Why a token grants nothing.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum VerifyError {
    /// The token is invalid (malformed, forged, expired, for another
    /// resource...): `401 invalid_token` with this description.
    #[error("invalid token: {0}")]
    Invalid(String),
    /// The token could not be checked now (the key set is unreachable):
    /// `503`, so that clients do not throw a good token away.
    #[error("the token cannot be checked now: {0}")]
    Unavailable(String),
}
