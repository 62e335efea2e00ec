//! Who may call: nobody needs credentials, or an API key (`OXP-API-Key`, or
//! `OTC-API-Key` as the OTC era spelled it), or an HS256 JWT in
//! `Authorization: Bearer` with `exp` required and at most 15 minutes ahead,
//! and `aud` checked when an audience is configured. Keys are compared as
//! SHA-256 digests in constant time; secrets come from the environment or
//! files ([`secret`]), never only from a command line.

mod jwt;
pub mod secret;

use axum::http::HeaderMap;
use subtle::ConstantTimeEq;

use jwt::JwtVerifier;
pub use jwt::{JwtError, MAX_TOKEN_LIFETIME, mint_hs256};

/// The API key headers, the OXP name first.
pub const API_KEY_HEADERS: [&str; 2] = ["oxp-api-key", "otc-api-key"];

/// Shortest API key accepted.
pub const MIN_API_KEY_BYTES: usize = 16;

/// Shortest HS256 secret accepted (the hash's own length).
pub const MIN_JWT_SECRET_BYTES: usize = 32;

/// A key or secret that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AuthSetupError {
    /// An API key shorter than [`MIN_API_KEY_BYTES`].
    #[error("an API key must be at least {MIN_API_KEY_BYTES} bytes")]
    ShortApiKey,
    /// A JWT secret shorter than [`MIN_JWT_SECRET_BYTES`].
    #[error("an HS256 secret must be at least {MIN_JWT_SECRET_BYTES} bytes")]
    ShortJwtSecret,
}

/// How callers authenticate. The default needs no credentials.
#[derive(Clone, Default)]
pub struct OtcAuth {
    api_keys: Vec<[u8; 32]>,
    jwt: Option<JwtVerifier>,
}

impl std::fmt::Debug for OtcAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OtcAuth")
            .field("api_keys", &self.api_keys.len())
            .field("jwt", &self.jwt.as_ref().map(JwtVerifier::audience))
            .finish()
    }
}

/// Who made a request (idempotency keys are kept per caller).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Principal {
    /// No credentials are required.
    Anonymous,
    /// The API key at this position of the configuration.
    ApiKey(usize),
    /// A JWT, with its `sub` if it has one.
    Jwt(Option<String>),
}

impl Principal {
    /// A stable key for this caller.
    pub fn key(&self) -> String {
        match self {
            Principal::Anonymous => "anonymous".into(),
            Principal::ApiKey(index) => format!("api-key:{index}"),
            Principal::Jwt(subject) => format!("jwt:{}", subject.as_deref().unwrap_or("")),
        }
    }
}

/// Why a request was refused (401).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AuthFailure {
    /// No API key header and no bearer token.
    #[error("no credentials: send an API key in OXP-API-Key or a bearer token")]
    Missing,
    /// The API key matches none configured (or API keys are not accepted).
    #[error("the API key is not valid")]
    BadApiKey,
    /// The bearer token is refused.
    #[error("the bearer token is not valid: {0}")]
    BadToken(#[from] JwtError),
}

fn digest(bytes: &[u8]) -> [u8; 32] {
    let digest = ring::digest::digest(&ring::digest::SHA256, bytes);
    let mut out = [0u8; 32];
    out.copy_from_slice(digest.as_ref());
    out
}

impl OtcAuth {
    /// No credentials needed.
    pub fn none() -> Self {
        OtcAuth::default()
    }

    /// Accepts this API key too.
    pub fn api_key(mut self, key: impl AsRef<[u8]>) -> Result<Self, AuthSetupError> {
        let key = key.as_ref();
        if key.len() < MIN_API_KEY_BYTES {
            return Err(AuthSetupError::ShortApiKey);
        }
        self.api_keys.push(digest(key));
        Ok(self)
    }

    /// Accepts HS256 JWTs signed with `secret`; with an `audience`, only
    /// tokens whose `aud` names it.
    pub fn jwt_hs256(
        mut self,
        secret: impl AsRef<[u8]>,
        audience: Option<String>,
    ) -> Result<Self, AuthSetupError> {
        if secret.as_ref().len() < MIN_JWT_SECRET_BYTES {
            return Err(AuthSetupError::ShortJwtSecret);
        }
        self.jwt = Some(JwtVerifier::new(secret.as_ref(), audience));
        Ok(self)
    }

