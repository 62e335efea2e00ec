//! `toolshape serve`: the built-in read-only workspace toolset over stdio,
//! or Streamable HTTP (optionally behind OAuth, see [`auth`]).

mod auth;

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use clap::Args;
use toolshape::resource::ResourceEvents;
use toolshape::{HttpOptions, Server, ServerOptions};
use toolshape_workspace::mcp::{FileChange, FileWatcher};
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
    #[arg(long, value_name = "SECONDS", default_value_t = 60,
          value_parser = clap::value_parser!(u64).range(1..=super::MAX_SECONDS))]
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
    /// Do not watch the workspace's files for changes (subscribers to a
    /// file's resource are then never told it changed).
    #[arg(long)]
    no_watch: bool,
    /// The most folders watched for changes (links not followed); a root
    /// holding more is not watched. Each folder costs one of the operating
    /// system's watches, shared with the user's other programs.
    #[arg(long, value_name = "N", default_value_t = toolshape_workspace::mcp::DEFAULT_MAX_WATCHED_FOLDERS)]
    watch_max_folders: usize,
    #[command(flatten)]
    fronts: super::fronts::HttpFrontArgs,
    #[command(flatten)]
    otc_auth: super::otc::OtcServeAuth,
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
        self.fronts.any()
    }
}

