//! [`JwksVerifier`]: JWT access tokens checked against the authorization
//! server's published keys (cached, refetched when stale or when a token
//! names a key id not yet seen, at most once per [`MIN_REFETCH`]).

use std::sync::RwLock;
use std::time::{Duration, Instant};

use jsonwebtoken::jwk::{AlgorithmParameters, EllipticCurve, Jwk, PublicKeyUse};
use jsonwebtoken::{Algorithm, DecodingKey, Validation, errors::ErrorKind};
use serde_json::{Map, Value};
use url::Url;

use super::verifier::{AccessGrant, TokenVerifier, VerifyError, VerifyFuture};
use crate::fetch::{FetchError, Fetcher};
use crate::metadata::{AuthorizationServerMetadata, authorization_server_candidates};

/// Longest token looked at, in bytes.
pub const MAX_TOKEN_BYTES: usize = 16 * 1024;
/// Most keys kept from one key set.
pub const MAX_KEYS: usize = 64;
/// Keys older than this are refetched before use.
pub const DEFAULT_MAX_KEY_AGE: Duration = Duration::from_secs(10 * 60);
/// Least time between two fetches of the key set.
pub const MIN_REFETCH: Duration = Duration::from_secs(30);
/// Clock skew allowed on `exp` and `nbf`, in seconds.
pub const DEFAULT_LEEWAY: u64 = 60;

/// The asymmetric algorithms accepted by default (never `none`, never HMAC:
/// a public key must not double as a shared secret).
pub const DEFAULT_ALGORITHMS: &[Algorithm] = &[
    Algorithm::RS256,
    Algorithm::RS384,
    Algorithm::RS512,
    Algorithm::PS256,
    Algorithm::PS384,
    Algorithm::PS512,
    Algorithm::ES256,
    Algorithm::ES384,
    Algorithm::EdDSA,
];

/// Where the keys come from.
#[derive(Debug, Clone)]
enum KeySource {
    /// A key set URL.
    Url(Url),
    /// The `jwks_uri` of the issuer's metadata.
    Issuer(Url),
    /// Keys given once (a file).
    Fixed,
}

/// Why a [`JwksVerifier`] cannot be built.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum JwksError {
    /// The issuer or key set URL is not an absolute http(s) URL.
    #[error("{0:?} is not an absolute http(s) URL")]
    Url(String),
    /// The key set text is not a JWK Set with a usable key.
    #[error("the key set is unusable: {0}")]
    KeySet(String),
    /// The HTTP client could not be built.
    #[error("cannot build the HTTP client: {0}")]
    Http(#[source] reqwest::Error),
}

/// Checks JWT access tokens: signature by a key of the issuer's key set
/// (an asymmetric algorithm, the key chosen by `kid`), `iss` equal to the
/// issuer, `aud` containing the resource, `exp` in the future.
#[derive(Debug)]
pub struct JwksVerifier {
    issuer: String,
    audiences: Vec<String>,
    source: KeySource,
    algorithms: Vec<Algorithm>,
    leeway: u64,
    max_key_age: Duration,
    min_refetch: Duration,
    fetch: Fetcher,
    keys: RwLock<Keys>,
    refetch: tokio::sync::Mutex<()>,
}

#[derive(Debug, Default)]
struct Keys {
    keys: Vec<CachedKey>,
    fetched: Option<Instant>,
    /// When a fetch last failed with no keys to fall back on: until the
    /// refetch interval has passed, tokens are refused as unavailable at
    /// once, without another fetch (each bad token would be one).
    failed: Option<Instant>,
}

#[derive(Clone)]
struct CachedKey {
    kid: Option<String>,
    algorithm: Option<Algorithm>,
    kind: KeyKind,
    key: DecodingKey,
}

impl std::fmt::Debug for CachedKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CachedKey")
            .field("kid", &self.kid)
            .field("algorithm", &self.algorithm)
            .field("kind", &self.kind)
            .finish_non_exhaustive()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum KeyKind {
    Rsa,
    P256,
    P384,
    Ed25519,
}

impl KeyKind {
    fn fits(self, algorithm: Algorithm) -> bool {
        use Algorithm::*;
        match self {
            KeyKind::Rsa => matches!(algorithm, RS256 | RS384 | RS512 | PS256 | PS384 | PS512),
            KeyKind::P256 => algorithm == ES256,
            KeyKind::P384 => algorithm == ES384,
            KeyKind::Ed25519 => algorithm == EdDSA,
        }
    }
}

