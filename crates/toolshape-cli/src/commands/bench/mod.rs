//! `toolshape bench`: a load generator. Many validated calls over one
//! connection, with a progress bar and latency percentiles.

mod cpu;

use std::process::ExitCode;
use std::sync::atomic::{AtomicU8, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde::Serialize;

use cpu::{CPU_TICK_SECONDS, cpu_of, descendants_cpu, descendants_used, readable};

use super::call::parse_arguments;
use super::connect::{ServerArgs, exit, fail};

/// The most calls one run makes.
const MAX_CALLS: u64 = 1_000_000_000;

/// The most latencies a worker makes room for at its start (more grow the
/// list as they come).
const RESERVED_LATENCIES: usize = 1 << 16;

/// Arguments of `toolshape bench`.
#[derive(Debug, Args)]
pub(crate) struct BenchArgs {
    /// How many calls to make. A call that gets no answer (the connection
    /// lost, or --timeout passed) stops the run; what was measured is
    /// reported, as on Ctrl-C or SIGTERM.
    #[arg(long, value_name = "N", default_value_t = 10_000,
          value_parser = clap::value_parser!(u64).range(1..=MAX_CALLS))]
    calls: u64,
    /// How many calls are in flight at once (at least --clients).
    #[arg(long, value_name = "C", default_value_t = 8,
          value_parser = clap::value_parser!(u32).range(1..=65_536))]
    concurrency: u32,
    /// How many independent connections share the load (each its own server
    /// process over stdio, or its own HTTP client over --url or --otc).
    #[arg(long, value_name = "N", default_value_t = 1,
          value_parser = clap::value_parser!(u32).range(1..=1024))]
    clients: u32,
    /// The tool to call.
    #[arg(long, value_name = "NAME")]
    tool: String,
    /// Its arguments, as a JSON object.
    #[arg(long, value_name = "JSON", default_value = "{}")]
    args: String,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
    /// Also count the CPU time of this process (a server reached over --url or --otc)
    /// in the report's server CPU per call (repeatable; Linux only).
    #[arg(long, value_name = "PID")]
    server_pid: Vec<u32>,
    #[command(flatten)]
    server: ServerArgs,
}

/// What one run measured.
#[derive(Debug, Serialize)]
pub(crate) struct Report {
    protocol: String,
    server: String,
    tool: String,
    /// Calls answered: the ones measured (latency, calls/s, CPU per call).
    calls: usize,
    concurrency: u32,
    clients: usize,
    /// Answered calls that failed: a tool error, an output that breaks its
    /// schema, an error response.
    failures: usize,
    /// Calls that got no answer (the connection lost, or the timeout
    /// passed): not measured; the first one stops the run.
    unanswered: usize,
    /// Why the run stopped before its last call, when it did.
    stopped: Option<String>,
    /// Results whose structured content differs from the warm-up call's
    /// (the benchmark tools are deterministic).
    mismatches: usize,
    seconds: f64,
    calls_per_second: f64,
    p50_ms: f64,
    p90_ms: f64,
    p99_ms: f64,
    max_ms: f64,
    /// CPU time the server processes spent per call during the run, in
    /// microseconds (stdio servers this command started, and the processes
    /// named with --server-pid; Linux only).
    server_cpu_us_per_call: Option<f64>,
    /// CPU time the processes the servers started spent per call during
    /// the run, in microseconds: the server behind a proxy or relay that
    /// this command started or named, its own children, and those that
    /// ended and were waited for (Linux only; none when they have none).
    children_cpu_us_per_call: Option<f64>,
}

/// One connection the load goes through: MCP, or OTC (`--otc`).
#[derive(Clone)]
enum Caller {
    Mcp(toolshape::client::Client),
    Otc(toolshape_otc::OtcClient),
}

/// What one call gave: its structured value (MCP `structuredContent`,
/// OTC `value`), or that the tool failed, or why the call did not complete
/// (with its exit code, and whether an answer came at all).
enum Called {
    Value(Option<serde_json::Value>),
    ToolFailed,
    Error {
        message: String,
        code: u8,
        answered: bool,
    },
}

