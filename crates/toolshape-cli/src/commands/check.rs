//! `toolshape check`: audit any MCP (or OTC) server's tool schemas and
//! structured outputs. The checks live in `toolshape-check`; this parses the
//! flags, shows progress, prints the report and sets the exit code.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::{Args, ValueEnum};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use toolshape::client::{ServerCommand, StderrMode};
use toolshape::protocol::ProtocolVersion;
use toolshape_check::{CallPolicy, Options, ProtocolChoice, Target, exit};

/// The text appended to `toolshape check --help`.
pub(crate) const CHECK_EXIT_CODES_HELP: &str = "Exit codes: 0 no errors (warnings allowed unless --strict); \
3 an error finding: a MUST broken, or the server dies or hangs (with --strict: a SHOULD too); \
4 it could not be reached or spoke no valid protocol; 2 usage error.";

/// Which tools are called.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum CallArg {
    /// None: the listing and the schemas only.
    None,
    /// Tools annotated `readOnlyHint: true`.
    ReadOnly,
    /// Every tool (it may change things).
    All,
}

/// Arguments of `toolshape check`.
#[derive(Debug, Args)]
pub(crate) struct CheckArgs {
    /// Print the report as JSON (shape: crates/toolshape-check/schema/check-report-v1.schema.json).
    #[arg(long)]
    json: bool,
    /// Also write the report as JUnit XML to FILE.
    #[arg(long, value_name = "FILE")]
    junit: Option<PathBuf>,
    /// Also write the JSON report to FILE (whatever stdout shows).
    #[arg(long, value_name = "FILE")]
    json_file: Option<PathBuf>,
    /// Which tools to call with generated arguments.
    #[arg(long, value_enum, default_value = "read-only")]
    call: CallArg,
    /// Revisions to check: `auto` (the negotiated one), `all` (2025-06-18,
    /// 2025-11-25 and 2026-07-28, each the server supports) or one revision.
    #[arg(long, value_name = "auto|all|REVISION", default_value = "auto")]
    protocol: String,
    /// Fail (exit 3) on warnings too.
    #[arg(long)]
    strict: bool,
    /// Arguments to call TOOL with first (a JSON object), before generated
    /// ones; values at the inputSchema's bounds are then tried on them. Repeatable.
    #[arg(long = "args", value_name = "TOOL=JSON")]
    arguments: Vec<String>,
    /// Seconds one call may go without an answer or a progress report (and
    /// one listing page may take).
    #[arg(long, value_name = "SECONDS", default_value_t = 10,
          value_parser = clap::value_parser!(u64).range(1..=super::MAX_SECONDS))]
    timeout: u64,
    /// Seconds the whole check may take.
    #[arg(long, value_name = "SECONDS", default_value_t = 300,
          value_parser = clap::value_parser!(u64).range(1..=super::MAX_SECONDS))]
    max_time: u64,
    /// Seconds of compile time all the server's schemas may take together;
    /// past it, the rest are not checked (`list-compile-over-budget`).
    #[arg(long, value_name = "SECONDS", default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..=super::MAX_SECONDS))]
    compile_budget: u64,
    /// Show the server's stderr (it is captured by default, and its end quoted when the server exits).
    #[arg(long)]
    server_stderr: bool,
    /// Check a Streamable HTTP endpoint (e.g. http://127.0.0.1:8080/mcp).
    #[arg(long, value_name = "URL", conflicts_with_all = ["command", "otc"])]
    url: Option<String>,
    /// Check an OTC (Open Tool Calling) server at its base URL (e.g. http://127.0.0.1:8080).
    #[arg(long, value_name = "URL", conflicts_with = "command")]
    otc: Option<String>,
    /// The server command and its arguments, after `--`.
    #[arg(last = true, value_name = "SERVER COMMAND")]
    command: Vec<String>,
}

fn usage(message: &str) -> ExitCode {
    errln!("toolshape check: {message}");
    ExitCode::from(exit::USAGE)
}

impl CheckArgs {
    fn target(&self) -> Result<Target, String> {
        match (&self.url, &self.otc, self.command.is_empty()) {
            (Some(url), None, true) => Ok(Target::Http(url.clone())),
            (None, Some(url), true) => Ok(Target::Otc(url.clone())),
            (None, None, false) => {
                let command = ServerCommand::from_argv(&self.command)
                    .ok_or("give the server command after `--`")?;
                Ok(Target::Stdio {
                    command: command
                        .stderr(if self.server_stderr {
                            StderrMode::Inherit
                        } else {
                            StderrMode::Capture
                        })
                        .own_process_group(!super::connect::at_terminal()),
                    display: self.command.join(" "),
                })
            }
            _ => Err("give exactly one of: a server command after `--`, --url, --otc".into()),
        }
    }

