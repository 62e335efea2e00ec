#![allow(clippy::unwrap_used, clippy::expect_used)]
//! A server started through a wrapper (`sh -c`, as `npx` and `uvx` start
//! theirs) runs beside what the wrapper started: stopping the client stops
//! them all, whether it closes (the server exits at the end of its input,
//! the rest of its process group is told to stop) or is dropped (the group
//! is killed). Linux only: the test reads `/proc` (process groups are Unix).
#![cfg(target_os = "linux")]

mod client_common;

use std::path::Path;
use std::time::{Duration, Instant};

use toolshape::client::{Negotiation, ServerCommand, StderrMode};

use client_common::{connect, hostile_server_bin, options};

/// `sh` starting a `sleep` in the background (its pid written to
/// `pid_file`), then the hostile server: as its own process (`exec`) or as
/// a child the shell waits for.
fn wrapped(pid_file: &Path, exec: bool) -> ServerCommand {
    let script = if exec {
        r#"sleep 300 & echo $! > "$1"; exec "$2""#
    } else {
        r#"sleep 300 & echo $! > "$1"; "$2"; wait"#
    };
    ServerCommand::new("sh")
        .args([
            "-c".as_ref(),
            script.as_ref(),
            "sh".as_ref(),
            pid_file.as_os_str(),
            hostile_server_bin().as_os_str(),
        ])
        .stderr(StderrMode::Capture)
}

/// The pid the wrapper wrote.
fn background_pid(pid_file: &Path) -> u32 {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if let Ok(text) = std::fs::read_to_string(pid_file)
            && let Ok(pid) = text.trim().parse()
        {
            return pid;
        }
        assert!(Instant::now() < deadline, "the wrapper wrote no pid");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Whether `pid` still runs (a zombie waiting for its reaper does not).
fn runs(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat
            .rsplit_once(") ")
            .is_some_and(|(_, rest)| !rest.starts_with('Z')),
        Err(_) => false,
    }
}

async fn assert_stops(pid: u32) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while runs(pid) {
        assert!(
            Instant::now() < deadline,
            "the wrapper's other child {pid} still runs"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn closing_stops_what_the_wrapper_started() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("sleep.pid");
    let client = connect(wrapped(&pid_file, true), Negotiation::Auto, options()).await;
    let pid = background_pid(&pid_file);
    assert!(runs(pid));
    let status = client.close(Duration::from_secs(5)).await;
    // The server itself ended at the end of its input.
    assert!(status.is_some_and(|status| status.success()), "{status:?}");
    assert_stops(pid).await;
}

#[tokio::test]
async fn dropping_kills_the_wrapper_and_all_it_started() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("sleep.pid");
    let client = connect(wrapped(&pid_file, false), Negotiation::Auto, options()).await;
    let pid = background_pid(&pid_file);
    let server = client.server_pid().unwrap();
    assert!(runs(pid) && runs(server));
    drop(client);
    assert_stops(pid).await;
    assert_stops(server).await;
}
