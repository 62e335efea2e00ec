#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Malformed input against the test server over real pipes: each gets the
//! JSON-RPC error it deserves (or, for responses and notifications, no
//! answer), and the server keeps serving.

mod common;

use common::{MODERN, Peer, is_error, params_for};
use serde_json::{Value, json};

const MAX_MESSAGE_BYTES: usize = 64 * 1024;

async fn server() -> Peer {
    let mut peer = Peer::test_server(["--max-message-bytes", &MAX_MESSAGE_BYTES.to_string()]);
    peer.initialize("2025-11-25").await;
    peer
}

/// Sends `line` and returns the next message, which must be a response.
async fn answer_to(peer: &mut Peer, line: &[u8]) -> Value {
    peer.send_line(line).await;
    let message = peer.next_message(common::TIMEOUT).await.expect("an answer");
    assert!(common::is_response(&message), "{message}");
    message
}

/// The next message is the answer to a fresh ping: nothing else came first.
async fn assert_next_is_ping(peer: &mut Peer) {
    let id = peer.send_request("ping", Value::Null).await;
    let next = peer
        .next_message(common::TIMEOUT)
        .await
        .expect("an answer to ping");
    assert_eq!(next, json!({"jsonrpc": "2.0", "id": id, "result": {}}));
}

#[tokio::test]
async fn bad_json_is_a_parse_error_with_a_null_id() {
    let mut peer = server().await;
    for line in [
        &b"{"[..],
        b"{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"ping\"",
        b"not json at all",
        b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"} trailing",
        b"\xff\xfe{\"jsonrpc\":\"2.0\"}",
        b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"p\xffng\"}",
    ] {
        let answer = answer_to(&mut peer, line).await;
        assert_eq!(answer["error"]["code"], -32700, "{answer}");
        // No id at all: MCP's schema has no `null` id.
        assert!(answer.get("id").is_none(), "{answer}");
        assert_next_is_ping(&mut peer).await;
    }
}

#[tokio::test]
async fn batches_and_non_objects_are_invalid_requests() {
    let mut peer = server().await;
    for line in [
        &br"[]"[..],
        br#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#,
        br#""ping""#,
        b"42",
        b"null",
    ] {
        let answer = answer_to(&mut peer, line).await;
        assert_eq!(answer["error"]["code"], -32600, "{answer}");
        assert_eq!(answer["id"], Value::Null, "{answer}");
        assert_next_is_ping(&mut peer).await;
    }
}

#[tokio::test]
async fn wrongly_typed_members_are_invalid_requests_or_params() {
    let mut peer = server().await;
    let cases: [(Value, i64, Value); 10] = [
        // Envelope problems: -32600, with the id when it is readable.
        (
            json!({"jsonrpc": "2.0", "id": 1, "method": 42}),
            -32600,
            json!(1),
        ),
        (
            json!({"jsonrpc": "2.0", "id": 2, "method": "ping", "params": "x"}),
            -32600,
            json!(2),
        ),
        (
            json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": 7}),
            -32600,
            json!(3),
        ),
        (
            json!({"jsonrpc": "1.0", "id": 4, "method": "ping"}),
            -32600,
            json!(4),
        ),
        (json!({"id": 5, "method": "ping"}), -32600, json!(5)),
        (
            json!({"jsonrpc": "2.0", "id": null, "method": "ping"}),
            -32600,
            Value::Null,
        ),
        (
            json!({"jsonrpc": "2.0", "id": 1.5, "method": "ping"}),
            -32600,
            Value::Null,
        ),
        // Params of the wrong shape for the method: -32602.
        (
            json!({"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": {"name": 5}}),
            -32602,
            json!(8),
        ),
        (
            json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call",
                "params": {"name": "numbers", "arguments": "n=1"}}),
            -32602,
            json!(9),
        ),
        (
            json!({"jsonrpc": "2.0", "id": 10, "method": "tools/list", "params": {"cursor": []}}),
            -32602,
            json!(10),
        ),
    ];
    for (message, code, id) in cases {
        let answer = answer_to(&mut peer, message.to_string().as_bytes()).await;
        assert_eq!(answer["error"]["code"], code, "{message} -> {answer}");
        assert_eq!(answer["id"], id, "{message} -> {answer}");
        assert_next_is_ping(&mut peer).await;
    }
}

