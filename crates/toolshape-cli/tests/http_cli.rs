#![allow(clippy::unwrap_used, clippy::expect_used)]
//! `toolshape serve --http` and the client commands' `--url`, as processes
//! over real loopback HTTP: listing and calling in both eras, the exit codes
//! of `connect.rs` (0 success, 1 tool error, 2 usage, 3 validation failure,
//! 4 protocol or transport failure), `--stateless`, `--allow-origin`, a
//! graceful stop on SIGINT, a drain on SIGTERM (`/health`), the session a pinned handshake leaves behind, and
//! an API key in a `--header` (no OAuth).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

mod http_serve;
mod legacy_http;

use http_serve::{HttpServe, WAIT, toolshape};
#[cfg(unix)]
use http_serve::{health, signal, wait_exit, wait_until};

fn code(output: &Output) -> i32 {
    output.status.code().expect("an exit code")
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn describe(output: &Output) -> String {
    format!(
        "exit {:?}\nstdout: {}\nstderr: {}",
        output.status.code(),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

#[test]
fn tools_and_call_over_url_in_both_eras() {
    let server = HttpServe::start(&[]);
    let url = server.url.as_str();

    for (protocol, shown) in [("auto", "2026-07-28"), ("2025-11-25", "2025-11-25")] {
        let listed = toolshape(&["tools", "--url", url, "--protocol", protocol]);
        assert_eq!(code(&listed), 0, "{}", describe(&listed));
        let text = stdout(&listed);
        assert!(text.contains(&format!("(protocol {shown})")), "{text}");
        assert!(text.contains("count_lines"), "{text}");

        let called = toolshape(&[
            "call",
            "count_lines",
            "--args",
            r#"{"path": "three.txt"}"#,
            "--url",
            url,
            "--protocol",
            protocol,
        ]);
        assert_eq!(code(&called), 0, "{}", describe(&called));
        assert_eq!(stdout(&called).trim(), "3", "{protocol}");
    }

    let listed = toolshape(&["tools", "--json", "--url", url]);
    assert_eq!(code(&listed), 0, "{}", describe(&listed));
    let tools: Value = serde_json::from_str(&stdout(&listed)).unwrap();
    assert!(
        tools
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"] == "count_lines" && t["outputSchema"]["type"] == "integer"),
        "{tools}"
    );

    // 1: the tool reported an error (a missing file, invalid arguments).
    let missing = toolshape(&[
        "call",
        "read_text",
        "--args",
        r#"{"path": "missing.txt"}"#,
        "--url",
        url,
    ]);
    assert_eq!(code(&missing), 1, "{}", describe(&missing));
    let invalid = toolshape(&["call", "count_lines", "--args", "{}", "--url", url]);
    assert_eq!(code(&invalid), 1, "{}", describe(&invalid));

    // 4: a protocol error (an unknown tool is a JSON-RPC error here).
    let unknown = toolshape(&["call", "no_such_tool", "--url", url]);
    assert_eq!(code(&unknown), 4, "{}", describe(&unknown));
    // ... naming the tools there are (the name given is likely a typo).
    let said = String::from_utf8_lossy(&unknown.stderr);
    assert!(
        said.contains("lists no tool named \"no_such_tool\"") && said.contains("count_lines"),
        "{said}"
    );

    // 2: usage errors.
    let bad_args = toolshape(&["call", "count_lines", "--args", "[1]", "--url", url]);
    assert_eq!(code(&bad_args), 2, "{}", describe(&bad_args));
    let bad_protocol = toolshape(&["tools", "--url", url, "--protocol", "1999-01-01"]);
    assert_eq!(code(&bad_protocol), 2, "{}", describe(&bad_protocol));
    let both = toolshape(&["tools", "--url", url, "--", "toolshape", "serve"]);
    assert_eq!(code(&both), 2, "{}", describe(&both));
}

#[test]
fn an_unreachable_url_is_exit_4() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    drop(listener);
    let url = format!("http://{address}/mcp");
    let output = toolshape(&["tools", "--url", &url]);
    assert_eq!(code(&output), 4, "{}", describe(&output));
    // The cause is said, not only that the request failed.
    let said = String::from_utf8_lossy(&output.stderr).to_lowercase();
    assert!(said.contains("connection refused"), "{said}");
    let output = toolshape(&["call", "count_lines", "--url", &url]);
    assert_eq!(code(&output), 4, "{}", describe(&output));
}

/// `--protocol 2026-07-28` against a server on the handshake revisions
/// only: the error says why (it does not know `server/discover`) and what
/// to do, beside the server's own `-32601`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pinned_2026_07_28_on_an_older_server_says_why() {
    let url = legacy_http::serve("older", std::sync::Arc::new(|_| None)).await;
    let output = tokio::task::spawn_blocking(move || {
        toolshape(&["tools", "--protocol", "2026-07-28", "--url", &url])
    })
    .await
    .unwrap();
    assert_eq!(code(&output), 4, "{}", describe(&output));
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(said.contains("-32601"), "{said}");
    assert!(
        said.contains("does not speak 2026-07-28") && said.contains("--protocol auto"),
        "{said}"
    );
}

/// An endpoint that takes connections and never answers: `--timeout`
/// bounds every wait, the OAuth probe's too (it waited 30 s whatever
/// `--timeout` said).
#[test]
fn a_silent_url_is_bounded_by_the_timeout() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        // Held open, never answered.
        let held: Vec<_> = listener.incoming().collect();
        drop(held);
    });
    let started = Instant::now();
    let output = toolshape(&["tools", "--timeout", "1", "--url", &url]);
    let took = started.elapsed();
    assert_eq!(code(&output), 4, "{}", describe(&output));
    assert!(took < Duration::from_secs(15), "took {took:?}");
}

