//! `toolshape proxy`: a validating gateway in front of any MCP server (see
//! `docs/proxy.md`). The work is `toolshape-proxy`'s; this wires its flags
//! and fronts.

use std::io::IsTerminal;
use std::num::NonZeroU32;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::Args;
use toolshape::protocol::LoggingLevel;
use toolshape::{ConnectedClient, Server, ServerOptions};
use toolshape_proxy::{
    AuditTarget, BrokenTools, OnInvalid, Proxy, ProxyError, ProxyOptions, RateLimit, ToolFilter,
};

use super::connect::McpServerArgs;
use super::fronts;

/// Arguments of `toolshape proxy`.
#[derive(Debug, Args)]
pub(crate) struct ProxyArgs {
    /// Serve MCP over stdio (the default when no other front is given); the
    /// proxy exits when its input ends.
    #[arg(long)]
    stdio: bool,
    /// HTTP fronts (`--http` and `--otc` also serve `GET /metrics`).
    #[command(flatten)]
    fronts: fronts::HttpFrontArgs,
    /// What the client gets when an upstream output fails its outputSchema:
    /// `error` (an isError result naming the violations), `strip` (the
    /// content without structuredContent), `pass` (as sent; only logged).
    #[arg(long, value_name = "MODE", default_value = "error")]
    on_invalid: OnInvalid,
    /// What an upstream tool whose schema cannot be used becomes: `hide`
    /// (not listed) or `list` (listed with the problem; calls fail naming it).
    #[arg(long, value_name = "MODE", default_value = "hide")]
    broken_tools: BrokenTools,
    /// Show only tools whose names match this glob (`*`, `?`; repeatable).
    #[arg(long, value_name = "GLOB")]
    allow: Vec<String>,
    /// Never show tools whose names match this glob (repeatable; wins over --allow).
    #[arg(long, value_name = "GLOB")]
    deny: Vec<String>,
    /// Show only tools annotated readOnlyHint: true.
    #[arg(long)]
    read_only: bool,
    /// The compile time the schemas of one listing of the upstream's tools
    /// may take together; past it, the tools not compiled yet are unusable
    /// (as --broken-tools says) until later listings, a pause apart,
    /// compile them.
    #[arg(long, value_name = "SECONDS", default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..=super::MAX_SECONDS))]
    compile_budget: u64,
    /// TOOL=SECONDS: the limit on one call of TOOL instead of --timeout (repeatable).
    #[arg(long, value_name = "TOOL=SECONDS")]
    tool_timeout: Vec<String>,
    /// Most upstream calls running at once, over all clients.
    #[arg(long, value_name = "N")]
    max_concurrent: Option<usize>,
    /// Most calls running at once on one client connection; past it, the
    /// proxy stops reading that client until one ends.
    #[arg(long, value_name = "N", default_value_t = 128)]
    max_in_flight: usize,
    /// Tools per `tools/list` page the proxy's clients get.
    #[arg(long, value_name = "N", default_value_t = 100)]
    page_size: usize,
    /// Calls per second each client may make on average (a client: its IP
    /// address over HTTP and OTC; the stdio front has one). Past it a call
    /// is an error with a retry hint, never forwarded.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    rate_limit: Option<u32>,
    /// With --rate-limit: calls a client may make at once after a pause
    /// [default: the rate].
    #[arg(long, value_name = "N", requires = "rate_limit", value_parser = clap::value_parser!(u32).range(1..))]
    rate_burst: Option<u32>,
    /// The level a handshake-revision upstream is asked to log at
    /// (`logging/setLevel`), or `none`. Messages about a call go to its
    /// caller, at the level the caller asked for; the others to this log.
    #[arg(long, value_name = "LEVEL", default_value = "info", value_parser = log_level)]
    upstream_log_level: LogLevelArg,
    /// Do not relay the upstream's questions (elicitation, sampling, roots)
    /// to the clients they are about, nor tell the upstream it may ask them.
    #[arg(long)]
    no_relay_asks: bool,
    /// With --http: a file holding the secret (at least 32 bytes; a
    /// trailing line end is not part of it) that seals the `requestState` of
    /// 2026-07-28 rounds asking the client (relayed questions), so that
    /// proxies behind one load balancer take each other's retries. Default:
    /// a random secret per process (retries must reach the same one).
    #[arg(long, value_name = "FILE", requires = "http")]
    request_state_key_file: Option<PathBuf>,
    /// Upstream connections (child processes) to spread calls over.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=64))]
    upstreams: u16,
    /// With --otc: the toolkit the tools belong to (their OTC ids are
    /// `TOOLKIT.name@VERSION`).
    #[arg(long, value_name = "NAME", default_value = "Tools")]
    toolkit: String,
    /// With --otc: the version the tools have (`x.y.z`).
    #[arg(long, value_name = "VERSION", default_value = "1.0.0")]
    tools_version: String,
    /// Write an audit log (one JSON line per call) to this file, or `-` for stderr.
    #[arg(long, value_name = "FILE")]
    audit: Option<PathBuf>,
    /// With --audit: include each call's arguments (off: only their size), and
    /// the output's values an invalid output's violations quote (off: where and
    /// which keyword).
    #[arg(long, requires = "audit")]
    audit_arguments: bool,
    #[command(flatten)]
    upstream: McpServerArgs,
}

