//! What `serve` and `proxy` share to serve over HTTP: binding an address,
//! stopping on Ctrl-C or SIGTERM (after a drain, `/health` saying so), and
//! waiting for every front to end.

use std::future::Future;
use std::process::ExitCode;

use std::time::Duration;

use clap::Args;
use tokio::sync::watch;
use toolshape::HttpOptions;
use toolshape_otc::Readiness;

/// The HTTP fronts of `serve` and `proxy`: Streamable HTTP, OTC, and how
/// they admit requests.
#[derive(Debug, Args)]
pub(crate) struct HttpFrontArgs {
    /// Serve Streamable HTTP on this address (e.g. 127.0.0.1:8080) instead of
    /// stdio. Binding to anything but loopback exposes the tools to the
    /// network: do it only behind authentication.
    #[arg(long, value_name = "ADDR")]
    pub(crate) http: Option<std::net::SocketAddr>,
    /// With --http: serve only stateless 2026-07-28 requests (no handshake sessions).
    #[arg(long, requires = "http")]
    stateless: bool,
    /// Serve the same tools over Open Tool Calling (OTC / OXP 1.0) HTTP on
    /// this address (e.g. 127.0.0.1:8081): GET /health, GET /tools,
    /// POST /tools/call, GET /openapi.json. May run beside --http.
    #[arg(long, value_name = "ADDR")]
    pub(crate) otc: Option<std::net::SocketAddr>,
    /// With --http or --otc: an Origin allowed besides the loopback ones
    /// (repeatable), e.g. https://app.example.com. Browser pages from the
    /// allowed origins also get CORS (their preflights answered).
    #[arg(long, value_name = "ORIGIN")]
    allow_origin: Vec<String>,
    /// With --http or --otc: a Host name (or name:port) allowed besides the
    /// loopback names and the bound address (repeatable; `*` allows any).
    #[arg(long, value_name = "HOST")]
    allow_host: Vec<String>,
    /// With --http: how long a handshake session may sit unused (no
    /// request, no call running, no GET stream open) before it expires and
    /// its memory is freed, in seconds.
    #[arg(
        long,
        value_name = "SECONDS",
        requires = "http",
        default_value_t = 1800,
        value_parser = clap::value_parser!(u64).range(1..=super::MAX_SECONDS)
    )]
    session_idle_timeout: u64,
    /// With --http or --otc: after Ctrl-C or SIGTERM, how long GET /health
    /// answers 503 while requests are still served (for a load balancer to
    /// notice), in seconds (default 0); then the listeners close and the
    /// requests in flight finish. A second signal stops at once.
    #[arg(long, value_name = "SECONDS", visible_alias = "otc-drain",
          value_parser = clap::value_parser!(u64).range(0..=super::MAX_SECONDS))]
    drain: Option<u64>,
}

impl HttpFrontArgs {
    /// Whether any HTTP front (MCP or OTC) is asked for.
    pub(crate) fn any(&self) -> bool {
        self.http.is_some() || self.otc.is_some()
    }

    /// How long a front drains after the stop signal (`--drain`).
    pub(crate) fn drain(&self) -> Duration {
        Duration::from_secs(self.drain.unwrap_or(0))
    }

    /// Refuses flags that need an HTTP front when none is asked for (the
    /// usage error clap cannot say: `--drain` needs `--http` or `--otc`).
    pub(crate) fn check(&self) -> Result<(), String> {
        if self.drain.is_some() && !self.any() {
            return Err("--drain needs --http or --otc: a stdio front stops at once".into());
        }
        Ok(())
    }

    /// The HTTP options these flags make.
    pub(crate) fn options(&self) -> HttpOptions {
        let mut options = HttpOptions::default();
        options.sessions = !self.stateless;
        options.allowed_origins.clone_from(&self.allow_origin);
        options.allowed_hosts.clone_from(&self.allow_host);
        options.session_idle_timeout = Duration::from_secs(self.session_idle_timeout.max(1));
        options
    }
}
use tokio::task::JoinSet;

/// Warns that a front bound to `address`, beyond loopback, lets anyone who
/// reaches it call the tools, when nothing checks who calls (`remedy`: what
/// would).
pub(crate) fn warn_if_open(
    command: &str,
    front: &str,
    address: std::net::SocketAddr,
    remedy: &str,
) {
    if !address.ip().is_loopback() {
        errln!(
            "toolshape {command}: warning: the {front} front on {address} is reachable beyond this \
             machine and nothing checks who calls: anyone who reaches it can call the tools. \
             {remedy}, or bind 127.0.0.1."
        );
    }
}

/// Binds `address`, or says why not (as `toolshape COMMAND: ...`).
pub(crate) async fn bind(
    command: &str,
    address: std::net::SocketAddr,
) -> Result<(tokio::net::TcpListener, String), ExitCode> {
    match tokio::net::TcpListener::bind(address).await {
        Ok(listener) => {
            let bound = listener
                .local_addr()
                .map_or_else(|_| address.to_string(), |a| a.to_string());
            Ok((listener, bound))
        }
        Err(error) => {
            errln!("toolshape {command}: cannot listen on {address}: {error}");
            Err(ExitCode::from(2))
        }
    }
}

