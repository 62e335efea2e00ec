//! Tools that ask the client, as the conformance scenarios expect them.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};
use toolshape::protocol::asks::{
    Ask, CreateMessageParams, CreateMessageResult, ElicitParams, ElicitResult, ListRootsResult,
    SamplingMessage,
};
use toolshape::protocol::content::Role;
use toolshape::tool::AskError;
use toolshape::{Tool, ToolContext, ToolError};

/// No arguments.
#[derive(Deserialize, JsonSchema)]
struct NoArgs {}

/// `test_sampling`'s argument.
#[derive(Deserialize, JsonSchema)]
struct PromptArg {
    /// What to ask the model.
    prompt: String,
}

/// `test_elicitation`'s argument.
#[derive(Deserialize, JsonSchema)]
struct MessageArg {
    /// What to ask the user.
    message: String,
}

fn form(message: &str, properties: Value, required: &[&str]) -> ElicitParams {
    ElicitParams::form(
        message,
        json!({"type": "object", "properties": properties, "required": required}),
    )
}

fn question(text: &str, max_tokens: u64) -> CreateMessageParams {
    CreateMessageParams::new(vec![SamplingMessage::text(Role::User, text)], max_tokens)
}

async fn elicit(
    context: &ToolContext,
    key: &str,
    params: ElicitParams,
) -> Result<ElicitResult, ToolError> {
    let answer = context.ask_as(Some(key), Ask::Elicit(params)).await?;
    Ok(serde_json::from_value(answer)?)
}

async fn sample(
    context: &ToolContext,
    key: &str,
    params: CreateMessageParams,
) -> Result<CreateMessageResult, ToolError> {
    let answer = context.ask_as(Some(key), Ask::Sample(params)).await?;
    Ok(serde_json::from_value(answer)?)
}

async fn roots(context: &ToolContext, key: &str) -> Result<ListRootsResult, ToolError> {
    let answer = context.ask_as(Some(key), Ask::Roots).await?;
    Ok(serde_json::from_value(answer)?)
}

fn field(result: &ElicitResult, name: &str) -> String {
    result
        .content
        .as_ref()
        .and_then(|content| content.get(name))
        .map(|value| {
            value
                .as_str()
                .map_or_else(|| value.to_string(), str::to_owned)
        })
        .unwrap_or_default()
}

fn described(result: &ElicitResult) -> String {
    let content = Value::Object(result.content.clone().unwrap_or_default());
    let action = serde_json::to_value(result.action).unwrap_or(Value::Null);
    format!(
        "action={}, content={content}",
        action.as_str().unwrap_or("unknown")
    )
}

fn name_schema() -> Value {
    json!({"name": {"type": "string"}})
}

fn text_tool<F, Fut>(name: &str, description: &str, run: F) -> Tool
where
    F: Fn(ToolContext) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = Result<String, ToolError>> + Send + 'static,
{
    let run = std::sync::Arc::new(run);
    Tool::typed_with_context(name, move |context: ToolContext, _: NoArgs| {
        let run = std::sync::Arc::clone(&run);
        async move { run(context).await.map(|text| Text { text }) }
    })
    .description(description)
}

/// A text result as structured output: `{text}`.
#[derive(serde::Serialize, JsonSchema)]
struct Text {
    /// What the tool says.
    text: String,
}

