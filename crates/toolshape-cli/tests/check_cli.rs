#![allow(clippy::unwrap_used, clippy::expect_used)]
//! `toolshape check` as a process: `toolshape serve` (over stdio and over
//! HTTP) is clean on every revision, exit 0; the `--json` report matches its
//! published schema; the `--junit` file parses as JUnit XML; the human
//! output has its summary lines and no colour off a terminal; and the exit
//! codes: 3 for a server that breaks a MUST (a small defective Streamable
//! HTTP server in this test) or, `--strict`, a SHOULD; 4 unreachable; 2 usage.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use quick_xml::Reader;
use quick_xml::events::Event;
use serde_json::{Value, json};
use toolshape::schema::SchemaEngine;

mod legacy_http;

const TOOLSHAPE: &str = env!("CARGO_BIN_EXE_toolshape");

/// A workspace whose `test` folder the generated arguments name.
fn fixture() -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    std::fs::create_dir(root.path().join("test")).unwrap();
    std::fs::write(root.path().join("test/a.txt"), "one\ntwo\n").unwrap();
    std::fs::write(root.path().join("test/data.csv"), "a,b\n1,2\n3,5\n").unwrap();
    root
}

/// Runs `toolshape <args>` to its end (off the async threads).
async fn toolshape(args: Vec<String>) -> Output {
    tokio::task::spawn_blocking(move || {
        Command::new(TOOLSHAPE)
            .args(&args)
            .stdin(Stdio::null())
            .output()
            .unwrap()
    })
    .await
    .unwrap()
}

fn strings(args: &[&str]) -> Vec<String> {
    args.iter().map(|a| (*a).to_owned()).collect()
}

fn serve_args(root: &Path) -> Vec<String> {
    vec![
        "--".into(),
        TOOLSHAPE.into(),
        "serve".into(),
        "--root".into(),
        root.display().to_string(),
    ]
}

fn report_schema() -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../toolshape-check/schema/check-report-v1.schema.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The test cases of a JUnit document: (name, failed).
fn junit_cases(xml: &str) -> Vec<(String, bool)> {
    let mut reader = Reader::from_str(xml);
    let mut cases = Vec::new();
    let mut in_suites = false;
    loop {
        match reader.read_event().unwrap() {
            Event::Start(element) | Event::Empty(element) => match element.name().as_ref() {
                b"testsuites" => in_suites = true,
                b"testcase" => {
                    assert!(in_suites);
                    let name = element.try_get_attribute("name").unwrap().unwrap();
                    cases.push((name.unescape_value().unwrap().into_owned(), false));
                }
                b"failure" | b"error" => cases.last_mut().unwrap().1 = true,
                _ => {}
            },
            Event::Eof => break,
            _ => {}
        }
    }
    cases
}

