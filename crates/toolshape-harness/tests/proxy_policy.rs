#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The proxy (the library, served over real HTTP on loopback) in front of
//! the conformance server (a real child process over stdio): the upstream's
//! log messages about a call reach its caller on every pair of revisions,
//! at the caller's level; each client (by its address) has its own rate
//! limit, and the audit log names it.

mod client_common;

use std::num::NonZeroU32;
use std::path::PathBuf;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::mpsc;
use toolshape::client::{Client, Negotiation, ServerCommand, StderrMode};
use toolshape::protocol::http::names;
use toolshape::protocol::{LoggingLevel, ProtocolVersion};
use toolshape::tool::{CallOptions, LogMessage, meta_keys};
use toolshape_proxy::{AuditTarget, Proxy, ProxyOptions, RateLimit};

fn conformance_server() -> ServerCommand {
    ServerCommand::new(env!("CARGO_BIN_EXE_conformance_server"))
        .arg("--stdio")
        .stderr(StderrMode::Capture)
}

/// A proxy whose client speaks `upstream_era` to the conformance server,
/// served over HTTP on loopback; its URL.
async fn serve(upstream_era: Negotiation, options: ProxyOptions) -> (Proxy, String) {
    let proxy = client_common::start_proxy(conformance_server(), upstream_era, options).await;
    let url = client_common::serve_proxy_over_http(proxy.registry().clone()).await;
    (proxy, url)
}

/// Calls the tool that logs three info messages, asking for messages at
/// `level`; what came back, as (logger, text).
async fn logged(client: &Client, level: LoggingLevel) -> Vec<(Option<String>, Value)> {
    client.set_log_level(level).await.expect("logging/setLevel");
    let (sender, mut receiver) = mpsc::channel::<LogMessage>(64);
    let options = CallOptions::new().log(level, sender);
    let result = client
        .call_tool_with("test_tool_with_logging", None, options)
        .await
        .expect("the call");
    assert!(!result.is_error, "{result:?}");
    let mut messages = Vec::new();
    while let Ok(message) = receiver.try_recv() {
        assert_eq!(message.level, LoggingLevel::Info);
        messages.push((message.logger, message.data));
    }
    messages
}

#[tokio::test]
async fn the_upstreams_log_messages_reach_the_caller_on_every_pair_of_revisions() {
    let eras = [
        Negotiation::Pinned(ProtocolVersion::V2025_11_25),
        Negotiation::Pinned(ProtocolVersion::V2026_07_28),
    ];
    for upstream_era in eras {
        let (proxy, url) = serve(upstream_era, ProxyOptions::default()).await;
        for client_era in eras {
            let client = client_common::connect_http(&url, client_era).await;
            let messages = logged(&client, LoggingLevel::Debug).await;
            let texts: Vec<&Value> = messages.iter().map(|(_, text)| text).collect();
            assert_eq!(
                texts,
                [
                    "Tool execution started",
                    "Tool processing data",
                    "Tool execution completed"
                ],
                "upstream {upstream_era:?}, client {client_era:?}"
            );
            assert!(
                messages
                    .iter()
                    .all(|(logger, _)| logger.as_deref() == Some("test_tool_with_logging")),
                "{messages:?}"
            );
            // A caller that asked for warnings and worse gets none of them.
            let quiet = logged(&client, LoggingLevel::Warning).await;
            assert!(
                quiet.is_empty(),
                "upstream {upstream_era:?}, client {client_era:?}: {quiet:?}"
            );
        }
        proxy.shutdown(Duration::from_secs(2)).await;
    }
}

/// A stateless 2026-07-28 `tools/call` of `test_simple_text`, sent from
/// the local address `from`: its JSON-RPC result.
async fn call_from(from: &str, url: &str) -> Value {
    let http = reqwest::Client::builder()
        .local_address(from.parse::<std::net::IpAddr>().unwrap())
        .build()
        .unwrap();
    let body = json!({
        "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {
            "name": "test_simple_text", "arguments": {},
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
                "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"}
            }
        }
    });
    let response = http
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header(names::PROTOCOL_VERSION, "2026-07-28")
        .header(names::METHOD, "tools/call")
        .header(names::NAME, "test_simple_text")
        .body(body.to_string())
        .send()
        .await
        .expect("the POST");
    assert_eq!(response.status(), 200);
    let text = response.text().await.expect("the body");
    let answer: Value = serde_json::from_str(&text).expect("a JSON answer");
    answer["result"].clone()
}

fn is_error(result: &Value) -> bool {
    result["isError"] == json!(true)
}

fn audit_path() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("toolshape-proxy-policy-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join("audit.jsonl")
}

#[tokio::test]
async fn each_client_has_its_own_rate_limit_and_the_audit_log_names_it() {
    let audit = audit_path();
    let mut options = ProxyOptions::default();
    options.rate_limit = Some(RateLimit {
        per_second: NonZeroU32::new(1).unwrap(),
        burst: NonZeroU32::new(2).unwrap(),
    });
    options.audit = Some(AuditTarget::File(audit.clone()));
    let era = Negotiation::Pinned(ProtocolVersion::V2026_07_28);
    let (proxy, url) = serve(era, options).await;

    // 127.0.0.1: a burst of two passes, the third is refused with a hint.
    for _ in 0..2 {
        let result = call_from("127.0.0.1", &url).await;
        assert!(!is_error(&result), "{result}");
    }
    let refused = call_from("127.0.0.1", &url).await;
    assert!(is_error(&refused), "{refused}");
    let text = refused["content"][0]["text"].as_str().unwrap_or_default();
    assert!(text.contains("Too many calls"), "{text}");
    assert_eq!(refused["_meta"][meta_keys::CAN_RETRY], json!(true));
    let wait = refused["_meta"][meta_keys::RETRY_AFTER_MS]
        .as_u64()
        .unwrap();
    assert!((1..=1000).contains(&wait), "{wait} ms");

    // Another client (another address) is not held back by the first.
    let other = call_from("127.0.0.2", &url).await;
    assert!(!is_error(&other), "{other}");

    // And after the refill, the first may call again.
    tokio::time::sleep(Duration::from_millis(wait + 50)).await;
    let again = call_from("127.0.0.1", &url).await;
    assert!(!is_error(&again), "{again}");

    proxy.shutdown(Duration::from_secs(2)).await;
    let records: Vec<Value> = std::fs::read_to_string(&audit)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let seen: Vec<(&str, &str)> = records
        .iter()
        .map(|r| {
            (
                r["client"].as_str().unwrap_or("-"),
                r["outcome"].as_str().unwrap_or("-"),
            )
        })
        .collect();
    assert_eq!(
        seen,
        [
            ("127.0.0.1", "ok"),
            ("127.0.0.1", "ok"),
            ("127.0.0.1", "rate_limited"),
            ("127.0.0.2", "ok"),
            ("127.0.0.1", "ok"),
        ]
    );
    let _ = std::fs::remove_file(&audit);
}
