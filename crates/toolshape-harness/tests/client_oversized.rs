#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The client against messages over its size limit, from
//! `examples/hostile_server.rs` (its `huge` tools) over stdio and from a
//! server on loopback over an HTTP session: each ends in a clear error at
//! once, only for the request it answers (a question of the server's is
//! refused), and the connection stays usable (each test makes a normal call
//! afterwards).

mod client_common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use toolshape::CallOptions;
use toolshape::client::{
    Client, ClientErrorKind, ClientOptions, Negotiation, ServerCommand, StderrMode,
};

use client_common::{connect, hostile_server_bin};

/// A client of the hostile server taking messages of at most `limit` bytes.
async fn hostile_within(limit: usize) -> Client {
    let mut options = ClientOptions::default();
    options.request_timeout = Duration::from_secs(20);
    options.max_message_bytes = limit;
    let command = ServerCommand::new(hostile_server_bin()).stderr(StderrMode::Capture);
    connect(command, Negotiation::Auto, options).await
}

/// A normal call on the same connection still works.
async fn assert_usable(client: &Client) {
    let ok: serde_json::Value = client.call("ok", json!({})).await.unwrap();
    assert_eq!(ok, json!({"value": "ok"}));
}

#[tokio::test]
async fn a_100_mb_line_is_refused_and_the_connection_survives() {
    // The default limit (64 MiB) against a 100 MB response.
    assert_eq!(ClientOptions::default().max_message_bytes, 64 * 1024 * 1024);
    let client = hostile_within(ClientOptions::default().max_message_bytes).await;
    let started = Instant::now();
    let error = client.call_tool("huge", None).await.unwrap_err();
    let elapsed = started.elapsed();
    let ClientErrorKind::InvalidResponse(message) = error.kind() else {
        panic!("expected an oversized response, got {error:?}");
    };
    assert!(message.contains("larger than 67108864 bytes"), "{message}");
    assert!(elapsed < Duration::from_secs(10), "took {elapsed:?}");
    assert_usable(&client).await;

    // A smaller limit: a 2 MB line over a 1 MiB limit, then a line just under it.
    let client = hostile_within(1024 * 1024).await;
    let error = client
        .call_tool("huge", json!({"bytes": 2_000_000}).as_object().cloned())
        .await
        .unwrap_err();
    assert!(
        matches!(error.kind(), ClientErrorKind::InvalidResponse(m) if m.contains("larger than 1048576 bytes")),
        "{error:?}"
    );
    let fits = client
        .call_tool("huge", json!({"bytes": 1_000_000}).as_object().cloned())
        .await
        .unwrap();
    let text = fits.text();
    assert!(text.len() > 999_000 && text.bytes().all(|b| b == b'x'));
    assert_usable(&client).await;
}

/// An oversized response is refused once it passes the limit, not when its
/// line ends: a server that stops mid-line (or never ends it) cannot hold
/// the call until its timeout. The line's end, when it comes, resynchronises.
#[tokio::test]
async fn an_oversized_line_is_refused_before_it_ends() {
    let client = hostile_within(1024 * 1024).await;
    let started = Instant::now();
    let error = client
        .call_tool_with(
            "huge",
            json!({"bytes": 2_000_000, "unended": true})
                .as_object()
                .cloned(),
            CallOptions::new().timeout(Duration::from_secs(60)),
        )
        .await
        .unwrap_err();
    let elapsed = started.elapsed();
    assert!(
        matches!(error.kind(), ClientErrorKind::InvalidResponse(m) if m.contains("larger than 1048576 bytes")),
        "{error:?}"
    );
    assert!(elapsed < Duration::from_secs(30), "took {elapsed:?}");
    // The server ends the line before its next answer.
    assert_usable(&client).await;
}

/// An oversized response whose `id` comes last (as the TypeScript SDK orders
/// its members) cannot be matched to its request from the line's first bytes:
/// the call ends at its timeout instead of failing at once. The connection
/// survives either way.
#[tokio::test]
async fn an_oversized_line_with_its_id_last_ends_the_call() {
    let client = hostile_within(1024 * 1024).await;
    let settings = CallOptions::new().timeout(Duration::from_secs(2));
    let error = client
        .call_tool_with(
            "huge_id_last",
            json!({"bytes": 2_000_000}).as_object().cloned(),
            settings,
        )
        .await
        .unwrap_err();
    assert!(
        matches!(
            error.kind(),
            ClientErrorKind::Timeout(_) | ClientErrorKind::InvalidResponse(_)
        ),
        "{error:?}"
    );
    assert_usable(&client).await;
}

/// Calls `huge` so that the server asks a `sampling/createMessage` of
/// `bytes` bytes (its parameters not a sampling request's) with the call's
/// own id; the server answers the call once it has the client's refusal,
/// naming its code. The client's connection stays usable.
async fn refusal_of_a_request_of(bytes: u64) -> Option<Value> {
    let client = hostile_within(1024 * 1024).await;
    let answered = client
        .call_tool_with(
            "huge",
            json!({"bytes": bytes, "as_request": true})
                .as_object()
                .cloned(),
            CallOptions::new().timeout(Duration::from_secs(20)),
        )
        .await
        .unwrap();
    assert_usable(&client).await;
    answered.structured
}