#[test]
fn a_stateless_server_serves_2026_07_28_and_refuses_handshakes() {
    let server = HttpServe::start(&["--stateless"]);
    let modern = toolshape(&["tools", "--url", &server.url]);
    assert_eq!(code(&modern), 0, "{}", describe(&modern));
    assert!(stdout(&modern).contains("(protocol 2026-07-28)"));
    let legacy = toolshape(&["tools", "--url", &server.url, "--protocol", "2025-11-25"]);
    assert_eq!(code(&legacy), 4, "{}", describe(&legacy));
}

/// Sends one raw HTTP/1.1 request to `/mcp`; returns the status code.
fn raw_status(address: &str, method: &str, headers: &[(&str, &str)], body: &str) -> u16 {
    raw_status_at(address, method, "/mcp", headers, body)
}

/// Sends one raw HTTP/1.1 request to `path`; returns the status code.
fn raw_status_at(
    address: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> u16 {
    let mut stream = TcpStream::connect(address).unwrap();
    stream.set_read_timeout(Some(WAIT)).unwrap();
    let mut request = format!(
        "{method} {path} HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(body);
    stream.write_all(request.as_bytes()).unwrap();
    let mut status_line = String::new();
    BufReader::new(stream).read_line(&mut status_line).unwrap();
    status_line
        .split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or_else(|| panic!("not an HTTP status line: {status_line:?}"))
}

#[test]
fn origins_are_checked_and_allow_origin_adds_one() {
    let server = HttpServe::start(&["--allow-origin", "https://app.example.com"]);
    let body = json!({
        "jsonrpc": "2.0", "id": 1, "method": "tools/list",
        "params": {"_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"},
        }},
    })
    .to_string();
    let headers = |origin: &'static str| {
        vec![
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "tools/list"),
            ("Origin", origin),
        ]
    };
    for (origin, expected) in [
        ("http://localhost:5173", 200),
        ("https://app.example.com", 200),
        ("http://evil.example", 403),
        ("https://app.example.com.evil.example", 403),
    ] {
        assert_eq!(
            raw_status(&server.address, "POST", &headers(origin), &body),
            expected,
            "{origin}"
        );
    }
    // GET and DELETE without a session: 405.
    assert_eq!(raw_status(&server.address, "GET", &[], ""), 405);
    assert_eq!(raw_status(&server.address, "DELETE", &[], ""), 405);
}