impl Called {
    fn mcp_error(error: &toolshape::client::ClientError) -> Called {
        use toolshape::client::{ClientErrorKind as Kind, TransportError};
        // An HTTP error status is the server's answer; no answer at all, or
        // none in time, is not.
        let answered = match error.kind() {
            // A gateway's 502, 503 or 504: the server was not reached.
            Kind::Transport(transport) if transport.is_unreachable() => false,
            Kind::Transport(TransportError::Status { .. }) => true,
            Kind::Transport(_) | Kind::Timeout(_) | Kind::Cancelled => false,
            _ => true,
        };
        Called::Error {
            message: crate::output::described(error),
            code: super::connect::exit_code(error),
            answered,
        }
    }

    fn otc_error(error: &toolshape_otc::OtcError) -> Called {
        use toolshape_otc::OtcErrorKind as Kind;
        let answered = !matches!(error.kind(), Kind::Transport(_) | Kind::Timeout(_));
        Called::Error {
            message: crate::output::described(error),
            code: super::otc::exit_code(error),
            answered,
        }
    }
}

impl Caller {
    async fn call(
        &self,
        tool: &str,
        arguments: &serde_json::Map<String, serde_json::Value>,
    ) -> Called {
        match self {
            Caller::Mcp(client) => match client.call_tool(tool, Some(arguments.clone())).await {
                Ok(result) if result.is_error => Called::ToolFailed,
                Ok(result) => Called::Value(result.structured),
                Err(error) => Called::mcp_error(&error),
            },
            Caller::Otc(client) => match client.call_tool(tool, arguments.clone()).await {
                Ok(response) if !response.success() => Called::ToolFailed,
                Ok(response) => Called::Value(response.value().cloned()),
                Err(error) => Called::otc_error(&error),
            },
        }
    }

    fn server_pid(&self) -> Option<u32> {
        match self {
            Caller::Mcp(client) => client.server_pid(),
            Caller::Otc(_) => None,
        }
    }

    async fn close(&self) {
        if let Caller::Mcp(client) = self {
            client.close(Duration::from_secs(2)).await;
        }
    }
}

/// The servers: the children this command started and the processes named
/// on the command line.
fn servers(clients: &[Caller], named: &[u32]) -> Vec<u32> {
    let started = clients.iter().filter_map(Caller::server_pid);
    started.chain(named.iter().copied()).collect()
}

fn percentile(sorted: &[Duration], fraction: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = ((sorted.len() as f64) * fraction).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1].as_secs_f64() * 1000.0
}

fn progress_bar(calls: usize, hidden: bool) -> ProgressBar {
    if hidden {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(calls as u64), ProgressDrawTarget::stderr());
    if let Ok(style) =
        ProgressStyle::with_template("{bar:40} {pos}/{len} calls {per_sec} eta {eta}")
    {
        bar.set_style(style);
    }
    bar
}

/// What the workers share while they run.
#[derive(Default)]
struct Tally {
    next: AtomicUsize,
    failures: AtomicUsize,
    unanswered: AtomicUsize,
    mismatches: AtomicUsize,
    /// The most severe exit code a call gave (4 over 3 over 1).
    worst: AtomicU8,
    /// Why the run stopped early; set once, read by every worker.
    stopped: OnceLock<String>,
    /// When the last answer came, in nanoseconds from the run's start: the
    /// run's time (a call that never got its answer is not measured, nor
    /// the wait for it).
    last_answer_ns: AtomicU64,
}

impl Tally {
    fn failed(&self, code: u8) {
        self.worst.fetch_max(code, Ordering::Relaxed);
    }

    fn stop(&self, reason: String) {
        let _ = self.stopped.set(reason);
    }
}