impl JwksVerifier {
    /// A verifier for tokens of `issuer` meant for `audience` (the resource
    /// URI), with keys from the issuer's metadata (`jwks_uri`) unless
    /// [`JwksVerifier::jwks_url`] or [`JwksVerifier::jwks_json`] says otherwise.
    pub fn new(issuer: &str, audience: &str) -> Result<Self, JwksError> {
        let issuer_url = parse_http_url(issuer)?;
        Ok(JwksVerifier {
            issuer: issuer.to_owned(),
            audiences: vec![audience.to_owned()],
            source: KeySource::Issuer(issuer_url),
            algorithms: DEFAULT_ALGORITHMS.to_vec(),
            leeway: DEFAULT_LEEWAY,
            max_key_age: DEFAULT_MAX_KEY_AGE,
            min_refetch: MIN_REFETCH,
            fetch: Fetcher::new(Duration::from_secs(10), false).map_err(JwksError::Http)?,
            keys: RwLock::default(),
            refetch: tokio::sync::Mutex::new(()),
        })
    }

    /// Takes the keys from this key set URL.
    pub fn jwks_url(mut self, url: &str) -> Result<Self, JwksError> {
        self.source = KeySource::Url(parse_http_url(url)?);
        Ok(self)
    }

    /// Takes the keys from this JWK Set text (a file), never fetching any.
    pub fn jwks_json(mut self, text: &str) -> Result<Self, JwksError> {
        let keys = parse_key_set(text.as_bytes()).map_err(JwksError::KeySet)?;
        if keys.is_empty() {
            return Err(JwksError::KeySet("it holds no usable public key".into()));
        }
        self.source = KeySource::Fixed;
        self.keys = RwLock::new(Keys {
            keys,
            fetched: Some(Instant::now()),
            failed: None,
        });
        Ok(self)
    }

    /// Also accepts tokens whose `aud` is `audience`.
    #[must_use]
    pub fn also_audience(mut self, audience: &str) -> Self {
        self.audiences.push(audience.to_owned());
        self
    }

    /// Accepts only these algorithms (asymmetric ones; HMAC is never accepted).
    #[must_use]
    pub fn algorithms(mut self, algorithms: &[Algorithm]) -> Self {
        self.algorithms = algorithms
            .iter()
            .copied()
            .filter(|a| DEFAULT_ALGORITHMS.contains(a))
            .collect();
        self
    }

    /// Clock skew allowed on `exp` and `nbf`.
    #[must_use]
    pub fn leeway(mut self, leeway: Duration) -> Self {
        self.leeway = leeway.as_secs();
        self
    }

    /// How long fetched keys are used before they are fetched again.
    #[must_use]
    pub fn max_key_age(mut self, age: Duration) -> Self {
        self.max_key_age = age;
        self
    }

    /// Least time between two fetches of the key set caused by tokens with
    /// an unknown key id (default [`MIN_REFETCH`]): a flood of forged key
    /// ids costs at most one fetch per interval.
    #[must_use]
    pub fn refetch_interval(mut self, interval: Duration) -> Self {
        self.min_refetch = interval;
        self
    }

    /// Lets the key set and the issuer's metadata be fetched over plain http
    /// from hosts that are not loopback (never do this on a network you do
    /// not control).
    pub fn allow_http(mut self) -> Result<Self, JwksError> {
        self.fetch = Fetcher::new(Duration::from_secs(10), true).map_err(JwksError::Http)?;
        Ok(self)
    }

