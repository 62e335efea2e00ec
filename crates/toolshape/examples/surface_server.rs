//! Beyond tools: a tool that asks the user (elicitation), a resource, and a
//! prompt, served over stdio. The same tool code asks over a handshake
//! session (a server-to-client request) and on 2026-07-28 (an
//! `input_required` round the client answers on its retry).
//!
//! Run: `cargo run -p toolshape --example surface_server`, then e.g.
//! `toolshape call greet -- target/debug/examples/surface_server` at a terminal.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolshape::protocol::content::{ContentBlock, Role};
use toolshape::protocol::prompts::{GetPromptResult, PromptMessage};
use toolshape::tool::Elicitation;
use toolshape::{Prompt, Resource, Server, Tool, ToolContext, ToolError};

/// No arguments.
#[derive(Deserialize, JsonSchema)]
struct NoInput {}

/// What the tool asks the user for: a form derived from this type, whose
/// answer is validated against it before the tool sees it.
#[derive(Deserialize, JsonSchema)]
struct Name {
    /// What should I call you?
    name: String,
}

/// The tool's structured output.
#[derive(Serialize, JsonSchema)]
struct Greeting {
    text: String,
}

/// The prompt's arguments (prompt arguments are strings).
#[derive(Deserialize, JsonSchema)]
struct ReviewArgs {
    /// The file to review.
    path: String,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let greet = Tool::typed_with_context("greet", |context: ToolContext, _: NoInput| async move {
        let text = match context.elicit::<Name>("Who are you?").await? {
            Elicitation::Accepted(Name { name }) => format!("Hello, {name}!"),
            _ => "Hello, stranger.".to_owned(),
        };
        Ok::<_, ToolError>(Greeting { text })
    })
    .description("Greets the user by the name they give");

    let readme = Resource::text(
        "docs://readme",
        "readme",
        "text/markdown",
        "# Example\nA resource the client can read.",
    );

    let review = Prompt::typed("review", |_context, args: ReviewArgs| async move {
        let ask = format!("Review {} for bugs.", args.path);
        Ok(GetPromptResult::new(vec![PromptMessage::new(
            Role::User,
            ContentBlock::text(ask),
        )]))
    })
    .description("Asks the model to review one file");

    let server = Server::builder("surface", "1.0.0")
        .tool(greet)
        .resource(readme)
        .prompt(review)
        .build()?;
    server.serve_stdio().await?;
    Ok(())
}
