#![allow(clippy::unwrap_used, clippy::expect_used)]
//! A prompt whose arguments will not do is answered `-32602 Invalid params`
//! with the renderer's reason (`InvalidArguments`), as a missing required
//! argument is; any other failure of a renderer is an internal error. Over
//! real HTTP, on a handshake revision and on 2026-07-28.

mod http_support;

use std::sync::Arc;

use serde::Deserialize;
use serde_json::{Map, Value, json};
use toolshape::client::{Client, ClientError, ClientErrorKind, Negotiation};
use toolshape::prompt::InvalidArguments;
use toolshape::protocol::prompts::{GetPromptResult, PromptMessage};
use toolshape::protocol::{ContentBlock, ProtocolVersion, Role};
use toolshape::{HttpOptions, Prompt, Server, ToolError};

use http_support::{Probe, Serving, TIMEOUT};

/// The arguments of `countdown`: only `from`.
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct Countdown {
    /// Where to count down from.
    from: String,
}

fn server() -> Server {
    let countdown = Prompt::typed("countdown", |_, arguments: Countdown| async move {
        let from: u32 = arguments.from.parse().map_err(|_| {
            InvalidArguments::new(format!(
                "`from` must be a whole number, not {:?}",
                arguments.from
            ))
        })?;
        let text = format!("Count down from {from}.");
        Ok(GetPromptResult::new(vec![PromptMessage::new(
            Role::User,
            ContentBlock::text(text),
        )]))
    });
    let broken = Prompt::new("broken", |_, _| async {
        Err::<GetPromptResult, _>(ToolError::new("the template store is down"))
    });
    Server::builder("prompts", "1")
        .prompt(countdown)
        .prompt(broken)
        .build()
        .unwrap()
}

fn arguments(pairs: &[(&str, &str)]) -> Option<Map<String, Value>> {
    Some(
        pairs
            .iter()
            .map(|(name, value)| ((*name).to_owned(), json!(value)))
            .collect(),
    )
}

fn protocol_error(error: &ClientError) -> (i64, String) {
    match error.kind() {
        ClientErrorKind::Protocol(object) => (object.code, object.message.clone()),
        other => panic!("not a protocol error: {other:?}"),
    }
}

#[tokio::test]
async fn arguments_that_will_not_do_are_invalid_params() {
    let serving =
        Serving::start_server(server(), Arc::new(Probe::default()), HttpOptions::default()).await;
    for version in [ProtocolVersion::V2025_11_25, ProtocolVersion::V2026_07_28] {
        let client = Client::builder()
            .negotiation(Negotiation::Pinned(version))
            .request_timeout(TIMEOUT)
            .connect_http(&serving.url)
            .await
            .unwrap();
        let rendered = client
            .get_prompt("countdown", arguments(&[("from", "3")]))
            .await
            .unwrap();
        assert_eq!(
            rendered.messages[0].content.as_text(),
            Some("Count down from 3.")
        );

        // The renderer's own refusal.
        let refused = client
            .get_prompt("countdown", arguments(&[("from", "three")]))
            .await
            .unwrap_err();
        let (code, message) = protocol_error(&refused);
        assert_eq!(code, -32602, "{version}: {message}");
        assert_eq!(message, r#"`from` must be a whole number, not "three""#);

        // Arguments that do not decode into the typed prompt's struct.
        let unknown = client
            .get_prompt("countdown", arguments(&[("from", "3"), ("to", "0")]))
            .await
            .unwrap_err();
        let (code, message) = protocol_error(&unknown);
        assert_eq!(code, -32602, "{version}: {message}");
        assert!(
            message.starts_with("Invalid arguments for prompt countdown"),
            "{message}"
        );

        // Anything else that fails a renderer is the server's fault.
        let broken = client.get_prompt("broken", None).await.unwrap_err();
        let (code, message) = protocol_error(&broken);
        assert_eq!(code, -32603, "{version}: {message}");
    }
}
