#![allow(clippy::unwrap_used, clippy::expect_used)]
//! `toolshape proxy` as a drop-in wrapper (its stdio front, a child process
//! of the client) in front of a Streamable HTTP server whose tool asks the
//! user (elicitation): the question reaches the client over the proxy's
//! stdio and its answer reaches the tool, for each pair of upstream revision
//! (2025-11-25: a request on the call's event stream; 2026-07-28: an
//! `input_required` round) and client revision.

#[path = "../../toolshape-harness/tests/client_common/mod.rs"]
mod client_common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::{Map, json};
use toolshape::client::{Client, Negotiation, ServerCommand, StderrMode};
use toolshape::protocol::ProtocolVersion;
use toolshape::protocol::asks::ElicitResult;
use toolshape::tool::Elicitation;
use toolshape::{Server, Tool, ToolContext};

/// No input.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Empty {}

/// What the tool asks for.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Contact {
    /// Your name.
    name: String,
}

/// A server whose `greet` tool asks the user's name.
async fn serve() -> String {
    let greet = Tool::typed_with_context("greet", |context: ToolContext, _: Empty| async move {
        Ok::<_, toolshape::ToolError>(match context.elicit::<Contact>("Who are you?").await? {
            Elicitation::Accepted(contact) => {
                json!({"greeting": format!("Hello, {}", contact.name)})
            }
            _ => json!({"greeting": "Hello, stranger"}),
        })
    });
    let server = Server::builder("asks", "1").tool(greet).build().unwrap();
    client_common::serve_over_http(server).await
}

#[tokio::test]
async fn a_question_of_an_http_upstream_reaches_the_client_over_stdio() {
    let url = serve().await;
    for upstream in ["2025-11-25", "2026-07-28"] {
        for client in [ProtocolVersion::V2025_11_25, ProtocolVersion::V2026_07_28] {
            let case = format!("upstream {upstream}, client {client:?}");
            let command = ServerCommand::new(client_common::toolshape_bin())
                .args(["proxy", "--protocol", upstream, "--url", &url])
                .stderr(StderrMode::Capture);
            let asked = Arc::new(AtomicUsize::new(0));
            let counted = Arc::clone(&asked);
            let client = Client::builder()
                .negotiation(Negotiation::Pinned(client))
                .options(client_common::options())
                .on_elicit(false, move |params| {
                    counted.fetch_add(1, Ordering::SeqCst);
                    async move {
                        assert_eq!(params.message, "Who are you?");
                        let mut content = Map::new();
                        content.insert("name".into(), json!("Ada"));
                        Ok(ElicitResult::accept(content))
                    }
                })
                .connect_stdio(command)
                .await
                .unwrap_or_else(|e| panic!("{case}: {e}"));
            let result = client.call_tool("greet", None).await.unwrap();
            assert!(!result.is_error, "{case}: {}", result.text());
            assert_eq!(
                result.structured,
                Some(json!({"greeting": "Hello, Ada"})),
                "{case}"
            );
            assert_eq!(asked.load(Ordering::SeqCst), 1, "{case}");
            client.close(Duration::from_secs(2)).await;
        }
    }
}

#[tokio::test]
async fn with_no_relay_asks_the_upstream_learns_it_may_not_ask() {
    let url = serve().await;
    for upstream in ["2025-11-25", "2026-07-28"] {
        let command = ServerCommand::new(client_common::toolshape_bin())
            .args([
                "proxy",
                "--no-relay-asks",
                "--protocol",
                upstream,
                "--url",
                &url,
            ])
            .stderr(StderrMode::Capture);
        let asked = Arc::new(AtomicUsize::new(0));
        let counted = Arc::clone(&asked);
        let client = Client::builder()
            .negotiation(Negotiation::Pinned(ProtocolVersion::V2025_11_25))
            .options(client_common::options())
            .on_elicit(false, move |_| {
                counted.fetch_add(1, Ordering::SeqCst);
                async { Ok(ElicitResult::accept(Map::new())) }
            })
            .connect_stdio(command)
            .await
            .unwrap_or_else(|e| panic!("upstream {upstream}: {e}"));
        let result = client.call_tool("greet", None).await.unwrap();
        // The upstream's tool finds the capability missing and says so.
        assert!(result.is_error, "upstream {upstream}: {}", result.text());
        assert!(
            result.text().contains("elicitation"),
            "upstream {upstream}: {}",
            result.text()
        );
        assert_eq!(asked.load(Ordering::SeqCst), 0, "upstream {upstream}");
        client.close(Duration::from_secs(2)).await;
    }
}
