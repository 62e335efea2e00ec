#![allow(clippy::unwrap_used, clippy::expect_used)]
//! `toolshape serve --otc` beside `--http`, and the client commands with
//! `--otc URL`, as processes over real loopback HTTP: listing, calling, the
//! exit codes, credentials from the environment and from files, `bench
//! --otc`; and the MCP-to-OTC bridge over a real `toolshape serve` child.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};

const TOOLSHAPE: &str = env!("CARGO_BIN_EXE_toolshape");
const API_KEY: &str = "cli-test-api-key-0123456789";
const JWT_SECRET: &str = "cli-test-jwt-secret-of-32-bytes-or-more";

/// `toolshape ARGS` as a server: no OTC credentials but `env`'s, stderr piped.
fn serving_command(args: &[&str], env: &[(&str, &str)]) -> Command {
    let mut command = Command::new(TOOLSHAPE);
    command
        .args(args)
        .env_remove("TOOLSHAPE_OTC_API_KEYS")
        .env_remove("TOOLSHAPE_OTC_JWT_SECRET")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    for (name, value) in env {
        command.env(name, value);
    }
    command
}

/// `toolshape serve --otc 127.0.0.1:0 [--http 127.0.0.1:0]`; killed on drop.
struct Serve {
    child: Child,
    otc: String,
    mcp: Option<String>,
    _root: tempfile::TempDir,
}

impl Serve {
    fn start(extra: &[&str], env: &[(&str, &str)]) -> Serve {
        let root = tempfile::tempdir().unwrap();
        std::fs::write(root.path().join("three.txt"), "one\ntwo\nthree\n").unwrap();
        std::fs::write(root.path().join("csi.txt"), "a\u{9b}2Jb\u{7f}c\n").unwrap();
        let root_path = root.path().to_str().unwrap();
        let mut args = vec!["serve", "--otc", "127.0.0.1:0", "--root", root_path];
        args.extend_from_slice(extra);
        let mut child = serving_command(&args, env).spawn().unwrap();
        let stderr = child.stderr.take().unwrap();
        let (found, announced) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                for what in ["serving OTC on ", "serving MCP on "] {
                    if let Some(url) = line.split(what).nth(1) {
                        let _ = found.send((what, url.trim().to_owned()));
                    }
                }
            }
        });
        let wanted = if extra.contains(&"--http") { 2 } else { 1 };
        let (mut otc, mut mcp) = (String::new(), None);
        for _ in 0..wanted {
            let (what, url) = announced
                .recv_timeout(Duration::from_secs(10))
                .expect("serve did not announce");
            if what.contains("OTC") {
                otc = url;
            } else {
                mcp = Some(url);
            }
        }
        Serve {
            child,
            otc,
            mcp,
            _root: root,
        }
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn toolshape(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut command = Command::new(TOOLSHAPE);
    command
        .args(args)
        .env_remove("TOOLSHAPE_OTC_API_KEY")
        .env_remove("TOOLSHAPE_OTC_TOKEN")
        .env_remove("TOOLSHAPE_OTC_JWT_SECRET")
        .env_remove("TOOLSHAPE_OTC_JWT_AUDIENCE")
        .stdin(Stdio::null());
    for (name, value) in env {
        command.env(name, value);
    }
    command.output().unwrap()
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn serve_otc_beside_http_and_the_client_commands() {
    let serve = Serve::start(&["--http", "127.0.0.1:0"], &[]);
    let otc = serve.otc.as_str();
    // The same tool over both.
    let table = toolshape(&["tools", "--otc", otc], &[]);
    assert!(table.status.success());
    assert!(
        stdout(&table).contains("Workspace.count_lines@1.0.0"),
        "{}",
        stdout(&table)
    );
    let listed: Value =
        serde_json::from_slice(&toolshape(&["tools", "--otc", otc, "--json"], &[]).stdout).unwrap();
    assert!(
        listed
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"] == "Workspace_count_lines")
    );
    for name in [
        "Workspace.count_lines",
        "Workspace_count_lines",
        "count_lines",
        "Workspace.count_lines@1",
    ] {
        let called = toolshape(
            &[
                "call",
                name,
                "--otc",
                otc,
                "--args",
                r#"{"path":"three.txt"}"#,
            ],
            &[],
        );
        assert_eq!(
            called.status.code(),
            Some(0),
            "{name}: {}",
            String::from_utf8_lossy(&called.stderr)
        );
        assert_eq!(stdout(&called).trim(), "3");
    }
    let mcp = toolshape(
        &[
            "call",
            "count_lines",
            "--url",
            serve.mcp.as_deref().unwrap(),
            "--args",
            r#"{"path":"three.txt"}"#,
        ],
        &[],
    );
    assert_eq!(stdout(&mcp).trim(), "3");
    // --json prints the whole CallToolResponse.
    let whole: Value = serde_json::from_slice(
        &toolshape(
            &[
                "call",
                "count_lines",
                "--otc",
                otc,
                "--json",
                "--args",
                r#"{"path":"three.txt"}"#,
            ],
            &[],
        )
        .stdout,
    )
    .unwrap();
    assert_eq!(
        (whole["success"].clone(), whole["value"].clone()),
        (json!(true), json!(3))
    );
    // JSON printed is safe at a terminal: C1 controls and DEL (left raw by
    // serde_json) are written as escapes, the value unchanged.
    for front in [["--otc", otc], ["--url", serve.mcp.as_deref().unwrap()]] {
        let mut args = vec![
            "call",
            "read_text",
            "--json",
            "--args",
            r#"{"path":"csi.txt"}"#,
        ];
        args.extend(front);
        let printed = toolshape(&args, &[]);
        let text = stdout(&printed);
        assert!(printed.status.success(), "{front:?}: {text}");
        assert!(
            !text.contains(['\u{9b}', '\u{7f}']),
            "{front:?}: raw controls in {text:?}"
        );
        let value: Value = serde_json::from_str(&text).unwrap();
        assert!(
            value.to_string().contains("a\u{9b}2Jb\u{7f}c"),
            "{front:?}: {value}"
        );
    }
    // Exit codes: 1 the tool failed, 1 invalid input (422), 4 unknown tool, 2 usage.
    let missing = toolshape(
        &[
            "call",
            "count_lines",
            "--otc",
            otc,
            "--args",
            r#"{"path":"nope.txt"}"#,
        ],
        &[],
    );
    assert_eq!(missing.status.code(), Some(1));
    let invalid = toolshape(
        &[
            "call",
            "count_lines",
            "--otc",
            otc,
            "--args",
            r#"{"path":7}"#,
        ],
        &[],
    );
    assert_eq!(invalid.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&invalid.stderr).contains("path"));
    let unknown = toolshape(&["call", "nothing_here", "--otc", otc], &[]);
    assert_eq!(unknown.status.code(), Some(4));
    let usage = toolshape(
        &[
            "call",
            "count_lines",
            "--otc",
            otc,
            "--url",
            "http://127.0.0.1:1/mcp",
        ],
        &[],
    );
    assert_eq!(usage.status.code(), Some(2));
    // bench --otc.
    let bench = toolshape(
        &[
            "bench",
            "--otc",
            otc,
            "--tool",
            "count_lines",
            "--args",
            r#"{"path":"three.txt"}"#,
            "--calls",
            "50",
            "--json",
        ],
        &[],
    );
    assert!(
        bench.status.success(),
        "{}",
        String::from_utf8_lossy(&bench.stderr)
    );
    let report: Value = serde_json::from_slice(&bench.stdout).unwrap();
    assert_eq!(
        (
            report["calls"].clone(),
            report["failures"].clone(),
            report["mismatches"].clone()
        ),
        (json!(50), json!(0), json!(0))
    );
    assert_eq!(report["protocol"], "otc-1.0");
}

