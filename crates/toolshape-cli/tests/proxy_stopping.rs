#![allow(clippy::unwrap_used, clippy::expect_used)]
//! How `toolshape proxy` stops and says it is healthy, as users run it (a
//! child process in front of `toolshape serve`, another child): Ctrl-C and
//! SIGTERM over stdio, the HTTP front's drain with `/health` saying 503, a
//! stdio front beside it not cutting the drain short, and `/health` while
//! the upstream is down.

#[path = "../../toolshape-harness/tests/client_common/mod.rs"]
mod client_common;
mod http_serve;

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
/// fronts held it, and the stdio front waited for the end of its input).
#[cfg(unix)]
#[test]
fn a_stdio_proxy_stops_on_sigint_and_sigterm() {
    use std::io::{BufRead, BufReader, Write};
    use std::process::{Command, Stdio};

    let root = fixture();
    let serve = toolshape_bin();
    for name in ["INT", "TERM"] {
        let mut proxy = Command::new(&serve)
            .args(["proxy", "--"])
            .arg(&serve)
            .args(["serve", "--root"])
            .arg(root.path())
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
        assert_eq!(status.code(), Some(0), "SIG{name}: {status:?}");
        drop(input);
    }
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
