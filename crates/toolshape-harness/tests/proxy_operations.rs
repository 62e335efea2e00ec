#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The proxy's accounts of calls that never got their answer (the library,
//! served over real HTTP on loopback, in front of the hostile server, a real
//! child process): a call its client abandons (its time limit passed, the
//! request closed) is audited and counted as `cancelled`; one past its time
//! limit while it waited for a place toward the upstream, as `timeout`. An
//! HTTP upstream that goes away is seen down (from a call or a prompt), and
//! back; one that takes connections and never answers stays down.

mod client_common;

use std::time::{Duration, Instant};

use serde_json::Value;
use toolshape::client::{Client, ClientErrorKind, Negotiation, ServerCommand, StderrMode};
use toolshape::protocol::ProtocolVersion;
use toolshape::tool::CallOptions;
use toolshape_proxy::{AuditTarget, Proxy, ProxyOptions, UpstreamSpec};

#[tokio::test]
async fn a_call_its_client_abandons_is_audited_and_counted_as_cancelled() {
    for era in [ProtocolVersion::V2025_11_25, ProtocolVersion::V2026_07_28] {
        let dir = tempfile::tempdir().unwrap();
        let audit = dir.path().join("audit.jsonl");
        let mut options = ProxyOptions::default();
        options.audit = Some(AuditTarget::File(audit.clone()));
        let upstream =
            ServerCommand::new(client_common::hostile_server_bin()).stderr(StderrMode::Capture);
        let proxy = client_common::start_proxy(upstream, Negotiation::Auto, options).await;
        let url = client_common::serve_proxy_over_http(proxy.registry().clone()).await;
        let client = client_common::connect_http(&url, Negotiation::Pinned(era)).await;
        let abandoned = CallOptions::new().timeout(Duration::from_millis(300));
        let error = client
            .call_tool_with("hang", None, abandoned)
            .await
            .unwrap_err();
        assert!(
            matches!(error.kind(), ClientErrorKind::Timeout(_)),
            "{era:?}: {error}"
        );
        // The proxy hears of it (a cancellation, or the request closed).
        let counted = "toolshape_proxy_calls_total{tool=\"hang\",outcome=\"cancelled\"} 1";
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while !proxy.metrics_text().contains(counted) {
            assert!(
                std::time::Instant::now() < deadline,
                "{era:?}: {}",
                proxy.metrics_text()
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        proxy.shutdown(Duration::from_secs(2)).await;
        let records = std::fs::read_to_string(&audit).unwrap();
        let record: Value = serde_json::from_str(records.lines().last().unwrap()).unwrap();
        assert_eq!(
            (&record["tool"], &record["outcome"]),
            (&Value::from("hang"), &Value::from("cancelled")),
            "{era:?}: {record}"
        );
    }
}

/// A call's time limit counts from its arrival at the proxy: one waiting
/// for a place toward the upstream (`max_concurrent`) past its limit is
/// answered as timed out, audited and counted as `timeout`, though the
/// call holding the place has longer to go.
#[tokio::test]
async fn a_call_waiting_for_a_place_past_its_limit_times_out() {
    let dir = tempfile::tempdir().unwrap();
    let audit = dir.path().join("audit.jsonl");
    let mut options = ProxyOptions::default();
    options.audit = Some(AuditTarget::File(audit.clone()));
    options.max_concurrent = Some(1);
    options.call_timeout = Duration::from_millis(500);
    options
        .tool_timeouts
        .insert("hang".into(), Duration::from_secs(20));
    let upstream =
        ServerCommand::new(client_common::hostile_server_bin()).stderr(StderrMode::Capture);
    let proxy = client_common::start_proxy(upstream, Negotiation::Auto, options).await;
    let url = client_common::serve_proxy_over_http(proxy.registry().clone()).await;
    let era = Negotiation::Pinned(ProtocolVersion::V2026_07_28);
    let client = client_common::connect_http(&url, era).await;
    let holding = client.call_tool("hang", None);
    let waiting = async {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let started = std::time::Instant::now();
        (client.call_tool("ok", None).await, started.elapsed())
    };
    let waited = tokio::select! {
        _ = holding => panic!("the hanging call ended"),
        waited = waiting => waited,
    };
    let (result, took) = waited;
    let result = result.unwrap();
    assert!(result.is_error, "{}", result.text());
    assert!(result.text().contains("within 500 ms"), "{}", result.text());
    assert!(took < Duration::from_secs(10), "{took:?}");
    let counted = "toolshape_proxy_calls_total{tool=\"ok\",outcome=\"timeout\"} 1";
    assert!(
        proxy.metrics_text().contains(counted),
        "{}",
        proxy.metrics_text()
    );
    proxy.shutdown(Duration::from_secs(2)).await;
    let records = std::fs::read_to_string(&audit).unwrap();
    assert!(
        records
            .lines()
            .any(|line| line.contains(r#""tool":"ok""#) && line.contains(r#""outcome":"timeout""#)),
        "{records}"
    );
}

/// A toolshape server with one tool, `echo`, and one prompt, `note`, over HTTP on `listener`,
/// until `stop` resolves.
fn echo_upstream(
    listener: tokio::net::TcpListener,
    stop: impl std::future::Future<Output = ()> + Send + 'static,
) -> tokio::task::JoinHandle<std::io::Result<()>> {
    let echo = toolshape::Tool::dynamic(
        "echo",
        serde_json::json!({"type": "object"}),
        None,
        |_: toolshape::ToolContext, arguments: Value| async move {
            Ok(toolshape::ToolOutput::text(arguments.to_string()))
        },
    );
    let note = toolshape::prompt::Prompt::new("note", |_, _| async {
        Ok::<_, toolshape::ToolError>(toolshape::protocol::prompts::GetPromptResult::new(
            Vec::new(),
        ))
    });
    let server = toolshape::Server::builder("upstream", "1")
        .tool(echo)
        .prompt(note)
        .build()
        .unwrap();
    tokio::spawn(async move {
        server
            .serve_http(listener, toolshape::HttpOptions::default(), stop)
            .await
    })
}

/// The proxy in front of [`echo_upstream`] on a loopback address: the
/// address, what stops the upstream, its task, the proxy.
async fn proxy_before_an_echo_upstream() -> (
    std::net::SocketAddr,
    tokio::sync::oneshot::Sender<()>,
    tokio::task::JoinHandle<std::io::Result<()>>,
    Proxy,
) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = echo_upstream(listener, async {
        let _ = stopped.await;
    });
    let upstream = UpstreamSpec::Url(format!("http://{address}/mcp"));
    let builder = Client::builder().options(client_common::options());
    let proxy = Proxy::start(upstream, builder, ProxyOptions::default())
        .await
        .expect("the proxy starts");
    (address, stop, serving, proxy)
}

/// A listener on `address` again, once the one before it let it go.
async fn bind_again(address: std::net::SocketAddr) -> tokio::net::TcpListener {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        match tokio::net::TcpListener::bind(address).await {
            Ok(listener) => return listener,
            Err(error) => {
                assert!(Instant::now() < deadline, "{error}");
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    }
}

/// An HTTP upstream (`--url`) that goes away: the call that cannot reach
/// it fails (retryably) and marks the upstream down (what `/health` says),
/// and a probe sees it come back on its own, counted as a restart.
#[tokio::test]
async fn an_http_upstream_that_goes_away_is_seen_down_and_back() {
    let (address, stop, serving, proxy) = proxy_before_an_echo_upstream().await;
    let url = client_common::serve_proxy_over_http(proxy.registry().clone()).await;
    let client = client_common::connect_http(&url, Negotiation::Auto).await;
    let echoed = client.call_tool("echo", None).await.unwrap();
    assert!(!echoed.is_error, "{}", echoed.text());
    assert!(proxy.is_upstream_connected());

    stop.send(()).unwrap();
    serving.await.unwrap().unwrap();
    let failed = client.call_tool("echo", None).await.unwrap();
    assert!(failed.is_error, "{}", failed.text());
    assert!(
        failed.text().contains("could not run echo"),
        "{}",
        failed.text()
    );
    assert!(!proxy.is_upstream_connected(), "seen down");

    // Back on the same address: the probe finds it.
    let listener = bind_again(address).await;
    let _serving = echo_upstream(listener, std::future::pending());
    let deadline = Instant::now() + Duration::from_secs(10);
    while !proxy.is_upstream_connected() {
        assert!(Instant::now() < deadline, "never seen back");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let restarts = "toolshape_proxy_upstream_restarts_total 1";
    assert!(
        proxy.metrics_text().contains(restarts),
        "{}",
        proxy.metrics_text()
    );
    let echoed = client.call_tool("echo", None).await.unwrap();
    assert!(!echoed.is_error, "{}", echoed.text());
}

/// Not only calls: a prompt that cannot reach an HTTP upstream marks it
/// down too (a load balancer then stops sending it requests that fail).
#[tokio::test]
async fn a_prompt_that_cannot_reach_an_http_upstream_marks_it_down() {
    let (_, stop, serving, proxy) = proxy_before_an_echo_upstream().await;
    let server = proxy
        .add_to(toolshape::Server::builder("proxy", "1.0.0"))
        .build()
        .expect("the server builds");
    let url = client_common::serve_over_http(server).await;
    let client = client_common::connect_http(&url, Negotiation::Auto).await;
    client.get_prompt("note", None).await.unwrap();

    stop.send(()).unwrap();
    serving.await.unwrap().unwrap();
    let failed = client.get_prompt("note", None).await.unwrap_err();
    assert!(failed.to_string().contains("note"), "{failed}");
    assert!(!proxy.is_upstream_connected(), "seen down");
}

/// An HTTP upstream that takes connections but never answers (a host
/// gone quiet behind its address): the probe's ping times out, which keeps
/// it down, and one probe at a time connects to it.
#[tokio::test]
async fn an_http_upstream_that_never_answers_the_probe_stays_down() {
    let (address, stop, serving, proxy) = proxy_before_an_echo_upstream().await;
    let url = client_common::serve_proxy_over_http(proxy.registry().clone()).await;
    let client = client_common::connect_http(&url, Negotiation::Auto).await;
    stop.send(()).unwrap();
    serving.await.unwrap().unwrap();
    let failed = client.call_tool("echo", None).await.unwrap();
    assert!(failed.is_error, "{}", failed.text());
    assert!(!proxy.is_upstream_connected(), "seen down");

    // The same address now takes connections and says nothing.
    let listener = bind_again(address).await;
    let taken = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = std::sync::Arc::clone(&taken);
    let _silent = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((connection, _)) = listener.accept().await {
            counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            held.push(connection);
        }
    });
    // Past the first probe's 5 s wait for its answer.
    tokio::time::sleep(Duration::from_millis(6_000)).await;
    assert!(!proxy.is_upstream_connected(), "a silent upstream seen up");
    // One probe at a time (two pings in the 6 s), and the listen stream
    // that follows the upstream's changes trying again.
    let connections = taken.load(std::sync::atomic::Ordering::SeqCst);
    assert!((1..=4).contains(&connections), "{connections} connections");
}
