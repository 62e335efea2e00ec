#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Tools that ask the client, over real pipes, on a handshake revision
//! (server-to-client requests) and on 2026-07-28 (input_required rounds):
//! the same tool code, the same answers, and clear errors when the client
//! cannot answer.

mod client_common;
mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Map, Value, json};
use toolshape::client::{Client, ClientErrorKind, Negotiation, ServerCommand, StderrMode};
use toolshape::protocol::ProtocolVersion;
use toolshape::protocol::asks::{CreateMessageResult, ElicitResult, Root};

const MODES: [Negotiation; 2] = [
    Negotiation::Pinned(ProtocolVersion::V2025_11_25),
    Negotiation::Auto,
];

fn command() -> ServerCommand {
    ServerCommand::new(common::test_server_path()).stderr(StderrMode::Discard)
}

/// A client that answers everything, counting the questions.
async fn answering(negotiation: Negotiation, asked: Arc<AtomicUsize>) -> Client {
    client_common::answering(asked)
        .negotiation(negotiation)
        .connect_stdio(command())
        .await
        .unwrap()
}

async fn learnt(client: &Client, tool: &str) -> Value {
    let result = client.call_tool(tool, None).await.unwrap();
    assert!(!result.is_error, "{tool}: {}", result.text());
    result.structured.unwrap()["learnt"].clone()
}

#[tokio::test]
async fn every_question_is_answered_on_every_revision() {
    for negotiation in MODES {
        let asked = Arc::new(AtomicUsize::new(0));
        let client = answering(negotiation, Arc::clone(&asked)).await;
        let user = json!({"action": "accept", "name": "Ada", "age": 36});
        let model = json!({"model": "test-model", "text": "4"});
        assert_eq!(learnt(&client, "ask_user").await, user, "{negotiation:?}");
        assert_eq!(learnt(&client, "ask_model").await, model, "{negotiation:?}");
        assert_eq!(
            learnt(&client, "ask_roots").await,
            json!({"roots": ["file:///work/project"]}),
            "{negotiation:?}"
        );
        let both = json!({"user": user, "model": model});
        assert_eq!(learnt(&client, "ask_twice").await, both, "{negotiation:?}");
        assert_eq!(learnt(&client, "ask_both").await, both, "{negotiation:?}");
        // Each question once per call: 1 + 1 + 1 + 2 + 2.
        assert_eq!(asked.load(Ordering::SeqCst), 7, "{negotiation:?}");
        client.close(std::time::Duration::from_secs(2)).await;
    }
}

#[tokio::test]
async fn a_client_without_the_capability_gets_a_clear_error_not_a_hang() {
    for negotiation in MODES {
        let client = Client::builder()
            .negotiation(negotiation)
            .connect_stdio(command())
            .await
            .unwrap();
        let started = std::time::Instant::now();
        match client.call_tool("ask_user", None).await {
            // Handshake revisions: the tool fails with a message.
            Ok(result) => {
                assert!(result.is_error, "{negotiation:?}");
                assert!(result.text().contains("elicitation"), "{}", result.text());
            }
            // 2026-07-28: a protocol error naming the missing capability.
            Err(error) => match error.kind() {
                ClientErrorKind::Protocol(object) => {
                    assert_eq!(object.code, -32021, "{object:?}");
                    assert!(object.message.contains("elicitation"), "{object:?}");
                }
                other => panic!("{negotiation:?}: {other:?}"),
            },
        }
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
        client.close(std::time::Duration::from_secs(2)).await;
    }
}

/// `tools/call` params for a 2026-07-28 client that can elicit and sample.
fn modern_call(name: &str, extra: Value) -> Value {
    let mut params = json!({
        "name": name,
        "arguments": {},
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": common::MODERN,
            "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}, "sampling": {}},
        },
    });
    if let (Some(params), Value::Object(extra)) = (params.as_object_mut(), extra) {
        params.extend(extra);
    }
    params
}

fn accepted() -> Value {
    json!({"action": "accept", "content": {"name": "Ada", "age": 36}})
}

