//! `toolshape`: serve the built-in workspace toolset over MCP, and call,
//! inspect, load and audit any MCP server's tools.

#[macro_use]
mod output;
mod commands;
mod logging;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

use commands::signals::until_signal;

/// MCP tools whose outputs have a shape you can trust.
#[derive(Debug, Parser)]
#[command(name = "toolshape", version, about)]
struct Cli {
    /// More logging on stderr (-v, -vv). `RUST_LOG` overrides it.
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    verbose: u8,
    /// Threads that run the async work. 1 runs everything on one thread: the
    /// least CPU per call where cores are few or shared. More spread HTTP
    /// connections over cores. Default: 1 for a stdio peer, one per core when
    /// serving HTTP or running a client command.
    #[arg(long, global = true, value_name = "N",
          value_parser = clap::value_parser!(u16).range(1..=1024))]
    threads: Option<u16>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Serve the built-in read-only workspace toolset over stdio (MCP).
    Serve(commands::serve::ServeArgs),
    /// List a server's tools with their schemas: `toolshape tools -- <server command...>`.
    #[command(after_help = commands::connect::EXIT_CODES_HELP)]
    Tools(commands::tools::ToolsArgs),
    /// Call one tool and print its validated result: `toolshape call NAME --args JSON -- <server command...>`.
    #[command(after_help = commands::connect::EXIT_CODES_HELP)]
    Call(commands::call::CallArgs),
    /// Load-test one tool with validated calls: `toolshape bench --tool NAME -- <server command...>`.
    #[command(after_help = commands::connect::EXIT_CODES_HELP)]
    Bench(commands::bench::BenchArgs),
    /// Audit a server's tool schemas and structured outputs on every revision: `toolshape check -- <server command...>`.
    #[command(after_help = commands::check::CHECK_EXIT_CODES_HELP)]
    Check(commands::check::CheckArgs),
    /// A validating gateway in front of any MCP server: `toolshape proxy [--http ADDR] -- <server command...>`.
    Proxy(Box<commands::proxy::ProxyArgs>),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    // A check reports what a server does wrong as findings: the client's
    // own warnings about it would only repeat them.
    logging::init(cli.verbose, matches!(cli.command, Command::Check(_)));
    // Only for `serve`, which starts no other program: a server that
    // `proxy`, `check` or the client commands start would inherit it.
    if matches!(cli.command, Command::Serve(_)) {
        raise_descriptor_limit();
    }
    // One stdio peer is served best on one thread: no hand-offs between
    // workers (file work still runs on the blocking pool). Everything else
    // (HTTP serving, the client commands) uses the multi-threaded runtime,
    // unless --threads says otherwise.
    let one_peer = match &cli.command {
        Command::Serve(args) => !args.serves_http(),
        Command::Proxy(args) => args.stdio_only(),
        _ => false,
    };
    let mut builder = match cli.threads {
        Some(1) => tokio::runtime::Builder::new_current_thread(),
        None if one_peer => tokio::runtime::Builder::new_current_thread(),
        Some(threads) => {
            let mut builder = tokio::runtime::Builder::new_multi_thread();
            builder.worker_threads(usize::from(threads));
            builder
        }
        None => tokio::runtime::Builder::new_multi_thread(),
    };
    let runtime = match builder.enable_all().build() {
        Ok(runtime) => runtime,
        Err(error) => {
            errln!("toolshape: cannot start the async runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    let code = runtime.block_on(async {
        match cli.command {
            Command::Serve(args) => commands::serve::run(args).await,
            Command::Tools(args) => until_signal(commands::tools::run(args)).await,
            Command::Call(args) => until_signal(commands::call::run(args)).await,
            Command::Bench(args) => commands::bench::run(args).await,
            Command::Check(args) => until_signal(commands::check::run(args)).await,
            Command::Proxy(args) => commands::proxy::run(*args).await,
        }
    });
    // A read of a terminal or file may still be pending on a blocking
    // thread (the output closed first): it must not hold the exit.
    runtime.shutdown_timeout(std::time::Duration::from_millis(200));
    code
}

/// Raises the soft limit on open descriptors to the hard one (Unix): the
/// usual soft limit (1,024 on Linux, 256 on macOS) is below what 64
/// workspace walks (a descriptor per folder level) and the HTTP fronts'
/// connections may hold at once; the connection limit follows it. (A
/// program started with a raised limit may size tables by it, or close
/// every descriptor up to it: so only where none is started.)
fn raise_descriptor_limit() {
    #[cfg(unix)]
    {
        use rustix::process::{Resource, getrlimit, setrlimit};
        /// Where the hard limit is none (macOS), what is asked for instead
        /// (its usual `kern.maxfilesperproc` or less).
        const UNLIMITED_TARGET: u64 = 10_240;
        let mut limit = getrlimit(Resource::Nofile);
        let raised = match (limit.current, limit.maximum) {
            (Some(current), Some(maximum)) if current < maximum => maximum,
            (Some(current), None) if current < UNLIMITED_TARGET => UNLIMITED_TARGET,
            _ => return,
        };
        limit.current = Some(raised);
        if let Err(error) = setrlimit(Resource::Nofile, limit) {
            tracing::debug!(%error, "cannot raise the open-file limit");
        }
    }
}