/// `--upstream-log-level`: a level, or `none`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct LogLevelArg(Option<LoggingLevel>);

fn log_level(text: &str) -> Result<LogLevelArg, String> {
    if text == "none" {
        return Ok(LogLevelArg(None));
    }
    serde_json::from_value(serde_json::Value::String(text.to_owned()))
        .map(|level| LogLevelArg(Some(level)))
        .map_err(|_| {
            "one of debug, info, notice, warning, error, critical, alert, emergency, none"
                .to_owned()
        })
}

impl ProxyArgs {
    /// Whether the only front is stdio (one client: served best on one thread).
    pub(crate) fn stdio_only(&self) -> bool {
        !self.fronts.any()
    }

    fn options(&self) -> Result<ProxyOptions, String> {
        let mut options = ProxyOptions::default();
        options.on_invalid = self.on_invalid;
        options.broken_tools = self.broken_tools;
        let mut filter = ToolFilter::default();
        filter.allow.clone_from(&self.allow);
        filter.deny.clone_from(&self.deny);
        filter.read_only = self.read_only;
        options.filter = filter;
        options.call_timeout = Duration::from_secs(self.upstream.timeout.max(1));
        for entry in &self.tool_timeout {
            let parsed = entry
                .split_once('=')
                .and_then(|(tool, seconds)| Some((tool, seconds.parse::<u64>().ok()?)));
            let Some((tool, seconds)) = parsed else {
                return Err(format!("--tool-timeout {entry:?}: write TOOL=SECONDS"));
            };
            if seconds == 0 {
                return Err(format!("--tool-timeout {entry:?}: at least 1 second"));
            }
            if seconds > super::MAX_SECONDS {
                return Err(format!(
                    "--tool-timeout {entry:?}: at most {} seconds (a year)",
                    super::MAX_SECONDS
                ));
            }
            options
                .tool_timeouts
                .insert(tool.to_owned(), Duration::from_secs(seconds));
        }
        options.compile_budget = Duration::from_secs(self.compile_budget);
        options.max_concurrent = self.max_concurrent.map(|n| n.max(1));
        options.upstreams = usize::from(self.upstreams);
        options.rate_limit = self.rate_limit.and_then(|rate| {
            Some(RateLimit {
                per_second: NonZeroU32::new(rate)?,
                burst: NonZeroU32::new(self.rate_burst.unwrap_or(rate))?,
            })
        });
        options.upstream_log_level = self.upstream_log_level.0;
        options.relay_asks = !self.no_relay_asks;
        if !self.upstream.roots.is_empty() {
            options.roots = Some(self.upstream.roots.clone());
        }
        options.audit = self.audit.as_ref().map(|path| {
            if path.as_os_str() == "-" {
                AuditTarget::Stderr
            } else {
                AuditTarget::File(path.clone())
            }
        });
        options.audit_arguments = self.audit_arguments;
        options.toolkit = Some(self.toolkit.clone());
        options.version = Some(self.tools_version.clone());
        Ok(options)
    }
}