#[cfg(unix)]
#[test]
fn serve_http_stops_gracefully_on_sigint() {
    let mut server = HttpServe::start(&[]);
    let listed = toolshape(&["tools", "--url", &server.url]);
    assert_eq!(code(&listed), 0, "{}", describe(&listed));
    let interrupted = Command::new("kill")
        .args(["-INT", &server.child.id().to_string()])
        .status()
        .unwrap();
    assert!(interrupted.success());
    let started = Instant::now();
    let status = loop {
        if let Some(status) = server.child.try_wait().unwrap() {
            break status;
        }
        assert!(started.elapsed() < WAIT, "serve --http ignored SIGINT");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(status.code(), Some(0), "{status:?}");
}

#[cfg(unix)]
#[test]
fn serve_http_drains_on_sigterm_with_health_saying_so() {
    let mut server = HttpServe::start(&["--drain", "8"]);
    assert_eq!(
        health(&server.address),
        (200, r#"{"status":"ok"}"#.to_owned())
    );
    // A foreign Origin is refused there as on /mcp.
    let origin = [("Origin", "https://evil.example")];
    assert_eq!(
        raw_status_at(&server.address, "GET", "/health", &origin, ""),
        403
    );
    // What process managers and orchestrators send (it killed the server
    // at once before).
    let signalled = Instant::now();
    signal(&server.child, "TERM");
    wait_until("/health answering 503", || match health(&server.address) {
        (503, body) if body == r#"{"status":"unavailable"}"# => Ok(()),
        other => Err(format!("{other:?} at {:?}", signalled.elapsed())),
    });
    // Still served while draining, for the load balancer to notice.
    let listed = toolshape(&["tools", "--url", &server.url]);
    assert_eq!(code(&listed), 0, "{}", describe(&listed));
    let status = wait_exit(&mut server.child);
    assert_eq!(status.code(), Some(0), "{status:?}");
    assert!(
        signalled.elapsed() >= Duration::from_secs(7),
        "the drain was cut short: {:?}",
        signalled.elapsed()
    );
}

#[cfg(unix)]
#[test]
fn a_second_signal_stops_at_once_and_otc_drain_names_the_drain() {
    // `--otc-drain` (its name before `--drain` covered the MCP front too)
    // sets the drain of both fronts; `server.address` is the MCP one's.
    let mut server = HttpServe::start(&["--otc", "127.0.0.1:0", "--otc-drain", "30"]);
    assert_eq!(health(&server.address).0, 200);
    signal(&server.child, "TERM");
    wait_until("/health answering 503", || match health(&server.address) {
        (503, _) => Ok(()),
        other => Err(format!("{other:?}")),
    });
    // Thirty seconds of drain, cut short by a second signal.
    signal(&server.child, "INT");
    let status = wait_exit(&mut server.child);
    assert_eq!(status.code(), Some(130), "{status:?}");
}

#[test]
fn drain_without_an_http_front_is_a_usage_error() {
    let refused = toolshape(&["serve", "--drain", "5"]);
    assert_eq!(code(&refused), 2, "{}", describe(&refused));
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("--drain needs --http or --otc"),
        "{}",
        describe(&refused)
    );
}

/// A time flag past a year is a usage error, not a crash (the clock's
/// arithmetic overflowed: `serve --call-timeout 18446744073709551615`,
/// `call --timeout`, `proxy --tool-timeout` and others panicked).
#[test]
fn time_flags_past_a_year_are_usage_errors() {
    let huge = "18446744073709551615";
    let tool_timeout = format!("x={huge}");
    for args in [
        vec!["serve", "--call-timeout", huge],
        vec![
            "serve",
            "--http",
            "127.0.0.1:0",
            "--session-idle-timeout",
            huge,
        ],
        vec!["serve", "--http", "127.0.0.1:0", "--drain", huge],
        vec!["tools", "--timeout", huge, "--", "true"],
        vec!["check", "--max-time", huge, "--", "true"],
        vec!["proxy", "--tool-timeout", &tool_timeout, "--", "true"],
    ] {
        let refused = toolshape(&args);
        let stderr = String::from_utf8_lossy(&refused.stderr);
        assert_eq!(code(&refused), 2, "{args:?}: {}", describe(&refused));
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert!(
            stderr.contains("31536000") || stderr.contains("a year"),
            "{args:?}: {stderr}"
        );
    }
}

/// A per-tool timeout of zero is a usage error (it was read as one second).
#[test]
fn a_zero_tool_timeout_is_a_usage_error() {
    let refused = toolshape(&["proxy", "--tool-timeout", "x=0", "--", "true"]);
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(code(&refused), 2, "{}", describe(&refused));
    assert!(stderr.contains("at least 1 second"), "{stderr}");
}

/// A Streamable HTTP endpoint that lies: its one tool lists an outputSchema
/// (an object with an integer `n`) that its results break. `kind` picks the
/// lie: `"wrong"` (`n` is a string) or `"missing"` (no structuredContent).
fn lying_server(kind: &'static str) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { break };
            std::thread::spawn(move || answer_lying(stream, kind));
        }
    });
    url
}

