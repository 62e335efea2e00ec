//! `toolshape serve --http` as a child process, and `toolshape` client
//! commands run to their end.

#![allow(dead_code, unreachable_pub)]

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// The `toolshape` binary under test.
pub const TOOLSHAPE: &str = env!("CARGO_BIN_EXE_toolshape");
/// The longest any wait may take before the test fails.
pub const WAIT: Duration = Duration::from_secs(10);

/// `toolshape serve --http 127.0.0.1:0`; killed on drop.
pub struct HttpServe {
    /// The server process.
    pub child: Child,
    /// `http://127.0.0.1:PORT/mcp`.
    pub url: String,
    /// `127.0.0.1:PORT`.
    pub address: String,
    _root: Option<tempfile::TempDir>,
}

impl HttpServe {
    /// On a small folder of its own (`three.txt`, `README.md`).
    pub fn start(extra: &[&str]) -> HttpServe {
        let root = tempfile::tempdir().unwrap();
        std::fs::write(root.path().join("three.txt"), "one\ntwo\nthree\n").unwrap();
        std::fs::write(root.path().join("README.md"), "# fixture\n").unwrap();
        let mut server = HttpServe::start_at(root.path(), extra);
        server._root = Some(root);
        server
    }

    /// On the folder `root`.
    pub fn start_at(root: &Path, extra: &[&str]) -> HttpServe {
        let mut args = vec!["serve", "--http", "127.0.0.1:0", "--root"];
        let root = root.to_str().expect("a UTF-8 path");
        args.push(root);
        args.extend_from_slice(extra);
        HttpServe::run(&args)
    }

    /// `toolshape <args>`, which must serve `--http 127.0.0.1:0` and announce it.
    pub fn run(args: &[&str]) -> HttpServe {
        HttpServe::run_with_input(args, Stdio::null())
    }

    /// [`HttpServe::run`] with `input` as the process's stdin (a stdio
    /// front beside the HTTP one ends when its input does).
    pub fn run_with_input(args: &[&str], input: Stdio) -> HttpServe {
        let mut child = Command::new(TOOLSHAPE)
            .args(args)
            .stdin(input)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // The bound address is announced on stderr; keep draining it after.
        let stderr = child.stderr.take().unwrap();
        let (found, announced) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                let announced = line
                    .split("serving MCP on ")
                    .nth(1)
                    .or_else(|| line.split("serving OTC on ").nth(1));
                if let Some(url) = announced {
                    let _ = found.send(url.trim().to_owned());
                }
            }
        });
        let url = announced
            .recv_timeout(WAIT)
            .expect("--http was not announced");
        let address = url
            .trim_start_matches("http://")
            .trim_end_matches("/mcp")
            .to_owned();
        HttpServe {
            child,
            url,
            address,
            _root: None,
        }
    }
}

impl Drop for HttpServe {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs `toolshape <args>` to its end.
pub fn toolshape(args: &[&str]) -> Output {
    let mut child = Command::new(TOOLSHAPE)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            return child.wait_with_output().unwrap();
        }
        if started.elapsed() > WAIT {
            let _ = child.kill();
            panic!("toolshape {args:?} did not finish in time");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// `GET /health` at `address`: its status and body (status 0 and the error
/// when it could not be asked).
pub fn health(address: &str) -> (u16, String) {
    health_by("GET", address)
}

/// [`health`] asked with `method` (`GET` or `HEAD`, as load balancers do).
pub fn health_by(method: &str, address: &str) -> (u16, String) {
    use std::io::{Read, Write};
    let ask = || -> std::io::Result<String> {
        let mut stream = std::net::TcpStream::connect(address)?;
        stream.set_read_timeout(Some(WAIT))?;
        let request =
            format!("{method} /health HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n\r\n");
        stream.write_all(request.as_bytes())?;
        let mut answer = String::new();
        stream.read_to_string(&mut answer)?;
        Ok(answer)
    };
    let answer = match ask() {
        Ok(answer) => answer,
        Err(error) => return (0, error.to_string()),
    };
    let status = answer
        .split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or(0);
    let body = answer
        .split_once("\r\n\r\n")
        .map_or(answer.as_str(), |(_, body)| body)
        .to_owned();
    (status, body)
}

/// Sends `signal` (`INT`, `TERM`) to `child`, with the system's `kill`.
#[cfg(unix)]
pub fn signal(child: &Child, signal: &str) {
    let sent = Command::new("kill")
        .args([format!("-{signal}"), child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success(), "kill -{signal} failed");
}

/// Waits for `child` to exit, at most [`WAIT`].
pub fn wait_exit(child: &mut Child) -> std::process::ExitStatus {
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        assert!(started.elapsed() < WAIT, "the process did not exit in time");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Waits until `check` says `Ok`, at most [`WAIT`]; past it, fails with
/// what it said last.
pub fn wait_until(what: &str, mut check: impl FnMut() -> Result<(), String>) {
    let started = Instant::now();
    while let Err(last) = check() {
        assert!(
            started.elapsed() < WAIT,
            "{what} did not happen in {:?}; last: {last}",
            started.elapsed()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The child processes of `pid` (from `/proc`).
pub fn children(pid: u32) -> Vec<u32> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    tasks
        .flatten()
        .filter_map(|task| std::fs::read_to_string(task.path().join("children")).ok())
        .flat_map(|list| {
            list.split_whitespace()
                .filter_map(|pid| pid.parse().ok())
                .collect::<Vec<u32>>()
        })
        .collect()
}

/// Whether `pid` is gone (or a zombie, its life over, waiting to be reaped).
pub fn ended(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).map_or(true, |stat| {
        stat.rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z'))
    })
}
