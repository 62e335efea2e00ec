#![allow(clippy::unwrap_used, clippy::expect_used)]
//! How `toolshape proxy` stops and says it is healthy, as users run it (a
//! child process in front of `toolshape serve`, another child): Ctrl-C and
//! SIGTERM over stdio, a call in flight then answered, the HTTP front's drain with `/health` saying 503, a
//! stdio front beside it not cutting the drain short, and `/health` while
//! the upstream is down.

#[path = "../../toolshape-harness/tests/client_common/mod.rs"]
mod client_common;
mod http_serve;

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};
use tempfile::TempDir;
use toolshape::client::Client;

use client_common::{options, toolshape_bin};
use http_serve::HttpServe;

/// A folder for `toolshape serve` to serve.
fn fixture() -> TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("three.txt"), "one\ntwo\nthree\n").unwrap();
    dir
}

fn arguments(value: Value) -> Option<Map<String, Value>> {
    value.as_object().cloned()
}

/// A stdio proxy stops on Ctrl-C (SIGINT) and on SIGTERM, closing its
/// upstream (SIGINT was ignored before: the signal handler of the HTTP
/// fronts held it, and the stdio front waited for the end of its input);
/// so does `toolshape serve` over stdio, exiting 0 (it was ended by the
/// signal before, with whatever it was answering).
#[cfg(unix)]
#[test]
fn a_stdio_proxy_stops_on_sigint_and_sigterm() {
    use std::io::{BufRead, BufReader, Write};
    use std::process::{Command, Stdio};

    let root = fixture();
    let serve = toolshape_bin();
    let root_path = root.path().to_str().unwrap();
    let proxied = [
        "proxy",
        "--",
        serve.to_str().unwrap(),
        "serve",
        "--root",
        root_path,
    ];
    let direct = ["serve", "--root", root_path];
    for (name, args) in [
        ("INT", &proxied[..]),
        ("TERM", &proxied[..]),
        ("INT", &direct[..]),
        ("TERM", &direct[..]),
    ] {
        let mut proxy = Command::new(&serve)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // It serves: a handshake is answered. Its input stays open.
        let mut input = proxy.stdin.take().unwrap();
        let hello = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"}}});
        writeln!(input, "{hello}").unwrap();
        let output = proxy.stdout.take().unwrap();
        let (line, answered) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut first = String::new();
            let _ = BufReader::new(output).read_line(&mut first);
            let _ = line.send(first);
        });
        let first = answered.recv_timeout(http_serve::WAIT).unwrap();
        assert!(first.contains("\"protocolVersion\""), "{first}");
        http_serve::signal(&proxy, name);
        let status = http_serve::wait_exit(&mut proxy);
        assert_eq!(status.code(), Some(0), "SIG{name}, {args:?}: {status:?}");
        drop(input);
    }
}

/// A stdio proxy stopped by a signal while a call is in flight answers it
/// (an error saying the server is stopping, the request's id kept), tells
/// its upstream the call is cancelled, and exits 0: no request of the
/// client's goes unanswered (before, the process ended without a word).
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_in_flight_at_the_stop_signal_is_answered() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

    /// Sets its flag when dropped: the upstream's handler was ended.
    struct Dropped(Arc<AtomicBool>);
    impl Drop for Dropped {
        fn drop(&mut self) {
            self.0.store(true, Ordering::SeqCst);
        }
    }
    let (started, ended) = (Arc::new(tokio::sync::Notify::new()), Arc::default());
    let (starts, ends) = (Arc::clone(&started), Arc::clone(&ended));
    let slow = toolshape::Tool::dynamic("slow", json!({"type": "object"}), None, move |_, _| {
        let (starts, guard) = (Arc::clone(&starts), Dropped(Arc::clone(&ends)));
        async move {
            let _guard = guard;
            starts.notify_one();
            tokio::time::sleep(Duration::from_secs(3600)).await;
            Ok::<_, toolshape::ToolError>(toolshape::tool::ToolOutput::text("late"))
        }
    });
    let upstream = toolshape::Server::builder("slow", "1")
        .tool(slow)
        .build()
        .unwrap();
    let url = client_common::serve_over_http(upstream).await;

    let mut proxy = tokio::process::Command::new(toolshape_bin())
        .args(["proxy", "--url", &url])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut input = proxy.stdin.take().unwrap();
    let mut lines = BufReader::new(proxy.stdout.take().unwrap()).lines();
    for message in [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": "call-1", "method": "tools/call",
               "params": {"name": "slow", "arguments": {}}}),
    ] {
        input
            .write_all(format!("{message}\n").as_bytes())
            .await
            .unwrap();
    }
    input.flush().await.unwrap();
    let hello = tokio::time::timeout(http_serve::WAIT, lines.next_line()).await;
    assert!(
        format!("{hello:?}").contains("protocolVersion"),
        "{hello:?}"
    );
    tokio::time::timeout(http_serve::WAIT, started.notified())
        .await
        .expect("the call reached the upstream");

    let pid = proxy.id().unwrap().to_string();
    let sent = std::process::Command::new("kill")
        .args(["-TERM", &pid])
        .status();
    assert!(sent.unwrap().success());
    let answer = tokio::time::timeout(http_serve::WAIT, lines.next_line())
        .await
        .expect("an answer before the exit")
        .unwrap()
        .expect("a line, not the end of the output");
    let answer: Value = serde_json::from_str(&answer).unwrap();
    assert_eq!(answer["id"], "call-1", "{answer}");
    assert_eq!(answer["error"]["code"], -32603, "{answer}");
    let message = answer["error"]["message"].as_str().unwrap();
    assert!(message.contains("stopping"), "{message}");
    let status = tokio::time::timeout(http_serve::WAIT, proxy.wait()).await;
    assert_eq!(status.unwrap().unwrap().code(), Some(0));
    // Nothing else was written: one answer per request.
    assert_eq!(lines.next_line().await.unwrap(), None);
    http_serve::wait_until("the upstream's handler ended", || {
        if ended.load(Ordering::SeqCst) {
            Ok(())
        } else {
            Err("still running".into())
        }
    });
    drop(input);
}

