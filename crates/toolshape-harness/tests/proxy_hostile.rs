#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The proxy (the library, served over real HTTP on loopback) in front of
//! the hostile server (a real child process): every bad output becomes the
//! documented result for clients on both eras, unusable schemas are hidden
//! or listed, a crashed child is started again, a silent one times out.

mod client_common;

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};
use toolshape::client::{
    Client, ClientErrorKind, Negotiation, ServerCommand, StderrMode, ToolResult,
};
use toolshape::protocol::ProtocolVersion;
use toolshape_proxy::{BrokenTools, OnInvalid, Proxy, ProxyOptions, ToolFilter, UpstreamSpec};

use client_common::{LONG_NAME, hostile_server_bin};

/// A proxy in front of the hostile server, served over HTTP on loopback.
struct Served {
    proxy: Proxy,
    url: String,
}

async fn serve(options: ProxyOptions) -> Served {
    serve_with(&[], options).await
}

/// As [`serve`], the hostile server started with `args`.
async fn serve_with(args: &[&str], options: ProxyOptions) -> Served {
    let command = ServerCommand::new(hostile_server_bin())
        .args(args.iter().copied())
        .stderr(StderrMode::Capture);
    let proxy = Proxy::start(UpstreamSpec::Command(command), Client::builder(), options)
        .await
        .expect("the proxy starts");
    let url = client_common::serve_proxy_over_http(proxy.registry().clone()).await;
    Served { proxy, url }
}

/// The two eras a client may speak to the proxy.
const ERAS: [Negotiation; 2] = [
    Negotiation::Pinned(ProtocolVersion::V2025_06_18),
    Negotiation::Pinned(ProtocolVersion::V2026_07_28),
];

async fn client(url: &str, era: Negotiation) -> Client {
    client_common::connect_http(url, era).await
}

async fn call(
    client: &Client,
    tool: &str,
    arguments: Value,
) -> Result<ToolResult, toolshape::client::ClientError> {
    let arguments: Option<Map<String, Value>> = arguments.as_object().cloned();
    client.call_tool(tool, arguments).await
}

#[tokio::test]
async fn invalid_outputs_become_errors_naming_the_violations() {
    let served = serve(ProxyOptions::default()).await;
    for era in ERAS {
        let client = client(&served.url, era).await;
        let ok = call(&client, "ok", json!({})).await.unwrap();
        assert_eq!(ok.structured, Some(json!({"value": "ok"})), "{era:?}");
        let tuple = call(&client, "tuple", json!({})).await.unwrap();
        assert_eq!(tuple.structured, Some(json!({"pair": ["a", 1]})), "{era:?}");

        for (tool, arguments, named) in [
            ("mismatch", json!({}), "/count"),
            ("tuple_bad", json!({}), "/pair/1"),
            ("unevaluated", json!({}), "unevaluated"),
            ("draft07", json!({"extra": true}), "additional"),
            ("no_structured", json!({}), "no structuredContent"),
        ] {
            let result = call(&client, tool, arguments).await.unwrap();
            let text = result.text();
            assert!(result.is_error, "{era:?} {tool}: {text}");
            assert!(result.structured.is_none(), "{era:?} {tool}");
            assert!(text.contains("withheld"), "{era:?} {tool}: {text}");
            assert!(
                text.to_lowercase().contains(&named.to_lowercase()),
                "{era:?} {tool}: the violation is not named: {text}"
            );
        }
        // A tool error passes through as one, with its text.
        let failed = call(&client, "tool_error", json!({})).await.unwrap();
        assert!(failed.is_error, "{era:?}");
        assert!(!failed.text().is_empty());
    }
    let metrics = served.proxy.metrics_text();
    assert!(
        metrics.contains(
            "toolshape_proxy_calls_total{tool=\"mismatch\",outcome=\"invalid_output\"} 2"
        ),
        "{metrics}"
    );
    assert!(
        metrics.contains("toolshape_proxy_calls_total{tool=\"ok\",outcome=\"ok\"} 2"),
        "{metrics}"
    );
    assert!(
        metrics.contains("toolshape_proxy_validation_failures_total{tool=\"tuple_bad\"} 2"),
        "{metrics}"
    );
}