/// The tools.
pub fn tools() -> Vec<Tool> {
    vec![
        Tool::typed_with_context("test_sampling", |context: ToolContext, input: PromptArg| async move {
            let answer = context.sample(question(&input.prompt, 100)).await?;
            Ok::<_, ToolError>(Text { text: format!("LLM response: {}", answer.text_content()) })
        })
        .description("Asks the client's model the prompt it is given (sampling)."),
        Tool::typed_with_context("test_elicitation", |context: ToolContext, input: MessageArg| async move {
            let properties = json!({
                "username": {"type": "string", "description": "User's response"},
                "email": {"type": "string", "description": "User's email address"},
            });
            let result = context
                .elicit_form(form(&input.message, properties, &["username", "email"]))
                .await?;
            Ok::<_, ToolError>(Text { text: format!("User response: {}", described(&result)) })
        })
        .description("Asks the user for a username and an email (elicitation)."),
        Tool::typed_with_context("test_elicitation_sep1034_defaults", |context: ToolContext, _: NoArgs| async move {
            let properties = json!({
                "name": {"type": "string", "description": "User name", "default": "John Doe"},
                "age": {"type": "integer", "description": "User age", "default": 30},
                "score": {"type": "number", "description": "User score", "default": 95.5},
                "status": {"type": "string", "description": "User status",
                           "enum": ["active", "inactive", "pending"], "default": "active"},
                "verified": {"type": "boolean", "description": "Verification status", "default": true},
            });
            let result = context
                .elicit_form(form("Please review and update the form fields with defaults", properties, &[]))
                .await?;
            Ok::<_, ToolError>(Text { text: format!("Elicitation completed: {}", described(&result)) })
        })
        .description("Asks the user with a form whose fields have defaults (SEP-1034)."),
        Tool::typed_with_context("test_elicitation_sep1330_enums", |context: ToolContext, _: NoArgs| async move {
            let properties = json!({
                "untitledSingle": {"type": "string", "description": "Select one option",
                                   "enum": ["option1", "option2", "option3"]},
                "titledSingle": {"type": "string", "description": "Select one option with titles",
                                 "oneOf": [{"const": "value1", "title": "First Option"},
                                           {"const": "value2", "title": "Second Option"},
                                           {"const": "value3", "title": "Third Option"}]},
                "legacyEnum": {"type": "string", "description": "Select one option (legacy)",
                               "enum": ["opt1", "opt2", "opt3"],
                               "enumNames": ["Option One", "Option Two", "Option Three"]},
                "untitledMulti": {"type": "array", "description": "Select multiple options",
                                  "minItems": 1, "maxItems": 3,
                                  "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
                "titledMulti": {"type": "array", "description": "Select multiple options with titles",
                                "minItems": 1, "maxItems": 3,
                                "items": {"anyOf": [{"const": "value1", "title": "First Choice"},
                                                    {"const": "value2", "title": "Second Choice"},
                                                    {"const": "value3", "title": "Third Choice"}]}},
            });
            let result = context
                .elicit_form(form("Please choose the options", properties, &[]))
                .await?;
            Ok::<_, ToolError>(Text { text: format!("Elicitation completed: {}", described(&result)) })
        })
        .description("Asks the user with every enum shape (SEP-1330)."),
        text_tool("test_missing_capability", "Needs the client's model (sampling).", |context| async move {
            let answer = context.sample(question("Say hello", 50)).await?;
            Ok(format!("Sampled: {}", answer.text_content()))
        }),
        text_tool(
            "test_streaming_elicitation",
            "Asks the user to confirm (an input_required round on 2026-07-28, never a request on the stream).",
            |context| async move {
                let properties = json!({"confirmed": {"type": "boolean"}});
                let result = elicit(&context, "confirm", form("Please confirm", properties, &[])).await?;
                Ok(format!("Confirmed: {}", field(&result, "confirmed")))
            },
        ),
        text_tool("test_input_required_result_elicitation", "Asks the user's name.", |context| async move {
            let result = elicit(&context, "user_name", form("What is your name?", name_schema(), &["name"])).await?;
            Ok(format!("Hello, {}!", field(&result, "name")))
        }),
        text_tool("test_input_required_result_sampling", "Asks the model a question.", |context| async move {
            let answer = sample(&context, "capital_question", question("What is the capital of France?", 100)).await?;
            Ok(format!("Sampling result: {}", answer.text_content()))
        }),
        text_tool("test_input_required_result_list_roots", "Lists the client's roots.", |context| async move {
            let listed = roots(&context, "client_roots").await?;
            let uris: Vec<String> = listed.roots.into_iter().map(|root| root.uri).collect();
            Ok(format!("Found {} root(s): {}", uris.len(), uris.join(", ")))
        }),
        text_tool("test_input_required_result_request_state", "Asks for a confirmation, across a request state.", |context| async move {
            let properties = json!({"ok": {"type": "boolean"}});
            elicit(&context, "confirm", form("Please confirm", properties, &["ok"])).await?;
            Ok("state-ok: requestState validated".to_owned())
        }),
        text_tool("test_input_required_result_tampered_state", "Asks for a confirmation; a tampered state is refused.", |context| async move {
            let properties = json!({"ok": {"type": "boolean"}});
            elicit(&context, "confirm", form("Please confirm", properties, &["ok"])).await?;
            Ok("state-ok".to_owned())
        }),
        text_tool("test_input_required_result_multiple_inputs", "Asks the user, the model and the roots at once.", |context| async move {
            let (user, greeting, listed) = tokio::join!(
                elicit(&context, "user_name", form("What is your name?", name_schema(), &["name"])),
                sample(&context, "greeting", question("Generate a greeting", 50)),
                roots(&context, "client_roots"),
            );
            let (user, greeting, listed) = (user?, greeting?, listed?);
            Ok(format!(
                "{} for {} with {} root(s)",
                greeting.text_content(),
                field(&user, "name"),
                listed.roots.len()
            ))
        }),
        text_tool("test_input_required_result_multi_round", "Asks two questions, one round each.", |context| async move {
            let name = elicit(&context, "step1", form("Step 1: What is your name?", name_schema(), &["name"])).await?;
            let color_schema = json!({"color": {"type": "string"}});
            let color = elicit(&context, "step2", form("Step 2: What is your favorite color?", color_schema, &["color"])).await?;
            Ok(format!(
                "Multi-round complete for {} who likes {}",
                field(&name, "name"),
                field(&color, "color")
            ))
        }),
        text_tool("test_input_required_result_capabilities", "Asks only what the client declared it can answer.", |context| async move {
            let can = |ask: &Ask| context.can_ask(ask);
            let elicitation = Ask::Elicit(form("What is your name?", name_schema(), &["name"]));
            let sampling = Ask::Sample(question("Say hello", 100));
            let (asked_user, asked_model, asked_roots) = (can(&elicitation), can(&sampling), can(&Ask::Roots));
            if !(asked_user || asked_model || asked_roots) {
                // Nothing it can ask: the missing capability is the answer.
                return Err(AskError::MissingCapability {
                    what: "asking the client anything",
                    capability: "sampling",
                    required: Box::new(sampling_only()),
                }
                .into());
            }
            let ask = |wanted: bool, key: &'static str, ask: Ask| {
                let context = context.clone();
                async move {
                    match wanted {
                        true => context.ask_as(Some(key), ask).await.map(Some),
                        false => Ok(None),
                    }
                }
            };
            let (user, model, listed) = tokio::join!(
                ask(asked_user, "user_name", elicitation),
                ask(asked_model, "sampling_request", sampling),
                ask(asked_roots, "client_roots", Ask::Roots),
            );
            let answered = [user?, model?, listed?].iter().flatten().count();
            Ok(format!("{answered} answer(s)"))
        }),
    ]
}

fn sampling_only() -> toolshape::protocol::ClientCapabilities {
    let mut capabilities = toolshape::protocol::ClientCapabilities::default();
    capabilities.sampling = Some(Map::new());
    capabilities
}
