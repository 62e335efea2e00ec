//! Shared by the `client_*` integration tests: the server binaries they start
//! and the repository's peer servers of `peers/` (see `scripts/setup-peers.sh`).
//!
//! The binaries (`toolshape` of `toolshape-cli`, the `hostile_server`
//! example) are built on first use with the `cargo` that runs the tests
//! (`$CARGO build ...`, a no-op when they are fresh; cargo does not hold its
//! build lock while tests run). `cargo test -p toolshape` alone would not
//! build another package's binary, and a `--test` filter builds no examples.

#![allow(dead_code, unreachable_pub)]

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use toolshape::client::{Client, ClientOptions, Negotiation, ServerCommand, StderrMode};

/// How long a test waits for any one answer.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// The workspace root (two levels above this package).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .expect("the workspace root")
        .to_path_buf()
}

/// `target/<profile>`: the folder holding the test binary's `deps/`.
pub fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    exe.parent()
        .and_then(Path::parent)
        .expect("the test binary lives in target/<profile>/deps")
        .to_path_buf()
}

/// Runs `cargo build <args>` for the test's profile, once per argument list.
fn cargo_build(args: &[&str]) {
    static BUILT: OnceLock<Mutex<HashSet<Vec<String>>>> = OnceLock::new();
    let key: Vec<String> = args.iter().map(|s| (*s).to_owned()).collect();
    let built = BUILT.get_or_init(Mutex::default);
    let mut built = built
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if built.contains(&key) {
        return;
    }
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut command = Command::new(cargo);
    command.arg("build").arg("-q").args(args);
    let profile = profile_dir();
    match profile.file_name().and_then(|n| n.to_str()) {
        Some("debug") | None => {}
        Some("release") => {
            command.arg("--release");
        }
        Some(other) => {
            command.args(["--profile", other]);
        }
    }
    let output = command
        .current_dir(workspace_root())
        .output()
        .expect("cargo runs");
    assert!(
        output.status.success(),
        "cargo build {} failed:\n{}",
        args.join(" "),
        String::from_utf8_lossy(&output.stderr)
    );
    built.insert(key);
}

/// The `toolshape` binary: `$TOOLSHAPE_BIN`, or `target/<profile>/toolshape`
/// built with `cargo build -p toolshape-cli`.
pub fn toolshape_bin() -> PathBuf {
    if let Some(path) = std::env::var_os("TOOLSHAPE_BIN") {
        return PathBuf::from(path);
    }
    cargo_build(&["-p", "toolshape-cli", "--bin", "toolshape"]);
    let path = profile_dir().join(format!("toolshape{}", std::env::consts::EXE_SUFFIX));
    assert!(path.exists(), "{} was not built", path.display());
    path
}

/// The `hostile_server` example, built with `cargo build -p toolshape --example hostile_server`.
pub fn hostile_server_bin() -> PathBuf {
    cargo_build(&["-p", "toolshape", "--example", "hostile_server"]);
    let path = profile_dir()
        .join("examples")
        .join(format!("hostile_server{}", std::env::consts::EXE_SUFFIX));
    assert!(path.exists(), "{} was not built", path.display());
    path
}

/// Connects with `negotiation` and the test's timeouts.
pub async fn connect(
    command: ServerCommand,
    negotiation: Negotiation,
    options: ClientOptions,
) -> Client {
    let described = format!("{command:?}");
    Client::builder()
        .negotiation(negotiation)
        .options(options)
        .connect_stdio(command)
        .await
        .unwrap_or_else(|e| panic!("connecting to {described} failed: {e}"))
}

/// The test's client options: a [`REQUEST_TIMEOUT`] on every request.
pub fn options() -> ClientOptions {
    let mut options = ClientOptions::default();
    options.request_timeout = REQUEST_TIMEOUT;
    options
}

/// The peers of `peers/`, as `scripts/setup-peers.sh` installs them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PeerKind {
    /// The rmcp (Rust) peer.
    Rmcp,
    /// The TypeScript SDK peer (legacy only).
    Ts,
    /// The official Python SDK peer.
    PyMcp,
    /// The FastMCP peer.
    PyFastmcp,
}

impl PeerKind {
    /// Every peer.
    pub const ALL: [PeerKind; 4] = [
        PeerKind::Rmcp,
        PeerKind::Ts,
        PeerKind::PyMcp,
        PeerKind::PyFastmcp,
    ];

    /// Its folder name under `peers/`.
    pub fn name(self) -> &'static str {
        match self {
            PeerKind::Rmcp => "rmcp",
            PeerKind::Ts => "ts",
            PeerKind::PyMcp => "py-mcp",
            PeerKind::PyFastmcp => "py-fastmcp",
        }
    }

    /// Whether it answers `server/discover` (speaks 2026-07-28).
    pub fn is_modern(self) -> bool {
        self != PeerKind::Ts
    }
}

/// The peers' sources: `$PEERS_HOME`, or the workspace's `peers/` folder.
pub fn peers_home() -> PathBuf {
    std::env::var_os("PEERS_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_root().join("peers"))
}

/// Where the peers are installed: `$TOOLSHAPE_PEERS` (a relative path is
/// relative to the workspace root). `None` when it is unset: the caller
/// prints the skip notice and returns.
pub fn installed_peers() -> Option<PathBuf> {
    let dir = std::env::var_os("TOOLSHAPE_PEERS").filter(|v| !v.is_empty())?;
    let dir = PathBuf::from(dir);
    Some(if dir.is_absolute() {
        dir
    } else {
        workspace_root().join(dir)
    })
}

/// The notice printed when the peer tests are skipped.
pub const PEERS_SKIPPED: &str =
    "skipped: peers not installed (run scripts/setup-peers.sh and set TOOLSHAPE_PEERS)";

/// How to start `peer`, installed under `installed`. Panics when it is
/// missing: with `TOOLSHAPE_PEERS` set, a missing peer is a failure.
pub fn peer_command(peer: PeerKind, installed: &Path) -> ServerCommand {
    let require = |path: PathBuf| {
        assert!(
            path.exists(),
            "TOOLSHAPE_PEERS is set but the {} peer is missing: {} does not exist \
             (run scripts/setup-peers.sh)",
            peer.name(),
            path.display()
        );
        path
    };
    let command = match peer {
        PeerKind::Rmcp => {
            ServerCommand::new(require(installed.join("rmcp-target/release/mcp-peer-rmcp")))
        }
        PeerKind::Ts => {
            require(installed.join("ts/node_modules"));
            ServerCommand::new("node").arg(require(installed.join("ts/server.mjs")))
        }
        PeerKind::PyMcp | PeerKind::PyFastmcp => {
            let python = require(installed.join(format!("{}-venv/bin/python", peer.name())));
            let script = require(peers_home().join(peer.name()).join("server.py"));
            ServerCommand::new(python).arg(script)
        }
    };
    command.stderr(StderrMode::Capture)
}