/// The upstream speaks 2026-07-28: a result that needs no reshaping goes to
/// a client on that revision as the upstream wrote it; one that reads more
/// than one way (a repeated member name) or does not fit one line is
/// written again by the proxy; a client on another revision always gets
/// the proxy's own shape.
#[tokio::test]
async fn results_go_as_written_only_to_the_same_revision_and_only_when_unambiguous() {
    let served = serve(ProxyOptions::default()).await;
    let cases = [
        // (what the upstream writes, text a 2026-07-28 client gets)
        (r#"{"value" : "ok"}"#, r#"{"value" : "ok"}"#),
        (r#"{"value":"no","value":"ok"}"#, r#"{"value":"ok"}"#),
        ("{\"value\":\r\"ok\"}", r#"{"value":"ok"}"#),
    ];
    for era in ERAS {
        let client = client(&served.url, era).await;
        for (written, modern_text) in cases {
            let result = call(&client, "ok", json!({"verbatim": written}))
                .await
                .unwrap();
            assert!(!result.is_error, "{era:?} {written}: {}", result.text());
            assert_eq!(result.structured, Some(json!({"value": "ok"})), "{era:?}");
            let expected = match era {
                Negotiation::Pinned(ProtocolVersion::V2026_07_28) => modern_text,
                _ => r#"{"value":"ok"}"#,
            };
            assert_eq!(result.text(), expected, "{era:?} {written}");
            assert_eq!(result.structured_json(), Some(expected), "{era:?}");
        }
    }
}

/// The upstream adds text of its own beside the text block repeating
/// `structuredContent`: the proxy writes that block again for each client
/// (first, from the value it validated), so a 2025-03-26 client (no
/// `structuredContent`) still gets the value, as text, and never a text
/// that reads otherwise than the value (here a repeated member name).
#[tokio::test]
async fn a_mirror_beside_text_of_the_tools_own_is_written_for_every_revision() {
    let served = serve(ProxyOptions::default()).await;
    let note = "Looked up just now.";
    let cases = [
        json!({"note": note}),
        json!({"note": note, "verbatim": r#"{"value":"no","value":"ok"}"#}),
    ];
    for version in [
        ProtocolVersion::V2025_03_26,
        ProtocolVersion::V2025_06_18,
        ProtocolVersion::V2026_07_28,
    ] {
        let client = client(&served.url, Negotiation::Pinned(version)).await;
        for arguments in &cases {
            let result = call(&client, "ok", arguments.clone()).await.unwrap();
            assert!(!result.is_error, "{version:?}: {}", result.text());
            let texts: Vec<&str> = result.content.iter().filter_map(|b| b.as_text()).collect();
            assert_eq!(
                texts,
                [r#"{"value":"ok"}"#, note],
                "{version:?} {arguments}"
            );
            let structured = version
                .supports_structured_output()
                .then(|| json!({"value": "ok"}));
            assert_eq!(result.structured, structured, "{version:?} {arguments}");
        }
    }
}

/// The upstream's text block is other JSON than its `structuredContent` (a
/// stale mirror): a client reading only text would take it for the value,
/// which no schema checked, so the proxy writes its own mirror in its place.
#[tokio::test]
async fn a_text_block_of_other_json_is_replaced_by_the_values_own() {
    let served = serve(ProxyOptions::default()).await;
    for version in [
        ProtocolVersion::V2025_03_26,
        ProtocolVersion::V2025_06_18,
        ProtocolVersion::V2026_07_28,
    ] {
        let client = client(&served.url, Negotiation::Pinned(version)).await;
        let result = call(&client, "ok", json!({"stale": true})).await.unwrap();
        assert!(!result.is_error, "{version:?}: {}", result.text());
        let texts: Vec<&str> = result.content.iter().filter_map(|b| b.as_text()).collect();
        assert_eq!(texts, [r#"{"value":"ok"}"#], "{version:?}");
    }
}

/// `strip` sends the content without the value or its text; `pass` sends
/// the result as it came.
#[tokio::test]
async fn strip_sends_the_content_alone_and_pass_sends_it_as_is() {
    let mut options = ProxyOptions::default();
    options.on_invalid = OnInvalid::Strip;
    let stripped = serve(options).await;
    let client_a = client(&stripped.url, ERAS[1]).await;
    // The client checks again: the result has content and no structuredContent.
    let error = call(&client_a, "mismatch", json!({})).await.unwrap_err();
    assert!(
        matches!(
            error.kind(),
            ClientErrorKind::MissingStructuredContent { .. }
        ),
        "{error}"
    );
    let rejected = error.rejected_result().expect("the result is kept");
    assert!(rejected.structured.is_none());
    // Nor its text (the mirror of a value no schema passed), for a client
    // reading only text; other text stays.
    assert!(rejected.content.is_empty(), "{:?}", rejected.content);
    let note = "Looked up just now.";
    let arguments = json!({"note": note, "verbatim": r#"{"value":3}"#});
    for version in [ProtocolVersion::V2025_03_26, ProtocolVersion::V2026_07_28] {
        let client = client(&stripped.url, Negotiation::Pinned(version)).await;
        let result = match call(&client, "ok", arguments.clone()).await {
            Ok(result) => result,
            Err(error) => error.rejected_result().expect("kept").clone(),
        };
        assert!(!result.is_error, "{version:?}");
        assert_eq!(result.text(), note, "{version:?}");
    }

    let mut options = ProxyOptions::default();
    options.on_invalid = OnInvalid::Pass;
    let passed = serve(options).await;
    let client_b = client(&passed.url, ERAS[1]).await;
    let error = call(&client_b, "mismatch", json!({})).await.unwrap_err();
    assert!(
        matches!(error.kind(), ClientErrorKind::Validation { .. }),
        "{error}"
    );
    let rejected = error.rejected_result().expect("the result is kept");
    assert_eq!(rejected.structured, Some(json!({"count": "three"})));
    // Valid outputs are untouched in every mode.
    for client in [&client_a, &client_b] {
        let ok = call(client, "ok", json!({})).await.unwrap();
        assert_eq!(ok.structured, Some(json!({"value": "ok"})));
    }
}

fn names(tools: &[toolshape::protocol::ToolDefinition]) -> BTreeSet<String> {
    tools.iter().map(|tool| tool.name.clone()).collect()
}

#[tokio::test]
async fn unusable_schemas_are_hidden_or_listed_with_the_problem() {
    let hidden = serve(ProxyOptions::default()).await;
    let broken: BTreeSet<&str> = hidden
        .proxy
        .broken_tools()
        .iter()
        .map(|(name, _)| name.as_str())
        .collect();
    assert!(broken.contains("remote_ref"), "{broken:?}");
    let listed = names(
        &client(&hidden.url, ERAS[0])
            .await
            .list_tools()
            .await
            .unwrap(),
    );
    assert!(!listed.contains("remote_ref"));
    assert!(
        listed.contains("ok") && listed.contains("mismatch"),
        "{listed:?}"
    );

    let mut options = ProxyOptions::default();
    options.broken_tools = BrokenTools::List;
    let shown = serve(options).await;
    let client = client(&shown.url, ERAS[1]).await;
    let tools = client.list_tools().await.unwrap();
    let remote = tools
        .iter()
        .find(|t| t.name == "remote_ref")
        .expect("remote_ref is listed");
    let description = remote.description.clone().unwrap_or_default();
    assert!(description.starts_with("[unavailable:"), "{description}");
    assert!(remote.output_schema.is_none());
    let result = call(&client, "remote_ref", json!({})).await.unwrap();
    assert!(result.is_error);
    assert!(
        result.text().contains("cannot be offered"),
        "{}",
        result.text()
    );
}

/// Tool names outside MCP's naming guidance (a SHOULD) are the upstream's
/// own: listed and called through the proxy as on the upstream (not one
/// with a terminal escape sequence in it). A tool the
/// proxy cannot read at all (nested past its parser's depth) is left out
/// alone, the other tools served.
#[tokio::test]
async fn foreign_names_pass_and_an_unreadable_tool_leaves_the_others_served() {
    let served = serve_with(&["--foreign-names"], ProxyOptions::default()).await;
    for era in ERAS {
        let client = client(&served.url, era).await;
        let listed = names(&client.list_tools().await.unwrap());
        for name in [
            "github/create_issue",
            "ns:tool",
            "get weather",
            "café",
            LONG_NAME,
            "ok",
        ] {
            assert!(listed.contains(name), "{name} in {listed:?}");
        }
        assert!(!listed.contains("too_deep"), "{listed:?}");
        // A control character is what a relayed name may not hold.
        assert!(
            !listed.iter().any(|name| name.starts_with("esc")),
            "{listed:?}"
        );
        for name in ["ns:tool", "café", LONG_NAME] {
            let result = call(&client, name, json!({})).await.unwrap();
            assert!(!result.is_error, "{name}: {}", result.text());
            assert_eq!(result.structured, Some(json!({"value": name})));
        }
    }
}

/// The audit log says where an output broke its schema and which keyword,
/// without the output's values (they may be anyone's data); with
/// `audit_arguments` it keeps the validator's words, values quoted.
#[tokio::test]
async fn the_audit_log_names_violations_without_the_outputs_values() {
    for with_values in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let audit = dir.path().join("audit.jsonl");
        let mut options = ProxyOptions::default();
        options.audit = Some(toolshape_proxy::AuditTarget::File(audit.clone()));
        options.audit_arguments = with_values;
        let served = serve(options).await;
        let client = client(&served.url, ERAS[1]).await;
        let result = call(&client, "mismatch", json!({})).await.unwrap();
        assert!(result.is_error);
        // The caller is told what its output would have been.
        assert!(result.text().contains("\"three\""), "{}", result.text());
        served.proxy.shutdown(Duration::from_secs(2)).await;
        let records = std::fs::read_to_string(&audit).unwrap();
        let record: Value = serde_json::from_str(records.lines().last().unwrap()).unwrap();
        assert_eq!(record["outcome"], "invalid_output", "{record}");
        let violations = record["violations"].as_str().unwrap();
        assert!(violations.contains("/count"), "{violations}");
        assert_eq!(violations.contains("three"), with_values, "{violations}");
    }
}

#[tokio::test]
async fn filters_show_only_the_allowed_tools() {
    let mut options = ProxyOptions::default();
    let mut filter = ToolFilter::default();
    filter.allow = vec!["t*".into(), "ok".into()];
    filter.deny = vec!["*_bad".into()];
    options.filter = filter;
    let served = serve(options).await;
    let client = client(&served.url, ERAS[0]).await;
    let listed = names(&client.list_tools().await.unwrap());
    let expected: BTreeSet<String> = ["ok", "tool_error", "tuple", "twice"]
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
    assert_eq!(listed, expected);
    let hidden = call(&client, "mismatch", json!({})).await;
    assert!(hidden.is_err(), "a hidden tool cannot be called");
}

#[tokio::test]
async fn a_crashed_upstream_is_started_again_and_a_silent_call_times_out() {
    let mut options = ProxyOptions::default();
    options
        .tool_timeouts
        .insert("hang".into(), Duration::from_secs(1));
    let served = serve(options).await;
    for era in ERAS {
        let client = client(&served.url, era).await;
        // The child exits in the middle of the call: an error, at once.
        let died = call(&client, "die", json!({})).await.unwrap();
        assert!(died.is_error, "{era:?}");
        assert!(died.text().contains("upstream"), "{}", died.text());
        // The next call is served by a new child.
        let ok = call(&client, "ok", json!({})).await.unwrap();
        assert_eq!(ok.structured, Some(json!({"value": "ok"})), "{era:?}");

        let started = Instant::now();
        let hung = call(&client, "hang", json!({})).await.unwrap();
        assert!(hung.is_error, "{era:?}");
        assert!(hung.text().contains("1000 ms"), "{}", hung.text());
        assert!(started.elapsed() < Duration::from_secs(20));
        let ok = call(&client, "ok", json!({})).await.unwrap();
        assert_eq!(ok.structured, Some(json!({"value": "ok"})));
    }
    let metrics = served.proxy.metrics_text();
    assert!(
        !metrics.contains("toolshape_proxy_upstream_restarts_total 0\n"),
        "{metrics}"
    );
    assert!(
        metrics.contains("toolshape_proxy_calls_total{tool=\"hang\",outcome=\"timeout\"} 2"),
        "{metrics}"
    );
}

#[tokio::test]
async fn progress_comes_back_and_a_flood_of_notifications_loses_nothing() {
    let served = serve(ProxyOptions::default()).await;
    let client = client(&served.url, ERAS[0]).await;
    let (progress, mut reports) = tokio::sync::mpsc::channel(1024);
    let options = toolshape::CallOptions::new().progress(progress);
    // 200 notifications of every kind (progress for this call's token among
    // them, `tools/list_changed`, unparsable lines) before the answer.
    let flooded = client
        .call_tool_with("flood", json!({"n": 200}).as_object().cloned(), options)
        .await
        .unwrap();
    assert_eq!(flooded.structured, Some(json!({"value": "ok"})));
    let mut received = 0;
    while reports.try_recv().is_ok() {
        received += 1;
    }
    assert!(
        received > 0,
        "no progress report came back through the proxy"
    );
    // The upstream said its list changed: the proxy listed it again, and
    // still serves every tool.
    let ok = call(&client, "ok", json!({})).await.unwrap();
    assert_eq!(ok.structured, Some(json!({"value": "ok"})));
    assert!(
        client
            .list_tools()
            .await
            .unwrap()
            .iter()
            .any(|t| t.name == "mismatch")
    );
}

/// Two `pair` calls at once: the hostile server holds the first until the
/// second arrives on the same connection, then answers both.
async fn two_pairs(client: &Client) -> (ToolResult, ToolResult) {
    let first = call(client, "pair", json!({"n": 1}));
    let second = async {
        tokio::time::sleep(Duration::from_millis(300)).await;
        call(client, "pair", json!({"n": 2})).await
    };
    let (first, second) = tokio::join!(first, second);
    (first.unwrap(), second.unwrap())
}

#[tokio::test]
async fn the_concurrency_limit_holds_calls_back_from_the_upstream() {
    let mut options = ProxyOptions::default();
    options
        .tool_timeouts
        .insert("pair".into(), Duration::from_secs(1));
    // Unlimited: both calls reach the one child, which answers both.
    let open = serve(options.clone()).await;
    let client_a = client(&open.url, ERAS[1]).await;
    let (first, second) = two_pairs(&client_a).await;
    assert_eq!(first.structured, Some(json!({"n": 1})), "{}", first.text());
    assert_eq!(
        second.structured,
        Some(json!({"n": 2})),
        "{}",
        second.text()
    );

    // One call at a time: the second waits for the first, which its partner
    // never reaches, so the first times out; then the second reaches the
    // child (which still holds the first) and is answered, within its own
    // limit (counted from its arrival, 300 ms after the first's).
    options.max_concurrent = Some(1);
    let limited = serve(options.clone()).await;
    let client_b = client(&limited.url, ERAS[1]).await;
    let (first, second) = two_pairs(&client_b).await;
    assert!(
        first.is_error && first.text().contains("1000 ms"),
        "{}",
        first.text()
    );
    assert_eq!(
        second.structured,
        Some(json!({"n": 2})),
        "{}",
        second.text()
    );

    // Two children: the calls go to different ones, neither meets its partner.
    options.max_concurrent = None;
    options.upstreams = 2;
    let spread = serve(options).await;
    let client_c = client(&spread.url, ERAS[1]).await;
    let (first, second) = two_pairs(&client_c).await;
    assert!(
        first.is_error && second.is_error,
        "{} / {}",
        first.text(),
        second.text()
    );
    // And each child serves its own calls.
    for _ in 0..4 {
        let ok = call(&client_c, "ok", json!({})).await.unwrap();
        assert_eq!(ok.structured, Some(json!({"value": "ok"})));
    }
}

/// An upstream that lists pages of new tools without end: the proxy does
/// not start, and says which of the client's bounds the listing went past.
#[tokio::test]
async fn an_upstream_listing_without_end_stops_the_proxy_at_start() {
    let command = ServerCommand::new(hostile_server_bin())
        .args(["--endless", "10", "--page-size", "1000"])
        .stderr(StderrMode::Capture);
    let started = Proxy::start(
        UpstreamSpec::Command(command),
        Client::builder(),
        ProxyOptions::default(),
    )
    .await;
    let Err(toolshape_proxy::ProxyError::Listing(error)) = started else {
        panic!("expected a listing error, got {:?}", started.err());
    };
    assert!(
        matches!(
            error.kind(),
            ClientErrorKind::ListingOverBounds {
                bound: toolshape::client::ListingBound::Items(10_000),
                ..
            }
        ),
        "{error}"
    );
}

/// An upstream announcing a changed tool list every 2 ms: the proxy lists
/// its tools again at most once a second (the announcements in between
/// coalesced), where it would otherwise list them without pause.
#[tokio::test]
async fn a_storm_of_list_changes_costs_one_listing_a_second() {
    let counter = tempfile::NamedTempFile::new().unwrap();
    let path = counter.path().display().to_string();
    let command = ServerCommand::new(hostile_server_bin())
        .args(["--list-changed-every", "2", "--count-lists", &path])
        .stderr(StderrMode::Capture);
    let proxy = Proxy::start(
        UpstreamSpec::Command(command),
        Client::builder(),
        ProxyOptions::default(),
    )
    .await
    .expect("the proxy starts");
    tokio::time::sleep(std::time::Duration::from_millis(3_500)).await;
    let requests: u64 = std::fs::read_to_string(&path)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    // 24 tools in pages of 3: 8 requests a listing. The first listing, then
    // one a second: at most 5 listings in 3.5 s; at least 2 (it follows).
    let pages = 8;
    assert!(
        (2 * pages..=5 * pages).contains(&requests),
        "{requests} tools/list requests in 3.5 s"
    );
    // It serves meanwhile.
    let url = client_common::serve_proxy_over_http(proxy.registry().clone()).await;
    let client = client(&url, ERAS[1]).await;
    let result = call(&client, "ok", json!({})).await.unwrap();
    assert!(!result.is_error, "{}", result.text());
}