fn answer_lying(mut stream: TcpStream, kind: &str) {
    stream.set_read_timeout(Some(WAIT)).unwrap();
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut length = 0;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse().unwrap();
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).unwrap();
    let message: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let id = message["id"].clone();
    let result = match message["method"].as_str().unwrap_or("") {
        "server/discover" => json!({
            "resultType": "complete",
            "supportedVersions": ["2026-07-28"],
            "capabilities": {"tools": {}},
            "ttlMs": 0,
            "cacheScope": "private",
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "liar", "version": "1"}},
        }),
        "tools/list" => json!({
            "resultType": "complete",
            "tools": [{
                "name": "liar",
                "inputSchema": {"type": "object"},
                "outputSchema": {
                    "type": "object",
                    "properties": {"n": {"type": "integer"}},
                    "required": ["n"],
                },
            }],
            "ttlMs": 0,
            "cacheScope": "private",
        }),
        "tools/call" if kind == "missing" => json!({
            "resultType": "complete",
            "content": [{"type": "text", "text": "seven"}],
        }),
        "tools/call" => json!({
            "resultType": "complete",
            "content": [{"type": "text", "text": "{\"n\":\"seven\"}"}],
            "structuredContent": {"n": "seven"},
        }),
        _ => Value::Null,
    };
    let reply = if id.is_null() {
        "HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".to_owned()
    } else {
        let body = json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string();
        format!(
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
    };
    let _ = stream.write_all(reply.as_bytes());
}

#[test]
fn output_that_breaks_its_schema_is_exit_3() {
    for kind in ["wrong", "missing"] {
        let url = lying_server(kind);
        let listed = toolshape(&["tools", "--url", &url]);
        assert_eq!(code(&listed), 0, "{}", describe(&listed));
        let called = toolshape(&["call", "liar", "--url", &url]);
        assert_eq!(code(&called), 3, "{kind}: {}", describe(&called));
        assert!(
            !stdout(&called).contains("seven"),
            "nothing unchecked is printed: {}",
            describe(&called)
        );
    }
}