/// The revisions `all` leaves out, each checked on its own: every message
/// valid against that revision's own `schema.json` (2024-11-05's too,
/// carried since 2026-11-28), calls made and their results read as text.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_is_clean_on_the_oldest_revisions() {
    let root = fixture();
    for revision in ["2024-11-05", "2025-03-26"] {
        let mut args = strings(&["check", "--protocol", revision, "--call", "all", "--json"]);
        args.extend(serve_args(root.path()));
        let output = toolshape(args).await;
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert_eq!(output.status.code(), Some(0), "{revision}: {stdout}");
        let report: Value = serde_json::from_str(&stdout).unwrap();
        assert_eq!(report["summary"]["errors"], 0, "{revision}: {stdout}");
        assert_eq!(report["revisions"][0]["status"], "checked", "{stdout}");
        let tools = report["tools"].as_array().unwrap();
        let succeeded: u64 = tools
            .iter()
            .filter_map(|t| t["calls"]["succeeded"].as_u64())
            .sum();
        assert!(succeeded > 0, "{revision}: no call succeeded: {stdout}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_is_clean_on_every_revision() {
    let root = fixture();
    let junit = root.path().join("report.xml");
    let mut args = strings(&[
        "check",
        "--protocol",
        "all",
        "--call",
        "all",
        "--json",
        "--junit",
    ]);
    args.push(junit.display().to_string());
    args.extend(serve_args(root.path()));
    let output = toolshape(args).await;
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{stdout}");
    let report: Value = serde_json::from_str(&stdout).unwrap();
    SchemaEngine::default()
        .compile(&report_schema())
        .unwrap()
        .validate(&report)
        .unwrap();
    assert_eq!(report["summary"]["errors"], 0, "{stdout}");
    assert_eq!(report["summary"]["warnings"], 0, "{stdout}");
    let checked: Vec<&Value> = report["revisions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| &r["status"])
        .collect();
    assert_eq!(checked, [&json!("checked"); 3]);
    // Real calls happened, and succeeded: their outputs were validated.
    let tools = report["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 7);
    let listing = tools
        .iter()
        .find(|t| t["name"] == "list_directory")
        .unwrap();
    assert_eq!(listing["calls"]["succeeded"], 3, "{listing}");
    assert!(listing["calls"]["invalidRejected"].as_u64() > Some(0));

    let cases = junit_cases(&std::fs::read_to_string(&junit).unwrap());
    assert_eq!(cases.len(), 8, "{cases:?}");
    assert!(cases.iter().all(|(_, failed)| !failed), "{cases:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn human_output_has_a_line_per_tool_and_no_colour_off_a_terminal() {
    let root = fixture();
    let mut args = strings(&["check"]);
    args.extend(serve_args(root.path()));
    let output = toolshape(args).await;
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{stdout}");
    assert!(stdout.starts_with("toolshape "), "{stdout}");
    assert!(stdout.contains("2026-07-28 checked"), "{stdout}");
    for tool in ["list_directory", "read_text", "find", "analyze_dataset"] {
        assert!(
            stdout
                .lines()
                .any(|l| l.starts_with('✓') && l.contains(tool)),
            "{stdout}"
        );
    }
    assert!(stdout.contains("0 errors, 0 warnings"), "{stdout}");
    assert!(!stdout.contains('\x1b'), "colour off a terminal: {stdout}");
}

/// `toolshape serve --http 127.0.0.1:0`, its address read from stderr.
fn serve_http(root: &Path) -> (Child, String) {
    serve_http_with(root, &[])
}

/// The same with `extra` arguments.
fn serve_http_with(root: &Path, extra: &[&str]) -> (Child, String) {
    let mut child = Command::new(TOOLSHAPE)
        .args(["serve", "--http", "127.0.0.1:0", "--root"])
        .arg(root)
        .args(extra)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let (found, announced) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines() {
            let Ok(line) = line else { break };
            if let Some(url) = line.split("serving MCP on ").nth(1) {
                let _ = found.send(url.trim().to_owned());
            }
        }
    });
    let url = announced.recv_timeout(Duration::from_secs(10)).unwrap();
    (child, url)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_over_http_is_clean() {
    let root = fixture();
    let (mut server, url) = serve_http(root.path());
    let output = toolshape(strings(&["check", "--protocol", "all", "--url", &url])).await;
    let _ = server.kill();
    let _ = server.wait();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{stdout}");
    assert!(
        stdout.contains("2025-06-18 checked, 2025-11-25 checked, 2026-07-28 checked"),
        "{stdout}"
    );
}

/// A 2026-07-28-only endpoint behind a gateway that answers `initialize`
/// with a bare `400` (no JSON-RPC body), as the spec's compatibility matrix
/// has a modern server do: the handshake revisions are unsupported, not a
/// server that died. A bare `401` is no such refusal (credentials would be
/// refused on any revision): those revisions are unreachable, no finding.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bare_4xx_to_initialize_is_judged_by_its_status() {
    let root = fixture();
    let (mut server, url) = serve_http_with(root.path(), &["--stateless"]);
    for (refusal, statuses) in [
        (
            axum::http::StatusCode::BAD_REQUEST,
            "2025-06-18 unsupported, 2025-11-25 unsupported, 2026-07-28 checked",
        ),
        (
            axum::http::StatusCode::UNAUTHORIZED,
            "2025-06-18 unreachable, 2025-11-25 unreachable, 2026-07-28 checked",
        ),
    ] {
        let gateway = legacy_http::refusing_initialize(url.clone(), refusal).await;
        let output = toolshape(strings(&[
            "check",
            "--protocol",
            "all",
            "--call",
            "none",
            "--url",
            &gateway,
        ]))
        .await;
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert_eq!(output.status.code(), Some(0), "{refusal}: {stdout}");
        assert!(stdout.contains(statuses), "{refusal}: {stdout}");
        assert!(!stdout.contains("server-exited"), "{refusal}: {stdout}");
    }
    let _ = server.kill();
    let _ = server.wait();
}

/// A legacy Streamable HTTP server with one read-only tool whose output
/// breaks its outputSchema, and a `format` no standard defines in that
/// schema.
async fn defective() -> String {
    let answers: legacy_http::Answers = std::sync::Arc::new(|method| match method {
        "tools/list" => Some(json!({"tools": [{
            "name": "count",
            "inputSchema": {"type": "object"},
            "outputSchema": {"type": "object", "properties": {"n": {"type": "integer", "format": "int32"}}, "required": ["n"]},
            "annotations": {"readOnlyHint": true}
        }]})),
        "tools/call" => Some(json!({
            "content": [{"type": "text", "text": "{\"n\":\"three\"}"}],
            "structuredContent": {"n": "three"}
        })),
        _ => None,
    });
    legacy_http::serve("defective", answers).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exit_codes() {
    let url = defective().await;

    let run = |args: &[&str]| toolshape(strings(args));
    let code = |output: &Output| output.status.code();

    // 3: output-invalid is a MUST broken.
    let broken = run(&["check", "--url", &url]).await;
    let stdout = String::from_utf8_lossy(&broken.stdout);
    assert_eq!(code(&broken), Some(3), "{stdout}");
    assert!(stdout.contains("output-invalid"), "{stdout}");
    assert!(stdout.contains("result:/structuredContent/n"), "{stdout}");
    assert!(stdout.contains("fix: "), "{stdout}");
    // Without calls only the warning is left: 0, or 3 with --strict.
    assert_eq!(
        code(&run(&["check", "--call", "none", "--url", &url]).await),
        Some(0)
    );
    assert_eq!(
        code(&run(&["check", "--call", "none", "--strict", "--url", &url]).await),
        Some(3)
    );
    // 4: nothing there.
    assert_eq!(
        code(&run(&["check", "--", "/nonexistent/toolshape-check-server"]).await),
        Some(4)
    );
    assert_eq!(
        code(&run(&["check", "--url", "http://127.0.0.1:1/mcp"]).await),
        Some(4)
    );
    // 2: usage.
    assert_eq!(code(&run(&["check"]).await), Some(2));
    assert_eq!(
        code(&run(&["check", "--protocol", "1999-01-01", "--url", &url]).await),
        Some(2)
    );
    assert_eq!(
        code(&run(&["check", "--args", "count=[1]", "--url", &url]).await),
        Some(2)
    );
    assert_eq!(
        code(&run(&["check", "--url", &url, "--", "true"]).await),
        Some(2)
    );
}

/// Tools in the costly listing: about 0.1 s of compiling each in a debug
/// build, far more than the 1 s budget together.
const COSTLY_TOOLS: usize = 100;

/// `--compile-budget`: a listing whose schemas take longer to compile
/// together is checked up to the budget, and the report says so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listing_over_the_compile_budget_is_reported() {
    let url = legacy_http::costly_listing(COSTLY_TOOLS).await;
    let output = toolshape(strings(&[
        "check",
        "--call",
        "none",
        "--compile-budget",
        "1",
        "--json",
        "--url",
        &url,
    ]))
    .await;
    let report: Value = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&output.stderr)));
    SchemaEngine::default()
        .compile(&report_schema())
        .unwrap()
        .validate(&report)
        .unwrap();
    let over: Vec<&Value> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|finding| finding["rule"] == "list-compile-over-budget")
        .collect();
    assert_eq!(over.len(), 1, "{report:#}");
    let message = over[0]["message"].as_str().unwrap();
    let skipped: usize = message
        .split_once(" schemas not checked")
        .and_then(|(count, _)| count.parse().ok())
        .unwrap_or_else(|| panic!("{message}"));
    assert!(skipped > 0 && skipped <= 2 * COSTLY_TOOLS, "{message}");
    assert!(
        message.ends_with("took more than 1 s to compile together"),
        "{message}"
    );
    // A warning: exit 0, or 3 with --strict.
    assert_eq!(output.status.code(), Some(0), "{report:#}");
}