/// The proxy's HTTP front answers `GET /health`, and on SIGTERM says 503
/// while it drains (`--drain`), still serving, then exits; a stdio front
/// beside it (its input still open) does not cut the drain short.
#[cfg(unix)]
#[tokio::test]
async fn the_http_front_drains_on_sigterm_with_health_saying_so() {
    let root = fixture();
    let serve = toolshape_bin();
    let (serve, root_path) = (serve.to_str().unwrap(), root.path().to_str().unwrap());
    let mut proxy = HttpServe::run_with_input(
        &[
            "proxy",
            "--stdio",
            "--http",
            "127.0.0.1:0",
            "--stateless",
            "--drain",
            "8",
            "--",
            serve,
            "serve",
            "--root",
            root_path,
        ],
        std::process::Stdio::piped(),
    );
    let address = proxy.address.clone();
    let health = move || http_serve::health(&address);
    let probe = health.clone();
    let (status, body) = tokio::task::spawn_blocking(probe).await.unwrap();
    assert_eq!((status, body.as_str()), (200, r#"{"status":"ok"}"#));
    let signalled = Instant::now();
    http_serve::signal(&proxy.child, "TERM");
    let probe = health.clone();
    tokio::task::spawn_blocking(move || {
        http_serve::wait_until("/health answering 503", || match probe() {
            (503, _) => Ok(()),
            other => Err(format!("{other:?} at {:?}", signalled.elapsed())),
        });
    })
    .await
    .unwrap();
    // Still served while draining.
    let client = Client::builder()
        .options(options())
        .connect_http(&proxy.url)
        .await
        .unwrap();
    let counted = client
        .call_tool("count_lines", arguments(json!({"path": "three.txt"})))
        .await
        .unwrap();
    assert!(!counted.is_error, "{counted:?}");
    drop(client);
    let status = tokio::task::spawn_blocking(move || {
        let status = http_serve::wait_exit(&mut proxy.child);
        (status, signalled.elapsed())
    })
    .await
    .unwrap();
    assert_eq!(status.0.code(), Some(0), "{:?}", status.0);
    assert!(
        status.1 >= Duration::from_secs(7),
        "drain cut short: {:?}",
        status.1
    );
}

/// The proxy's `/health` says 503 while its upstream is down (here a
/// child that cannot be started again), so that a load balancer takes it
/// out of rotation, and 200 once the proxy has started it again.
#[cfg(unix)]
#[test]
fn health_says_when_the_upstream_is_down() {
    health_follows_the_upstream(&["--http", "127.0.0.1:0", "--stateless"]);
}

/// The same on the OTC front, whose `/health` is the OTC endpoint's own.
#[cfg(unix)]
#[test]
fn otc_health_says_when_the_upstream_is_down() {
    health_follows_the_upstream(&["--otc", "127.0.0.1:0"]);
}

#[cfg(unix)]
fn health_follows_the_upstream(front: &[&str]) {
    let root = fixture();
    let down = root.path().join("down");
    let serve = toolshape_bin();
    // `sh` becomes `toolshape serve`, unless `down` exists: then it exits.
    let script = format!(
        "test -e '{}' && exit 1; exec '{}' serve --root '{}'",
        down.display(),
        serve.display(),
        root.path().display()
    );
    let mut args = vec!["proxy"];
    args.extend_from_slice(front);
    args.extend_from_slice(&["--", "sh", "-c", &script]);
    let proxy = HttpServe::run(&args);
    assert_eq!(http_serve::health(&proxy.address).0, 200);
    std::fs::write(&down, "").unwrap();
    let children =
        std::fs::read_to_string(format!("/proc/{0}/task/{0}/children", proxy.child.id())).unwrap();
    let upstream = children
        .split_whitespace()
        .next()
        .expect("an upstream child");
    let killed = std::process::Command::new("kill")
        .args(["-KILL", upstream])
        .status()
        .unwrap();
    assert!(killed.success());
    http_serve::wait_until("/health answering 503", || {
        match http_serve::health(&proxy.address) {
            (503, body) if body.contains("upstream") => Ok(()),
            other => Err(format!("{other:?}")),
        }
    });
    // As a load balancer that asks with HEAD is answered.
    assert_eq!(http_serve::health_by("HEAD", &proxy.address).0, 503);
    std::fs::remove_file(&down).unwrap();
    http_serve::wait_until("/health answering 200 again", || {
        match http_serve::health(&proxy.address) {
            (200, _) => Ok(()),
            other => Err(format!("{other:?}")),
        }
    });
}
