//! How the Streamable HTTP endpoint serves.

use std::time::Duration;

/// Settings of the Streamable HTTP binding; every field has a safe default.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct HttpOptions {
    /// The endpoint's path.
    pub path: String,
    /// Origins allowed besides the loopback ones (`http://localhost:*`,
    /// `http://127.0.0.1:*`, `http://[::1]:*`), e.g. `https://app.example.com`.
    pub allowed_origins: Vec<String>,
    /// Largest request body, in bytes.
    pub max_body_bytes: usize,
    /// Most handshake sessions (2025-11-25 and older) at once.
    pub max_sessions: usize,
    /// How long an unused session lives.
    pub session_idle_timeout: Duration,
    /// Most requests served at once; more wait their turn.
    pub max_concurrent_requests: usize,
    /// Whether handshake sessions are offered at all; without them the
    /// endpoint is purely stateless 2026-07-28.
    pub sessions: bool,
}

impl Default for HttpOptions {
    fn default() -> Self {
        HttpOptions {
            path: "/mcp".into(),
            allowed_origins: Vec::new(),
            max_body_bytes: 4 * 1024 * 1024,
            max_sessions: 1024,
            session_idle_timeout: Duration::from_secs(30 * 60),
            max_concurrent_requests: 256,
            sessions: true,
        }
    }
}