    fn options(&self) -> Result<Options, String> {
        let protocol = match self.protocol.as_str() {
            "auto" => ProtocolChoice::Auto,
            "all" => ProtocolChoice::All,
            other => ProtocolChoice::Only(
                ProtocolVersion::parse(other)
                    .ok_or_else(|| format!("unknown protocol version {other:?}"))?,
            ),
        };
        let mut options = Options::default();
        options.calls = match self.call {
            CallArg::None => CallPolicy::None,
            CallArg::ReadOnly => CallPolicy::ReadOnly,
            CallArg::All => CallPolicy::All,
        };
        options.protocol = protocol;
        options.call_timeout = Duration::from_secs(self.timeout.max(1));
        options.request_timeout = Duration::from_secs(self.timeout.max(1));
        options.max_time = Duration::from_secs(self.max_time.max(1));
        options.compile_budget = Duration::from_secs(self.compile_budget);
        options.max_call_time = options
            .max_time
            .min(Duration::from_secs(60))
            .max(options.call_timeout);
        for given in &self.arguments {
            let (tool, json) = given
                .split_once('=')
                .ok_or_else(|| format!("--args {given:?}: expected TOOL=JSON"))?;
            match serde_json::from_str(json) {
                Ok(serde_json::Value::Object(arguments)) => {
                    options.arguments.insert(tool.to_owned(), arguments);
                }
                _ => return Err(format!("--args for {tool}: not a JSON object")),
            }
        }
        Ok(options)
    }
}

/// A progress bar on stderr, shown only on a terminal and only once the
/// check has run for a moment.
fn progress_bar() -> (ProgressBar, toolshape_check::ProgressSink) {
    let bar = ProgressBar::hidden();
    let visible = std::io::stderr().is_terminal();
    let started = Instant::now();
    let shown = bar.clone();
    let sink: toolshape_check::ProgressSink = Arc::new(move |progress| {
        if !visible || started.elapsed() < Duration::from_millis(500) {
            return;
        }
        if shown.is_hidden() {
            shown.set_draw_target(ProgressDrawTarget::stderr());
            if let Ok(style) = ProgressStyle::with_template("{spinner} {pos}/{len} {wide_msg}") {
                shown.set_style(style);
            }
            shown.enable_steady_tick(Duration::from_millis(120));
        }
        shown.set_length(progress.total.max(progress.done) as u64);
        shown.set_position(progress.done as u64);
        shown.set_message(progress.stage.clone());
    });
    (bar, sink)
}

pub(crate) async fn run(args: CheckArgs) -> ExitCode {
    let target = match args.target() {
        Ok(target) => target,
        Err(message) => return usage(&message),
    };
    let mut options = match args.options() {
        Ok(options) => options,
        Err(message) => return usage(&message),
    };
    // The report files are made before the check, so that a path that
    // cannot be written fails at once rather than after the whole check.
    let mut junit = match create(args.junit.as_ref()) {
        Ok(file) => file,
        Err(code) => return code,
    };
    let mut json_file = match create(args.json_file.as_ref()) {
        Ok(file) => file,
        Err(code) => return code,
    };
    let (bar, sink) = progress_bar();
    options.progress = Some(sink);
    let report = toolshape_check::check(&target, &options).await;
    bar.finish_and_clear();
    // A report file that cannot be written still leaves the report printed.
    let mut unwritten = false;
    for (file, contents) in [
        (&mut junit, toolshape_check::to_junit(&report, args.strict)),
        (&mut json_file, report.to_json()),
    ] {
        if let Some((path, file)) = file
            && let Err(error) = std::io::Write::write_all(file, contents.as_bytes())
        {
            errln!("toolshape check: cannot write {}: {error}", path.display());
            unwritten = true;
        }
    }
    let text = if args.json {
        report.to_json()
    } else {
        let colour = std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none();
        toolshape_check::to_text(&report, colour)
    };
    outln!("{}", text.trim_end());
    match report.exit_code(args.strict) {
        0 if unwritten => ExitCode::from(exit::USAGE),
        code => ExitCode::from(code),
    }
}

/// The file at `path`, created (emptied) for a report; a path that cannot
/// be written is a usage error.
fn create(path: Option<&PathBuf>) -> Result<Option<(&PathBuf, std::fs::File)>, ExitCode> {
    let Some(path) = path else {
        return Ok(None);
    };
    match std::fs::File::create(path) {
        Ok(file) => Ok(Some((path, file))),
        Err(error) => {
            errln!("toolshape check: cannot write {}: {error}", path.display());
            Err(ExitCode::from(exit::USAGE))
        }
    }
}
