#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The 2026-07-28 header rules beyond a plain call, over real HTTP to an
//! in-process server: `Mcp-Name` on reads and prompts, a header given twice,
//! `Mcp-Param-*` for nested arguments (sent by the client, checked by the
//! server); and what an endpoint without sessions says it serves, 405's
//! `Allow`, a version header that names no revision at all; a call refused
//! for its headers sent again (its rounds counted across both sendings; a
//! refusal on the last round allowed is the answer).

mod http_support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use reqwest::StatusCode;
use serde_json::{Value, json};
use toolshape::client::{Client, Negotiation};
use toolshape::protocol::ProtocolVersion;
use toolshape::{HttpOptions, Resource, Server, Tool, ToolContext, ToolOutput};

use http_support::{
    MODERN, Probe, Serving, http, modern_headers, modern_params, post_raw, request,
};

/// A server with a tool whose nested `zone` argument travels in a header,
/// and one resource.
fn zoned() -> Server {
    let schema = json!({"type": "object", "properties": {
        "nested": {"type": "object", "properties": {
            "zone": {"type": "string", "x-mcp-header": "Zone"}
        }}
    }});
    let tool = Tool::dynamic(
        "zoned",
        schema,
        None,
        |_: ToolContext, arguments: Value| async move {
            Ok(ToolOutput::text(format!(
                "zone {}",
                arguments["nested"]["zone"]
            )))
        },
    );
    let resource = Resource::text("test://note", "note", "text/plain", "a note");
    Server::builder("zoned", "1")
        .tool(tool)
        .resource(resource)
        .build()
        .unwrap()
}

async fn serve(sessions: bool) -> Serving {
    let mut options = HttpOptions::default();
    options.sessions = sessions;
    Serving::start_server(zoned(), Arc::new(Probe::default()), options).await
}

/// POSTs a 2026-07-28 `method` with `params` and these headers.
async fn post(
    serving: &Serving,
    method: &str,
    params: Value,
    headers: &[(&str, &str)],
) -> http_support::Reply {
    let body = request(5, method, modern_params(params)).to_string();
    post_raw(&serving.url, headers, body).await
}

fn is_mismatch(reply: &http_support::Reply) -> bool {
    reply.status == StatusCode::BAD_REQUEST && reply.error_code() == -32020
}

#[tokio::test]
async fn reads_and_prompts_need_their_mcp_name_and_no_header_comes_twice() {
    let serving = serve(true).await;
    let read = json!({"uri": "test://note"});
    let cases = [
        ("no Mcp-Name", modern_headers("resources/read", None)),
        (
            "another URI",
            modern_headers("resources/read", Some("test://other")),
        ),
    ];
    for (what, headers) in cases {
        let reply = post(&serving, "resources/read", read.clone(), &headers).await;
        assert!(is_mismatch(&reply), "{what}: {reply:?}");
    }
    let reply = post(
        &serving,
        "resources/read",
        read,
        &modern_headers("resources/read", Some("test://note")),
    )
    .await;
    assert_eq!(reply.status, StatusCode::OK, "{reply:?}");
    let prompt = json!({"name": "review"});
    let reply = post(
        &serving,
        "prompts/get",
        prompt,
        &modern_headers("prompts/get", None),
    )
    .await;
    assert!(is_mismatch(&reply), "{reply:?}");

    // Given twice, a header may be read as either value: refused, whichever
    // comes first.
    let call = json!({"name": "zoned", "arguments": {}});
    for twice in [
        [("mcp-name", "zoned"), ("mcp-name", "other")],
        [("mcp-name", "other"), ("mcp-name", "zoned")],
        [
            ("mcp-protocol-version", MODERN),
            ("mcp-protocol-version", "2025-11-25"),
        ],
    ] {
        let mut headers = modern_headers("tools/call", Some("zoned"));
        headers.retain(|(name, _)| twice.iter().all(|(again, _)| again != name));
        headers.extend(twice);
        let reply = post(&serving, "tools/call", call.clone(), &headers).await;
        assert!(is_mismatch(&reply), "{twice:?}: {reply:?}");
        assert!(reply.text.contains("more than once"), "{reply:?}");
    }

    // A value that is not ASCII text is malformed, not missing.
    let mut headers = modern_headers("tools/call", None);
    headers.push(("mcp-name", "zon\u{e9}d"));
    let reply = post(&serving, "tools/call", call.clone(), &headers).await;
    assert!(
        is_mismatch(&reply) && reply.text.contains("not ASCII"),
        "{reply:?}"
    );

    // The client names the resource it reads.
    let client = Client::builder().connect_http(&serving.url).await.unwrap();
    assert_eq!(client.protocol_version(), ProtocolVersion::V2026_07_28);
    assert_eq!(client.read_resource("test://note").await.unwrap().len(), 1);
}

