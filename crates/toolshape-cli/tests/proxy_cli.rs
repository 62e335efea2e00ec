#![allow(clippy::unwrap_used, clippy::expect_used)]
//! `toolshape proxy` as users run it: a child process in front of
//! `toolshape serve` (another child), over stdio and over HTTP. Valid calls
//! pass through unchanged in value on every revision; invalid arguments
//! never reach the upstream; filters, the audit log and `/metrics` work.

#[path = "../../toolshape-harness/tests/client_common/mod.rs"]
mod client_common;
mod http_serve;
mod legacy_http;

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};
use tempfile::TempDir;
use toolshape::client::{Client, Negotiation, ServerCommand, StderrMode};
use toolshape::protocol::ProtocolVersion;

use client_common::{connect, options, toolshape_bin};
use http_serve::HttpServe;

fn fixture() -> TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("three.txt"), "one\ntwo\nthree\n").unwrap();
    std::fs::write(dir.path().join("data.csv"), "a,b\n1,2\n3,4\n").unwrap();
    std::fs::write(
        dir.path().join("Cargo.toml"),
        "[package]\nname = \"demo\"\n",
    )
    .unwrap();
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    std::fs::write(dir.path().join("sub/inner.txt"), "x").unwrap();
    dir
}

fn serve_command(root: &Path) -> ServerCommand {
    ServerCommand::new(toolshape_bin())
        .arg("serve")
        .arg("--root")
        .arg(root)
        .stderr(StderrMode::Capture)
}

fn proxy_command(root: &Path, flags: &[&str]) -> ServerCommand {
    ServerCommand::new(toolshape_bin())
        .arg("proxy")
        .args(flags)
        .arg("--")
        .arg(toolshape_bin())
        .arg("serve")
        .arg("--root")
        .arg(root)
        .stderr(StderrMode::Capture)
}

fn arguments(value: Value) -> Option<Map<String, Value>> {
    value.as_object().cloned()
}

/// One valid call of each tool.
fn valid_calls() -> Vec<(&'static str, Value)> {
    vec![
        ("count_lines", json!({"path": "three.txt"})),
        ("list_directory", json!({"path": "."})),
        ("read_text", json!({"path": "three.txt"})),
        ("file_info", json!({"path": "sub"})),
        ("find", json!({"glob": "**/*.txt"})),
        (
            "analyze_dataset",
            json!({"path": "data.csv", "analysisType": "correlation"}),
        ),
        ("analyze_project", json!({})),
    ]
}

#[tokio::test]
async fn valid_calls_pass_through_unchanged_on_every_revision() {
    let root = fixture();
    for version in [
        ProtocolVersion::V2025_03_26,
        ProtocolVersion::V2025_06_18,
        ProtocolVersion::V2025_11_25,
        ProtocolVersion::V2026_07_28,
    ] {
        let negotiation = Negotiation::Pinned(version);
        let direct = connect(serve_command(root.path()), negotiation, options()).await;
        let proxied = connect(proxy_command(root.path(), &[]), negotiation, options()).await;
        assert_eq!(proxied.protocol_version(), version);
        let listed = |tools: Vec<toolshape::protocol::ToolDefinition>| {
            tools
                .into_iter()
                .map(|t| (t.name, t.input_schema, t.output_schema, t.annotations))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            listed(proxied.list_tools().await.unwrap()),
            listed(direct.list_tools().await.unwrap()),
            "{version}: the listings differ"
        );
        for (tool, args) in valid_calls() {
            let want = direct
                .call_tool(tool, arguments(args.clone()))
                .await
                .unwrap();
            let got = proxied.call_tool(tool, arguments(args)).await.unwrap();
            assert!(!got.is_error, "{version} {tool}: {}", got.text());
            assert_eq!(got.structured, want.structured, "{version} {tool}");
            assert_eq!(got.text(), want.text(), "{version} {tool}");
        }
    }
}