#[tokio::test]
async fn rounds_are_stateless_and_their_state_cannot_be_forged_or_moved() {
    let mut peer = common::Peer::test_server::<_, &str>([]);
    // Round one: the question, and a state to echo.
    let first = peer
        .result("tools/call", modern_call("ask_twice", json!({})))
        .await;
    assert_eq!(first["resultType"], "input_required", "{first}");
    let requests = first["inputRequests"].as_object().unwrap();
    assert_eq!(requests.len(), 1, "{first}");
    let (key, question) = requests.iter().next().unwrap();
    assert_eq!(question["method"], "elicitation/create", "{first}");
    assert_eq!(question["params"]["mode"], "form");
    let state = first["requestState"].as_str().unwrap().to_owned();

    // A missing answer: the same question again, not an error.
    let again = peer
        .result(
            "tools/call",
            modern_call(
                "ask_twice",
                json!({"requestState": state, "inputResponses": {"unrelated": {}}}),
            ),
        )
        .await;
    assert_eq!(again["resultType"], "input_required", "{again}");
    assert!(again["inputRequests"].get(key).is_some(), "{again}");

    // An answer that is not a result object is refused, not taken as given.
    for broken in [json!(12345), json!(null), json!("yes")] {
        let refused = peer
            .error(
                "tools/call",
                modern_call(
                    "ask_twice",
                    json!({"requestState": state, "inputResponses": { key.clone(): broken }}),
                ),
            )
            .await;
        assert_eq!(refused["code"], -32602, "{refused}");
        assert!(
            refused["message"]
                .as_str()
                .unwrap()
                .contains("inputResponses"),
            "{refused}"
        );
    }

    // Round two: the answer brings the next question (the model).
    let responses = json!({ key.clone(): accepted(), "extra": {"ignored": true} });
    let second = peer
        .result(
            "tools/call",
            modern_call(
                "ask_twice",
                json!({"requestState": state, "inputResponses": responses}),
            ),
        )
        .await;
    assert_eq!(second["resultType"], "input_required", "{second}");
    let (sample_key, sample) = second["inputRequests"]
        .as_object()
        .unwrap()
        .iter()
        .next()
        .unwrap();
    assert_eq!(sample["method"], "sampling/createMessage", "{second}");
    let second_state = second["requestState"].as_str().unwrap().to_owned();

    // A forged state is refused...
    let mut forged = second_state.clone().into_bytes();
    forged[3] = if forged[3] == b'A' { b'B' } else { b'A' };
    let forged = String::from_utf8(forged).unwrap();
    let answer = json!({ sample_key.clone(): {"role": "assistant", "content": {"type": "text", "text": "4"}, "model": "m"} });
    let refused = peer
        .error(
            "tools/call",
            modern_call(
                "ask_twice",
                json!({"requestState": forged, "inputResponses": answer}),
            ),
        )
        .await;
    assert_eq!(refused["code"], -32602, "{refused}");
    assert!(
        refused["message"]
            .as_str()
            .unwrap()
            .contains("requestState"),
        "{refused}"
    );
    // ...and so is one moved to another call.
    let moved = peer
        .error(
            "tools/call",
            modern_call(
                "ask_both",
                json!({"requestState": second_state, "inputResponses": answer}),
            ),
        )
        .await;
    assert_eq!(moved["code"], -32602, "{moved}");

    // The genuine retry completes, with both answers.
    let done = peer
        .result(
            "tools/call",
            modern_call(
                "ask_twice",
                json!({"requestState": second_state, "inputResponses": answer}),
            ),
        )
        .await;
    assert_eq!(done["resultType"], "complete", "{done}");
    assert_eq!(
        done["structuredContent"]["learnt"],
        json!({"user": {"action": "accept", "name": "Ada", "age": 36}, "model": {"model": "m", "text": "4"}}),
        "{done}"
    );
}

#[tokio::test]
async fn questions_asked_together_come_in_one_round() {
    let mut peer = common::Peer::test_server::<_, &str>([]);
    let first = peer
        .result("tools/call", modern_call("ask_both", json!({})))
        .await;
    let requests = first["inputRequests"].as_object().unwrap();
    let methods: Vec<&str> = requests
        .values()
        .map(|r| r["method"].as_str().unwrap())
        .collect();
    assert_eq!(requests.len(), 2, "{first}");
    assert!(methods.contains(&"elicitation/create") && methods.contains(&"sampling/createMessage"));
}

#[tokio::test]
async fn an_elicited_answer_that_breaks_the_schema_fails_the_tool() {
    let mut peer = common::Peer::test_server::<_, &str>([]);
    let first = peer
        .result("tools/call", modern_call("ask_user", json!({})))
        .await;
    let key = first["inputRequests"]
        .as_object()
        .unwrap()
        .keys()
        .next()
        .unwrap()
        .clone();
    let state = first["requestState"].clone();
    let wrong = json!({ key: {"action": "accept", "content": {"name": "Ada", "age": "old"}} });
    let result = peer
        .result(
            "tools/call",
            modern_call(
                "ask_user",
                json!({"requestState": state, "inputResponses": wrong}),
            ),
        )
        .await;
    assert_eq!(result["isError"], true, "{result}");
    assert!(
        common::text_of(&result).contains("requested schema"),
        "{result}"
    );
}

