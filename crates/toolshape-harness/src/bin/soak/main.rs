//! Soaks `toolshape serve` with exact accounting (`scripts/soak.sh` runs it).
//!
//! ```text
//! soak stdio    --server PATH [--calls N] [--window W]
//! soak http     --server PATH [--clients C] [--calls N] [--mode stateless|sessions]
//! soak sessions --server PATH [--count N] [--rounds R] [--idle-timeout SECONDS]
//! ```
//!
//! - `stdio`: N `count_lines` calls pipelined through one connection (at
//!   most W unanswered at once); every id must be answered exactly once with
//!   the right count; the server's RSS at the end is compared with its RSS
//!   after warm-up.
//! - `http`: C independent clients (the toolshape client, each its own
//!   connection) making N calls each, stateless 2026-07-28 or in 2025-11-25
//!   sessions; 0 lost and 0 mismatched; RSS after warm-up, at the end, peak.
//! - `sessions`: R rounds of N sessions opened (raw HTTP: initialize, one
//!   call) and abandoned; after each round, once they have expired, the RSS;
//!   at the end every abandoned session must be gone (404).
//!
//! The server works on a fresh folder of 64 files, `fNN.txt` holding NN+1
//! lines, so that every answer can be checked. One line of accounting per
//! soak goes to stdout; the exit status is non-zero when anything was lost,
//! duplicated or mismatched, or the RSS grew past `--max-growth-mib`
//! (default 32).

mod http;
mod sessions;
mod stdio;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{ExitCode, Stdio};
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

/// The files of the soak folder.
pub(crate) const FILES: usize = 64;

/// The expected `count_lines` of the file a call numbered `n` reads.
pub(crate) fn file_for(n: u64) -> (String, u64) {
    let index = n % FILES as u64;
    (format!("f{index:02}.txt"), index + 1)
}

/// A folder of [`FILES`] files under the system's temporary folder, removed on drop.
pub(crate) struct Folder(PathBuf);

impl Folder {
    fn create() -> std::io::Result<Folder> {
        let path = std::env::temp_dir().join(format!("toolshape-soak-{}", std::process::id()));
        std::fs::create_dir_all(&path)?;
        for index in 0..FILES {
            let text: String = (0..=index).map(|line| format!("line {line}\n")).collect();
            std::fs::write(path.join(format!("f{index:02}.txt")), text)?;
        }
        Ok(Folder(path))
    }

    pub(crate) fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for Folder {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The resident set of process `pid`, in KiB (Linux `/proc`).
pub(crate) fn rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|line| line.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

pub(crate) fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

/// Samples a process's RSS every 200 ms; keeps the peak.
pub(crate) struct PeakRss {
    peak: std::sync::Arc<std::sync::atomic::AtomicU64>,
    task: tokio::task::JoinHandle<()>,
}

impl PeakRss {
    pub(crate) fn watch(pid: u32) -> PeakRss {
        let peak = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
        let seen = std::sync::Arc::clone(&peak);
        let task = tokio::spawn(async move {
            while let Some(rss) = rss_kib(pid) {
                seen.fetch_max(rss, std::sync::atomic::Ordering::Relaxed);
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        });
        PeakRss { peak, task }
    }

    pub(crate) fn peak(&self) -> u64 {
        self.peak.load(std::sync::atomic::Ordering::Relaxed)
    }
}

impl Drop for PeakRss {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// `toolshape serve --http 127.0.0.1:0 ...` started, with the URL it serves.
pub(crate) struct HttpServer {
    pub(crate) child: Child,
    pub(crate) url: String,
    pub(crate) pid: u32,
}

impl HttpServer {
    pub(crate) async fn start(
        server: &Path,
        root: &Path,
        extra: &[&str],
    ) -> Result<HttpServer, String> {
        let mut child = Command::new(server)
            .arg("serve")
            .arg("--root")
            .arg(root)
            .args(["--http", "127.0.0.1:0"])
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", server.display()))?;
        let pid = child.id().ok_or("the server exited at once")?;
        let stderr = child.stderr.take().ok_or("no stderr pipe")?;
        let mut lines = BufReader::new(stderr).lines();
        let url = loop {
            let line = tokio::time::timeout(Duration::from_secs(30), lines.next_line())
                .await
                .map_err(|_| "the server did not say where it serves within 30 s")?
                .map_err(|e| e.to_string())?
                .ok_or("the server exited before serving")?;
            if let Some(url) = line.split("serving MCP on ").nth(1) {
                break url.trim().to_owned();
            }
        };
        // Keep draining its log so that it never blocks on stderr.
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        Ok(HttpServer { child, url, pid })
    }

    /// Stops it with SIGINT (a graceful shutdown) and waits, 10 s at most.
    pub(crate) async fn stop(mut self) -> String {
        let _ = Command::new("kill")
            .args(["-INT", &self.pid.to_string()])
            .status()
            .await;
        match tokio::time::timeout(Duration::from_secs(10), self.child.wait()).await {
            Ok(Ok(status)) => status.to_string(),
            _ => {
                let _ = self.child.kill().await;
                "did not stop within 10 s: killed".into()
            }
        }
    }
}

/// `--name value` options.
pub(crate) struct Options(HashMap<String, String>);

impl Options {
    fn parse(args: &[String]) -> Result<Options, String> {
        let mut options = HashMap::new();
        let mut args = args.iter();
        while let Some(arg) = args.next() {
            let name = arg
                .strip_prefix("--")
                .ok_or_else(|| format!("unexpected argument {arg:?}"))?;
            let value = args
                .next()
                .ok_or_else(|| format!("--{name} needs a value"))?;
            options.insert(name.to_owned(), value.clone());
        }
        Ok(Options(options))
    }

    pub(crate) fn number(&self, name: &str, default: u64) -> Result<u64, String> {
        self.0.get(name).map_or(Ok(default), |v| {
            v.parse().map_err(|e| format!("--{name}: {e}"))
        })
    }

    pub(crate) fn text(&self, name: &str) -> Option<&str> {
        self.0.get(name).map(String::as_str)
    }

    fn server(&self) -> Result<PathBuf, String> {
        self.text("server")
            .map(PathBuf::from)
            .ok_or_else(|| "--server PATH (the toolshape binary) is required".into())
    }
}

/// What a soak found: whether it passed, and its line of accounting.
pub(crate) struct Outcome {
    pub(crate) passed: bool,
    pub(crate) line: String,
}

async fn run(args: &[String]) -> Result<Outcome, String> {
    let (command, rest) = args
        .split_first()
        .ok_or("usage: soak stdio|http|sessions --server PATH [options]")?;
    let options = Options::parse(rest)?;
    let server = options.server()?;
    let folder = Folder::create().map_err(|e| format!("cannot create the soak folder: {e}"))?;
    match command.as_str() {
        "stdio" => stdio::soak(&server, folder.path(), &options).await,
        "http" => http::soak(&server, folder.path(), &options).await,
        "sessions" => sessions::soak(&server, folder.path(), &options).await,
        other => Err(format!("unknown soak {other:?}: stdio, http or sessions")),
    }
}

#[tokio::main]
async fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args).await {
        Ok(outcome) => {
            println!("{}", outcome.line);
            if outcome.passed {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
        Err(error) => {
            eprintln!("soak: {error}");
            ExitCode::from(2)
        }
    }
}
