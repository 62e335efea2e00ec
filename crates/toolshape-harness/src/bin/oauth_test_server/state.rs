//! What the test authorization server remembers, and its signing key.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use ring::rand::{SecureRandom, SystemRandom};
use ring::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair};
use serde_json::{Value, json};

/// How the server is set up.
#[derive(Debug)]
pub(crate) struct Options {
    pub(crate) token_lifetime: u64,
    pub(crate) scopes: Vec<String>,
    pub(crate) clients: Vec<(String, String)>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            token_lifetime: 3600,
            scopes: Vec::new(),
            clients: Vec::new(),
        }
    }
}

/// A registered client.
#[derive(Debug, Clone)]
pub(crate) struct Client {
    pub(crate) secret: Option<String>,
    pub(crate) redirect_uris: Vec<String>,
    /// Whether it registered the `refresh_token` grant (it gets refresh tokens).
    pub(crate) refreshes: bool,
}

/// What an authorization code or a refresh token stands for.
#[derive(Debug, Clone)]
pub(crate) struct Grant {
    pub(crate) client_id: String,
    pub(crate) redirect_uri: String,
    pub(crate) challenge: String,
    pub(crate) scope: Option<String>,
    pub(crate) resource: String,
}

/// Requests answered, by kind (`/stats`).
#[derive(Debug, Default)]
pub(crate) struct Stats {
    pub(crate) registrations: AtomicUsize,
    pub(crate) authorizations: AtomicUsize,
    pub(crate) code_grants: AtomicUsize,
    pub(crate) refresh_grants: AtomicUsize,
    pub(crate) client_credentials_grants: AtomicUsize,
    pub(crate) refused: AtomicUsize,
}

impl Stats {
    pub(crate) fn json(&self) -> Value {
        let get = |counter: &AtomicUsize| counter.load(Ordering::SeqCst);
        json!({
            "registrations": get(&self.registrations),
            "authorizations": get(&self.authorizations),
            "code_grants": get(&self.code_grants),
            "refresh_grants": get(&self.refresh_grants),
            "client_credentials_grants": get(&self.client_credentials_grants),
            "refused": get(&self.refused),
        })
    }
}

/// The server's state.
pub(crate) struct State {
    pub(crate) issuer: String,
    pub(crate) options: Options,
    pub(crate) jwk: Value,
    key: EncodingKey,
    random: SystemRandom,
    pub(crate) clients: Mutex<HashMap<String, Client>>,
    pub(crate) codes: Mutex<HashMap<String, Grant>>,
    pub(crate) refresh_tokens: Mutex<HashMap<String, Grant>>,
    pub(crate) stats: Stats,
}

const KEY_ID: &str = "test-as-es256";

impl State {
    pub(crate) fn new(issuer: String, options: Options) -> Result<Self, String> {
        let random = SystemRandom::new();
        let document = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &random)
            .map_err(|_| "cannot generate a key".to_owned())?;
        let pair =
            EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, document.as_ref(), &random)
                .map_err(|_| "cannot load the key".to_owned())?;
        let point = pair.public_key().as_ref();
        let jwk = json!({
            "kty": "EC", "crv": "P-256", "use": "sig", "alg": "ES256", "kid": KEY_ID,
            "x": URL_SAFE_NO_PAD.encode(&point[1..33]),
            "y": URL_SAFE_NO_PAD.encode(&point[33..65]),
        });
        let clients = options
            .clients
            .iter()
            .map(|(id, secret)| {
                let client = Client {
                    secret: Some(secret.clone()),
                    redirect_uris: Vec::new(),
                    refreshes: false,
                };
                (id.clone(), client)
            })
            .collect();
        Ok(State {
            issuer,
            options,
            jwk,
            key: EncodingKey::from_ec_der(document.as_ref()),
            random,
            clients: Mutex::new(clients),
            codes: Mutex::default(),
            refresh_tokens: Mutex::default(),
            stats: Stats::default(),
        })
    }

    /// A random identifier.
    pub(crate) fn random_id(&self) -> String {
        let mut bytes = [0u8; 24];
        // The system generator failing leaves zeros: acceptable for a test server.
        let _ = self.random.fill(&mut bytes);
        URL_SAFE_NO_PAD.encode(bytes)
    }

    /// A signed access token for `grant`.
    pub(crate) fn access_token(
        &self,
        client_id: &str,
        scope: Option<&str>,
        resource: &str,
    ) -> Result<String, String> {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_err(|e| e.to_string())?
            .as_secs();
        let claims = json!({
            "iss": self.issuer,
            "sub": "test-user",
            "aud": resource,
            "client_id": client_id,
            "scope": scope.unwrap_or_default(),
            "iat": now,
            "exp": now + self.options.token_lifetime,
            "jti": self.random_id(),
        });
        let mut header = Header::new(Algorithm::ES256);
        header.kid = Some(KEY_ID.into());
        jsonwebtoken::encode(&header, &claims, &self.key).map_err(|e| e.to_string())
    }
}

/// Locks a mutex, poisoned or not.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}
