#![allow(clippy::unwrap_used, clippy::expect_used)]
//! `toolshape bench` against `toolshape serve` (a real child process) when
//! calls fail: tool errors are measured and exit 1; a server that dies
//! mid-run stops the run at its first unanswered call (exit 4), the calls
//! before it measured, and one that stops answering at `--timeout`, timed
//! to its last answer; SIGTERM stops it with a report of what was measured
//! and its server child gone; fewer calls in flight than connections, or
//! a number of calls out of range, is a usage error.

mod http_serve;

use std::process::{Command, Stdio};

use serde_json::Value;

use http_serve::{TOOLSHAPE, children, ended, signal, toolshape, wait_exit, wait_until};

/// The report `bench --json` printed.
fn report(stdout: &[u8]) -> Value {
    serde_json::from_slice(stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(stdout)))
}

/// `toolshape bench --json` of `count_lines` on `path`, `calls` times,
/// against `toolshape serve` on this crate's folder.
fn bench(path: &str, calls: &str) -> Command {
    bench_with(path, calls, &[])
}

/// [`bench`] with `extra` options.
fn bench_with(path: &str, calls: &str, extra: &[&str]) -> Command {
    let mut command = Command::new(TOOLSHAPE);
    command
        .args(["bench", "--json", "--quiet-server", "--tool", "count_lines"])
        .args(extra)
        .args([
            "--args",
            &format!(r#"{{"path":"{path}"}}"#),
            "--calls",
            calls,
        ])
        .args(["--", TOOLSHAPE, "serve", "--no-watch", "--root"])
        .arg(env!("CARGO_MANIFEST_DIR"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    command
}

#[test]
fn tool_errors_are_measured_and_exit_1() {
    let output = bench("nowhere.txt", "200").output().unwrap();
    assert_eq!(output.status.code(), Some(1));
    let report = report(&output.stdout);
    assert_eq!(
        (&report["calls"], &report["failures"], &report["unanswered"]),
        (&Value::from(200), &Value::from(200), &Value::from(0)),
        "{report}"
    );
    assert!(report["stopped"].is_null(), "{report}");
}

/// Starts an endless run; waits until its server child is there.
#[cfg(target_os = "linux")]
fn endless_run() -> (std::process::Child, u32) {
    endless_run_with(&[])
}

/// [`endless_run`] with `extra` options.
#[cfg(target_os = "linux")]
fn endless_run_with(extra: &[&str]) -> (std::process::Child, u32) {
    let run = bench_with("Cargo.toml", "1000000000", extra)
        .spawn()
        .unwrap();
    let mut server = None;
    wait_until("the server child to start", || {
        server = children(run.id()).first().copied();
        server.map(|_| ()).ok_or_else(|| "no child yet".to_owned())
    });
    // Some calls made first.
    std::thread::sleep(std::time::Duration::from_millis(1500));
    (run, server.unwrap())
}

#[cfg(target_os = "linux")]
#[test]
fn a_server_that_dies_stops_the_run_and_a_signal_reports_it() {
    use std::io::Read as _;
    let read = |run: &mut std::process::Child| {
        let mut stdout = Vec::new();
        run.stdout.take().unwrap().read_to_end(&mut stdout).unwrap();
        report(&stdout)
    };

    let (mut run, server) = endless_run();
    let killed = Command::new("kill")
        .args(["-KILL", &server.to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let exited = wait_exit(&mut run);
    assert_eq!(exited.code(), Some(4));
    let died = read(&mut run);
    assert!(died["calls"].as_u64().unwrap() > 0, "{died}");
    assert!(died["unanswered"].as_u64().unwrap() >= 1, "{died}");
    let reason = died["stopped"].as_str().unwrap_or_default();
    assert!(reason.contains("no answer"), "{died}");

    let (mut run, server) = endless_run();
    signal(&run, "TERM");
    let exited = wait_exit(&mut run);
    assert_eq!(exited.code(), Some(143));
    let stopped = read(&mut run);
    assert!(stopped["calls"].as_u64().unwrap() > 0, "{stopped}");
    assert_eq!(stopped["stopped"], "SIGTERM came", "{stopped}");
    assert!(stopped["p50_ms"].as_f64().unwrap() > 0.0, "{stopped}");
    wait_until("the server child to end", || {
        ended(server)
            .then_some(())
            .ok_or_else(|| format!("{server} still runs"))
    });
}

/// A server that stops answering (here stopped by `SIGSTOP`): the run
/// stops at `--timeout`, and its time ends at the last answer, not with the
/// wait for the call that got none.
#[cfg(target_os = "linux")]
#[test]
fn a_run_that_waits_out_its_timeout_is_timed_to_its_last_answer() {
    let began = std::time::Instant::now();
    let (mut run, server) = endless_run_with(&["--timeout", "3"]);
    let sent = Command::new("kill")
        .args(["-STOP", &server.to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let stopped_after = began.elapsed().as_secs_f64();
    let exited = wait_exit(&mut run);
    // (`bench` ends its server, stopped or not.)
    wait_until("the server child to end", || {
        ended(server)
            .then_some(())
            .ok_or_else(|| format!("{server} still runs"))
    });
    assert_eq!(exited.code(), Some(4));
    let mut stdout = Vec::new();
    std::io::Read::read_to_end(&mut run.stdout.take().unwrap(), &mut stdout).unwrap();
    let report = report(&stdout);
    assert!(report["unanswered"].as_u64().unwrap() >= 1, "{report}");
    let seconds = report["seconds"].as_f64().unwrap();
    assert!(
        seconds < stopped_after,
        "{seconds} s reported, the server stopped {stopped_after} s after the start: {report}"
    );
    let answered = report["calls"].as_u64().unwrap() - report["unanswered"].as_u64().unwrap();
    assert!(answered > 0, "{report}");
}

/// The processes a server starts are counted however deep: here the
/// server measured is a shell that waits for a shell that waits for
/// `toolshape serve`, which does the work.
#[cfg(target_os = "linux")]
#[test]
fn a_server_behind_two_shells_is_counted_among_the_children() {
    let serve = format!(
        r#""$0" serve --no-watch --root '{}'; true"#,
        env!("CARGO_MANIFEST_DIR")
    );
    let inner = r#"sh -c "$1" "$0"; true"#;
    let output = Command::new(TOOLSHAPE)
        .args(["bench", "--json", "--quiet-server", "--tool", "count_lines"])
        .args(["--args", r#"{"path":"Cargo.toml"}"#, "--calls", "3000"])
        .args(["--", "sh", "-c", inner, TOOLSHAPE, &serve])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let report = report(&output.stdout);
    let children = report["children_cpu_us_per_call"].as_f64().unwrap_or(0.0);
    assert!(children > 1.0, "{report}");
}

#[test]
fn no_calls_or_too_many_is_a_usage_error() {
    for calls in ["0", "1000000001"] {
        let output = toolshape(&["bench", "--tool", "x", "--calls", calls, "--", "true"]);
        assert_eq!(output.status.code(), Some(2), "--calls {calls}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains("--calls"), "{stderr}");
    }
}

#[test]
fn fewer_calls_in_flight_than_connections_is_a_usage_error() {
    let output = toolshape(&[
        "bench",
        "--tool",
        "x",
        "--clients",
        "4",
        "--concurrency",
        "2",
        "--",
        "true",
    ]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("--clients 4"), "{stderr}");
}

#[cfg(target_os = "linux")]
#[test]
fn an_unreadable_server_pid_is_named_and_the_others_still_counted() {
    let root = env!("CARGO_MANIFEST_DIR");
    let output = toolshape(&[
        "bench",
        "--tool",
        "count_lines",
        "--args",
        r#"{"path":"Cargo.toml"}"#,
        "--calls",
        "50",
        "--server-pid",
        "4194303",
        "--",
        TOOLSHAPE,
        "serve",
        "--no-watch",
        "--root",
        root,
    ]);
    assert_eq!(output.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("process 4194303"), "{stderr}");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("server CPU"), "{stdout}");
}