pub(crate) async fn run(args: ProxyArgs) -> ExitCode {
    if let Err(message) = args.fronts.check() {
        return super::connect::fail("proxy", (2, message));
    }
    let mut options = match args.options() {
        Ok(options) => options,
        Err(message) => return super::connect::fail("proxy", (2, message)),
    };
    let state_key = match args.request_state_key_file.as_deref().map(read_state_key) {
        Some(Err(message)) => return super::connect::fail("proxy", (2, message)),
        read => read.and_then(Result::ok),
    };
    // Served over stdio alone, the proxy has one client: the upstream's
    // questions outside any call are that client's.
    let sole_client = args.stdio_only().then(ConnectedClient::new);
    options.sole_client.clone_from(&sole_client);
    let (builder, upstream) = match args.upstream.upstream().await {
        Ok(upstream) => upstream,
        Err(failure) => return super::connect::fail("proxy", failure),
    };
    let longest_call = options.longest_call();
    let proxy = match Proxy::start(upstream, builder, options).await {
        Ok(proxy) => Arc::new(proxy),
        // An audit log that cannot be opened is the command line's mistake.
        Err(error @ ProxyError::Audit(_)) => {
            return super::connect::fail("proxy", (2, error.to_string()));
        }
        Err(error) => return super::connect::fail("proxy", (4, error.to_string())),
    };
    let mut server_options = ServerOptions::default();
    server_options.request_state_key = state_key;
    // The upstream call has its own limit; this one only catches the rest.
    server_options.call_timeout = Some(longest_call + Duration::from_secs(5));
    server_options.max_in_flight = args.max_in_flight.max(1);
    server_options.page_size = args.page_size.max(1);
    let mut builder = Server::builder("toolshape-proxy", env!("CARGO_PKG_VERSION"))
        .title("toolshape proxy")
        .options(server_options);
    if let Some(sole_client) = sole_client {
        builder = builder.connected_client(sole_client);
    }
    let server = proxy.add_to(builder).build();
    let server = match server {
        Ok(server) => server,
        Err(error) => return super::connect::fail("proxy", (1, error.to_string())),
    };
    let code = serve(&args, &server, &proxy, longest_call).await;
    proxy.shutdown(Duration::from_secs(2)).await;
    code
}

/// Shortest `--request-state-key-file` secret, in bytes (HMAC-SHA256's
/// output size).
const MIN_STATE_KEY_BYTES: usize = 32;
/// Longest one read.
const MAX_STATE_KEY_BYTES: u64 = 4096;

/// The secret in `path`, without one trailing line end.
fn read_state_key(path: &std::path::Path) -> Result<Vec<u8>, String> {
    use std::io::Read as _;
    let named = |problem: String| format!("--request-state-key-file {}: {problem}", path.display());
    let file = std::fs::File::open(path).map_err(|e| named(e.to_string()))?;
    let mut key = Vec::new();
    file.take(MAX_STATE_KEY_BYTES + 1)
        .read_to_end(&mut key)
        .map_err(|e| named(e.to_string()))?;
    if key.len() as u64 > MAX_STATE_KEY_BYTES {
        return Err(named(format!("longer than {MAX_STATE_KEY_BYTES} bytes")));
    }
    // One line end, as a text editor or `echo` leaves it.
    if key.ends_with(b"\r\n") {
        key.truncate(key.len() - 2);
    } else if key.ends_with(b"\n") {
        key.pop();
    }
    if key.len() < MIN_STATE_KEY_BYTES {
        return Err(named(format!(
            "{} bytes; a secret needs at least {MIN_STATE_KEY_BYTES} (e.g. `openssl rand -hex 32`)",
            key.len()
        )));
    }
    Ok(key)
}