/// The asking tools served over Streamable HTTP on loopback; its URL.
async fn serve_http() -> String {
    let server = toolshape::Server::builder("asking", "1")
        .tools(toolshape_harness::asking::tools())
        .build()
        .unwrap();
    client_common::serve_over_http(server).await
}

#[tokio::test]
async fn every_question_is_answered_over_http_sessions_and_stateless() {
    let url = serve_http().await;
    for negotiation in MODES {
        let asked = Arc::new(AtomicUsize::new(0));
        let (elicited, sampled) = (Arc::clone(&asked), Arc::clone(&asked));
        let client = Client::builder()
            .negotiation(negotiation)
            .on_elicit(false, move |_| {
                elicited.fetch_add(1, Ordering::SeqCst);
                async move {
                    let mut content = Map::new();
                    content.insert("name".into(), json!("Ada"));
                    content.insert("age".into(), json!(36));
                    Ok(ElicitResult::accept(content))
                }
            })
            .on_sample(move |_| {
                sampled.fetch_add(1, Ordering::SeqCst);
                async move { Ok(CreateMessageResult::text("test-model", "4")) }
            })
            .connect_http(&url)
            .await
            .unwrap();
        let expected = json!({
            "user": {"action": "accept", "name": "Ada", "age": 36},
            "model": {"model": "test-model", "text": "4"},
        });
        assert_eq!(
            learnt(&client, "ask_twice").await,
            expected,
            "{negotiation:?}"
        );
        assert_eq!(
            learnt(&client, "ask_both").await,
            expected,
            "{negotiation:?}"
        );
        assert_eq!(asked.load(Ordering::SeqCst), 4, "{negotiation:?}");
        client.close(std::time::Duration::from_secs(2)).await;
    }
}

/// A client's answer over an HTTP session larger than the server's body
/// limit (4 MiB by default) is refused with 413 and fails the server's
/// question at once: the tool ends with an error naming the limit (before,
/// the question waited for its ten-minute ask timeout, and the call for the
/// client's).
#[tokio::test]
async fn an_answer_over_the_body_limit_fails_the_question_at_once() {
    let url = serve_http().await;
    let huge = format!("file:///{}", "r".repeat(5 * 1024 * 1024));
    let client = Client::builder()
        .negotiation(Negotiation::Pinned(ProtocolVersion::V2025_11_25))
        .request_timeout(std::time::Duration::from_secs(30))
        .roots(vec![Root::new(huge, None)])
        .connect_http(&url)
        .await
        .unwrap();
    let result = client.call_tool("ask_roots", None).await.unwrap();
    assert!(result.is_error, "{}", result.text());
    assert!(result.text().contains("larger than"), "{}", result.text());
    // The session goes on.
    let error = client.call_tool("ask_roots", None).await.unwrap();
    assert!(error.is_error, "{}", error.text());
    client.close(std::time::Duration::from_secs(2)).await;
}

/// A client opens its session's standalone stream before `connect_http`
/// returns, whether or not it answers server requests: what the server
/// sends outside any request (here a tool list change) reaches it there.
#[tokio::test]
async fn a_client_listens_on_its_sessions_standalone_stream() {
    let registry = toolshape::ToolRegistry::new();
    registry
        .register(toolshape::Tool::text("first", |_: Empty| async {
            Ok("one".to_owned())
        }))
        .unwrap();
    let server = toolshape::Server::builder("listening", "1")
        .registry(registry.clone())
        .build()
        .unwrap();
    let url = client_common::serve_over_http(server).await;
    for answers in [true, false] {
        let changes = Arc::new(AtomicUsize::new(0));
        let seen = Arc::clone(&changes);
        let mut builder = Client::builder()
            .negotiation(Negotiation::Pinned(ProtocolVersion::V2025_11_25))
            .on_message(move |message| {
                if String::from_utf8_lossy(message).contains("notifications/tools/list_changed") {
                    seen.fetch_add(1, Ordering::SeqCst);
                }
            });
        if answers {
            builder = builder.on_elicit(false, |_| async { Ok(ElicitResult::accept(Map::new())) });
        }
        let client = builder.connect_http(&url).await.unwrap();
        // Sent after the stream opened (the client opens it before its
        // first request); the change below comes after the answer.
        client.list_tools().await.unwrap();
        let name = format!("added_{answers}");
        registry
            .register(toolshape::Tool::text(name.clone(), |_: Empty| async {
                Ok("two".to_owned())
            }))
            .unwrap();
        let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(5);
        while changes.load(Ordering::SeqCst) == 0 && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        assert!(changes.load(Ordering::SeqCst) > 0, "answers: {answers}");
        registry.remove(&name);
        client.close(std::time::Duration::from_secs(2)).await;
    }
}

/// A tool input with no arguments.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Empty {}
