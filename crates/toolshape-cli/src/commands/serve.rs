//! `toolshape serve`: the built-in read-only workspace toolset over stdio.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Args;
use toolshape::{Server, ServerOptions};
use toolshape_workspace::Workspace;

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
    let server = Server::builder("toolshape", env!("CARGO_PKG_VERSION"))
        .title("toolshape workspace")
        .options(options)
        .build();
    if let Err(error) = toolshape_workspace::mcp::register(server.registry(), &workspace) {
        eprintln!("toolshape serve: {error}");
        return ExitCode::FAILURE;
    }
    tracing::info!(root = %workspace.root().display(), "serving the workspace toolset on stdio");
    match server.serve_stdio().await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            tracing::error!(%error, "serving failed");
            ExitCode::FAILURE
        }
    }
}