/// Serves every front asked for until Ctrl-C or SIGTERM (the HTTP fronts
/// then drain for `--drain`), or until the stdio front's input ends.
async fn serve(
    args: &ProxyArgs,
    server: &Server,
    proxy: &Arc<Proxy>,
    longest_call: Duration,
) -> ExitCode {
    let stdio = args.stdio || !args.fronts.any();
    let stop = fronts::Stop::on_signals();
    let mut serving = tokio::task::JoinSet::new();
    let http = args.fronts.options();
    // The proxy checks no caller: a gateway in front of it must.
    let remedy =
        "The proxy has no authentication of its own: put an authenticating gateway in front of it";
    if let Some(address) = args.fronts.http {
        fronts::warn_if_open("proxy", "MCP", address, remedy);
        let (listener, bound) = match fronts::bind("proxy", address).await {
            Ok(bound) => bound,
            Err(code) => return code,
        };
        errln!(
            "toolshape proxy: serving MCP on http://{bound}{}",
            http.path
        );
        errln!("toolshape proxy: metrics on http://{bound}/metrics");
        let bound_address = listener.local_addr().unwrap_or(address);
        let metrics = with_metrics(proxy, &http, bound_address);
        let (health, admitted) = (stop.clone(), http.clone());
        let ready = upstream_ready(proxy);
        let wrap = move |router| {
            fronts::with_health(
                metrics(router),
                &health,
                &admitted,
                bound_address,
                Some(ready),
            )
        };
        let drained = stop.drained(args.fronts.drain());
        let (server, options, shutdown) = (server.clone(), http.clone(), drained);
        serving.spawn(async move {
            server
                .serve_http_with(listener, options, wrap, shutdown)
                .await
        });
    }
    if let Some(address) = args.fronts.otc {
        fronts::warn_if_open("proxy", "OTC", address, remedy);
        let (listener, bound) = match fronts::bind("proxy", address).await {
            Ok(bound) => bound,
            Err(code) => return code,
        };
        errln!("toolshape proxy: serving OTC on http://{bound}");
        errln!("toolshape proxy: metrics on http://{bound}/metrics");
        let mut otc = toolshape_otc::OtcOptions::default();
        otc.http = http.clone();
        otc.call_timeout = Some(longest_call + Duration::from_secs(5));
        otc.drain = args.fronts.drain();
        let (registry, shutdown) = (server.registry().clone(), stop.signal());
        otc.readiness = Some(upstream_ready(proxy));
        let wrap = with_metrics(proxy, &http, listener.local_addr().unwrap_or(address));
        serving.spawn(async move {
            toolshape_otc::serve_with(&registry, listener, otc, wrap, shutdown).await
        });
    }
    if stdio {
        if std::io::stdin().is_terminal() {
            errln!(
                "toolshape proxy: serving MCP over stdio: waiting for JSON-RPC messages on stdin (Ctrl-D ends)"
            );
        }
        // The stdio front ends with its input, or at the stop signal (its
        // calls in flight then answered that it stops, the upstream closed
        // as at the end of input).
        let (server, stopped) = (server.clone(), stop.signal());
        serving.spawn(async move { server.serve_stdio_until(stopped).await });
    }
    fronts::join(serving, stdio, &stop).await
}

/// Whether the proxy's HTTP fronts are in rotation (`GET /health`): not
/// while the upstream is down, its calls would fail.
fn upstream_ready(proxy: &Arc<Proxy>) -> toolshape_otc::Readiness {
    let upstream = Arc::clone(proxy);
    toolshape_otc::Readiness::new(move || {
        if upstream.is_upstream_connected() {
            Ok(())
        } else {
            Err("the upstream server is not connected")
        }
    })
}

/// Adds `GET /metrics` (the proxy's counters, Prometheus text) to an HTTP
/// front's router.
fn with_metrics(
    proxy: &Arc<Proxy>,
    options: &toolshape::HttpOptions,
    bound: std::net::SocketAddr,
) -> impl FnOnce(axum::Router) -> axum::Router + use<> {
    use axum::http::{HeaderMap, StatusCode, header};
    let metrics = Arc::clone(proxy);
    // A foreign `Host` or `Origin` gets 403, as on the front's other
    // routes (DNS rebinding would read the tools' names and counts).
    let mut admitted = options.clone();
    admitted.allow_bound_address(bound);
    move |router: axum::Router| {
        router.route(
            "/metrics",
            axum::routing::get(move |headers: HeaderMap| {
                let answer = match toolshape::check_host_and_origin(&headers, &admitted) {
                    Err(refused) => (StatusCode::FORBIDDEN, "text/plain", format!("{refused}\n")),
                    Ok(()) => (
                        StatusCode::OK,
                        "text/plain; version=0.0.4",
                        metrics.metrics_text(),
                    ),
                };
                async move {
                    let (status, kind, text) = answer;
                    (status, [(header::CONTENT_TYPE, kind)], text)
                }
            }),
        )
    }
}