#[tokio::test]
async fn a_nested_argument_travels_in_its_header_and_must_match() {
    let serving = serve(true).await;
    let call = json!({"name": "zoned", "arguments": {"nested": {"zone": "z1"}}});
    let base = modern_headers("tools/call", Some("zoned"));
    let with = |zone: Option<&'static str>| {
        let mut headers = base.clone();
        headers.extend(zone.map(|zone| ("mcp-param-zone", zone)));
        headers
    };
    for zone in [None, Some("z2")] {
        let reply = post(&serving, "tools/call", call.clone(), &with(zone)).await;
        assert!(is_mismatch(&reply), "{zone:?}: {reply:?}");
    }
    let reply = post(&serving, "tools/call", call, &with(Some("z1"))).await;
    assert_eq!(reply.status, StatusCode::OK, "{reply:?}");

    // The client sends it.
    let client = Client::builder()
        .negotiation(Negotiation::Pinned(ProtocolVersion::V2026_07_28))
        .connect_http(&serving.url)
        .await
        .unwrap();
    let result = client
        .call_tool(
            "zoned",
            json!({"nested": {"zone": "z3"}}).as_object().cloned(),
        )
        .await
        .unwrap();
    assert!(!result.is_error, "{}", result.text());
    assert_eq!(result.text(), "zone \"z3\"");
}

#[tokio::test]
async fn an_endpoint_without_sessions_names_only_what_it_serves() {
    let serving = serve(false).await;
    let discovered = post(
        &serving,
        "server/discover",
        json!({}),
        &modern_headers("server/discover", None),
    )
    .await;
    let body = discovered.json();
    assert_eq!(
        body["result"]["supportedVersions"],
        json!([MODERN]),
        "{body}"
    );
    let refused = post_raw(
        &serving.url,
        &[
            ("mcp-protocol-version", "2099-01-01"),
            ("mcp-method", "tools/list"),
        ],
        request(
            6,
            "tools/list",
            json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2099-01-01"}}),
        )
        .to_string(),
    )
    .await;
    let body = refused.json();
    assert_eq!(
        body["error"]["data"]["supported"],
        json!([MODERN]),
        "{body}"
    );

    // With sessions too, the endpoint serves every revision.
    let both = serve(true).await;
    let discovered = post(
        &both,
        "server/discover",
        json!({}),
        &modern_headers("server/discover", None),
    )
    .await;
    let versions = discovered.json()["result"]["supportedVersions"].clone();
    assert!(
        versions.as_array().is_some_and(|v| v.len() > 1),
        "{versions}"
    );
}

#[tokio::test]
async fn a_405_says_what_is_allowed_and_an_unknown_version_header_is_400() {
    for (sessions, allowed) in [(true, "POST, GET, DELETE"), (false, "POST")] {
        let serving = serve(sessions).await;
        let got = http().get(&serving.url).send().await.unwrap();
        assert_eq!(got.status(), StatusCode::METHOD_NOT_ALLOWED);
        let allow = got.headers().get("allow").and_then(|v| v.to_str().ok());
        assert_eq!(allow, Some(allowed), "sessions {sessions}");
    }
    // In a session, a version header naming no revision is 400 for any
    // request: one whose method is unknown, a notification, a GET alike.
    let serving = serve(true).await;
    let session = http_support::open_session(&serving.url).await;
    let garbage = [
        ("mcp-protocol-version", "1999-99-99"),
        ("mcp-session-id", session.as_str()),
    ];
    let notification = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let unknown = json!({"jsonrpc": "2.0", "id": 1, "method": "foo/bar"});
    for body in [unknown, notification] {
        let reply = post_raw(&serving.url, &garbage, body.to_string()).await;
        assert_eq!(reply.status, StatusCode::BAD_REQUEST, "{body}: {reply:?}");
    }
    let got = http()
        .get(&serving.url)
        .header("mcp-protocol-version", "1999-99-99")
        .header("mcp-session-id", &session)
        .send()
        .await
        .unwrap();
    assert_eq!(got.status(), StatusCode::BAD_REQUEST);
    // The same session with its own revision's header still works.
    let ping = json!({"jsonrpc": "2.0", "id": 2, "method": "ping"});
    let reply = http_support::session_post(&serving.url, &session, &ping).await;
    assert_eq!(reply.status, StatusCode::OK, "{reply:?}");
}

