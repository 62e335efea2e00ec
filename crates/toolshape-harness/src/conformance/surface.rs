//! The prompts, resources and template the conformance scenarios read.

use std::collections::BTreeMap;

use serde_json::json;
use toolshape::protocol::asks::{Ask, ElicitParams, ElicitResult};
use toolshape::protocol::completion::Completion;
use toolshape::protocol::content::{
    BinaryContent, ContentBlock, EmbeddedResource, ResourceContents, Role, TextResourceContents,
};
use toolshape::protocol::prompts::{GetPromptResult, PromptMessage};
use toolshape::resource::{ResourceEvents, ResourceNotFound};
use toolshape::{Prompt, Resource, ResourceTemplate, ToolContext, ToolError};

use super::PNG_1X1;

fn say(text: impl Into<String>) -> PromptMessage {
    PromptMessage::new(Role::User, ContentBlock::text(text))
}

/// Candidates of `test_prompt_with_arguments`'s arguments, by prefix.
async fn places(partial: String, _others: BTreeMap<String, String>) -> Vec<String> {
    ["paris", "park", "party"]
        .iter()
        .filter(|place| place.starts_with(&partial))
        .map(|place| (*place).to_owned())
        .collect()
}

/// The prompts.
pub fn prompts() -> Vec<Prompt> {
    vec![
        Prompt::new("test_simple_prompt", |_, _| async {
            Ok(GetPromptResult::new(vec![say("This is a simple prompt for testing.")]))
        })
        .description("A prompt without arguments"),
        Prompt::new("test_prompt_with_arguments", |_, arguments: BTreeMap<String, String>| async move {
            let get = |name: &str| arguments.get(name).cloned().unwrap_or_default();
            Ok(GetPromptResult::new(vec![say(format!(
                "Prompt with arguments: arg1='{}', arg2='{}'",
                get("arg1"),
                get("arg2")
            ))]))
        })
        .description("A prompt with two arguments")
        .argument("arg1", "First test argument", true)
        .argument("arg2", "Second test argument", true)
        .complete("arg1", places)
        .complete("arg2", places),
        Prompt::new("test_prompt_with_embedded_resource", |_, arguments: BTreeMap<String, String>| async move {
            let uri = arguments.get("resourceUri").cloned().unwrap_or_default();
            let mut contents = TextResourceContents::new(uri, "Embedded resource content for testing.");
            contents.mime_type = Some("text/plain".into());
            let resource = EmbeddedResource::new(ResourceContents::Text(contents));
            Ok(GetPromptResult::new(vec![
                PromptMessage::new(Role::User, ContentBlock::Resource(resource)),
                say("Please process the embedded resource above."),
            ]))
        })
        .description("A prompt embedding the resource it is given")
        .argument("resourceUri", "URI of the resource to embed", true),
        Prompt::new("test_prompt_with_image", |_, _| async {
            Ok(GetPromptResult::new(vec![
                PromptMessage::new(Role::User, ContentBlock::Image(BinaryContent::new(PNG_1X1, "image/png"))),
                say("Please analyze the image above."),
            ]))
        })
        .description("A prompt with an image"),
        Prompt::new("test_input_required_result_prompt", |context: ToolContext, _| async move {
            let form = ElicitParams::form(
                "What context should the prompt use?",
                json!({"type": "object", "properties": {"context": {"type": "string"}}, "required": ["context"]}),
            );
            let answer = context.ask_as(Some("user_context"), Ask::Elicit(form)).await?;
            let result: ElicitResult = serde_json::from_value(answer)?;
            let used = result
                .content
                .as_ref()
                .and_then(|content| content.get("context"))
                .and_then(|context| context.as_str())
                .unwrap_or_default()
                .to_owned();
            Ok::<_, ToolError>(GetPromptResult::new(vec![say(format!("Prompt with context: {used}"))]))
        })
        .description("A prompt that asks the user for its context"),
    ]
}

/// How many ids the template's `id` completion says match in all (more
/// than it sends: `hasMore`).
pub const IDS_IN_ALL: u64 = 40;

/// The resource whose subscribers hear of a change.
pub const WATCHED: &str = "test://watched-resource";

/// Where the resources' changes are announced: 100 ms after each
/// subscription to [`WATCHED`] (`resources/subscribe`, or a 2026-07-28
/// `subscriptions/listen` naming it), an update of it, so that a client can
/// see updates arrive.
pub fn resource_events() -> ResourceEvents {
    let events = ResourceEvents::new();
    let announcer = events.clone();
    events.on_subscribe(move |uri| {
        if uri != WATCHED {
            return;
        }
        let announcer = announcer.clone();
        tokio::spawn(async move {
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            announcer.updated(WATCHED);
        });
    })
}

/// The fixed resources.
pub fn resources() -> Vec<Resource> {
    vec![
        Resource::text(
            "test://static-text",
            "static-text",
            "text/plain",
            "This is the content of the static text resource.",
        )
        .description("A static text resource"),
        Resource::blob(
            "test://static-binary",
            "static-binary",
            "image/png",
            PNG_1X1,
        )
        .description("A static binary resource"),
        Resource::text(
            WATCHED,
            "watched-resource",
            "text/plain",
            "Watched resource content",
        )
        .description("A resource to subscribe to"),
    ]
}

/// The template `test://template/{id}/data` (with the id `missing`, not
/// found).
pub fn resource_templates() -> Vec<ResourceTemplate> {
    let template = ResourceTemplate::new(
        "test://template/{id}/data",
        "template",
        |_, uri, variables: BTreeMap<String, String>| async move {
            let id = variables.get("id").cloned().unwrap_or_default();
            if id == "missing" {
                Err(ResourceNotFound::new(uri.clone()))?;
            }
            let text =
                json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")});
            let mut contents = TextResourceContents::new(uri, text.to_string());
            contents.mime_type = Some("application/json".into());
            Ok::<_, ToolError>(vec![ResourceContents::Text(contents)])
        },
    );
    match template {
        Ok(template) => vec![
            template
                .mime_type("application/json")
                .description("Data for an id")
                // As a paged source would: the values sent, and how many
                // match in all (a gateway must pass both on).
                .complete_counted("id", |partial, _| async move {
                    let values: Vec<String> = ["123", "456"]
                        .iter()
                        .filter(|id| id.starts_with(&partial))
                        .map(|id| (*id).to_owned())
                        .collect();
                    let mut completion = Completion::from_values(values);
                    completion.total = Some(IDS_IN_ALL);
                    completion.has_more = Some(true);
                    completion
                }),
        ],
        Err(_) => Vec::new(),
    }
}