#[tokio::test]
async fn responses_and_unknown_notifications_get_no_reply() {
    let mut peer = server().await;
    for message in [
        json!({"jsonrpc": "2.0", "id": 1, "result": {}}),
        json!({"jsonrpc": "2.0", "id": "x", "result": {"anything": [1, 2]}}),
        json!({"jsonrpc": "2.0", "id": 2, "error": {"code": -32601, "message": "nope"}}),
        json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "Parse error"}}),
        json!({"jsonrpc": "2.0", "method": "notifications/unknown", "params": {"a": 1}}),
        json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": 1, "progress": 1}}),
        json!({"jsonrpc": "2.0", "method": "ping"}),
    ] {
        peer.send(&message).await;
        assert_next_is_ping(&mut peer).await;
    }
}

#[tokio::test]
async fn an_unknown_method_is_method_not_found() {
    let mut peer = server().await;
    for method in ["resources/list", "prompts/list", "tools/delete", ""] {
        let error = peer.error(method, json!({})).await;
        assert_eq!(error["code"], -32601, "{method}: {error}");
    }
    let long = "m".repeat(50_000);
    let response = peer.request(&long, Value::Null).await;
    assert_eq!(response["error"]["code"], -32601, "{response}");
    assert!(
        response.to_string().len() < 2000,
        "the error does not echo a long method name ({} bytes)",
        response.to_string().len()
    );
    assert_next_is_ping(&mut peer).await;
}

#[tokio::test]
async fn a_message_over_the_size_limit_is_refused_and_the_next_is_answered() {
    let mut peer = server().await;
    let filler = "x".repeat(1024 * 1024);
    let huge = json!({"jsonrpc": "2.0", "id": 77, "method": "tools/call",
                      "params": {"name": "noop_00", "arguments": {"filler": filler}}});
    let id = peer.send_request("ping", Value::Null).await;
    peer.send(&huge).await;
    let next = peer.send_request("ping", Value::Null).await;
    assert_eq!(peer.next_response().await["id"], id);
    let refused = peer.next_response().await;
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("larger than"),
        "{refused}"
    );
    assert!(refused.to_string().len() < 1000, "{refused}");
    assert_eq!(
        refused["id"], 77,
        "the id is read from the message's start: {refused}"
    );
    let answered = peer.next_response().await;
    assert_eq!(
        answered,
        json!({"jsonrpc": "2.0", "id": next, "result": {}})
    );

    // Only a top-level `id` names the request: an over-long notification, or
    // a request whose `id` comes after its huge params, is answered with
    // `id: null`, never with an `"id"` nested in its params.
    let filler = "z".repeat(1024 * 1024);
    for line in [
        format!(
            r#"{{"jsonrpc":"2.0","method":"notifications/cancelled","params":{{"requestId":1,"id":{next},"x":"{filler}"}}}}"#
        ),
        format!(
            r#"{{"jsonrpc":"2.0","method":"tools/call","params":{{"name":"noop_00","arguments":{{"id":{next},"x":"{filler}"}}}},"id":78}}"#
        ),
    ] {
        peer.send_line(line.as_bytes()).await;
        let refused = peer.next_response().await;
        assert_eq!(refused["error"]["code"], -32600, "{refused}");
        assert_eq!(refused["id"], Value::Null, "{refused}");
        assert_next_is_ping(&mut peer).await;
    }

    // Just under the limit is fine.
    let fits = "y".repeat(MAX_MESSAGE_BYTES - 200);
    let result = peer
        .call_result("2025-11-25", "noop_00", json!({"filler": fits}))
        .await;
    assert!(!is_error(&result), "{result}");
}

/// Calls `ask_roots`: the call's id, and the server's question.
async fn ask_roots(peer: &mut Peer) -> (i64, Value) {
    let call = peer
        .send_request("tools/call", json!({"name": "ask_roots", "arguments": {}}))
        .await;
    let asked = peer
        .next_message(common::TIMEOUT)
        .await
        .expect("a question");
    assert_eq!(asked["method"], "roots/list", "{asked}");
    (call, asked)
}