/// `registry` served over HTTP behind a recording proxy.
async fn serve_recorded(
    registry: &toolshape::ToolRegistry,
) -> (Serving, http_support::recorder::Recorder) {
    let server = Server::builder("changing", "1")
        .registry(registry.clone())
        .build()
        .unwrap();
    let serving =
        Serving::start_server(server, Arc::new(Probe::default()), HttpOptions::default()).await;
    let recorder = http_support::recorder::Recorder::start(&serving.url).await;
    (serving, recorder)
}

/// A tool that comes to mirror an argument in a header after the client
/// listed it: the call is refused (`-32020`), and the client lists the tools
/// again and sends it once more, with the header (the spec's SHOULD).
#[tokio::test]
async fn a_call_refused_for_its_headers_is_sent_again_after_listing_again() {
    let zone_tool = |annotated: bool| {
        let mut zone = json!({"type": "string"});
        if annotated {
            zone["x-mcp-header"] = json!("Zone");
        }
        let schema = json!({"type": "object", "properties": {"zone": zone}});
        Tool::dynamic(
            "zone",
            schema,
            None,
            |_: ToolContext, arguments: Value| async move {
                Ok(ToolOutput::text(format!("zone {}", arguments["zone"])))
            },
        )
    };
    let registry = toolshape::ToolRegistry::new();
    registry.register(zone_tool(false)).unwrap();
    let (_serving, recorder) = serve_recorded(&registry).await;
    let client = Client::builder()
        .negotiation(Negotiation::Pinned(ProtocolVersion::V2026_07_28))
        .connect_http(&recorder.url)
        .await
        .unwrap();
    assert_eq!(client.list_tools().await.unwrap().len(), 1);
    assert!(registry.replace_all([zone_tool(true)]).is_empty());

    let arguments = json!({"zone": "z9"}).as_object().cloned();
    let result = client.call_tool("zone", arguments).await.unwrap();
    assert_eq!(result.text(), "zone \"z9\"");
    let log = recorder.log();
    let calls: Vec<_> = log
        .iter()
        .filter(|r| r.rpc_method() == "tools/call")
        .collect();
    assert_eq!(calls.len(), 2, "{log:#?}");
    assert_eq!(calls[0].status, StatusCode::BAD_REQUEST);
    assert_eq!(calls[0].header("mcp-param-zone"), None);
    assert_eq!(calls[1].header("mcp-param-zone"), Some("z9"));
    let listings = log
        .iter()
        .filter(|r| r.rpc_method() == "tools/list")
        .count();
    assert_eq!(listings, 2, "{log:#?}");

    // A header the tool no longer reads is no mismatch: one call.
    assert!(registry.replace_all([zone_tool(false)]).is_empty());
    let arguments = json!({"zone": "z8"}).as_object().cloned();
    let result = client.call_tool("zone", arguments).await.unwrap();
    assert_eq!(result.text(), "zone \"z8\"");
    let calls = recorder
        .log()
        .iter()
        .filter(|r| r.rpc_method() == "tools/call")
        .count();
    assert_eq!(calls, 3);
}

/// A server (here a gateway in front of one) that refuses every call for
/// its headers: each call fails with `-32020`, sent once (the headers of the
/// tools listed again are the same), and the tools are listed again at most
/// once a second, not once a call.
#[tokio::test]
async fn a_server_refusing_every_call_for_its_headers_costs_no_listing_per_call() {
    let serving = serve(false).await;
    let refusal = (
        StatusCode::BAD_REQUEST,
        r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32020,"message":"Header mismatch"}}"#,
    );
    let gateway =
        http_support::recorder::Recorder::start_refusing_calls(&serving.url, refusal).await;
    let client = Client::builder()
        .negotiation(Negotiation::Pinned(ProtocolVersion::V2026_07_28))
        .connect_http(&gateway.url)
        .await
        .unwrap();
    let arguments = json!({"nested": {"zone": "z1"}}).as_object().cloned();
    for _ in 0..5 {
        let refused = client
            .call_tool("zoned", arguments.clone())
            .await
            .unwrap_err();
        let toolshape::client::ClientErrorKind::Protocol(error) = refused.kind() else {
            panic!("{refused}");
        };
        assert_eq!(error.code, -32020, "{error:?}");
    }
    let log = gateway.log();
    let count = |method: &str| log.iter().filter(|r| r.rpc_method() == method).count();
    assert_eq!(count("tools/call"), 5, "{log:#?}");
    assert!(count("tools/list") <= 2, "{log:#?}");
}

