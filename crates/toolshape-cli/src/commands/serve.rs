//! `toolshape serve`: the built-in read-only workspace toolset over stdio,
//! or Streamable HTTP (optionally behind OAuth, see [`auth`]).

mod auth;

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Args;
use toolshape::{HttpOptions, Server, ServerOptions};
use toolshape_workspace::{MemoryBudget, Workspace};

const MIB: u64 = 1024 * 1024;

/// What a newcomer who runs `toolshape serve` at a terminal sees.
const TERMINAL_HINT: &str = "toolshape serve: serving MCP over stdio: waiting for JSON-RPC messages on stdin, one per line \
(Ctrl-D ends). This is meant for an MCP client to start; to try it, run: toolshape tools -- toolshape serve";

/// Arguments of `toolshape serve`.
#[derive(Debug, Args)]
pub(crate) struct ServeArgs {
    /// The folder the tools may read (default: the current folder).
    #[arg(long, value_name = "DIR", default_value = ".")]
    root: PathBuf,
    /// Tools per `tools/list` page.
    #[arg(long, value_name = "N", default_value_t = 100)]
    page_size: usize,
    /// The longest one tool call may run, in seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 60)]
    call_timeout: u64,
    /// The memory, in MiB, that running tool calls may reserve together. Each
    /// call reserves its worst case first; one that does not fit waits up to
    /// three quarters of --call-timeout, then is answered "server busy".
    #[arg(
        long,
        value_name = "MIB",
        default_value_t = toolshape_workspace::limits::MEMORY_BUDGET_BYTES / MIB,
        value_parser = clap::value_parser!(u64).range(1..=1_048_576)
    )]
    memory_budget: u64,
    /// Serve Streamable HTTP on this address (e.g. 127.0.0.1:8080) instead of stdio.
    /// Binding to anything but loopback exposes the workspace: do it only behind
    /// authentication.
    #[arg(long, value_name = "ADDR")]
    http: Option<std::net::SocketAddr>,
    /// With --http: serve only stateless 2026-07-28 requests (no handshake sessions).
    #[arg(long, requires = "http")]
    stateless: bool,
    /// Serve the same tools over Open Tool Calling (OTC / OXP 1.0) HTTP on
    /// this address (e.g. 127.0.0.1:8081): GET /health, GET /tools,
    /// POST /tools/call, GET /openapi.json. May run beside --http.
    #[arg(long, value_name = "ADDR")]
    otc: Option<std::net::SocketAddr>,
    #[command(flatten)]
    otc_auth: super::otc::OtcServeAuth,
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
    #[command(flatten)]
    auth: ServeAuthArgs,
}

/// OAuth protection of `serve --http`.
#[derive(Debug, Args)]
#[command(next_help_heading = "OAuth protection (with --http)")]
pub(crate) struct ServeAuthArgs {
    /// Accept only bearer tokens issued by this authorization server (its
    /// issuer URL); without it the endpoint is open to whoever reaches it.
    #[arg(long, value_name = "URL", requires = "http")]
    auth_issuer: Option<String>,
    /// The endpoint's public URI as clients reach it, which tokens must name
    /// as their audience (default: http://<bound address>/mcp; needed when
    /// bound to 0.0.0.0 or behind a proxy).
    #[arg(long, value_name = "URI", requires = "auth_issuer")]
    auth_resource: Option<String>,
    /// The authorization server's key set URL (default: the jwks_uri of its
    /// metadata).
    #[arg(
        long,
        value_name = "URL",
        requires = "auth_issuer",
        conflicts_with = "auth_jwks_file"
    )]
    auth_jwks_url: Option<String>,
    /// A JWK Set file with the authorization server's public keys (no fetching).
    #[arg(long, value_name = "PATH", requires = "auth_issuer")]
    auth_jwks_file: Option<PathBuf>,
    /// A scope every request needs (repeatable).
    #[arg(long, value_name = "SCOPE", requires = "auth_issuer")]
    auth_scope: Vec<String>,
    /// TOOL=SCOPE[,SCOPE...]: scopes a call of TOOL needs besides --auth-scope (repeatable).
    #[arg(long, value_name = "TOOL=SCOPES", requires = "auth_issuer")]
    auth_tool_scope: Vec<String>,
    /// Fetch the authorization server's metadata and keys over plain http
    /// even from hosts that are not loopback.
    #[arg(long, requires = "auth_issuer")]
    auth_allow_http: bool,
}

impl ServeArgs {
    /// Whether this serves HTTP (MCP or OTC) rather than one peer over stdio.
    pub(crate) fn serves_http(&self) -> bool {
        self.http.is_some() || self.otc.is_some()
    }
}