#[test]
fn credentials_come_from_the_environment_or_files() {
    let keyed = Serve::start(&[], &[("TOOLSHAPE_OTC_API_KEYS", API_KEY)]);
    let without = toolshape(&["tools", "--otc", &keyed.otc], &[]);
    assert_eq!(without.status.code(), Some(4));
    assert!(String::from_utf8_lossy(&without.stderr).contains("401"));
    let with = toolshape(
        &["tools", "--otc", &keyed.otc],
        &[("TOOLSHAPE_OTC_API_KEY", API_KEY)],
    );
    assert_eq!(with.status.code(), Some(0));

    let files = tempfile::tempdir().unwrap();
    let secret_file = files.path().join("jwt-secret");
    std::fs::write(&secret_file, format!("{JWT_SECRET}\n")).unwrap();
    let signed = Serve::start(
        &[
            "--otc-jwt-secret-file",
            secret_file.to_str().unwrap(),
            "--otc-jwt-audience",
            "toolshape-tests",
        ],
        &[],
    );
    let env = [
        ("TOOLSHAPE_OTC_JWT_SECRET", JWT_SECRET),
        ("TOOLSHAPE_OTC_JWT_AUDIENCE", "toolshape-tests"),
    ];
    let ok = toolshape(
        &[
            "call",
            "count_lines",
            "--otc",
            &signed.otc,
            "--args",
            r#"{"path":"three.txt"}"#,
        ],
        &env,
    );
    assert_eq!(
        ok.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    let wrong_audience = toolshape(
        &["tools", "--otc", &signed.otc],
        &[
            ("TOOLSHAPE_OTC_JWT_SECRET", JWT_SECRET),
            ("TOOLSHAPE_OTC_JWT_AUDIENCE", "someone-else"),
        ],
    );
    assert_eq!(wrong_audience.status.code(), Some(4));
    // A short key is refused at start, with a clear message.
    let short = Command::new(TOOLSHAPE)
        .args(["serve", "--otc", "127.0.0.1:0"])
        .env("TOOLSHAPE_OTC_API_KEYS", "short")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(short.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&short.stderr).contains("at least 16 bytes"));
}

