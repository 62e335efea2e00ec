//! A `toolshape::Server` over stdio with tools made for testing the server
//! itself: slow calls with progress, panics, invalid output, non-object
//! outputs, constrained inputs, and enough tools to paginate.
//!
//! ```text
//! cargo run -p toolshape-harness --bin test_server -- \
//!     [--page-size N] [--call-timeout-ms MS] [--max-message-bytes BYTES] \
//!     [--write-stall-timeout-ms MS] [--current-thread] [--asking-surface] [--changing] \
//!     [--url-elicitation] [--roots-at-start]
//! ```
//!
//! Each valued flag can also be set through the environment:
//! `TEST_SERVER_PAGE_SIZE`, `TEST_SERVER_CALL_TIMEOUT_MS`,
//! `TEST_SERVER_MAX_MESSAGE_BYTES`, `TEST_SERVER_WRITE_STALL_TIMEOUT_MS`
//! (flags win). `--current-thread` serves on a current-thread runtime, as
//! `toolshape serve` does. `--asking-surface` also serves a prompt and a
//! resource that ask the user (`toolshape_harness::asking`); without it the
//! server has tools only. `--changing` adds two resources and tools that
//! announce changes (`toolshape_harness::changing`). `--url-elicitation`
//! adds tools that send the user to a URL and announce the visit complete
//! (`toolshape_harness::url_elicitation`). `--roots-at-start` asks the
//! client's roots as soon as it can be asked, outside any request
//! (`toolshape_harness::early_roots`). Logs go to stderr (`RUST_LOG`, default `warn`).
//!
//! Besides the tools below, `block` blocks its thread for `ms` (a
//! [`Tool::typed_blocking`] tool), and `burst` answers with `n` progress
//! reports of `bytes` bytes each before its result.

use std::process::ExitCode;
use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use toolshape::{Server, ServerOptions, Tool, ToolContext, ToolError, ToolOutput};

/// Input of `sleep`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct SleepInput {
    /// How long to sleep, in milliseconds.
    ms: u64,
}

/// Output of `sleep`.
#[derive(Serialize, JsonSchema)]
struct Slept {
    /// How long it slept, in milliseconds.
    slept: u64,
}

/// No input at all.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Empty {}

/// Input of `numbers`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct NumbersInput {
    /// How many numbers, counting from 0.
    #[schemars(range(max = 10000))]
    n: u64,
}

/// A point of `points`: a struct, so the output schema refers to it
/// through `$defs`.
#[derive(Serialize, JsonSchema)]
struct Point {
    x: u64,
    y: u64,
}

/// Input of `constrained`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ConstrainedInput {
    /// From 1 to 10.
    #[schemars(range(min = 1, max = 10))]
    count: u32,
    /// Lowercase ASCII letters, at most 16 of them.
    #[schemars(regex(pattern = r"^[a-z]+$"), length(max = 16))]
    name: String,
}

/// Output of `constrained`.
#[derive(Serialize, JsonSchema)]
struct Repeated {
    /// `name` repeated `count` times.
    repeated: String,
}

/// Sleeps `ms`, reporting progress every 10 ms: always once at the start
/// (however late the task first runs), then only when it has grown.
async fn sleep(context: ToolContext, input: SleepInput) -> Result<Slept, ToolError> {
    let total = Duration::from_millis(input.ms);
    let start = Instant::now();
    let mut ticks = tokio::time::interval(Duration::from_millis(10));
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    // The first tick is immediate.
    ticks.tick().await;
    let mut reported: Option<u64> = None;
    loop {
        let elapsed = start.elapsed().min(total);
        let elapsed_ms = u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX);
        if reported.is_none_or(|last| elapsed_ms > last) {
            reported = Some(elapsed_ms);
            context.report_progress(
                elapsed_ms as f64,
                Some(input.ms as f64),
                Some(format!("slept {elapsed_ms} of {} ms", input.ms)),
            );
        }
        if elapsed >= total {
            break;
        }
        tokio::select! {
            _ = ticks.tick() => {}
            () = tokio::time::sleep(total - elapsed) => break,
        }
    }
    Ok(Slept { slept: input.ms })
}

