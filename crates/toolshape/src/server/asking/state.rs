//! `requestState` of a 2026-07-28 multi round-trip request: the answers so
//! far, which request they belong to (method, name, a digest of the
//! arguments) and when they expire, serialized and protected by an
//! HMAC-SHA256 under the server's key. A forged, expired or transplanted
//! state is refused; any instance holding the key can take the retry.

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, Mac};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

type HmacSha256 = Hmac<Sha256>;

/// Longest `requestState` accepted, in bytes.
pub(crate) const MAX_STATE_BYTES: usize = 1024 * 1024;

/// The secret that protects request states. Instances behind one load
/// balancer must share it ([`ServerOptions::request_state_key`](crate::ServerOptions::request_state_key)).
#[derive(Clone)]
pub(crate) struct StateKey(Arc<[u8]>);

impl std::fmt::Debug for StateKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("StateKey(..)")
    }
}

impl StateKey {
    /// A key from configured bytes.
    pub(crate) fn new(bytes: &[u8]) -> StateKey {
        StateKey(Arc::from(bytes))
    }

    /// A fresh random key (one instance only).
    pub(crate) fn random() -> StateKey {
        let mut bytes = [0u8; 32];
        if getrandom::fill(&mut bytes).is_err() {
            // No randomness: a key from the clock and the process id; states
            // then resist tampering less, but the server still serves.
            let seed = format!("{:?}{}", SystemTime::now(), std::process::id());
            bytes.copy_from_slice(&Sha256::digest(seed.as_bytes()));
        }
        StateKey::new(&bytes)
    }

    fn mac(&self) -> Option<HmacSha256> {
        HmacSha256::new_from_slice(&self.0).ok()
    }
}

/// Why a `requestState` was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub(crate) enum StateError {
    /// Not a state this server could have written.
    #[error("the requestState is malformed")]
    Malformed,
    /// Its signature does not match: it was altered, or another key signed it.
    #[error("the requestState failed verification (altered, or not from this server)")]
    Forged,
    /// It is too old.
    #[error("the requestState has expired: start the request again")]
    Expired,
    /// It belongs to another request (method, name or arguments differ).
    #[error("the requestState belongs to another request")]
    WrongRequest,
}

/// What a `requestState` holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct RequestState {
    /// The request's method.
    #[serde(rename = "m")]
    pub(crate) method: String,
    /// The tool or prompt name, or the resource URI.
    #[serde(rename = "n")]
    pub(crate) name: String,
    /// A digest of the request's arguments.
    #[serde(rename = "d")]
    pub(crate) digest: String,
    /// The answers so far, by question key.
    #[serde(rename = "a")]
    pub(crate) answers: Map<String, Value>,
    /// The questions of the last round, whose answers the retry brings.
    #[serde(rename = "q")]
    pub(crate) questions: Vec<String>,
    /// Unix seconds after which it is refused.
    #[serde(rename = "e")]
    pub(crate) expires: u64,
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_secs())
}

/// A digest of a request's arguments (canonical: object keys sorted).
pub(crate) fn digest(arguments: Option<&Map<String, Value>>) -> String {
    let bytes = serde_json::to_vec(&arguments).unwrap_or_default();
    URL_SAFE_NO_PAD.encode(Sha256::digest(&bytes))
}

impl RequestState {
    /// A state for the request `method` of `name` with these arguments,
    /// living `ttl`.
    pub(crate) fn new(
        method: &str,
        name: &str,
        arguments: Option<&Map<String, Value>>,
        answers: Map<String, Value>,
        questions: Vec<String>,
        ttl: Duration,
    ) -> RequestState {
        RequestState {
            method: method.to_owned(),
            name: name.to_owned(),
            digest: digest(arguments),
            answers,
            questions,
            expires: now().saturating_add(ttl.as_secs().max(1)),
        }
    }