/// A client's answer to the server's own request that is over the limit
/// fails that request at once: the tool that asked ends with an error naming
/// the limit (it waited for its ten-minute ask timeout before), and the
/// answer is never answered (an error with the ask's id went to the client).
/// An over-long request with the same id as the question is refused and
/// leaves the question waiting: the two directions' ids are apart.
#[tokio::test]
async fn an_over_long_answer_fails_the_servers_question_and_gets_no_reply() {
    let mut peer = Peer::test_server(["--max-message-bytes", &MAX_MESSAGE_BYTES.to_string()]);
    peer.result(
        "initialize",
        json!({
            "protocolVersion": "2025-11-25",
            "capabilities": {"roots": {}},
            "clientInfo": {"name": "toolshape-tests", "version": "0.0.0"},
        }),
    )
    .await;
    peer.notify("notifications/initialized", Value::Null).await;

    // An over-long request that carries the question's id is refused with
    // that id, and the question still waits for its answer.
    let (call, asked) = ask_roots(&mut peer).await;
    let filler = "q".repeat(2 * MAX_MESSAGE_BYTES);
    peer.send(
        &json!({"jsonrpc": "2.0", "id": asked["id"], "method": "ping",
                      "params": {"filler": filler}}),
    )
    .await;
    let refused = peer.response(asked["id"].clone()).await;
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
    peer.send(&json!({"jsonrpc": "2.0", "id": asked["id"],
                      "result": {"roots": [{"uri": "file:///kept"}]}}))
        .await;
    let answered = peer.response(call).await;
    assert!(answered.to_string().contains("file:///kept"), "{answered}");

    // An over-long answer fails the question at once.
    let (call, asked) = ask_roots(&mut peer).await;
    let filler = "r".repeat(2 * MAX_MESSAGE_BYTES);
    peer.send(&json!({"jsonrpc": "2.0", "id": asked["id"],
                      "result": {"roots": [{"uri": format!("file:///{filler}")}]}}))
        .await;
    let answered = peer.response(call).await;
    let text = answered.to_string();
    assert!(text.contains("larger than"), "{text}");
    assert!(text.len() < 2000, "{text}");
    peer.assert_no_response(asked["id"].clone(), std::time::Duration::from_millis(300))
        .await;
    assert_next_is_ping(&mut peer).await;
}

#[tokio::test]
async fn deeply_nested_json_is_an_error_not_a_crash() {
    let mut peer = server().await;
    let depth = 10_000;
    let nested = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
    for version in ["2025-11-25", MODERN] {
        let params = params_for(
            version,
            json!({"name": "noop_00", "arguments": {"deep": "HOLE"}}),
        );
        let line = json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": params})
            .to_string()
            .replace("\"HOLE\"", &nested);
        let answer = answer_to(&mut peer, line.as_bytes()).await;
        assert_eq!(answer["id"], 5, "{answer}");
        assert_eq!(answer["error"]["code"], -32602, "{answer}");
        assert!(answer.to_string().len() < 1000, "{answer}");
        assert_next_is_ping(&mut peer).await;
    }
    // Deep nesting as a whole message (valid JSON: an array, so a batch).
    let answer = answer_to(&mut peer, nested.as_bytes()).await;
    assert_eq!(answer["error"]["code"], -32600, "{answer}");
    assert_next_is_ping(&mut peer).await;
    // In a notification's params (ignored) and in params a method ignores.
    let objects = format!("{}0{}", "{\"a\":".repeat(depth), "}".repeat(depth));
    let notification = format!(
        r#"{{"jsonrpc":"2.0","method":"notifications/cancelled","params":{{"requestId":1,"x":{objects}}}}}"#
    );
    peer.send_line(notification.as_bytes()).await;
    assert_next_is_ping(&mut peer).await;
    let ping =
        format!(r#"{{"jsonrpc":"2.0","id":"deep","method":"ping","params":{{"x":{objects}}}}}"#);
    let answer = answer_to(&mut peer, ping.as_bytes()).await;
    assert_eq!(answer["id"], "deep", "{answer}");
    assert_next_is_ping(&mut peer).await;
}

#[tokio::test]
async fn blank_lines_and_crlf_are_accepted() {
    let mut peer = server().await;
    peer.send_line(b"").await;
    peer.send_line(b"   \t").await;
    peer.send_line(b"{\"jsonrpc\":\"2.0\",\"id\":\"crlf\",\"method\":\"ping\"}\r")
        .await;
    let answer = peer.next_response().await;
    assert_eq!(
        answer,
        json!({"jsonrpc": "2.0", "id": "crlf", "result": {}})
    );
    assert_next_is_ping(&mut peer).await;
}