/// The signal every front stops on: Ctrl-C (SIGINT) or, on Unix, SIGTERM
/// (what process managers, containers and orchestrators send).
#[derive(Debug, Clone)]
pub(crate) struct Stop {
    stopped: watch::Receiver<bool>,
}

impl Stop {
    /// Starts watching for the signals (from this call on: a signal that
    /// comes before the watch's task first runs is not missed). A second
    /// signal, while a front drains or the calls in flight finish, ends the
    /// process at once.
    pub(crate) fn on_signals() -> Stop {
        let (stop, stopped) = watch::channel(false);
        let mut signals = super::signals::StopSignals::watch();
        tokio::spawn(async move {
            let signal = signals.next().await;
            tracing::info!(signal, "shutting down (a second signal stops at once)");
            let _ = stop.send(true);
            let signal = signals.next().await;
            errln!("toolshape: {signal} again: stopping at once");
            // As a shell reports death by the signal: 128 and its number.
            std::process::exit(super::signals::exit_status(signal));
        });
        Stop { stopped }
    }

    /// Resolves when it is time to stop.
    pub(crate) fn signal(&self) -> impl Future<Output = ()> + Send + 'static {
        let mut stopped = self.stopped.clone();
        async move {
            let _ = stopped.wait_for(|stop| *stop).await;
        }
    }

    /// Resolves `drain` after it is time to stop: what an HTTP front waits
    /// for before it closes its listener.
    pub(crate) fn drained(&self, drain: Duration) -> impl Future<Output = ()> + Send + 'static {
        let signal = self.signal();
        async move {
            signal.await;
            tokio::time::sleep(drain).await;
        }
    }

    /// Whether the stop signal came.
    fn is_stopping(&self) -> bool {
        *self.stopped.borrow()
    }
}

/// Adds `GET /health` to an MCP HTTP front's router, outside any
/// authorization (what a load balancer polls): `200 {"status":"ok"}` while
/// serving, `503 {"status":"unavailable"}` once the stop signal came (the
/// requests of `--drain` still served meanwhile), as the OTC front answers,
/// or while `ready` says no (with its reason, as `OtcOptions::readiness`
/// makes the OTC front say). A foreign `Host` or `Origin` gets `403`, as on
/// `/mcp` (`options`, and the address `bound` when it is not a wildcard,
/// say which are allowed).
pub(crate) fn with_health(
    router: axum::Router,
    stop: &Stop,
    options: &HttpOptions,
    bound: std::net::SocketAddr,
    ready: Option<Readiness>,
) -> axum::Router {
    use axum::http::{HeaderMap, StatusCode, header};
    let stop = stop.clone();
    let mut admitted = options.clone();
    admitted.allow_bound_address(bound);
    let admitted = std::sync::Arc::new(admitted);
    router.route(
        "/health",
        axum::routing::get(move |headers: HeaderMap| {
            let answer = match toolshape::check_host_and_origin(&headers, &admitted) {
                Err(refused) => (
                    StatusCode::FORBIDDEN,
                    serde_json::json!({"message": refused.to_string()}).to_string(),
                ),
                Ok(()) if stop.is_stopping() => {
                    (StatusCode::SERVICE_UNAVAILABLE, unavailable(None))
                }
                Ok(()) => match ready.as_ref().map(Readiness::check) {
                    Some(Err(reason)) => {
                        (StatusCode::SERVICE_UNAVAILABLE, unavailable(Some(reason)))
                    }
                    _ => (StatusCode::OK, r#"{"status":"ok"}"#.to_owned()),
                },
            };
            async move {
                let (status, body) = answer;
                (status, [(header::CONTENT_TYPE, "application/json")], body)
            }
        }),
    )
}

/// The body of a `503` from `GET /health`: `{"status":"unavailable"}`, with
/// the reason when it is not that the process is stopping.
fn unavailable(reason: Option<&str>) -> String {
    let mut body = serde_json::json!({"status": "unavailable"});
    if let Some(reason) = reason {
        body["reason"] = reason.into();
    }
    body.to_string()
}

/// Waits for the fronts to end: all of them, or (`first_ends_all`) the
/// first one, unless the stop signal came (each front then ends in its own
/// time: the HTTP fronts after their drain). Failure if any failed.
pub(crate) async fn join(
    mut serving: JoinSet<std::io::Result<()>>,
    first_ends_all: bool,
    stop: &Stop,
) -> ExitCode {
    let mut code = ExitCode::SUCCESS;
    while let Some(joined) = serving.join_next().await {
        if !matches!(joined, Ok(Ok(()))) {
            tracing::error!(?joined, "serving failed");
            code = ExitCode::FAILURE;
        }
        if first_ends_all && !stop.is_stopping() {
            serving.abort_all();
            break;
        }
    }
    code
}
