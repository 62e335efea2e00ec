//! What `serve` and `proxy` share to serve over HTTP: binding an address,
//! stopping on Ctrl-C, and waiting for every front to end.

use std::future::Future;
use std::process::ExitCode;

use std::time::Duration;

use clap::Args;
use tokio::sync::watch;
use toolshape::HttpOptions;

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
    /// With --http or --otc: an Origin allowed besides the loopback ones (repeatable).
    #[arg(long, value_name = "ORIGIN")]
    allow_origin: Vec<String>,
    /// With --http or --otc: a Host name (or name:port) allowed besides the
    /// loopback names and the bound address (repeatable; `*` allows any).
    #[arg(long, value_name = "HOST")]
    allow_host: Vec<String>,
    /// With --http: how long a handshake session may sit unused before it
    /// expires and its memory is freed, in seconds.
    #[arg(
        long,
        value_name = "SECONDS",
        requires = "http",
        default_value_t = 1800
    )]
    session_idle_timeout: u64,
}

impl HttpFrontArgs {
    /// Whether any HTTP front (MCP or OTC) is asked for.
    pub(crate) fn any(&self) -> bool {
        self.http.is_some() || self.otc.is_some()
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

/// The signal every front stops on: Ctrl-C (SIGINT).
#[derive(Debug, Clone)]
pub(crate) struct Stop {
    stopped: watch::Receiver<bool>,
}

impl Stop {
    /// Starts watching for Ctrl-C.
    pub(crate) fn on_ctrl_c() -> Stop {
        let (stop, stopped) = watch::channel(false);
        tokio::spawn(async move {
            let _ = tokio::signal::ctrl_c().await;
            tracing::info!("shutting down");
            let _ = stop.send(true);
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
}

/// Waits for the fronts to end: all of them, or (`first_ends_all`) the
/// first one. Failure if any failed.
pub(crate) async fn join(
    mut serving: JoinSet<std::io::Result<()>>,
    first_ends_all: bool,
) -> ExitCode {
    let mut code = ExitCode::SUCCESS;
    while let Some(joined) = serving.join_next().await {
        if !matches!(joined, Ok(Ok(()))) {
            tracing::error!(?joined, "serving failed");
            code = ExitCode::FAILURE;
        }
        if first_ends_all {
            serving.abort_all();
            break;
        }
    }
    code
}
