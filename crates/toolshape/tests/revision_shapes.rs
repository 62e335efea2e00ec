#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Content blocks a peer's revision has not never reach it: audio came with
//! 2025-03-26, resource links with 2025-06-18. A tool result leaves such a
//! block out; a prompt's message gets a text block saying what was there,
//! so the conversation keeps its turns. Over real HTTP, a client pinned to
//! each revision.

mod http_support;

use std::sync::Arc;

use serde_json::json;
use toolshape::client::{Client, Negotiation};
use toolshape::protocol::content::{BinaryContent, ContentBlock, ResourceLink};
use toolshape::protocol::prompts::{GetPromptResult, PromptMessage};
use toolshape::protocol::{ProtocolVersion, Role};
use toolshape::tool::ToolOutput;
use toolshape::{HttpOptions, Server, Tool, ToolError};

use http_support::{Probe, Serving, TIMEOUT};

fn link() -> ContentBlock {
    let mut link = ResourceLink::new("file:///project/notes.md", "notes.md");
    link.title = Some("Project notes".into());
    ContentBlock::ResourceLink(link)
}

fn audio() -> ContentBlock {
    ContentBlock::Audio(BinaryContent::new("UklGRg==", "audio/wav"))
}

fn server() -> Server {
    let prompt = toolshape::prompt::Prompt::new("briefing", |_, _| async {
        Ok::<_, ToolError>(GetPromptResult::new(vec![
            PromptMessage::new(Role::User, ContentBlock::text("Read these.")),
            PromptMessage::new(Role::User, link()),
            PromptMessage::new(Role::User, audio()),
        ]))
    });
    let tool = Tool::dynamic("media", json!({"type": "object"}), None, |_, _| async {
        Ok::<_, ToolError>(ToolOutput::content(vec![
            ContentBlock::text("found"),
            link(),
            audio(),
        ]))
    });
    Server::builder("content", "1")
        .tool(tool)
        .prompt(prompt)
        .build()
        .unwrap()
}

async fn client(url: &str, version: ProtocolVersion) -> Client {
    Client::builder()
        .negotiation(Negotiation::Pinned(version))
        .request_timeout(TIMEOUT)
        .connect_http(url)
        .await
        .unwrap_or_else(|error| panic!("{version}: {error}"))
}

#[tokio::test]
async fn blocks_a_revision_has_not_never_reach_it() {
    let serving =
        Serving::start_server(server(), Arc::new(Probe::default()), HttpOptions::default()).await;
    for version in ProtocolVersion::ALL {
        let client = client(&serving.url, version).await;
        assert_eq!(client.protocol_version(), version);
        let links = version >= ProtocolVersion::V2025_06_18;
        let sound = version >= ProtocolVersion::V2025_03_26;

        let prompt = client.get_prompt("briefing", None).await.unwrap();
        let kinds: Vec<_> = prompt
            .messages
            .iter()
            .map(|message| message.content.type_name().to_owned())
            .collect();
        let expected = [
            "text",
            if links { "resource_link" } else { "text" },
            if sound { "audio" } else { "text" },
        ];
        assert_eq!(kinds, expected, "{version}");
        if !links {
            assert_eq!(
                prompt.messages[1].content.as_text(),
                Some("[resource] Project notes: file:///project/notes.md"),
                "{version}"
            );
        }
        if !sound {
            let said = prompt.messages[2].content.as_text().unwrap();
            assert!(said.starts_with("[audio/wav audio left out"), "{said}");
        }

        let result = client.call_tool("media", None).await.unwrap();
        let kinds: Vec<_> = result
            .content
            .iter()
            .map(|block| block.type_name().to_owned())
            .collect();
        let mut expected = vec!["text"];
        if links {
            expected.push("resource_link");
        }
        if sound {
            expected.push("audio");
        }
        assert_eq!(kinds, expected, "{version}");
    }
}