/// `endless`, a tool that asks a new question each round (counted in
/// `asked`) and never answers; its `zone` argument travels in a header
/// when `annotated`.
fn endless_asker(annotated: bool, asked: &Arc<AtomicUsize>) -> Tool {
    use toolshape::protocol::asks::{Ask, ElicitParams};

    let mut zone = json!({"type": "string"});
    if annotated {
        zone["x-mcp-header"] = json!("Zone");
    }
    let schema = json!({"type": "object", "properties": {"zone": zone}});
    let asked = Arc::clone(asked);
    Tool::dynamic(
        "endless",
        schema,
        None,
        move |context: ToolContext, _: Value| {
            let key = format!("q{}", asked.fetch_add(1, Ordering::SeqCst));
            async move {
                let form = json!({"type": "object", "properties": {}});
                let ask = Ask::Elicit(ElicitParams::form("Once more?", form));
                context.ask_as(Some(&key), ask).await?;
                Ok(ToolOutput::text("never"))
            }
        },
    )
}

/// A call sent again after `-32020` goes on from the rounds its first
/// sending used: a tool asking a new question each round is given up on
/// after eight requests in all, the refused one among them (not eight more).
#[tokio::test]
async fn a_call_sent_again_after_32020_keeps_its_rounds() {
    use toolshape::protocol::asks::ElicitResult;

    let asked = Arc::new(AtomicUsize::new(0));
    let endless = |annotated: bool| endless_asker(annotated, &asked);
    let registry = toolshape::ToolRegistry::new();
    registry.register(endless(false)).unwrap();
    let (_serving, recorder) = serve_recorded(&registry).await;
    let client = Client::builder()
        .negotiation(Negotiation::Pinned(ProtocolVersion::V2026_07_28))
        .on_elicit(false, |_| async {
            Ok(ElicitResult::accept(serde_json::Map::new()))
        })
        .connect_http(&recorder.url)
        .await
        .unwrap();
    assert_eq!(client.list_tools().await.unwrap().len(), 1);
    assert!(registry.replace_all([endless(true)]).is_empty());

    let arguments = json!({"zone": "z1"}).as_object().cloned();
    let error = client.call_tool("endless", arguments).await.unwrap_err();
    assert!(error.to_string().contains("rounds"), "{error}");
    let log = recorder.log();
    let calls: Vec<_> = log
        .iter()
        .filter(|r| r.rpc_method() == "tools/call")
        .collect();
    assert_eq!(calls.len(), 8, "{log:#?}");
    assert_eq!(calls[0].status, StatusCode::BAD_REQUEST);
    assert!(
        calls[1..]
            .iter()
            .all(|c| c.header("mcp-param-zone") == Some("z1"))
    );
}

/// A `-32020` on the last round allowed is the call's answer: the client
/// neither lists again nor sends the call once more (the refusal came
/// after eight requests, the most a call makes).
#[tokio::test]
async fn a_32020_on_the_last_round_is_the_answer() {
    use toolshape::protocol::asks::ElicitResult;

    let asked = Arc::new(AtomicUsize::new(0));
    let endless = move |annotated: bool| endless_asker(annotated, &asked);
    let registry = toolshape::ToolRegistry::new();
    registry.register(endless(false)).unwrap();
    let (_serving, recorder) = serve_recorded(&registry).await;
    // The tool comes to mirror its argument in a header while the client
    // answers the seventh question: the eighth request lacks the header.
    let answered = Arc::new(AtomicUsize::new(0));
    let swap = registry.clone();
    let endless = endless.clone();
    let client = Client::builder()
        .negotiation(Negotiation::Pinned(ProtocolVersion::V2026_07_28))
        .on_elicit(false, move |_| {
            if answered.fetch_add(1, Ordering::SeqCst) + 1 == 7 {
                assert!(swap.replace_all([endless(true)]).is_empty());
            }
            async { Ok(ElicitResult::accept(serde_json::Map::new())) }
        })
        .connect_http(&recorder.url)
        .await
        .unwrap();
    assert_eq!(client.list_tools().await.unwrap().len(), 1);

    let arguments = json!({"zone": "z1"}).as_object().cloned();
    let refused = client.call_tool("endless", arguments).await.unwrap_err();
    let toolshape::client::ClientErrorKind::Protocol(error) = refused.kind() else {
        panic!("{refused}");
    };
    assert_eq!(error.code, -32020, "{error:?}");
    let log = recorder.log();
    let count = |method: &str| log.iter().filter(|r| r.rpc_method() == method).count();
    assert_eq!(count("tools/call"), 8, "{log:#?}");
    assert_eq!(count("tools/list"), 1, "{log:#?}");
}
