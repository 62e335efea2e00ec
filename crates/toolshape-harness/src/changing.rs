//! A server whose tools change it while it serves: `touch` announces an
//! update of a resource, `add_tool` registers a new tool, `add_prompt` a
//! new prompt, `announce_resources` says the resource list changed. For the tests of change notifications
//! (`subscriptions/listen`, `resources/subscribe`) directly and through
//! `toolshape proxy`; `test_server --changing` serves it over stdio.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolshape::protocol::content::{ContentBlock, Role};
use toolshape::protocol::prompts::{GetPromptResult, PromptMessage};
use toolshape::resource::ResourceEvents;
use toolshape::{Prompt, PromptRegistry, Resource, ServerBuilder, Tool, ToolError, ToolRegistry};

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

/// `builder` with the two resources, a prompt and the four tools, its tool
/// and prompt registries and resource events shared with the tools that
/// change them.
pub fn serve_changes(builder: ServerBuilder) -> ServerBuilder {
    let events = ResourceEvents::new();
    let registry = ToolRegistry::new();
    let prompts = PromptRegistry::new();
    let (touched, announced, added) = (events.clone(), events.clone(), registry.clone());
    let prompted = prompts.clone();
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
        .prompt(greeting("greet".into()))
        .resource_events(events)
        .tools(tools)
        .resources([
            Resource::text(WATCHED, "watched", "text/plain", "watched"),
            Resource::text(OTHER, "other", "text/plain", "other"),
        ])
}
