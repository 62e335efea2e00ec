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
    /// `Host` names allowed besides the loopback ones (`localhost`,
    /// `127.0.0.1`, `[::1]`, any port) and, for [`Server::serve_http`](crate::Server::serve_http),
    /// the address it is bound to: `name` (any port) or `name:port`; `*`
    /// allows any. A request for another host is refused (DNS rebinding).
    pub allowed_hosts: Vec<String>,
    /// Largest request body, in bytes.
    pub max_body_bytes: usize,
    /// Most handshake sessions (2025-11-25 and older) at once; when full,
    /// the least recently used idle one makes room.
    pub max_sessions: usize,
    /// How long an unused session lives (one with a call running or its GET
    /// stream open is in use).
    pub session_idle_timeout: Duration,
    /// Most requests served at once; more wait their turn.
    pub max_concurrent_requests: usize,
    /// Most long-lived notification streams open at once (a session's GET
    /// stream, `subscriptions/listen`); past it a new one is refused with `503`
    /// and `-32603` "Server busy", so that streams never hold every
    /// connection and leave none for calls: never more than half the
    /// connections held (`max_connections`, or fewer by the descriptor limit).
    pub max_streams: usize,
    /// Most connections held at once ([`Server::serve_http`](crate::Server::serve_http);
    /// never more than the process's descriptor limit allows).
    pub max_connections: usize,
    /// How long a connection may take to send a request's headers, and an
    /// idle keep-alive connection to start its next request
    /// ([`Server::serve_http`](crate::Server::serve_http)).
    pub header_read_timeout: Duration,
    /// How long a request's body may take to arrive whole, from its
    /// headers on: past it the request is refused (`408`; a client that
    /// sends its body slowly, or never, holds a connection only that long)
    /// ([`Server::serve_http`](crate::Server::serve_http)).
    pub body_read_timeout: Duration,
    /// Whether handshake sessions are offered at all; without them the
    /// endpoint is purely stateless 2026-07-28.
    pub sessions: bool,
}

impl HttpOptions {
    /// Allows the address a listener is bound to as a `Host`, unless it is
    /// a wildcard (`0.0.0.0`, `[::]`: no client names it); what
    /// [`Server::serve_http`](crate::Server::serve_http) does with its listener's.
    pub fn allow_bound_address(&mut self, address: std::net::SocketAddr) {
        if !address.ip().is_unspecified() {
            self.allowed_hosts.push(address.to_string());
        }
    }
}

impl Default for HttpOptions {
    fn default() -> Self {
        HttpOptions {
            path: "/mcp".into(),
            allowed_origins: Vec::new(),
            allowed_hosts: Vec::new(),
            max_body_bytes: 4 * 1024 * 1024,
            max_sessions: 1024,
            session_idle_timeout: Duration::from_secs(30 * 60),
            max_concurrent_requests: 256,
            max_streams: 512,
            max_connections: 1024,
            header_read_timeout: Duration::from_secs(10),
            body_read_timeout: Duration::from_secs(30),
            sessions: true,
        }
    }
}
