//! A server whose tools change it while it serves: `touch` announces an
//! update of a resource, `add_tool` registers a new tool, `add_prompt` a
//! new prompt, `add_template` a new resource template (and says the
//! resource list changed), `announce_resources` says the resource list
//! changed. For the tests of change notifications
//! (`subscriptions/listen`, `resources/subscribe`) directly and through
//! `toolshape proxy`; `test_server --changing` serves it over stdio.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use toolshape::protocol::content::{ContentBlock, Role};
use toolshape::protocol::prompts::{GetPromptResult, PromptMessage};

use toolshape::protocol::content::{ResourceContents, TextResourceContents};
use toolshape::resource::{ResourceEvents, ResourceTemplateRegistry};
use toolshape::{
    Prompt, PromptRegistry, Resource, ResourceTemplate, ServerBuilder, Tool, ToolError,
    ToolRegistry,
};

/// The resource the tests subscribe to.
pub const WATCHED: &str = "changes://watched";
/// A resource the tests do not subscribe to.
pub const OTHER: &str = "changes://other";

/// What `touch` touches.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct Touch {
    /// The resource that changed.
    pub uri: String,
}

/// What `add_tool` and `add_prompt` add.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct AddTool {
    /// The new tool's name.
    pub name: String,
}

/// An empty input.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct Empty {}

/// What each tool answers.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Done {
    /// What was done.
    pub done: String,
}

/// A prompt's text, from its name.
fn greeting(name: String) -> Prompt {
    let text = format!("Hello from {name}");
    Prompt::new(name, move |_, _| {
        let text = text.clone();
        async move {
            Ok::<_, ToolError>(GetPromptResult::new(vec![PromptMessage::new(
                Role::User,
                ContentBlock::text(text),
            )]))
        }
    })
}

/// A template `changes://{name}/{id}` whose resources read `{name} {id}`.
fn template(name: &str) -> Result<ResourceTemplate, String> {
    let owner = name.to_owned();
    ResourceTemplate::new(
        format!("changes://{name}/{{id}}"),
        name,
        move |_, uri, variables: BTreeMap<String, String>| {
            let text = format!(
                "{owner} {}",
                variables.get("id").cloned().unwrap_or_default()
            );
            async move {
                Ok::<_, ToolError>(vec![ResourceContents::Text(TextResourceContents::new(
                    uri, text,
                ))])
            }
        },
    )
    .map_err(|error| error.to_string())
}

/// `builder` with the two resources, a prompt and the four tools, its tool
/// and prompt registries and resource events shared with the tools that
/// change them.
pub fn serve_changes(builder: ServerBuilder) -> ServerBuilder {
    let events = ResourceEvents::new();
    let registry = ToolRegistry::new();
    let prompts = PromptRegistry::new();
    let templates = ResourceTemplateRegistry::new();
    let (touched, announced, added) = (events.clone(), events.clone(), registry.clone());
    let prompted = prompts.clone();
    let (templated, listed) = (templates.clone(), events.clone());
    let tools = vec![
        Tool::typed("touch", move |touch: Touch| {
            touched.updated(touch.uri.clone());
            async move {
                Ok::<_, ToolError>(Done {
                    done: format!("touched {}", touch.uri),
                })
            }
        })
        .description("Announces that the resource at `uri` changed."),
        Tool::typed("add_tool", move |add: AddTool| {
            let registered = added
                .register(
                    Tool::typed(add.name.clone(), |_: Empty| async {
                        Ok::<_, ToolError>(Done {
                            done: "added".into(),
                        })
                    })
                    .description("A tool added while serving."),
                )
                .map_err(|error| ToolError::new(error.to_string()));
            async move {
                registered?;
                Ok(Done {
                    done: format!("added {}", add.name),
                })
            }
        })
        .description("Registers a tool named `name`."),
        Tool::typed("add_prompt", move |add: AddTool| {
            let registered = prompted
                .register(greeting(add.name.clone()))
                .map_err(|error| ToolError::new(error.to_string()));
            async move {
                registered?;
                Ok(Done {
                    done: format!("added the prompt {}", add.name),
                })
            }
        })
        .description("Registers a prompt named `name`."),
        Tool::typed("add_template", move |add: AddTool| {
            let registered = template(&add.name)
                .and_then(|template| {
                    templated
                        .register(template)
                        .map_err(|error| error.to_string())
                })
                .map_err(ToolError::new);
            if registered.is_ok() {
                listed.list_changed();
            }
            async move {
                registered?;
                Ok(Done {
                    done: format!("added the template changes://{}/{{id}}", add.name),
                })
            }
        })
        .description("Registers a resource template `changes://{name}/{id}`."),
        Tool::typed("announce_resources", move |_: Empty| {
            announced.list_changed();
            async {
                Ok::<_, ToolError>(Done {
                    done: "announced".into(),
                })
            }
        })
        .description("Announces that the resource list changed."),
    ];
    builder
        .registry(registry)
        .prompt_registry(prompts)
        .resource_template_registry(templates)
        .prompt(greeting("greet".into()))
        .resource_events(events)
        .tools(tools)
        .resources([
            Resource::text(WATCHED, "watched", "text/plain", "watched"),
            Resource::text(OTHER, "other", "text/plain", "other"),
        ])
}