    /// Whether any credentials are required.
    pub fn is_required(&self) -> bool {
        !self.api_keys.is_empty() || self.jwt.is_some()
    }

    /// Whether API keys are accepted.
    pub fn accepts_api_keys(&self) -> bool {
        !self.api_keys.is_empty()
    }

    /// Whether JWTs are accepted.
    pub fn accepts_jwt(&self) -> bool {
        self.jwt.is_some()
    }

    /// Checks a request's credentials.
    pub fn authenticate(&self, headers: &HeaderMap) -> Result<Principal, AuthFailure> {
        if !self.is_required() {
            return Ok(Principal::Anonymous);
        }
        // A key header counts only where keys are accepted: a JWT-only
        // server reads the bearer token whatever other header came along.
        if self.accepts_api_keys()
            && let Some(key) = API_KEY_HEADERS.iter().find_map(|name| headers.get(*name))
        {
            return self.check_api_key(key.as_bytes());
        }
        let bearer = headers
            .get(axum::http::header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| {
                let (scheme, token) = v.split_once(' ')?;
                scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
            });
        match (bearer, &self.jwt) {
            (Some(token), Some(verifier)) => Ok(Principal::Jwt(verifier.verify(token)?)),
            (Some(_), None) => Err(AuthFailure::BadToken(JwtError::NotAccepted)),
            (None, _) => Err(AuthFailure::Missing),
        }
    }

    /// Compares against every key, always all of them, as digests of equal length.
    fn check_api_key(&self, given: &[u8]) -> Result<Principal, AuthFailure> {
        let given = digest(given);
        let mut found = None;
        for (index, key) in self.api_keys.iter().enumerate() {
            if bool::from(key.ct_eq(&given)) {
                found = Some(index);
            }
        }
        found.map(Principal::ApiKey).ok_or(AuthFailure::BadApiKey)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn headers(name: &'static str, value: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        if let Ok(value) = HeaderValue::from_str(value) {
            headers.insert(name, value);
        }
        headers
    }

    #[test]
    fn a_jwt_only_server_reads_the_bearer_whatever_key_header_came_along()
    -> Result<(), Box<dyn std::error::Error>> {
        let secret = "a-shared-secret-of-32-bytes-or-more";
        let auth = OtcAuth::none().jwt_hs256(secret, None)?;
        let token = jwt::mint_hs256(
            secret.as_bytes(),
            None,
            "alice",
            std::time::Duration::from_secs(60),
        )?;
        let mut both = headers("oxp-api-key", "some-key-for-another-server");
        both.insert(
            axum::http::header::AUTHORIZATION,
            HeaderValue::from_str(&format!("Bearer {token}"))?,
        );
        assert_eq!(
            auth.authenticate(&both),
            Ok(Principal::Jwt(Some("alice".into())))
        );
        Ok(())
    }

    #[test]
    fn api_keys_in_either_header() -> Result<(), AuthSetupError> {
        let auth = OtcAuth::none()
            .api_key("first-key-0123456789")?
            .api_key("second-key-0123456789")?;
        assert_eq!(
            auth.authenticate(&headers("oxp-api-key", "second-key-0123456789")),
            Ok(Principal::ApiKey(1))
        );
        assert_eq!(
            auth.authenticate(&headers("otc-api-key", "first-key-0123456789")),
            Ok(Principal::ApiKey(0))
        );
        assert_eq!(
            auth.authenticate(&headers("oxp-api-key", "first-key-012345678")),
            Err(AuthFailure::BadApiKey)
        );
        assert_eq!(
            auth.authenticate(&HeaderMap::new()),
            Err(AuthFailure::Missing)
        );
        assert_eq!(
            OtcAuth::none().api_key("short").err(),
            Some(AuthSetupError::ShortApiKey)
        );
        Ok(())
    }
}