/// The workspace's files, resources of `toolshape serve`, reach a client
/// through the proxy as they do directly: listed, templated and read; a
/// missing file is "not found" in the client's revision's shape.
#[tokio::test]
async fn the_upstreams_resources_pass_through() {
    let root = fixture();
    for version in [ProtocolVersion::V2025_06_18, ProtocolVersion::V2026_07_28] {
        let negotiation = Negotiation::Pinned(version);
        let direct = connect(serve_command(root.path()), negotiation, options()).await;
        let proxied = connect(proxy_command(root.path(), &[]), negotiation, options()).await;
        let uris = |resources: Vec<toolshape::protocol::resources::Resource>| {
            let mut uris: Vec<String> = resources.into_iter().map(|r| r.uri).collect();
            uris.sort();
            uris
        };
        let listed = uris(direct.list_resources().await.unwrap());
        let three = listed.iter().find(|uri| uri.ends_with("/three.txt"));
        let three = three.expect("three.txt is listed").clone();
        assert_eq!(
            uris(proxied.list_resources().await.unwrap()),
            listed,
            "{version}"
        );
        assert_eq!(
            proxied.list_resource_templates().await.unwrap(),
            direct.list_resource_templates().await.unwrap(),
            "{version}"
        );
        for uri in &listed {
            assert_eq!(
                proxied.read_resource(uri).await.unwrap(),
                direct.read_resource(uri).await.unwrap(),
                "{version} {uri}"
            );
        }
        let missing = three.replace("three.txt", "missing.txt");
        let (want, got) = (
            direct.read_resource(&missing).await.unwrap_err(),
            proxied.read_resource(&missing).await.unwrap_err(),
        );
        match (want.kind(), got.kind()) {
            (
                toolshape::client::ClientErrorKind::Protocol(want),
                toolshape::client::ClientErrorKind::Protocol(got),
            ) => {
                assert_eq!((got.code, &got.data), (want.code, &want.data), "{version}");
            }
            other => panic!("{version}: {other:?}"),
        }
    }
}

