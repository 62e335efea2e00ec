//! Small JOSE primitives shared by both sides: base64url, SHA-256, random
//! identifiers and the clock.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ring::rand::{SecureRandom, SystemRandom};

/// base64url without padding (RFC 7515 §2).
pub(crate) fn b64url(bytes: impl AsRef<[u8]>) -> String {
    URL_SAFE_NO_PAD.encode(bytes)
}

/// SHA-256 of `bytes`.
pub(crate) fn sha256(bytes: impl AsRef<[u8]>) -> Vec<u8> {
    ring::digest::digest(&ring::digest::SHA256, bytes.as_ref())
        .as_ref()
        .to_vec()
}

/// `n` random bytes from the system generator, base64url-encoded; `None`
/// only if the system generator fails.
pub(crate) fn random_id(n: usize) -> Option<String> {
    let mut bytes = vec![0u8; n];
    SystemRandom::new().fill(&mut bytes).ok()?;
    Some(b64url(bytes))
}

/// Seconds since the Unix epoch.
pub(crate) fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}