/// On a terminal (a pseudo-terminal here) the same report is in colour.
#[test]
fn colour_on_a_terminal() {
    use rustix::pty::{OpenptFlags, grantpt, openpt, ptsname, unlockpt};
    use std::io::Read;
    let controller = openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY).unwrap();
    grantpt(&controller).unwrap();
    unlockpt(&controller).unwrap();
    let device = ptsname(&controller, Vec::new()).unwrap();
    let terminal = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(device.to_string_lossy().as_ref())
        .unwrap();
    let root = fixture();
    let mut args = strings(&["check"]);
    args.extend(serve_args(root.path()));
    let mut child = Command::new(TOOLSHAPE)
        .args(&args)
        .env_remove("NO_COLOR")
        .stdin(Stdio::null())
        .stdout(terminal)
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut controller = std::fs::File::from(controller);
    let reader = std::thread::spawn(move || {
        let mut seen = Vec::new();
        let mut buffer = [0u8; 4096];
        // The terminal side reads as EIO once the child has closed it.
        while let Ok(n) = controller.read(&mut buffer) {
            if n == 0 {
                break;
            }
            seen.extend_from_slice(&buffer[..n]);
        }
        String::from_utf8_lossy(&seen).into_owned()
    });
    assert!(child.wait().unwrap().success());
    let seen = reader.join().unwrap();
    assert!(seen.contains("\x1b[1m"), "{seen:?}");
    assert!(seen.contains("0 errors, 0 warnings"), "{seen:?}");
}

#[tokio::test]
async fn a_report_file_that_cannot_be_written_fails_before_the_check() {
    let root = tempfile::tempdir().unwrap();
    let unwritable = root.path().join("no-such-dir").join("report.xml");
    let started = std::time::Instant::now();
    // A server that never answers: a check would take its timeouts first.
    let output = toolshape(strings(&[
        "check",
        "--junit",
        unwritable.to_str().unwrap(),
        "--",
        "sleep",
        "100",
    ]))
    .await;
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("cannot write"), "{stderr}");
    assert!(
        started.elapsed() < std::time::Duration::from_secs(5),
        "took {:?}",
        started.elapsed()
    );
}