pub(crate) async fn run(args: ServeArgs) -> ExitCode {
    if let Err(message) = args.fronts.check() {
        errln!("toolshape serve: {message}");
        return ExitCode::from(2);
    }
    let call_timeout = Duration::from_secs(args.call_timeout.max(1));
    let budget = MemoryBudget::new(args.memory_budget * MIB, call_timeout * 3 / 4);
    let workspace = match Workspace::open(&args.root) {
        Ok(workspace) => workspace.with_memory_budget(budget),
        Err(error) => {
            errln!(
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
    // Peers that subscribed to a file's resource are told when it changes,
    // and all when files come and go: `listChanged` is declared only when
    // the watcher started (or is still setting up on a large tree).
    let events = ResourceEvents::new();
    let watching = if args.no_watch {
        None
    } else {
        Some(watch(&workspace, &events, args.watch_max_folders).await)
    };
    // The files as resources (file:/// URIs under the root), read through
    // the same sandbox and limits as the tools.
    match toolshape_workspace::mcp::file_template(&workspace) {
        Ok(template) => {
            builder = builder
                .resource_template(template)
                .resources_from(toolshape_workspace::mcp::file_lister(&workspace));
            if watching.as_ref().is_some_and(|watching| watching.may_work) {
                builder = builder.resource_events(events.clone());
            }
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
            errln!("toolshape serve: {error}");
            return ExitCode::FAILURE;
        }
    };
    if args.serves_http() {
        let options = args.fronts.options();
        let otc = match args.fronts.otc {
            Some(address) => {
                match args
                    .otc_auth
                    .options(options.clone(), args.call_timeout, args.fronts.drain())
                {
                    Ok(otc_options) => Some((address, otc_options)),
                    Err(message) => {
                        errln!("toolshape serve: {message}");
                        return ExitCode::from(2);
                    }
                }
            }
            None => None,
        };
        return serve_both(
            &server,
            args.fronts.http.map(|a| (a, options)),
            otc,
            &args.auth,
            args.fronts.drain(),
        )
        .await;
    }
    tracing::info!(root = %workspace.root().display(), "serving the workspace toolset on stdio");
    if std::io::stdin().is_terminal() {
        errln!("{TERMINAL_HINT}");
    }
    // Ctrl-C or SIGTERM: the calls in flight are answered that it stops
    // (a second signal stops at once).
    let stop = super::fronts::Stop::on_signals();
    match server.serve_stdio_until(stop.signal()).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            tracing::error!(%error, "serving failed");
            ExitCode::FAILURE
        }
    }
}

/// How long the start waits for the file watcher to be set up (it walks
/// the tree); past it, the server starts and the watcher follows.
const WATCH_SETUP_WAIT: Duration = Duration::from_secs(2);

/// The file watcher, kept while serving.
struct Watching {
    /// Whether changes may be told: the watcher started, or is still
    /// setting up.
    may_work: bool,
    /// The watcher once set up; dropping it stops watching.
    _watcher: Arc<OnceLock<FileWatcher>>,
}

/// Starts telling `events` which of the workspace's files change, and when
/// files come or go, on a blocking thread (setting up the watches walks the
/// tree), waiting [`WATCH_SETUP_WAIT`] at most for it to be set up. A
/// watcher that cannot start is logged, not fatal.
async fn watch(workspace: &Workspace, events: &ResourceEvents, max_folders: usize) -> Watching {
    let holder = Arc::new(OnceLock::new());
    let (workspace, told, held) = (workspace.clone(), events.clone(), Arc::clone(&holder));
    let mut setting_up = tokio::task::spawn_blocking(move || {
        toolshape_workspace::mcp::watch_file_changes(&workspace, max_folders, move |change| {
            match change {
                FileChange::Changed(uri) => told.updated(uri),
                FileChange::ListChanged => told.list_changed(),
                _ => {}
            }
        })
    });
    let keep = move |watcher| {
        tracing::debug!("watching the workspace's files for changes");
        let _ = held.set(watcher);
    };
    let may_work = match tokio::time::timeout(WATCH_SETUP_WAIT, &mut setting_up).await {
        Ok(Ok(Ok(watcher))) => {
            keep(watcher);
            true
        }
        Ok(Ok(Err(error))) => {
            tracing::warn!(%error, "file changes will not be told to subscribers");
            false
        }
        Ok(Err(error)) => {
            tracing::warn!(%error, "the file watcher's setup failed");
            false
        }
        Err(_) => {
            tokio::spawn(async move {
                match setting_up.await {
                    Ok(Ok(watcher)) => keep(watcher),
                    Ok(Err(error)) => {
                        tracing::warn!(%error, "file changes will not be told to subscribers");
                    }
                    Err(error) => tracing::warn!(%error, "the file watcher's setup failed"),
                }
            });
            true
        }
    };
    Watching {
        may_work,
        _watcher: holder,
    }
}

/// Serves MCP over Streamable HTTP, OTC, or both, until Ctrl-C (SIGINT) or
/// SIGTERM, then for `drain` with `/health` answering 503.
async fn serve_both(
    server: &Server,
    mcp: Option<(std::net::SocketAddr, HttpOptions)>,
    otc: Option<(std::net::SocketAddr, toolshape_otc::OtcOptions)>,
    auth: &ServeAuthArgs,
    drain: Duration,
) -> ExitCode {
    let stop = super::fronts::Stop::on_signals();
    let shutdown = || stop.signal();
    let mut serving = tokio::task::JoinSet::new();
    if let Some((address, options)) = mcp {
        if auth.auth_issuer.is_none() {
            super::fronts::warn_if_open(
                "serve",
                "MCP",
                address,
                "Protect it with --auth-issuer (OAuth)",
            );
        }
        let (listener, bound) = match super::fronts::bind("serve", address).await {
            Ok(bound) => bound,
            Err(code) => return code,
        };
        let bound_address = listener.local_addr().unwrap_or(address);
        let protection = match auth::protection(auth, bound_address, &options.path) {
            Ok(protection) => protection,
            Err(message) => {
                errln!("toolshape serve: {message}");
                return ExitCode::from(2);
            }
        };
        match &protection {
            Some(protected) => errln!(
                "toolshape: serving MCP on http://{bound}{} (OAuth: tokens of {} for {})",
                options.path,
                auth.auth_issuer.as_deref().unwrap_or_default(),
                protected.metadata().resource
            ),
            None => errln!("toolshape: serving MCP on http://{bound}{}", options.path),
        }
        let (health, admitted) = (stop.clone(), options.clone());
        let wrap = move |router| {
            let router = match &protection {
                Some(protected) => protected.protect(router),
                None => router,
            };
            super::fronts::with_health(router, &health, &admitted, bound_address, None)
        };
        let (server, shutdown) = (server.clone(), stop.drained(drain));
        serving.spawn(async move {
            server
                .serve_http_with(listener, options, wrap, shutdown)
                .await
        });
    }
    if let Some((address, options)) = otc {
        if !options.auth.is_required() {
            super::fronts::warn_if_open(
                "serve",
                "OTC",
                address,
                "Protect it with API keys (--otc-api-key-file, TOOLSHAPE_OTC_API_KEYS) or a JWT \
                 secret (--otc-jwt-secret-file, TOOLSHAPE_OTC_JWT_SECRET); --auth-issuer covers \
                 the MCP front only",
            );
        }
        let (listener, bound) = match super::fronts::bind("serve", address).await {
            Ok(bound) => bound,
            Err(code) => return code,
        };
        errln!("toolshape: serving OTC on http://{bound}");
        let (registry, shutdown) = (server.registry().clone(), shutdown());
        serving.spawn(
            async move { toolshape_otc::serve(&registry, listener, options, shutdown).await },
        );
    }
    super::fronts::join(serving, false, &stop).await
}