pub(crate) async fn run(args: ServeArgs) -> ExitCode {
    let call_timeout = Duration::from_secs(args.call_timeout.max(1));
    let budget = MemoryBudget::new(args.memory_budget * MIB, call_timeout * 3 / 4);
    let workspace = match Workspace::open(&args.root) {
        Ok(workspace) => workspace.with_memory_budget(budget),
        Err(error) => {
            eprintln!(
                "toolshape serve: cannot open {}: {error}",
                args.root.display()
            );
            return ExitCode::from(2);
        }
    };
    let mut options = ServerOptions::default();
    options.page_size = args.page_size.max(1);
    options.call_timeout = Some(call_timeout);
    options.instructions = Some(format!(
        "Read-only tools over the folder {}: list, inspect, read, search and analyse its files.",
        workspace.root().display()
    ));
    let mut builder = Server::builder("toolshape", env!("CARGO_PKG_VERSION"))
        .title("toolshape workspace")
        .options(options);
    // The files as resources (file:/// URIs under the root), read through
    // the same sandbox and limits as the tools.
    match toolshape_workspace::mcp::file_template(&workspace) {
        Ok(template) => {
            builder = builder
                .resource_template(template)
                .resources_from(toolshape_workspace::mcp::file_lister(&workspace));
        }
        Err(error) => tracing::warn!(%error, "the workspace's files are not offered as resources"),
    }
    let built = builder
        // Over OTC the tools are `Workspace.<name>`; MCP names are unchanged.
        .tools(
            toolshape_workspace::mcp::tools(&workspace)
                .into_iter()
                .map(|tool| tool.toolkit("Workspace")),
        )
        .build();
    let server = match built {
        Ok(server) => server,
        Err(error) => {
            eprintln!("toolshape serve: {error}");
            return ExitCode::FAILURE;
        }
    };
    if args.serves_http() {
        let mut options = HttpOptions::default();
        options.sessions = !args.stateless;
        options.allowed_origins = args.allow_origin;
        options.allowed_hosts = args.allow_host;
        options.session_idle_timeout = Duration::from_secs(args.session_idle_timeout.max(1));
        let otc = match args.otc {
            Some(address) => match args.otc_auth.options(options.clone(), args.call_timeout) {
                Ok(otc_options) => Some((address, otc_options)),
                Err(message) => {
                    eprintln!("toolshape serve: {message}");
                    return ExitCode::from(2);
                }
            },
            None => None,
        };
        return serve_both(&server, args.http.map(|a| (a, options)), otc, &args.auth).await;
    }
    tracing::info!(root = %workspace.root().display(), "serving the workspace toolset on stdio");
    if std::io::stdin().is_terminal() {
        eprintln!("{TERMINAL_HINT}");
    }
    match server.serve_stdio().await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            tracing::error!(%error, "serving failed");
            ExitCode::FAILURE
        }
    }
}

async fn bind(
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
            eprintln!("toolshape serve: cannot listen on {address}: {error}");
            Err(ExitCode::from(2))
        }
    }
}

/// Serves MCP over Streamable HTTP, OTC, or both, until Ctrl-C (SIGINT).
async fn serve_both(
    server: &Server,
    mcp: Option<(std::net::SocketAddr, HttpOptions)>,
    otc: Option<(std::net::SocketAddr, toolshape_otc::OtcOptions)>,
    auth: &ServeAuthArgs,
) -> ExitCode {
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let signal = async move {
        let _ = tokio::signal::ctrl_c().await;
        tracing::info!("shutting down");
        let _ = stop.send(true);
    };
    let shutdown = move || {
        let mut stopped = stopped.clone();
        async move {
            let _ = stopped.wait_for(|stop| *stop).await;
        }
    };
    let mut serving = tokio::task::JoinSet::new();
    if let Some((address, options)) = mcp {
        if auth.auth_issuer.is_none() && !address.ip().is_loopback() {
            eprintln!(
                "toolshape serve: warning: {address} is reachable beyond this machine and nothing \
                 checks who calls: anyone who reaches it can read the workspace. Protect it with \
                 --auth-issuer (OAuth), or bind 127.0.0.1."
            );
        }
        let (listener, bound) = match bind(address).await {
            Ok(bound) => bound,
            Err(code) => return code,
        };
        let bound_address = listener.local_addr().unwrap_or(address);
        let protection = match auth::protection(auth, bound_address, &options.path) {
            Ok(protection) => protection,
            Err(message) => {
                eprintln!("toolshape serve: {message}");
                return ExitCode::from(2);
            }
        };
        match &protection {
            Some(protected) => eprintln!(
                "toolshape: serving MCP on http://{bound}{} (OAuth: tokens of {} for {})",
                options.path,
                auth.auth_issuer.as_deref().unwrap_or_default(),
                protected.metadata().resource
            ),
            None => eprintln!("toolshape: serving MCP on http://{bound}{}", options.path),
        }
        let wrap = move |router| match &protection {
            Some(protected) => protected.protect(router),
            None => router,
        };
        let (server, shutdown) = (server.clone(), shutdown());
        serving.spawn(async move {
            server
                .serve_http_with(listener, options, wrap, shutdown)
                .await
        });
    }
    if let Some((address, options)) = otc {
        let (listener, bound) = match bind(address).await {
            Ok(bound) => bound,
            Err(code) => return code,
        };
        eprintln!("toolshape: serving OTC on http://{bound}");
        let (registry, shutdown) = (server.registry().clone(), shutdown());
        serving.spawn(
            async move { toolshape_otc::serve(&registry, listener, options, shutdown).await },
        );
    }
    tokio::spawn(signal);
    let mut code = ExitCode::SUCCESS;
    while let Some(joined) = serving.join_next().await {
        if !matches!(joined, Ok(Ok(()))) {
            tracing::error!(?joined, "serving failed");
            code = ExitCode::FAILURE;
        }
    }
    code
}