pub(crate) async fn run(args: BenchArgs) -> ExitCode {
    if args.concurrency < args.clients {
        return fail(
            "bench",
            (
                exit::USAGE,
                format!(
                    "--concurrency {} is below --clients {}: each connection needs a call in flight",
                    args.concurrency, args.clients
                ),
            ),
        );
    }
    let arguments = match parse_arguments(&args.args) {
        Ok(arguments) => arguments,
        Err(failure) => return fail("bench", failure),
    };
    // Watched from here on: a signal while connecting stops the command
    // (its server children killed as their handles go), as during the run.
    let mut signals = super::signals::StopSignals::watch();
    let (clients, expected) = tokio::select! {
        connected = connect_all(&args, &arguments) => match connected {
            Ok(connected) => connected,
            Err(failure) => return fail("bench", failure),
        },
        signal = signals.next() => return super::signals::exit_code(signal),
    };
    let (expected, warm_up_mismatches) = expected;
    let expected = Arc::new(expected);
    let tally = Arc::new(Tally::default());
    tally
        .mismatches
        .fetch_add(warm_up_mismatches, Ordering::Relaxed);
    let calls = usize::try_from(args.calls).unwrap_or(usize::MAX);
    let bar = progress_bar(calls, args.json);
    // Read before and after the run only: nothing polls while it runs.
    let servers = readable(servers(&clients, &args.server_pid));
    let cpu_before = cpu_of(&servers);
    let children_before = descendants_cpu(&servers);
    let started = Instant::now();
    let mut workers = tokio::task::JoinSet::new();
    // Each worker's latencies, kept where a stop by signal can still read them.
    let mut measured = Vec::new();
    for worker in 0..args.concurrency as usize {
        let client = clients[worker % clients.len()].clone();
        let (arguments, tool) = (arguments.clone(), args.tool.clone());
        let (expected, tally, bar) = (Arc::clone(&expected), Arc::clone(&tally), bar.clone());
        let share = calls / args.concurrency as usize + 1;
        let latencies = Arc::new(Mutex::new(Vec::with_capacity(
            share.min(RESERVED_LATENCIES),
        )));
        measured.push(Arc::clone(&latencies));
        workers.spawn(async move {
            while tally.stopped.get().is_none()
                && tally.next.fetch_add(1, Ordering::Relaxed) < calls
            {
                let start = Instant::now();
                let outcome = client.call(&tool, &arguments).await;
                let took = start.elapsed();
                match outcome {
                    Called::Value(value) => {
                        if (*expected).as_ref().is_some_and(|first| value != *first) {
                            tally.mismatches.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                    Called::ToolFailed => {
                        tally.failures.fetch_add(1, Ordering::Relaxed);
                        tally.failed(exit::TOOL_ERROR);
                    }
                    Called::Error {
                        message,
                        code,
                        answered: true,
                    } => {
                        if tally.failures.fetch_add(1, Ordering::Relaxed) == 0 {
                            tracing::warn!(error = %message, "a call failed");
                        }
                        tally.failed(code);
                    }
                    Called::Error {
                        message,
                        code,
                        answered: false,
                    } => {
                        tally.unanswered.fetch_add(1, Ordering::Relaxed);
                        tally.failed(code);
                        tally.stop(format!("a call got no answer: {message}"));
                        continue;
                    }
                }
                latencies
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .push(took);
                let answered_at = u64::try_from(started.elapsed().as_nanos()).unwrap_or(u64::MAX);
                tally
                    .last_answer_ns
                    .fetch_max(answered_at, Ordering::Relaxed);
                bar.inc(1);
            }
        });
    }
    let signalled = tokio::select! {
        () = async { while workers.join_next().await.is_some() {} } => None,
        signal = signals.next() => {
            tally.stop(format!("{signal} came"));
            // The calls in flight are dropped (each cancelled).
            workers.abort_all();
            while workers.join_next().await.is_some() {}
            Some(signal)
        }
    };
    // Up to the last answer: a worker that waited out --timeout for a call
    // that never got one does not stretch the run.
    let elapsed = match tally.last_answer_ns.load(Ordering::Relaxed) {
        0 => started.elapsed(),
        last => Duration::from_nanos(last),
    };
    let cpu_used = cpu_of(&servers)
        .zip(cpu_before)
        .map(|(after, before)| after - before);
    let children_used = descendants_used(children_before, descendants_cpu(&servers));
    bar.finish_and_clear();
    let (protocol, server) = match &clients[0] {
        Caller::Mcp(client) => (
            client.protocol_version().to_string(),
            client
                .server_info()
                .map(|i| format!("{} {}", i.name, i.version))
                .unwrap_or_default(),
        ),
        Caller::Otc(client) => ("otc-1.0".to_owned(), client.base_url().to_owned()),
    };

    let mut latencies: Vec<Duration> = measured
        .iter()
        .flat_map(|kept| std::mem::take(&mut *kept.lock().unwrap_or_else(PoisonError::into_inner)))
        .collect();
    latencies.sort_unstable();
    let answered = latencies.len();
    let per_call = |seconds: f64| seconds * 1e6 / answered.max(1) as f64;
    let report = Report {
        protocol,
        server,
        tool: args.tool.clone(),
        calls: answered,
        concurrency: args.concurrency,
        clients: clients.len(),
        failures: tally.failures.load(Ordering::Relaxed),
        unanswered: tally.unanswered.load(Ordering::Relaxed),
        stopped: tally.stopped.get().cloned(),
        mismatches: tally.mismatches.load(Ordering::Relaxed),
        seconds: elapsed.as_secs_f64(),
        calls_per_second: answered as f64 / elapsed.as_secs_f64().max(f64::EPSILON),
        p50_ms: percentile(&latencies, 0.50),
        p90_ms: percentile(&latencies, 0.90),
        p99_ms: percentile(&latencies, 0.99),
        max_ms: percentile(&latencies, 1.0),
        server_cpu_us_per_call: cpu_used.map(per_call),
        children_cpu_us_per_call: children_used.map(per_call),
    };
    // Printed before the connections close (which may take seconds each):
    // a signal while they close loses nothing.
    print_report(&report, args.json, cpu_used);
    let closed = close_all(&clients);
    // A signal while closing stops at once (the children killed as their
    // handles go).
    tokio::select! {
        () = closed => {}
        signal = signals.next() => return super::signals::exit_code(signal),
    }
    if let Some(signal) = signalled {
        return super::signals::exit_code(signal);
    }
    let mut code = tally.worst.load(Ordering::Relaxed);
    if report.mismatches > 0 {
        code = code.max(exit::VALIDATION);
    }
    ExitCode::from(code)
}

/// Every connection closed at once.
async fn close_all(clients: &[Caller]) {
    let mut closing = tokio::task::JoinSet::new();
    for client in clients {
        let client = client.clone();
        closing.spawn(async move { client.close().await });
    }
    while closing.join_next().await.is_some() {}
}

/// The structured value later calls are compared with (`None`: not known,
/// no warm-up call gave a value), and how many warm-up values differed
/// from it.
type Expected = (Option<Option<serde_json::Value>>, usize);

/// Connects `--clients` times, each connection warmed up (the listing, the
/// schema compile and one call, outside the measurement); the first
/// warm-up value is the one later calls are compared with.
async fn connect_all(
    args: &BenchArgs,
    arguments: &serde_json::Map<String, serde_json::Value>,
) -> Result<(Vec<Caller>, Expected), (u8, String)> {
    let mut clients = Vec::with_capacity(args.clients as usize);
    let (mut expected, mut differed) = (None, 0);
    for _ in 0..args.clients {
        let client = match &args.server.otc {
            Some(url) => super::otc::client(url, args.server.mcp.timeout).map(Caller::Otc)?,
            None => Caller::Mcp(args.server.connect().await?),
        };
        match client.call(&args.tool, arguments).await {
            Called::Value(value) => match &expected {
                None => expected = Some(value),
                Some(first) if *first != value => differed += 1,
                Some(_) => {}
            },
            Called::ToolFailed => {}
            Called::Error { message, code, .. } => {
                client.close().await;
                return Err((code, format!("warm-up call failed: {message}")));
            }
        }
        clients.push(client);
    }
    Ok((clients, (expected, differed)))
}

fn print_report(report: &Report, json: bool, cpu_seconds: Option<f64>) {
    if json {
        outln!("{}", crate::output::json_line(report));
        return;
    }
    outln!(
        "{} calls of {} to {} (protocol {}), concurrency {} over {} connection(s): \
         {} failed, {} unanswered, {} mismatched",
        report.calls,
        crate::output::shown(&report.tool),
        crate::output::shown(&report.server),
        report.protocol,
        report.concurrency,
        report.clients,
        report.failures,
        report.unanswered,
        report.mismatches,
    );
    if let Some(reason) = &report.stopped {
        outln!("stopped early: {}", crate::output::shown(reason));
    }
    outln!(
        "{:.0} calls/s   p50 {:.3} ms   p90 {:.3} ms   p99 {:.3} ms   max {:.3} ms",
        report.calls_per_second,
        report.p50_ms,
        report.p90_ms,
        report.p99_ms,
        report.max_ms
    );
    // Counted in ticks of 10 ms: under a second of it, the figure is rough.
    let rough = cpu_seconds.is_some_and(|seconds| seconds < 100.0 * CPU_TICK_SECONDS);
    let note = if rough {
        " (from under 100 ticks of 10 ms: make more calls for a precise figure)"
    } else {
        ""
    };
    if let Some(cpu) = report.server_cpu_us_per_call {
        outln!("server CPU {cpu:.1} µs per call{note}");
    }
    if let Some(cpu) = report.children_cpu_us_per_call {
        outln!("its child processes' CPU {cpu:.1} µs per call");
    }
}
