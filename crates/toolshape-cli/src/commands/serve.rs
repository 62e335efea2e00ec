//! `toolshape serve`: the built-in read-only workspace toolset over stdio,
//! or Streamable HTTP (optionally behind OAuth, see [`auth`]).

mod auth;

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Args;
use toolshape::{HttpOptions, Server, ServerOptions};
use toolshape_workspace::Workspace;

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
    /// Serve Streamable HTTP on this address (e.g. 127.0.0.1:8080) instead of stdio.
    /// Binding to anything but loopback exposes the workspace: do it only behind
    /// authentication.
    #[arg(long, value_name = "ADDR")]
    http: Option<std::net::SocketAddr>,
    /// With --http: serve only stateless 2026-07-28 requests (no handshake sessions).
    #[arg(long, requires = "http")]
    stateless: bool,
    /// With --http: an Origin allowed besides the loopback ones (repeatable).
    #[arg(long, value_name = "ORIGIN", requires = "http")]
    allow_origin: Vec<String>,
    /// With --http: a Host name (or name:port) allowed besides the loopback
    /// names and the bound address (repeatable; `*` allows any).
    #[arg(long, value_name = "HOST", requires = "http")]
    allow_host: Vec<String>,
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
    /// Whether this serves Streamable HTTP (rather than one peer over stdio).
    pub(crate) fn serves_http(&self) -> bool {
        self.http.is_some()
    }
}

pub(crate) async fn run(args: ServeArgs) -> ExitCode {
    let workspace = match Workspace::open(&args.root) {
        Ok(workspace) => workspace,
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
    options.call_timeout = Some(Duration::from_secs(args.call_timeout.max(1)));
    options.instructions = Some(format!(
        "Read-only tools over the folder {}: list, inspect, read, search and analyse its files.",
        workspace.root().display()
    ));
    let built = Server::builder("toolshape", env!("CARGO_PKG_VERSION"))
        .title("toolshape workspace")
        .options(options)
        .tools(toolshape_workspace::mcp::tools(&workspace))
        .build();
    let server = match built {
        Ok(server) => server,
        Err(error) => {
            eprintln!("toolshape serve: {error}");
            return ExitCode::FAILURE;
        }
    };
    if let Some(address) = args.http {
        let mut options = HttpOptions::default();
        options.sessions = !args.stateless;
        options.allowed_origins = args.allow_origin;
        options.allowed_hosts = args.allow_host;
        return serve_http(&server, address, options, &args.auth).await;
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

async fn serve_http(
    server: &Server,
    address: std::net::SocketAddr,
    options: HttpOptions,
    auth: &ServeAuthArgs,
) -> ExitCode {
    if auth.auth_issuer.is_none() && !address.ip().is_loopback() {
        eprintln!(
            "toolshape serve: warning: {address} is reachable beyond this machine and nothing \
             checks who calls: anyone who reaches it can read the workspace. Protect it with \
             --auth-issuer (OAuth), or bind 127.0.0.1."
        );
    }
    let listener = match tokio::net::TcpListener::bind(address).await {
        Ok(listener) => listener,
        Err(error) => {
            eprintln!("toolshape serve: cannot listen on {address}: {error}");
            return ExitCode::from(2);
        }
    };
    let bound = listener.local_addr().unwrap_or(address);
    let protection = match auth::protection(auth, bound, &options.path) {
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
    let shutdown = async {
        let _ = tokio::signal::ctrl_c().await;
        tracing::info!("shutting down");
    };
    let wrap = move |router| match &protection {
        Some(protected) => protected.protect(router),
        None => router,
    };
    match server
        .serve_http_with(listener, options, wrap, shutdown)
        .await
    {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            tracing::error!(%error, "serving failed");
            ExitCode::FAILURE
        }
    }
}