// `Client::close` waits (bounded) until the transport has sent the session's
// DELETE, so a CLI run that pins a handshake revision leaves no session behind.
// The endpoint is mounted in an axum app whose middleware counts the DELETEs
// the server accepted.
#[test]
fn a_pinned_handshake_ends_its_session_before_exiting() {
    use std::sync::atomic::{AtomicUsize, Ordering};

    let ended = std::sync::Arc::new(AtomicUsize::new(0));
    let counted = std::sync::Arc::clone(&ended);
    let served = Served::start(move || {
        let server = toolshape::Server::builder("one-session", "1")
            .build()
            .unwrap();
        server
            .router(toolshape::HttpOptions::default())
            .layer(axum::middleware::from_fn(
                move |request: axum::extract::Request, next: axum::middleware::Next| {
                    let counted = std::sync::Arc::clone(&counted);
                    async move {
                        let delete = request.method() == axum::http::Method::DELETE;
                        let response = next.run(request).await;
                        if delete && response.status().is_success() {
                            counted.fetch_add(1, Ordering::SeqCst);
                        }
                        response
                    }
                },
            ))
    });
    let url = served.url.clone();
    for run in 0..3 {
        let output = toolshape(&["tools", "--url", &url, "--protocol", "2025-11-25"]);
        assert_eq!(code(&output), 0, "run {run}: {}", describe(&output));
        assert_eq!(
            ended.load(Ordering::SeqCst),
            run + 1,
            "run {run} ended its session"
        );
    }
    served.stop();
}

// A server that takes an API key in a header of its own (no OAuth): the
// fixed header goes with the CLI's probe for OAuth too, so the key answers
// it and no OAuth starts (the probe went without it, got the server's 401,
// and tried OAuth discovery, which failed); a wrong key is the server's 401,
// exit 4.
#[test]
fn an_api_key_header_answers_without_oauth() {
    let served = Served::start(|| {
        let server = toolshape::Server::builder("keyed", "1").build().unwrap();
        server
            .router(toolshape::HttpOptions::default())
            .layer(axum::middleware::from_fn(
                |request: axum::extract::Request, next: axum::middleware::Next| async move {
                    let key = request.headers().get("x-api-key");
                    if key.is_none_or(|key| key != "k-123") {
                        return axum::response::IntoResponse::into_response(
                            axum::http::StatusCode::UNAUTHORIZED,
                        );
                    }
                    next.run(request).await
                },
            ))
    });
    let url = served.url.clone();
    let tools = |key: &str| {
        let header = format!("X-Api-Key: {key}");
        toolshape(&["tools", "--url", &url, "--header", &header])
    };
    let output = tools("k-123");
    assert_eq!(code(&output), 0, "{}", describe(&output));
    // A wrong key: the server's 401 looks like OAuth wanted; the error says
    // the header may be the cause.
    let output = tools("wrong");
    assert_eq!(code(&output), 4, "{}", describe(&output));
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(
        said.contains("--header values") && said.contains("--no-oauth"),
        "{said}"
    );
    served.stop();
}

/// An axum app served on loopback from a runtime of its own, until stopped.
struct Served {
    runtime: tokio::runtime::Runtime,
    url: String,
    stop: tokio::sync::oneshot::Sender<()>,
    serving: tokio::task::JoinHandle<std::io::Result<()>>,
}

impl Served {
    /// Serves the app `make` builds (within the runtime); `url` is its `/mcp`.
    fn start(make: impl FnOnce() -> axum::Router + Send + 'static) -> Served {
        let runtime = tokio::runtime::Runtime::new().unwrap();
        let listener = runtime
            .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
            .unwrap();
        let url = format!("http://{}/mcp", listener.local_addr().unwrap());
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let serving = runtime.spawn(async move {
            axum::serve(listener, make())
                .with_graceful_shutdown(async move {
                    let _ = stopped.await;
                })
                .await
        });
        Served {
            runtime,
            url,
            stop,
            serving,
        }
    }

    /// Stops serving and waits for the server to finish.
    fn stop(self) {
        let _ = self.stop.send(());
        self.runtime.block_on(self.serving).unwrap().unwrap();
    }
}