/// Waits for `path` to hold at least `lines` lines.
fn audit_lines(path: &Path, lines: usize) -> Vec<Value> {
    let started = Instant::now();
    loop {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        let records: Vec<Value> = text
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect();
        if records.len() >= lines || started.elapsed() > Duration::from_secs(10) {
            return records;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[tokio::test]
async fn invalid_arguments_never_reach_the_upstream_and_calls_are_audited() {
    let root = fixture();
    let audit = root.path().join("audit.jsonl");
    let audit_flag = audit.to_str().unwrap();
    let client = connect(
        proxy_command(root.path(), &["--audit", audit_flag]),
        Negotiation::Auto,
        options(),
    )
    .await;
    let refused = client
        .call_tool("count_lines", arguments(json!({"path": 3})))
        .await
        .unwrap();
    assert!(refused.is_error);
    assert!(
        refused.text().contains("Invalid arguments"),
        "{}",
        refused.text()
    );
    let counted = client
        .call_tool("count_lines", arguments(json!({"path": "three.txt"})))
        .await
        .unwrap();
    assert_eq!(counted.structured, Some(json!(3)));
    let missing = client
        .call_tool("count_lines", arguments(json!({"path": "nope.txt"})))
        .await
        .unwrap();
    assert!(missing.is_error);
    // Two calls were forwarded; the refused one never was.
    let records = audit_lines(&audit, 2);
    assert_eq!(records.len(), 2, "{records:?}");
    assert_eq!(records[0]["tool"], "count_lines");
    assert_eq!(records[0]["outcome"], "ok");
    assert_eq!(records[1]["outcome"], "tool_error");
    assert!(
        records[0].get("arguments").is_none(),
        "arguments only when asked"
    );
    assert!(records[0]["arguments_bytes"].as_u64().unwrap() > 0);
    assert!(records[0]["duration_ms"].as_f64().unwrap() >= 0.0);
}

#[tokio::test]
async fn the_stdio_client_is_rate_limited_and_named_in_the_audit_log() {
    let root = fixture();
    let audit = root.path().join("audit.jsonl");
    let audit_flag = audit.to_str().unwrap();
    let flags = ["--rate-limit", "1", "--audit", audit_flag];
    let client = connect(
        proxy_command(root.path(), &flags),
        Negotiation::Auto,
        options(),
    )
    .await;
    let call = || client.call_tool("count_lines", arguments(json!({"path": "three.txt"})));
    let first = call().await.unwrap();
    assert_eq!(first.structured, Some(json!(3)));
    let second = call().await.unwrap();
    assert!(second.is_error);
    assert!(
        second.text().contains("Too many calls from this client"),
        "{}",
        second.text()
    );
    let records = audit_lines(&audit, 2);
    let seen: Vec<(&Value, &Value)> = records
        .iter()
        .map(|record| (&record["client"], &record["outcome"]))
        .collect();
    assert_eq!(
        seen,
        [
            (&json!("stdio"), &json!("ok")),
            (&json!("stdio"), &json!("rate_limited"))
        ]
    );
}

#[tokio::test]
async fn filters_hide_tools() {
    let root = fixture();
    let client = connect(
        proxy_command(
            root.path(),
            &["--read-only", "--deny", "analyze_*", "--deny", "find"],
        ),
        Negotiation::Auto,
        options(),
    )
    .await;
    let names: Vec<String> = client
        .list_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert_eq!(
        names,
        ["count_lines", "file_info", "list_directory", "read_text"]
    );
    let hidden = client
        .call_tool("find", arguments(json!({"glob": "*"})))
        .await;
    assert!(hidden.is_err() || hidden.unwrap().is_error);
}

#[tokio::test]
async fn the_http_front_serves_sessions_stateless_calls_and_metrics() {
    let root = fixture();
    let serve = toolshape_bin();
    let (serve, root_path) = (serve.to_str().unwrap(), root.path().to_str().unwrap());
    for stateless in [false, true] {
        let mut args = vec!["proxy", "--http", "127.0.0.1:0"];
        if stateless {
            args.push("--stateless");
        }
        args.extend(["--", serve, "serve", "--root", root_path]);
        let proxy = HttpServe::run(&args);
        let eras: &[Negotiation] = if stateless {
            &[Negotiation::Auto]
        } else {
            &[
                Negotiation::Pinned(ProtocolVersion::V2025_06_18),
                Negotiation::Auto,
            ]
        };
        for era in eras {
            let client = Client::builder()
                .negotiation(*era)
                .options(options())
                .connect_http(&proxy.url)
                .await
                .unwrap();
            let entries = client
                .call_tool("list_directory", arguments(json!({"path": "."})))
                .await
                .unwrap();
            let names: Vec<&str> = entries
                .structured
                .as_ref()
                .and_then(Value::as_array)
                .unwrap()
                .iter()
                .filter_map(|entry| entry["name"].as_str())
                .collect();
            assert_eq!(
                names,
                ["Cargo.toml", "data.csv", "sub", "three.txt"],
                "{era:?}"
            );
        }
        let metrics = reqwest::get(format!("http://{}/metrics", proxy.address))
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        let expected = format!(
            "toolshape_proxy_calls_total{{tool=\"list_directory\",outcome=\"ok\"}} {}",
            eras.len()
        );
        assert!(metrics.contains(&expected), "{metrics}");
        assert!(
            metrics
                .contains("toolshape_proxy_call_duration_seconds_count{tool=\"list_directory\"}")
        );
    }
}

#[tokio::test]
async fn the_otc_front_serves_the_same_tools() {
    let root = fixture();
    let serve = toolshape_bin();
    let (serve, root_path) = (serve.to_str().unwrap(), root.path().to_str().unwrap());
    let proxy = HttpServe::run(&[
        "proxy",
        "--otc",
        "127.0.0.1:0",
        "--toolkit",
        "Workspace",
        "--",
        serve,
        "serve",
        "--root",
        root_path,
    ]);
    let base = format!("http://{}", proxy.address);
    let tools = reqwest::get(format!("{base}/tools"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let tools: Value = serde_json::from_str(&tools).unwrap();
    let ids: Vec<&str> = tools["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|tool| tool["id"].as_str())
        .collect();
    assert!(ids.contains(&"Workspace.count_lines@1.0.0"), "{ids:?}");
    let http = reqwest::Client::new();
    let called = http
        .post(format!("{base}/tools/call"))
        .header("content-type", "application/json")
        .body(
            json!({"request": {"tool_id": "Workspace.count_lines", "input": {"path": "three.txt"}}})
                .to_string(),
        )
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let called: Value = serde_json::from_str(&called).unwrap();
    assert_eq!(called["result"]["value"], json!(3), "{called}");
    let refused = http
        .post(format!("{base}/tools/call"))
        .header("content-type", "application/json")
        .body(
            json!({"request": {"tool_id": "Workspace.count_lines", "input": {"path": 7}}})
                .to_string(),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status().as_u16(), 422);
    // The OTC front is an HTTP front: it serves the proxy's metrics too. The
    // refused call never became a call (the OTC layer checked its input).
    let metrics = reqwest::get(format!("{base}/metrics"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        metrics.contains("toolshape_proxy_calls_total{tool=\"count_lines\",outcome=\"ok\"} 1\n"),
        "{metrics}"
    );
    // A method `/metrics` does not take is refused as the endpoint's own
    // routes refuse one: 405 with a JSON message.
    let deleted = http.delete(format!("{base}/metrics")).send().await.unwrap();
    assert_eq!(deleted.status().as_u16(), 405);
    let body: Value = serde_json::from_slice(&deleted.bytes().await.unwrap()).unwrap();
    assert!(body["message"].is_string(), "{body}");
    // A foreign Host or Origin (DNS rebinding) reads no tool names: 403.
    for (name, value) in [("host", "evil.example"), ("origin", "http://evil.example")] {
        let foreign = http
            .get(format!("{base}/metrics"))
            .header(name, value)
            .send()
            .await
            .unwrap();
        assert_eq!(foreign.status().as_u16(), 403, "{name}: {value}");
        assert!(!foreign.text().await.unwrap().contains("count_lines"));
    }
}

#[tokio::test]
async fn an_http_upstream_is_proxied_too() {
    let root = fixture();
    let upstream = HttpServe::start_at(root.path(), &[]);
    for version in [ProtocolVersion::V2025_06_18, ProtocolVersion::V2026_07_28] {
        let command = ServerCommand::new(toolshape_bin())
            .args(["proxy", "--url", upstream.url.as_str()])
            .stderr(StderrMode::Capture);
        let client = connect(command, Negotiation::Pinned(version), options()).await;
        let lines = client
            .call_tool("count_lines", arguments(json!({"path": "three.txt"})))
            .await
            .unwrap();
        assert_eq!(lines.structured, Some(json!(3)), "{version}");
        let refused = client
            .call_tool("count_lines", arguments(json!({"path": ["x"]})))
            .await
            .unwrap();
        assert!(refused.is_error, "{version}");
    }
}

/// `--compile-budget`: an upstream whose listing takes longer to compile
/// than the budget (each schema within the bounds on one schema) gets its
/// tools compiled up to the budget; the rest are unusable, hidden or (with
/// `--broken-tools list`) listed with the problem, and the proxy serves.
#[tokio::test]
async fn an_upstream_listing_over_the_compile_budget_is_served_up_to_it() {
    // About 0.1 s of compiling each in a debug build: far more than 1 s.
    const TOOLS: usize = 100;
    let url = legacy_http::costly_listing(TOOLS).await;
    let proxy = |flags: &[&str]| {
        ServerCommand::new(toolshape_bin())
            .args(["proxy", "--compile-budget", "1", "--url", url.as_str()])
            .args(flags)
            .stderr(StderrMode::Capture)
    };
    let negotiation = Negotiation::Pinned(ProtocolVersion::V2025_11_25);
    let hidden = connect(proxy(&[]), negotiation, options()).await;
    let shown = hidden.list_tools().await.unwrap().len();
    assert!(shown < TOOLS, "all {shown} tools compiled within 1 s");

    let listed = connect(proxy(&["--broken-tools", "list"]), negotiation, options()).await;
    let tools = listed.list_tools().await.unwrap();
    assert_eq!(tools.len(), TOOLS);
    let unavailable: Vec<_> = tools
        .iter()
        .filter(|tool| {
            tool.description
                .as_deref()
                .unwrap_or_default()
                .starts_with("[unavailable: ")
        })
        .collect();
    assert!(!unavailable.is_empty());
    let description = unavailable[0].description.as_deref().unwrap_or_default();
    assert!(
        description.contains("the listing's schemas took more than 1000 ms to compile together"),
        "{description}"
    );
    let refused = listed
        .call_tool(&unavailable[0].name, arguments(json!({})))
        .await
        .unwrap();
    assert!(refused.is_error);
}

/// Names of a process's threads that tokio started (its workers and its
/// blocking pool), from `/proc`.
#[cfg(target_os = "linux")]
fn runtime_threads(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .unwrap()
        .filter_map(|task| std::fs::read_to_string(task.ok()?.path().join("comm")).ok())
        .filter(|name| name.trim() == "tokio-rt-worker")
        .count()
}

/// `--threads 1` runs an HTTP front on one thread, `--threads 3` on three
/// workers; both serve the same calls.
#[cfg(target_os = "linux")]
#[tokio::test]
async fn threads_sets_the_runtime_an_http_front_runs_on() {
    let root = fixture();
    let serve = toolshape_bin();
    let (serve, root_path) = (serve.to_str().unwrap(), root.path().to_str().unwrap());
    let mut counts = Vec::new();
    for threads in ["1", "3"] {
        let proxy = HttpServe::run(&[
            "--threads",
            threads,
            "proxy",
            "--http",
            "127.0.0.1:0",
            "--stateless",
            "--",
            serve,
            "serve",
            "--root",
            root_path,
        ]);
        let client = Client::builder()
            .options(options())
            .connect_http(&proxy.url)
            .await
            .unwrap();
        let lines = client
            .call_tool("count_lines", arguments(json!({"path": "three.txt"})))
            .await
            .unwrap();
        assert_eq!(lines.structured, Some(json!(3)), "--threads {threads}");
        counts.push(runtime_threads(proxy.child.id()));
    }
    // One thread: at most a blocking-pool thread beside the main one; three
    // workers: at least three.
    assert!(counts[0] <= 1 && counts[1] >= 3, "{counts:?}");
}

/// `toolshape bench` in front of the proxy reports the CPU of the proxy and
/// of the server behind it (read before and after the calls, Linux); in
/// front of a server without a child, no such second figure.
#[cfg(target_os = "linux")]
#[test]
fn bench_reports_the_cpu_of_the_server_behind_a_proxy() {
    let root = fixture();
    let root = root.path().to_str().unwrap();
    let serve = toolshape_bin();
    let serve = serve.to_str().unwrap();
    let bench = |server: &[&str]| -> Value {
        let output = std::process::Command::new(toolshape_bin())
            .args(["bench", "--json", "--quiet-server", "--calls", "200"])
            .args(["--tool", "count_lines", "--args", r#"{"path":"three.txt"}"#])
            .arg("--")
            .args(server)
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        serde_json::from_slice(&output.stdout).unwrap()
    };
    let direct = bench(&[serve, "serve", "--root", root]);
    assert!(direct["server_cpu_us_per_call"].is_number(), "{direct}");
    assert!(direct["children_cpu_us_per_call"].is_null(), "{direct}");
    let proxied = bench(&[serve, "proxy", "--", serve, "serve", "--root", root]);
    assert_eq!(proxied["failures"], 0, "{proxied}");
    assert!(proxied["server_cpu_us_per_call"].is_number(), "{proxied}");
    assert!(proxied["children_cpu_us_per_call"].is_number(), "{proxied}");
}
