//! Tools that ask the client (elicitation, sampling, roots), for the tests
//! of asking over every transport and revision.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use toolshape::protocol::asks::{CreateMessageParams, SamplingMessage};
use toolshape::protocol::content::Role;
use toolshape::tool::Elicitation;
use toolshape::{Tool, ToolContext, ToolError};

/// No input.
#[derive(Deserialize, JsonSchema)]
struct Empty {}

/// What `ask_user` asks the user for.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct Contact {
    /// Your name.
    pub name: String,
    /// Your age in years.
    #[schemars(range(max = 150))]
    pub age: u32,
}

/// What the asking tools return: whatever they learnt, as JSON.
#[derive(Serialize, JsonSchema)]
struct Learnt {
    /// What was learnt.
    learnt: Value,
}

async fn ask_user(context: &ToolContext) -> Result<Value, ToolError> {
    Ok(match context.elicit::<Contact>("Who are you?").await? {
        Elicitation::Accepted(contact) => {
            json!({"action": "accept", "name": contact.name, "age": contact.age})
        }
        Elicitation::Declined => json!({"action": "decline"}),
        Elicitation::Cancelled => json!({"action": "cancel"}),
        _ => json!({"action": "unknown"}),
    })
}

/// Asks the user the form `question`; the name given, or the action.
async fn ask_named(context: &ToolContext, question: &str) -> Result<Value, ToolError> {
    Ok(match context.elicit::<Contact>(question).await? {
        Elicitation::Accepted(contact) => json!(contact.name),
        _ => json!(null),
    })
}

async fn ask_model(context: &ToolContext) -> Result<Value, ToolError> {
    let question = SamplingMessage::text(Role::User, "What is 2 + 2?");
    let answer = context
        .sample(CreateMessageParams::new(vec![question], 50))
        .await?;
    Ok(json!({"model": answer.model, "text": answer.text_content()}))
}

/// The tools: `ask_user` (a typed form), `ask_model` (sampling),
/// `ask_roots`, `ask_twice` (a form, then the model: two rounds on
/// 2026-07-28), `ask_both` (both at once: one round, two questions) and
/// `ask_two` (two forms at once, `Who is A?` and `Who is B?`: the names given).
pub fn tools() -> Vec<Tool> {
    vec![
        Tool::typed_with_context("ask_user", |context: ToolContext, _: Empty| async move {
            Ok(Learnt {
                learnt: ask_user(&context).await?,
            })
        })
        .description("Asks the user who they are (elicitation)."),
        Tool::typed_with_context("ask_model", |context: ToolContext, _: Empty| async move {
            Ok(Learnt {
                learnt: ask_model(&context).await?,
            })
        })
        .description("Asks the client's model a question (sampling)."),
        Tool::typed_with_context("ask_roots", |context: ToolContext, _: Empty| async move {
            let roots = context.roots().await?;
            let uris: Vec<String> = roots.into_iter().map(|root| root.uri).collect();
            Ok(Learnt {
                learnt: json!({ "roots": uris }),
            })
        })
        .description("Lists the client's roots."),
        Tool::typed_with_context("ask_twice", |context: ToolContext, _: Empty| async move {
            let user = ask_user(&context).await?;
            let model = ask_model(&context).await?;
            Ok(Learnt {
                learnt: json!({ "user": user, "model": model }),
            })
        })
        .description("Asks the user, then the model."),
        Tool::typed_with_context("ask_both", |context: ToolContext, _: Empty| async move {
            let (user, model) = tokio::join!(ask_user(&context), ask_model(&context));
            Ok(Learnt {
                learnt: json!({ "user": user?, "model": model? }),
            })
        })
        .description("Asks the user and the model at once."),
        Tool::typed_with_context("ask_two", |context: ToolContext, _: Empty| async move {
            let (a, b) = tokio::join!(
                ask_named(&context, "Who is A?"),
                ask_named(&context, "Who is B?")
            );
            Ok(Learnt {
                learnt: json!({ "a": a?, "b": b? }),
            })
        })
        .description("Asks the user two forms of one kind at once."),
    ]
}

/// The user's answer as text: `Ada, 36`, or the action (`decline`, `cancel`).
fn said(user: &Value) -> String {
    match user["action"].as_str() {
        Some("accept") => format!(
            "{}, {}",
            user["name"].as_str().unwrap_or_default(),
            user["age"]
        ),
        Some(other) => other.to_owned(),
        None => "nothing".to_owned(),
    }
}

/// `ask_prompt`: a prompt that asks the user who they are, then renders
/// `Hello, <name>, <age>` (a round of its own on 2026-07-28).
pub fn prompts() -> Vec<toolshape::Prompt> {
    use toolshape::protocol::content::ContentBlock;
    use toolshape::protocol::prompts::{GetPromptResult, PromptMessage};
    vec![
        toolshape::Prompt::new("ask_prompt", |context: ToolContext, _| async move {
            let user = ask_user(&context).await?;
            let text = format!("Hello, {}", said(&user));
            Ok::<_, ToolError>(GetPromptResult::new(vec![PromptMessage::new(
                Role::User,
                ContentBlock::text(text),
            )]))
        })
        .description("Asks the user who they are, then greets them."),
    ]
}

/// `asks://whoami`: a resource whose reading asks the user who they are,
/// then reads `<name>, <age>`.
pub fn resources() -> Vec<toolshape::Resource> {
    use toolshape::protocol::content::{ResourceContents, TextResourceContents};
    vec![toolshape::Resource::new(
        "asks://whoami",
        "whoami",
        |context: ToolContext, uri: String| async move {
            let user = ask_user(&context).await?;
            Ok::<_, ToolError>(vec![ResourceContents::Text(TextResourceContents::new(
                uri,
                said(&user),
            ))])
        },
    )]
}