    /// The state as the client carries it: `payload.signature`, both base64url.
    pub(crate) fn seal(&self, key: &StateKey) -> String {
        let payload = serde_json::to_vec(self).unwrap_or_default();
        let signature = key
            .mac()
            .map(|mut mac| {
                mac.update(&payload);
                mac.finalize().into_bytes().to_vec()
            })
            .unwrap_or_default();
        format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(&payload),
            URL_SAFE_NO_PAD.encode(signature)
        )
    }

    /// The state a client sent back, verified: signed by `key`, not expired,
    /// and for the request `method` of `name` with these arguments.
    pub(crate) fn open(
        sealed: &str,
        key: &StateKey,
        method: &str,
        name: &str,
        arguments: Option<&Map<String, Value>>,
    ) -> Result<RequestState, StateError> {
        if sealed.len() > MAX_STATE_BYTES {
            return Err(StateError::Malformed);
        }
        let (payload, signature) = sealed.split_once('.').ok_or(StateError::Malformed)?;
        let payload = URL_SAFE_NO_PAD
            .decode(payload)
            .map_err(|_| StateError::Malformed)?;
        let signature = URL_SAFE_NO_PAD
            .decode(signature)
            .map_err(|_| StateError::Malformed)?;
        let mut mac = key.mac().ok_or(StateError::Forged)?;
        mac.update(&payload);
        // Constant-time comparison.
        mac.verify_slice(&signature)
            .map_err(|_| StateError::Forged)?;
        let state: RequestState =
            serde_json::from_slice(&payload).map_err(|_| StateError::Malformed)?;
        if state.expires < now() {
            return Err(StateError::Expired);
        }
        if state.method != method || state.name != name || state.digest != digest(arguments) {
            return Err(StateError::WrongRequest);
        }
        Ok(state)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn arguments() -> Map<String, Value> {
        json!({"city": "Paris"})
            .as_object()
            .cloned()
            .unwrap_or_default()
    }

    fn sealed(key: &StateKey, ttl: Duration) -> String {
        let mut answers = Map::new();
        answers.insert("elicitation-1".into(), json!({"action": "accept"}));
        RequestState::new(
            "tools/call",
            "weather",
            Some(&arguments()),
            answers,
            vec!["sampling-2".into()],
            ttl,
        )
        .seal(key)
    }

    #[test]
    fn a_sealed_state_opens_for_its_own_request_only() {
        let key = StateKey::random();
        let state = sealed(&key, Duration::from_secs(60));
        let opened = RequestState::open(&state, &key, "tools/call", "weather", Some(&arguments()));
        assert!(opened.is_ok_and(|s| s.answers.contains_key("elicitation-1")));
        let other = json!({"city": "Lyon"}).as_object().cloned();
        assert_eq!(
            RequestState::open(&state, &key, "tools/call", "weather", other.as_ref()),
            Err(StateError::WrongRequest)
        );
        assert_eq!(
            RequestState::open(&state, &key, "prompts/get", "weather", Some(&arguments())),
            Err(StateError::WrongRequest)
        );
    }

    #[test]
    fn altered_foreign_and_garbage_states_are_refused() {
        let key = StateKey::random();
        let state = sealed(&key, Duration::from_secs(60));
        let open = |text: &str, key: &StateKey| {
            RequestState::open(text, key, "tools/call", "weather", Some(&arguments()))
        };
        let (payload, signature) = state.split_once('.').unwrap_or_default();
        let mut bytes = URL_SAFE_NO_PAD.decode(payload).unwrap_or_default();
        if let Some(byte) = bytes.get_mut(2) {
            *byte ^= 1;
        }
        let altered = format!("{}.{signature}", URL_SAFE_NO_PAD.encode(&bytes));
        assert_eq!(open(&altered, &key), Err(StateError::Forged));
        assert_eq!(open(&state, &StateKey::random()), Err(StateError::Forged));
        for garbage in ["", "abc", "a.b", "!!.!!", &"x".repeat(MAX_STATE_BYTES + 1)] {
            assert!(
                open(garbage, &key).is_err(),
                "{}",
                &garbage[..garbage.len().min(10)]
            );
        }
    }

    #[test]
    fn an_expired_state_is_refused() {
        let key = StateKey::random();
        let mut state = RequestState::new(
            "tools/call",
            "weather",
            Some(&arguments()),
            Map::new(),
            Vec::new(),
            Duration::from_secs(60),
        );
        state.expires = now().saturating_sub(1);
        let sealed = state.seal(&key);
        assert_eq!(
            RequestState::open(&sealed, &key, "tools/call", "weather", Some(&arguments())),
            Err(StateError::Expired)
        );
    }
}