/// An over-long request of the server's that carries the id of the
/// client's own call in flight is refused (the server gets an error with
/// its id), and the client's call goes on: the two directions' ids are
/// apart (the call failed as "response larger than" before).
#[tokio::test]
async fn an_over_long_request_of_the_servers_fails_only_itself() {
    assert_eq!(
        refusal_of_a_request_of(2_000_000).await,
        Some(json!({"value": "refused -32600"}))
    );
}

/// A question the client knows (`sampling/createMessage`) asked with
/// parameters that are not its own is refused `-32602` (invalid params),
/// not `-32601` as a method the client does not know.
#[tokio::test]
async fn a_known_question_with_unreadable_parameters_is_invalid_params() {
    assert_eq!(
        refusal_of_a_request_of(1_000).await,
        Some(json!({"value": "refused -32602"}))
    );
}

/// A server on loopback whose `ask_long` tool asks the client a form with a
/// question of 200,000 bytes, `ask_short` one of 10 (each saying how the
/// client answered), and whose `ask_then_long` asks a short one and then
/// returns 200,000 bytes of text: over an HTTP session the questions and
/// the answers after them go on the call's event stream.
async fn long_messages_over_http() -> String {
    use toolshape::protocol::asks::ElicitParams;
    use toolshape::{Tool, ToolContext};

    #[derive(serde::Deserialize, schemars::JsonSchema)]
    struct Empty {}

    let ask = move |context: ToolContext, bytes: usize| async move {
        let params = ElicitParams::form("q".repeat(bytes), json!({"type": "object"}));
        match context.elicit_form(params).await {
            Ok(answer) => format!("answered {:?}", answer.action),
            Err(error) => format!("not answered: {error}"),
        }
    };
    let server = toolshape::Server::builder("long", "1")
        .tool(Tool::typed_with_context(
            "ask_long",
            move |context: ToolContext, _: Empty| async move {
                Ok::<_, toolshape::ToolError>(ask(context, 200_000).await)
            },
        ))
        .tool(Tool::typed_with_context(
            "ask_short",
            move |context: ToolContext, _: Empty| async move {
                Ok::<_, toolshape::ToolError>(ask(context, 10).await)
            },
        ))
        .tool(Tool::typed_with_context(
            "ask_then_long",
            move |context: ToolContext, _: Empty| async move {
                let asked = ask(context, 10).await;
                Ok::<_, toolshape::ToolError>(format!("{asked} {}", "a".repeat(200_000)))
            },
        ))
        .build()
        .unwrap();
    client_common::serve_over_http(server).await
}

/// A client of `url` over an HTTP session taking messages of at most
/// 64 KiB, that accepts every form (counting them in `asked`).
async fn http_within_64_kib(url: &str, asked: Arc<AtomicUsize>) -> Client {
    use toolshape::protocol::ProtocolVersion;
    use toolshape::protocol::asks::ElicitResult;

    let mut options = ClientOptions::default();
    options.request_timeout = Duration::from_secs(20);
    options.max_message_bytes = 64 * 1024;
    Client::builder()
        .options(options)
        .negotiation(Negotiation::Pinned(ProtocolVersion::V2025_11_25))
        .on_elicit(false, move |_| {
            asked.fetch_add(1, Ordering::SeqCst);
            async { Ok(ElicitResult::accept(serde_json::Map::new())) }
        })
        .connect_http(url)
        .await
        .unwrap()
}

/// Over an HTTP session, an over-long request of the server's on a call's
/// event stream is refused (the server's question gets an error naming the
/// limit) and the call goes on to its answer; an over-long answer on that
/// stream fails its call at once. Before, any event over the limit failed
/// the call as "event larger than", whichever way it went.
#[tokio::test]
async fn over_http_an_over_long_question_fails_only_itself() {
    let url = long_messages_over_http().await;
    let asked = Arc::new(AtomicUsize::new(0));
    let client = http_within_64_kib(&url, Arc::clone(&asked)).await;

    let said: String = client.call("ask_long", json!({})).await.unwrap();
    assert!(
        said.starts_with("not answered") && said.contains("larger than 65536 bytes"),
        "{said}"
    );
    assert_eq!(asked.load(Ordering::SeqCst), 0);

    let started = Instant::now();
    let error = client
        .call_tool("ask_then_long", None)
        .await
        .expect_err("an answer over the limit");
    assert!(
        matches!(error.kind(), ClientErrorKind::InvalidResponse(_))
            && error.to_string().contains("larger than 65536 bytes"),
        "{error}"
    );
    assert!(started.elapsed() < Duration::from_secs(10));
    assert_eq!(asked.load(Ordering::SeqCst), 1);

    // The session goes on: a question within the limit is answered.
    let said: String = client.call("ask_short", json!({})).await.unwrap();
    assert!(said.starts_with("answered"), "{said}");
    assert_eq!(asked.load(Ordering::SeqCst), 2);
    client.close(Duration::from_secs(2)).await;
}