#[tokio::test]
async fn a_stdio_mcp_server_bridged_to_otc() {
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("three.txt"), "one\ntwo\nthree\n").unwrap();
    let command = toolshape::client::ServerCommand::new(TOOLSHAPE)
        .arg("serve")
        .arg("--root")
        .arg(root.path().to_str().unwrap());
    let client = toolshape::client::Client::builder()
        .connect_stdio(command)
        .await
        .unwrap();
    let bridged = toolshape_otc::bridge::registry_from_mcp(
        client,
        toolshape_otc::bridge::McpBridgeOptions::default(),
    )
    .await
    .unwrap();
    assert!(bridged.skipped.is_empty());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let registry = bridged.registry.clone();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = tokio::spawn(async move {
        toolshape_otc::serve(
            &registry,
            listener,
            toolshape_otc::OtcOptions::default(),
            async {
                let _ = stopped.await;
            },
        )
        .await
    });
    let otc = toolshape_otc::OtcClient::builder(base).build().unwrap();
    let ids: Vec<String> = otc
        .list_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.id)
        .collect();
    assert!(
        ids.contains(&"toolshape.count_lines@0.1.0".to_owned()),
        "{ids:?}"
    );
    let lines: u64 = otc
        .call("count_lines", json!({"path": "three.txt"}))
        .await
        .unwrap();
    assert_eq!(lines, 3);
    let failed = otc
        .call_tool(
            "count_lines",
            json!({"path": "nope.txt"}).as_object().cloned().unwrap(),
        )
        .await
        .unwrap();
    assert!(!failed.success());
    let _ = stop.send(());
    serving.await.unwrap().unwrap();
}

/// What `toolshape ARGS` says on stderr until it announces its OTC front; then it is stopped.
fn said_before_serving(args: &[&str], env: &[(&str, &str)]) -> Vec<String> {
    let mut child = serving_command(args, env).spawn().unwrap();
    let stderr = child.stderr.take().unwrap();
    let (lines, said) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = lines.send(line);
        }
    });
    let mut seen = Vec::new();
    while let Ok(line) = said.recv_timeout(Duration::from_secs(10)) {
        let done = line.contains("serving OTC on ");
        seen.push(line);
        if done {
            break;
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    assert!(
        seen.iter().any(|line| line.contains("serving OTC on ")),
        "{seen:?}"
    );
    seen
}

#[test]
fn an_otc_front_beyond_loopback_without_credentials_is_warned_about() {
    let root = tempfile::tempdir().unwrap();
    let root = root.path().to_str().unwrap();
    let warned = |lines: &[String]| {
        lines.iter().any(|line| {
            line.contains("warning: the OTC front") && line.contains("beyond this machine")
        })
    };
    let open = said_before_serving(&["serve", "--otc", "0.0.0.0:0", "--root", root], &[]);
    assert!(warned(&open), "{open:?}");
    assert!(
        open.iter().any(|line| line.contains("--otc-api-key-file")),
        "{open:?}"
    );
    // With API keys, or on loopback, nothing to warn about.
    let keyed = said_before_serving(
        &["serve", "--otc", "0.0.0.0:0", "--root", root],
        &[("TOOLSHAPE_OTC_API_KEYS", API_KEY)],
    );
    assert!(!warned(&keyed), "{keyed:?}");
    let local = said_before_serving(&["serve", "--otc", "127.0.0.1:0", "--root", root], &[]);
    assert!(!warned(&local), "{local:?}");
    // The proxy checks no caller at all: beyond loopback it always warns.
    let proxied = said_before_serving(
        &[
            "proxy",
            "--otc",
            "0.0.0.0:0",
            "--",
            TOOLSHAPE,
            "serve",
            "--root",
            root,
        ],
        &[],
    );
    assert!(warned(&proxied), "{proxied:?}");
}

/// MCP's options beside `--otc` are a usage error, not silently ignored.
#[test]
fn mcp_options_beside_otc_are_refused() {
    let otc = "http://127.0.0.1:9";
    for (command, option) in [
        (["tools", "--header"], "X-Key: 1"),
        (["call", "--root"], "/tmp"),
        (["tools", "--protocol"], "2025-06-18"),
        (["tools", "--oauth-scope"], "read"),
    ] {
        let mut args = vec![command[0], "--otc", otc, command[1], option];
        if command[0] == "call" {
            args.insert(1, "count_lines");
        }
        let refused = toolshape(&args, &[]);
        assert_eq!(refused.status.code(), Some(2), "{args:?}");
        let said = String::from_utf8_lossy(&refused.stderr);
        assert!(said.contains(command[1]), "{args:?}: {said}");
    }
}