/// Input of `burst`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct BurstInput {
    /// How many progress reports.
    #[schemars(range(max = 1000000))]
    n: u32,
    /// The length of each report's message.
    #[schemars(range(max = 65536))]
    bytes: u32,
}

/// Blocks the thread it runs on (never do this in an `async` handler).
fn block(input: SleepInput) -> Result<Slept, ToolError> {
    std::thread::sleep(Duration::from_millis(input.ms));
    Ok(Slept { slept: input.ms })
}

/// Sends `n` progress reports, yielding between them, then answers.
async fn burst(context: ToolContext, input: BurstInput) -> Result<u32, ToolError> {
    let message = "p".repeat(usize::try_from(input.bytes).unwrap_or(0));
    for i in 0..input.n {
        context.report_progress(
            f64::from(i + 1),
            Some(f64::from(input.n)),
            Some(message.clone()),
        );
        tokio::task::yield_now().await;
    }
    Ok(input.n)
}

fn tools() -> Vec<Tool> {
    let mut tools = vec![
        Tool::typed_blocking("block", block).description("Block a thread for `ms` milliseconds."),
        Tool::typed_with_context("burst", burst)
            .description("Send `n` progress reports of `bytes` bytes each, then answer `n`."),
        Tool::typed_with_context("sleep", sleep)
            .description("Sleep `ms` milliseconds, reporting progress every 10 ms."),
        Tool::text("panic", |_: Empty| async move {
            panic!("the panic tool panicked, as asked");
        })
        .description("Panic."),
        Tool::dynamic(
            "bad_output",
            json!({"type": "object", "additionalProperties": false}),
            Some(json!({
                "type": "object",
                "properties": {"answer": {"type": "integer"}},
                "required": ["answer"],
            })),
            |_: ToolContext, _: Value| async move {
                Ok(ToolOutput::structured(
                    json!({"wrong": "secret-invalid-output-marker"}),
                ))
            },
        )
        .description("Declares `{answer: integer}` but returns something else."),
        Tool::typed("numbers", |input: NumbersInput| async move {
            Ok::<_, ToolError>((0..input.n).collect::<Vec<u64>>())
        })
        .description("The integers 0..n, as a bare array."),
        Tool::typed("points", |input: NumbersInput| async move {
            Ok::<_, ToolError>(
                (0..input.n)
                    .map(|x| Point { x, y: 2 * x })
                    .collect::<Vec<Point>>(),
            )
        })
        .description("The points (x, 2x) for x in 0..n: a bare array whose schema uses `$defs`."),
        Tool::typed("constrained", |input: ConstrainedInput| async move {
            Ok::<_, ToolError>(Repeated {
                repeated: input.name.repeat(usize::try_from(input.count).unwrap_or(1)),
            })
        })
        .description("Repeat `name` (lowercase, at most 16) `count` (1..=10) times."),
    ];
    for i in 0..12 {
        tools.push(
            Tool::dynamic(
                format!("noop_{i:02}"),
                json!({"type": "object"}),
                None,
                |_: ToolContext, _: Value| async move { Ok(ToolOutput::text("ok")) },
            )
            .description("Do nothing."),
        );
    }
    tools
}

/// A setting from `--flag VALUE` or `--flag=VALUE`, else the environment.
fn setting(args: &[String], flag: &str, env: &str) -> Result<Option<u64>, String> {
    let mut found = None;
    let mut i = 0;
    while i < args.len() {
        let arg = &args[i];
        if arg == flag {
            found = Some(
                args.get(i + 1)
                    .cloned()
                    .ok_or(format!("{flag} needs a value"))?,
            );
            i += 1;
        } else if let Some(value) = arg.strip_prefix(flag).and_then(|v| v.strip_prefix('=')) {
            found = Some(value.to_owned());
        }
        i += 1;
    }
    let found = found.or_else(|| std::env::var(env).ok());
    found
        .map(|value| {
            value
                .parse::<u64>()
                .map_err(|e| format!("{flag}: {value:?}: {e}"))
        })
        .transpose()
}

