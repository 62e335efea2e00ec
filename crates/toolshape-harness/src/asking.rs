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

async fn ask_model(context: &ToolContext) -> Result<Value, ToolError> {
    let question = SamplingMessage::text(Role::User, "What is 2 + 2?");
    let answer = context
        .sample(CreateMessageParams::new(vec![question], 50))
        .await?;
    Ok(json!({"model": answer.model, "text": answer.text_content()}))
}

/// The tools: `ask_user` (a typed form), `ask_model` (sampling),
/// `ask_roots`, `ask_twice` (a form, then the model: two rounds on
/// 2026-07-28) and `ask_both` (both at once: one round, two questions).
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
    ]
}
