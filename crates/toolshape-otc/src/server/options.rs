//! How the OTC endpoint serves.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use toolshape::HttpOptions;

use crate::auth::OtcAuth;

/// Settings of the OTC endpoint; every field has a safe default.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct OtcOptions {
    /// The HTTP hardening shared with the MCP endpoint: allowed `Origin`s
    /// and `Host`s, largest body, most requests at once, most connections,
    /// header-read timeout. (`path`, sessions: unused here.)
    pub http: HttpOptions,
    /// Who may call `GET /tools` and `POST /tools/call`.
    pub auth: OtcAuth,
    /// The longest one tool call may run.
    pub call_timeout: Option<Duration>,
    /// How long a `call_id`'s response is kept for a repeated call.
    pub idempotency_window: Duration,
    /// Most responses kept for repeated calls.
    pub idempotency_max_entries: usize,
    /// Most bytes of responses kept for repeated calls.
    pub idempotency_max_bytes: usize,
    /// How long, after shutdown begins, `GET /health` answers 503 while
    /// calls are still taken (so a load balancer stops sending new ones)
    /// before the listener closes.
    pub drain: Duration,
    /// Whether a tool's `developer_message` is sent to callers (OTC says
    /// it is for their logs, never for a user or a model); it is always logged.
    pub send_developer_messages: bool,
    /// Where a user grants each authorization provider's token, by provider
    /// id: a call lacking a provider's token is answered 400 with
    /// `missing_requirements.authorization: [{id, url}]` for the providers
    /// given here (the spec's challenge needs a `url`; a provider without
    /// one is named in the message only). None by default.
    pub authorization_urls: BTreeMap<String, String>,
    /// What else keeps the endpoint out of rotation: while it says no,
    /// `GET /health` answers 503 with its reason (a gateway whose upstream
    /// is down). None by default.
    pub readiness: Option<Readiness>,
}

/// Whether a server can take calls now, and if not, why: asked by each
/// `GET /health` (so cheap), never on a call's path.
#[derive(Clone)]
pub struct Readiness(Arc<dyn Fn() -> Result<(), &'static str> + Send + Sync>);

impl Readiness {
    /// Readiness as `ready` says it.
    pub fn new(ready: impl Fn() -> Result<(), &'static str> + Send + Sync + 'static) -> Self {
        Readiness(Arc::new(ready))
    }

    /// `Ok` when ready, else why not.
    pub fn check(&self) -> Result<(), &'static str> {
        (self.0)()
    }
}

impl std::fmt::Debug for Readiness {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Readiness(..)")
    }
}

impl Default for OtcOptions {
    fn default() -> Self {
        OtcOptions {
            http: HttpOptions::default(),
            auth: OtcAuth::none(),
            call_timeout: Some(Duration::from_secs(60)),
            idempotency_window: Duration::from_secs(10 * 60),
            idempotency_max_entries: 10_000,
            idempotency_max_bytes: 64 * 1024 * 1024,
            drain: Duration::ZERO,
            send_developer_messages: true,
            authorization_urls: BTreeMap::new(),
            readiness: None,
        }
    }
}
