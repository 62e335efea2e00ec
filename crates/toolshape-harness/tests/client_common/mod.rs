//! Shared by the `client_*` integration tests: the server binaries they start
//! and the repository's peer servers of `peers/` (see `scripts/setup-peers.sh`).
//!
//! The binaries they start are cargo's own for the package under test: the
//! harness's servers for the harness's tests, `toolshape` for the CLI's.

#![allow(dead_code, unreachable_pub)]

use std::path::{Path, PathBuf};
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

/// The `toolshape` binary: `$TOOLSHAPE_BIN`, or the one cargo built for
/// `toolshape-cli`'s tests.
pub fn toolshape_bin() -> PathBuf {
    if let Some(path) = std::env::var_os("TOOLSHAPE_BIN") {
        return PathBuf::from(path);
    }
    match option_env!("CARGO_BIN_EXE_toolshape") {
        Some(path) => PathBuf::from(path),
        None => panic!("set TOOLSHAPE_BIN, or run this test from toolshape-cli"),
    }
}

/// The hostile server's `--foreign-names` tool whose name is within MCP's
/// naming guidance but too long for an OTC name (70 characters).
pub const LONG_NAME: &str =
    "get_repos_owner_repo_actions_runs_run_id_attempts_attempt_number_logs_";

/// The harness's `hostile_server` binary.
pub fn hostile_server_bin() -> PathBuf {
    match option_env!("CARGO_BIN_EXE_hostile_server") {
        Some(path) => PathBuf::from(path),
        None => panic!(
            "hostile_server is a binary of toolshape-harness: run these tests from that package"
        ),
    }
}

/// Connects to the Streamable HTTP endpoint `url` with `negotiation` and
/// the test's timeouts.
pub async fn connect_http(url: &str, negotiation: Negotiation) -> Client {
    Client::builder()
        .negotiation(negotiation)
        .options(options())
        .connect_http(url)
        .await
        .unwrap_or_else(|e| panic!("connecting to {url} on {negotiation:?}: {e}"))
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
    /// The TypeScript SDK 1.x peer (legacy only).
    Ts,
    /// The TypeScript SDK 2.x peer (legacy and 2026-07-28).
    Ts2,
    /// The official Python SDK peer.
    PyMcp,
    /// The FastMCP peer.
    PyFastmcp,
}

impl PeerKind {
    /// Every peer.
    pub const ALL: [PeerKind; 5] = [
        PeerKind::Rmcp,
        PeerKind::Ts,
        PeerKind::Ts2,
        PeerKind::PyMcp,
        PeerKind::PyFastmcp,
    ];

    /// Its folder name under `peers/`.
    pub fn name(self) -> &'static str {
        match self {
            PeerKind::Rmcp => "rmcp",
            PeerKind::Ts => "ts",
            PeerKind::Ts2 => "ts2",
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
        PeerKind::Ts | PeerKind::Ts2 => {
            require(installed.join(peer.name()).join("node_modules"));
            ServerCommand::new("node").arg(require(installed.join(peer.name()).join("server.mjs")))
        }
        PeerKind::PyMcp | PeerKind::PyFastmcp => {
            let python = require(installed.join(format!("{}-venv/bin/python", peer.name())));
            let script = require(peers_home().join(peer.name()).join("server.py"));
            ServerCommand::new(python).arg(script)
        }
    };
    command.stderr(StderrMode::Capture)
}

/// Serves a proxy's tools over Streamable HTTP on loopback until the test
/// ends; the endpoint's URL.
pub async fn serve_proxy_over_http(registry: toolshape::ToolRegistry) -> String {
    let server = toolshape::Server::builder("proxy", "1.0.0")
        .registry(registry)
        .build()
        .expect("the server builds");
    serve_over_http(server).await
}

/// Serves `server` over Streamable HTTP on loopback until the test ends;
/// the endpoint's URL.
pub async fn serve_over_http(server: toolshape::Server) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a loopback port");
    let url = format!("http://{}/mcp", listener.local_addr().expect("its address"));
    tokio::spawn(async move {
        server
            .serve_http(
                listener,
                toolshape::HttpOptions::default(),
                std::future::pending(),
            )
            .await
    });
    url
}

/// Connects to the hostile server started with `args` (20 s per request,
/// its stderr captured).
pub async fn connect_hostile(args: &[&str]) -> Client {
    let mut options = ClientOptions::default();
    options.request_timeout = Duration::from_secs(20);
    let command = ServerCommand::new(hostile_server_bin())
        .args(args)
        .stderr(StderrMode::Capture);
    connect(command, Negotiation::Auto, options).await
}

