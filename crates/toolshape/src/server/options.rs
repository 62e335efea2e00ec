//! How a server serves: page size, time limits, bounds.

use std::time::Duration;

use toolshape_protocol::CacheScope;

/// Server settings; every field has a sensible default.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ServerOptions {
    /// Tools per `tools/list` page.
    pub page_size: usize,
    /// The longest one request's work may run: a tool call, a prompt's
    /// rendering, a resource's read or listing, a completion.
    pub call_timeout: Option<Duration>,
    /// Most tool calls running at once on one connection; past it, reading pauses.
    pub max_in_flight: usize,
    /// Longest message accepted, in bytes; a longer one gets an error and is skipped.
    pub max_message_bytes: usize,
    /// How long a write to a peer may make no progress (the peer stopped
    /// reading) before its connection is dropped: the stdio session ends
    /// with an error, an HTTP connection ([`Server::serve_http`](crate::Server::serve_http))
    /// is closed and the calls it carried are cancelled. `None`: wait forever
    /// (what is queued meanwhile stays bounded either way).
    pub write_stall_timeout: Option<Duration>,
    /// Whether 2026-07-28 peers also get the text block that repeats the structured
    /// content (older revisions always get it).
    pub text_block_for_modern: bool,
    /// How long 2026-07-28 clients may cache `tools/list` and `server/discover`
    /// results (`ttlMs`).
    pub list_ttl: Duration,
    /// `cacheScope` on those results.
    pub cache_scope: CacheScope,
    /// Guidance for the model about this server.
    pub instructions: Option<String>,
    /// The secret protecting the `requestState` of 2026-07-28 multi
    /// round-trip requests (a tool that asks the client): at least 32
    /// random bytes. Instances behind one load balancer must share it; when
    /// unset, each server makes a random one, good for one instance.
    pub request_state_key: Option<Vec<u8>>,
    /// How long a `requestState` stays valid.
    pub request_state_ttl: Duration,
    /// How long a server-to-client request (elicitation, sampling, roots on
    /// a handshake session) waits for the client's answer.
    pub ask_timeout: Duration,
    /// Whether every result to a 2026-07-28 request names this server in its
    /// `_meta` (`io.modelcontextprotocol/serverInfo`, which that revision
    /// says servers SHOULD send unless configured not to). `server/discover`
    /// names it either way.
    pub server_info_in_results: bool,
}

impl Default for ServerOptions {
    fn default() -> Self {
        ServerOptions {
            page_size: 100,
            call_timeout: Some(Duration::from_secs(60)),
            max_in_flight: 128,
            max_message_bytes: 16 * 1024 * 1024,
            write_stall_timeout: Some(Duration::from_secs(60)),
            text_block_for_modern: true,
            list_ttl: Duration::ZERO,
            cache_scope: CacheScope::Public,
            instructions: None,
            request_state_key: None,
            request_state_ttl: Duration::from_secs(10 * 60),
            ask_timeout: Duration::from_secs(10 * 60),
            server_info_in_results: true,
        }
    }
}