    async fn check(&self, token: &str) -> Result<AccessGrant, VerifyError> {
        let invalid = |what: &str| VerifyError::Invalid(what.to_owned());
        if token.len() > MAX_TOKEN_BYTES || token.split('.').count() != 3 {
            return Err(invalid("the token is not a JWT"));
        }
        let header = jsonwebtoken::decode_header(token)
            .map_err(|_| invalid("the token is not a JWT signed with a supported algorithm"))?;
        if !self.algorithms.contains(&header.alg) {
            return Err(invalid("the token's signing algorithm is not accepted"));
        }
        let mut candidates = self.candidates(&header).await?;
        if candidates.is_empty() && self.refetch_allowed() {
            self.refresh(true).await?;
            candidates = self.matching(&header);
        }
        if candidates.is_empty() {
            return Err(invalid("no key of the issuer matches the token"));
        }
        let mut validation = Validation::new(header.alg);
        validation.set_audience(&self.audiences);
        validation.set_issuer(&[&self.issuer]);
        validation.set_required_spec_claims(&["exp", "iss", "aud"]);
        validation.leeway = self.leeway;
        validation.validate_nbf = true;
        let mut first_error = None;
        for key in candidates.iter().take(8) {
            match jsonwebtoken::decode::<Map<String, Value>>(token, &key.key, &validation) {
                Ok(data) => return Ok(AccessGrant::from_claims(data.claims)),
                Err(error) => {
                    first_error.get_or_insert(error);
                }
            }
        }
        let reason = match first_error.as_ref().map(|e| e.kind()) {
            Some(ErrorKind::ExpiredSignature) => "the token has expired",
            Some(ErrorKind::ImmatureSignature) => "the token is not valid yet",
            Some(ErrorKind::InvalidAudience) => "the token was not issued for this resource",
            Some(ErrorKind::InvalidIssuer) => {
                "the token was issued by another authorization server"
            }
            Some(ErrorKind::InvalidSignature) => "the token's signature does not verify",
            Some(ErrorKind::MissingRequiredClaim(claim)) => match claim.as_str() {
                "aud" => "the token names no audience",
                "iss" => "the token names no issuer",
                _ => "the token has no expiry",
            },
            _ => "the token is not valid",
        };
        Err(invalid(reason))
    }

    /// The cached keys for `header`, fetching first when none are cached or
    /// they are stale.
    async fn candidates(
        &self,
        header: &jsonwebtoken::Header,
    ) -> Result<Vec<CachedKey>, VerifyError> {
        let stale = {
            let keys = read(&self.keys);
            keys.fetched
                .is_none_or(|at| at.elapsed() > self.max_key_age)
        };
        if stale && !matches!(self.source, KeySource::Fixed) {
            self.refresh(false).await?;
        }
        Ok(self.matching(header))
    }

    fn matching(&self, header: &jsonwebtoken::Header) -> Vec<CachedKey> {
        read(&self.keys)
            .keys
            .iter()
            .filter(|key| key.kind.fits(header.alg))
            .filter(|key| key.algorithm.is_none_or(|a| a == header.alg))
            .filter(|key| match (&header.kid, &key.kid) {
                (Some(wanted), Some(kid)) => wanted == kid,
                (Some(_), None) => false,
                (None, _) => true,
            })
            .cloned()
            .collect()
    }

    fn refetch_allowed(&self) -> bool {
        !matches!(self.source, KeySource::Fixed)
            && read(&self.keys)
                .fetched
                .is_none_or(|at| at.elapsed() >= self.min_refetch)
    }

    /// Fetches the key set (one fetch at a time; a `forced` one only if the
    /// last is older than [`MIN_REFETCH`]). Keeps the old keys on failure
    /// when there are any.
    async fn refresh(&self, forced: bool) -> Result<(), VerifyError> {
        let _one_at_a_time = self.refetch.lock().await;
        {
            let keys = read(&self.keys);
            if keys.keys.is_empty()
                && keys
                    .failed
                    .is_some_and(|at| at.elapsed() < self.min_refetch)
            {
                return Err(keys_unavailable());
            }
            if let Some(at) = keys.fetched {
                let fresh = if forced {
                    at.elapsed() < self.min_refetch
                } else {
                    at.elapsed() <= self.max_key_age
                };
                if fresh {
                    return Ok(());
                }
            }
        }
        match self.fetch_keys().await {
            Ok(keys) => {
                let mut cache = write(&self.keys);
                cache.keys = keys;
                cache.fetched = Some(Instant::now());
                cache.failed = None;
                Ok(())
            }
            Err(error) => {
                tracing::warn!(%error, "fetching the authorization server's keys failed");
                let mut cache = write(&self.keys);
                if cache.keys.is_empty() {
                    cache.failed = Some(Instant::now());
                    return Err(keys_unavailable());
                }
                // Retry no sooner than the refetch interval; keep using the old keys.
                cache.fetched = Some(Instant::now());
                Ok(())
            }
        }
    }