fn options() -> Result<ServerOptions, String> {
    const FLAGS: [&str; 9] = [
        "--page-size",
        "--call-timeout-ms",
        "--max-message-bytes",
        "--write-stall-timeout-ms",
        "--current-thread",
        "--asking-surface",
        "--changing",
        "--url-elicitation",
        "--roots-at-start",
    ];
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|arg| {
            ![
                "--current-thread",
                "--asking-surface",
                "--changing",
                "--url-elicitation",
                "--roots-at-start",
            ]
            .contains(&arg.as_str())
        })
        .collect();
    if let Some(unknown) = args
        .iter()
        .filter(|arg| arg.starts_with("--"))
        .find(|arg| !FLAGS.iter().any(|flag| arg.starts_with(flag)))
    {
        return Err(format!("unknown flag {unknown}"));
    }
    let mut options = ServerOptions::default();
    if let Some(size) = setting(&args, "--page-size", "TEST_SERVER_PAGE_SIZE")? {
        options.page_size = usize::try_from(size).map_err(|e| e.to_string())?;
    }
    if let Some(ms) = setting(&args, "--call-timeout-ms", "TEST_SERVER_CALL_TIMEOUT_MS")? {
        options.call_timeout = Some(Duration::from_millis(ms));
    }
    if let Some(bytes) = setting(
        &args,
        "--max-message-bytes",
        "TEST_SERVER_MAX_MESSAGE_BYTES",
    )? {
        options.max_message_bytes = usize::try_from(bytes).map_err(|e| e.to_string())?;
    }
    if let Some(ms) = setting(
        &args,
        "--write-stall-timeout-ms",
        "TEST_SERVER_WRITE_STALL_TIMEOUT_MS",
    )? {
        options.write_stall_timeout = Some(Duration::from_millis(ms));
    }
    Ok(options)
}

fn main() -> ExitCode {
    let current_thread = std::env::args().any(|arg| arg == "--current-thread");
    let mut builder = if current_thread {
        tokio::runtime::Builder::new_current_thread()
    } else {
        tokio::runtime::Builder::new_multi_thread()
    };
    match builder.enable_all().build() {
        Ok(runtime) => runtime.block_on(serve()),
        Err(error) => {
            eprintln!("test_server: cannot start the runtime: {error}");
            ExitCode::FAILURE
        }
    }
}

async fn serve() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .init();
    let options = match options() {
        Ok(options) => options,
        Err(error) => {
            eprintln!("test_server: {error}");
            return ExitCode::from(2);
        }
    };
    let mut builder = Server::builder("test_server", "0.0.1")
        .options(options)
        .tools(tools())
        .tools(toolshape_harness::asking::tools());
    if std::env::args().any(|arg| arg == "--asking-surface") {
        builder = builder
            .prompts(toolshape_harness::asking::prompts())
            .resources(toolshape_harness::asking::resources());
    }
    if std::env::args().any(|arg| arg == "--changing") {
        builder = toolshape_harness::changing::serve_changes(builder);
    }
    if std::env::args().any(|arg| arg == "--url-elicitation") {
        builder = toolshape_harness::url_elicitation::serve_url_elicitation(builder);
    }
    if std::env::args().any(|arg| arg == "--roots-at-start") {
        builder = toolshape_harness::early_roots::serve_roots_at_start(builder);
    }
    let built = builder.build();
    let server = match built {
        Ok(server) => server,
        Err(error) => {
            eprintln!("test_server: {error}");
            return ExitCode::FAILURE;
        }
    };
    match server.serve_stdio().await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("test_server: serving failed: {error}");
            ExitCode::FAILURE
        }
    }
}
