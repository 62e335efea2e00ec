//! HS256 JWTs: verified with `jsonwebtoken` (only HS256 accepted, so
//! `alg: none` and every other algorithm are refused), `exp` required and
//! at most [`MAX_TOKEN_LIFETIME`] ahead, `aud` checked when configured.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use serde::{Deserialize, Serialize};

/// How far ahead a token's `exp` may be.
pub const MAX_TOKEN_LIFETIME: Duration = Duration::from_secs(15 * 60);

/// Clock skew tolerated on `exp`, in seconds.
const LEEWAY_SECONDS: u64 = 5;

/// Why a bearer token was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum JwtError {
    /// The server accepts no bearer tokens (API keys only).
    #[error("bearer tokens are not accepted here")]
    NotAccepted,
    /// The token's `exp` is more than 15 minutes ahead.
    #[error("exp is more than 15 minutes ahead")]
    TooFarAhead,
    /// `jsonwebtoken` refused it (signature, algorithm, `exp`, `aud`, format).
    #[error("{0}")]
    Refused(String),
    /// The token could not be signed.
    #[error("cannot sign a token: {0}")]
    Sign(String),
}

#[derive(Clone)]
pub(crate) struct JwtVerifier {
    key: DecodingKey,
    validation: Validation,
    audience: Option<String>,
}

#[derive(Deserialize)]
struct Claims {
    exp: u64,
    #[serde(default)]
    sub: Option<String>,
}

fn now_seconds() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_secs())
}

impl JwtVerifier {
    pub(crate) fn new(secret: &[u8], audience: Option<String>) -> Self {
        let mut validation = Validation::new(Algorithm::HS256);
        validation.algorithms = vec![Algorithm::HS256];
        validation.required_spec_claims = ["exp".to_owned()].into_iter().collect();
        validation.validate_exp = true;
        validation.validate_nbf = true;
        validation.leeway = LEEWAY_SECONDS;
        match &audience {
            Some(audience) => {
                validation.set_audience(&[audience]);
                validation.required_spec_claims.insert("aud".to_owned());
            }
            None => validation.validate_aud = false,
        }
        JwtVerifier {
            key: DecodingKey::from_secret(secret),
            validation,
            audience,
        }
    }

    pub(crate) fn audience(&self) -> Option<&str> {
        self.audience.as_deref()
    }

    /// The token's `sub`, when it is valid.
    pub(crate) fn verify(&self, token: &str) -> Result<Option<String>, JwtError> {
        let data = jsonwebtoken::decode::<Claims>(token, &self.key, &self.validation)
            .map_err(|e| JwtError::Refused(e.to_string()))?;
        let latest = now_seconds() + MAX_TOKEN_LIFETIME.as_secs() + LEEWAY_SECONDS;
        if data.claims.exp > latest {
            return Err(JwtError::TooFarAhead);
        }
        Ok(data.claims.sub)
    }
}

#[derive(Serialize)]
struct MintedClaims<'a> {
    exp: u64,
    iat: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    aud: Option<&'a str>,
    sub: &'a str,
}

/// Signs a short-lived HS256 token (`exp` `lifetime` from now, at most
/// [`MAX_TOKEN_LIFETIME`]), for a client that holds the shared secret.
pub fn mint_hs256(
    secret: &[u8],
    audience: Option<&str>,
    subject: &str,
    lifetime: Duration,
) -> Result<String, JwtError> {
    let now = now_seconds();
    let claims = MintedClaims {
        exp: now + lifetime.min(MAX_TOKEN_LIFETIME).as_secs(),
        iat: now,
        aud: audience,
        sub: subject,
    };
    jsonwebtoken::encode(
        &Header::new(Algorithm::HS256),
        &claims,
        &EncodingKey::from_secret(secret),
    )
    .map_err(|e| JwtError::Sign(e.to_string()))
}