/// Asserts that `error`, from reading `uri`, is "not found" in the shape of
/// `client`'s revision: invalid params naming the URI on 2026-07-28
/// (SEP-2164), -32002 naming it before.
pub fn assert_not_found(client: &Client, error: &toolshape::client::ClientError, uri: &str) {
    let code = if client.protocol_version().is_stateless() {
        -32602
    } else {
        -32002
    };
    match error.kind() {
        toolshape::client::ClientErrorKind::Protocol(error) => {
            assert_eq!(error.code, code, "{uri}: {error:?}");
            assert_eq!(
                error.data.as_ref().and_then(|data| data.get("uri")),
                Some(&serde_json::json!(uri)),
                "{error:?}"
            );
        }
        other => panic!("{uri}: not a protocol error: {other:?}"),
    }
}

/// The proxy (the library) in front of `upstream`, its client speaking
/// `era` with the test's timeouts.
pub async fn start_proxy(
    upstream: ServerCommand,
    era: Negotiation,
    options: toolshape_proxy::ProxyOptions,
) -> toolshape_proxy::Proxy {
    let builder = Client::builder().negotiation(era).options(self::options());
    toolshape_proxy::Proxy::start(
        toolshape_proxy::UpstreamSpec::Command(upstream),
        builder,
        options,
    )
    .await
    .expect("the proxy starts")
}

/// A client builder that answers the harness's asking tools
/// (`toolshape_harness::asking`) as a user and a model would (the user is
/// Ada, 36; asked any other question, the name given is the question), and
/// offers one root, counting every question in `asked`.
pub fn answering(
    asked: std::sync::Arc<std::sync::atomic::AtomicUsize>,
) -> toolshape::client::ClientBuilder {
    use std::sync::atomic::Ordering;
    use toolshape::protocol::asks::{CreateMessageResult, ElicitResult, Root};
    let (elicited, sampled, listed) = (asked.clone(), asked.clone(), asked);
    Client::builder()
        .options(options())
        .on_elicit(false, move |params| {
            elicited.fetch_add(1, Ordering::SeqCst);
            async move {
                let schema = params.requested_schema.unwrap_or_default();
                assert_eq!(schema["properties"]["age"]["type"], "integer", "{schema}");
                // "Who are you?" is Ada; any other question is answered with
                // itself as the name, so that a swapped answer shows.
                let name = match params.message.as_str() {
                    "Who are you?" => "Ada".to_owned(),
                    other => other.to_owned(),
                };
                let mut content = serde_json::Map::new();
                content.insert("name".into(), serde_json::json!(name));
                content.insert("age".into(), serde_json::json!(36));
                Ok(ElicitResult::accept(content))
            }
        })
        .on_sample(move |params| {
            sampled.fetch_add(1, Ordering::SeqCst);
            async move {
                assert_eq!(params.max_tokens, 50);
                Ok(CreateMessageResult::text("test-model", "4"))
            }
        })
        .on_roots(move || {
            listed.fetch_add(1, Ordering::SeqCst);
            async {
                Ok(vec![Root::new(
                    "file:///work/project",
                    Some("project".into()),
                )])
            }
        })
}

/// The conformance server's completions of a prompt argument
/// (`test_prompt_with_arguments` `arg1`, typed `par`) and of a template
/// variable (`test://template/{id}/data` `id`, typed `4`), as `client` gets them.
pub async fn conformance_completions(client: &Client) -> (Vec<String>, Vec<String>) {
    use toolshape::protocol::completion::CompletionRef;
    let prompt = CompletionRef::Prompt {
        name: "test_prompt_with_arguments".into(),
    };
    let template = CompletionRef::Resource {
        uri: "test://template/{id}/data".into(),
    };
    let by_prompt = client
        .complete(prompt, "arg1", "par")
        .await
        .expect("completes");
    let by_template = client
        .complete(template, "id", "4")
        .await
        .expect("completes");
    // The template's source says how many match in all, more than it sends
    // (`toolshape_harness::conformance::IDS_IN_ALL`).
    assert_eq!(
        (by_template.total, by_template.has_more),
        (Some(40), Some(true)),
        "the template completion's total and hasMore"
    );
    (by_prompt.values, by_template.values)
}