    async fn fetch_keys(&self) -> Result<Vec<CachedKey>, String> {
        let url = match &self.source {
            KeySource::Url(url) => url.clone(),
            KeySource::Issuer(issuer) => self.jwks_uri(issuer).await?,
            KeySource::Fixed => return Ok(read(&self.keys).keys.clone()),
        };
        let fetched = self.fetch.get(&url).await.map_err(|e| e.to_string())?;
        if fetched.status != 200 {
            return Err(FetchError::Status {
                url: url.to_string(),
                status: fetched.status,
                detail: fetched.excerpt(),
            }
            .to_string());
        }
        parse_key_set(&fetched.body)
    }

    /// The `jwks_uri` of the issuer's metadata (its `issuer` checked).
    async fn jwks_uri(&self, issuer: &Url) -> Result<Url, String> {
        for candidate in authorization_server_candidates(issuer) {
            let metadata: Option<AuthorizationServerMetadata> = self
                .fetch
                .get_json(&candidate)
                .await
                .map_err(|e| e.to_string())?;
            let Some(metadata) = metadata else { continue };
            if metadata.issuer != self.issuer {
                return Err(format!(
                    "{candidate} names the issuer {:?}, not {:?}",
                    metadata.issuer, self.issuer
                ));
            }
            let uri = metadata
                .jwks_uri
                .ok_or_else(|| format!("{candidate} has no jwks_uri"))?;
            return parse_http_url(&uri).map_err(|e| e.to_string());
        }
        Err(format!("{} publishes no metadata", self.issuer))
    }
}

impl TokenVerifier for JwksVerifier {
    fn verify<'a>(&'a self, token: &'a str) -> VerifyFuture<'a> {
        Box::pin(self.check(token))
    }
}

/// The usable public signing keys of a JWK Set (others are skipped: private
/// or symmetric keys, encryption keys, unknown types).
fn parse_key_set(text: &[u8]) -> Result<Vec<CachedKey>, String> {
    let set: Value = serde_json::from_slice(text).map_err(|e| format!("not JSON: {e}"))?;
    let entries = set
        .get("keys")
        .and_then(Value::as_array)
        .ok_or("no \"keys\" array")?;
    let mut keys = Vec::new();
    for entry in entries.iter().take(MAX_KEYS) {
        if entry.get("d").is_some() {
            continue; // a private key has no place in a published set
        }
        let Ok(jwk) = serde_json::from_value::<Jwk>(entry.clone()) else {
            continue;
        };
        if matches!(jwk.common.public_key_use, Some(PublicKeyUse::Encryption)) {
            continue;
        }
        let kind = match &jwk.algorithm {
            AlgorithmParameters::RSA(_) => KeyKind::Rsa,
            AlgorithmParameters::EllipticCurve(ec) => match ec.curve {
                EllipticCurve::P256 => KeyKind::P256,
                EllipticCurve::P384 => KeyKind::P384,
                _ => continue,
            },
            AlgorithmParameters::OctetKeyPair(okp) if okp.curve == EllipticCurve::Ed25519 => {
                KeyKind::Ed25519
            }
            _ => continue,
        };
        // A key restricted to an algorithm that is not a signing one is not for us.
        let algorithm = match jwk.common.key_algorithm {
            None => None,
            Some(declared) => match declared.to_string().parse::<Algorithm>() {
                Ok(algorithm) => Some(algorithm),
                Err(_) => continue,
            },
        };
        let Ok(key) = DecodingKey::from_jwk(&jwk) else {
            continue;
        };
        keys.push(CachedKey {
            kid: jwk.common.key_id.clone(),
            algorithm,
            kind,
            key,
        });
    }
    Ok(keys)
}

fn parse_http_url(text: &str) -> Result<Url, JwksError> {
    match Url::parse(text) {
        Ok(url) if matches!(url.scheme(), "http" | "https") && url.has_host() => Ok(url),
        _ => Err(JwksError::Url(text.to_owned())),
    }
}

fn read(lock: &RwLock<Keys>) -> std::sync::RwLockReadGuard<'_, Keys> {
    lock.read()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn write(lock: &RwLock<Keys>) -> std::sync::RwLockWriteGuard<'_, Keys> {
    lock.write()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// No keys to check a token with: the authorization server's key set
/// could not be fetched (lately).
fn keys_unavailable() -> VerifyError {
    VerifyError::Unavailable("the authorization server's keys cannot be fetched".into())
}
