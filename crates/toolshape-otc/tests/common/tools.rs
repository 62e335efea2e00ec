//! Tools built for the examples of the OTC CallToolResponse page, and a few
//! more for the error paths.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use toolshape::tool::ToolOutput;
use toolshape::{Requirements, Tool, ToolError, ToolRegistry};

#[derive(Deserialize, JsonSchema)]
pub struct AddInput {
    pub a: i64,
    pub b: i64,
}

#[derive(Deserialize, JsonSchema)]
pub struct Nothing {}

#[derive(Deserialize, JsonSchema)]
pub struct RingInput {
    pub doorbell_id: String,
}

#[derive(Serialize, JsonSchema)]
pub struct Timestamp {
    pub timestamp: String,
}

#[derive(Serialize, JsonSchema)]
pub struct Email {
    pub id: String,
    pub subject: String,
    pub snippet: String,
}

#[derive(Serialize, JsonSchema)]
pub struct Emails {
    pub emails: Vec<Email>,
}

#[derive(Deserialize, JsonSchema)]
pub struct SmsInput {
    pub to: String,
    pub body: String,
}

#[derive(Serialize, JsonSchema)]
pub struct SmsStatus {
    pub status: String,
}

/// How many times each counted tool ran.
#[derive(Debug, Default, Clone)]
pub struct Counters {
    pub counted: Arc<AtomicUsize>,
    pub flaky: Arc<AtomicUsize>,
}

impl Counters {
    pub fn counted(&self) -> usize {
        self.counted.load(Ordering::SeqCst)
    }
}

/// The seed's tools, and the ones the error paths need.
pub fn registry() -> (ToolRegistry, Counters) {
    let counters = Counters::default();
    let registry = ToolRegistry::new();
    let counted = Arc::clone(&counters.counted);
    let flaky = Arc::clone(&counters.flaky);
    let tools = vec![
            // 1. Calculator.Add: `"value": 15`.
            Tool::typed("Calculator_Add", |i: AddInput| async move {
                Ok::<_, ToolError>(i.a + i.b)
            })
            .toolkit("Calculator")
            .description("Add two integers")
            .read_only(),
            // 2. Doorbell.Ring (success, no output): `"value": null`, as the example
            // shows, from a tool whose output schema is `null`'s.
            Tool::dynamic(
                "Doorbell_Ring",
                json!({"type": "object", "properties": {"doorbell_id": {"type": "string"}}}),
                Some(json!({"type": "null"})),
                |_context, _input: Value| async move { Ok(ToolOutput::structured(Value::Null)) },
            )
            .toolkit("Doorbell"),
            // A tool that returns nothing at all: no `value`.
            Tool::action("Doorbell_Chime", |_: Nothing| async move { Ok(()) }).toolkit("Doorbell"),
            // 3. System.GetTimestamp.
            Tool::typed("System_GetTimestamp", |_: Nothing| async move {
                Ok::<_, ToolError>(Timestamp {
                    timestamp: "2023-10-05T12:00:00Z".into(),
                })
            })
            .toolkit("System"),
            // 4. Gmail.GetEmails.
            Tool::typed("Gmail_GetEmails", |_: Nothing| async move {
                Ok::<_, ToolError>(Emails {
                    emails: vec![
                        Email {
                            id: "email_1".into(),
                            subject: "Welcome to Gmail".into(),
                            snippet: "Hello, welcome to your inbox!".into(),
                        },
                        Email {
                            id: "email_2".into(),
                            subject: "Your Receipt".into(),
                            snippet: "Thank you for your purchase...".into(),
                        },
                    ],
                })
            })
            .toolkit("Gmail"),
            // 5. SMS.Send.
            Tool::typed("SMS_Send", |_: SmsInput| async move {
                Ok::<_, ToolError>(SmsStatus {
                    status: "sent".into(),
                })
            })
            .toolkit("SMS"),
            // 6. An error with a developer message.
            Tool::typed("Web_Fetch", |_: Nothing| async move {
                Err::<String, _>(
                    ToolError::new("Could not reach the server. Please try again later.")
                        .developer_message(
                            "The host api.example.com is not reachable (ECONNREFUSED)",
                        ),
                )
            })
            .toolkit("Web"),
            // 7. An error with retry guidance.
            Tool::typed("Doorbell_Find", |i: RingInput| async move {
                Err::<String, _>(
                    ToolError::new("Doorbell ID not found")
                        .developer_message(format!(
                            "The doorbell with ID '{}' does not exist.",
                            i.doorbell_id
                        ))
                        .additional_prompt_content("ids: doorbell42,doorbell84")
                        .retry_after(Duration::from_millis(500)),
                )
            })
            .toolkit("Doorbell"),
            // Counts its runs (idempotency).
            Tool::typed("Test_Counted", move |i: AddInput| {
                let counted = Arc::clone(&counted);
                async move {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    let _ = (i.a, i.b);
                    Ok::<_, ToolError>(counted.fetch_add(1, Ordering::SeqCst) as i64)
                }
            })
            .toolkit("Test"),
            // Fails for good, though it named a delay.
            Tool::typed("Test_Gone", |_: Nothing| async move {
                Err::<i64, _>(
                    ToolError::new("gone for good")
                        .retry_after(Duration::from_millis(500))
                        .retryable(false),
                )
            })
            .toolkit("Test"),
            // Fails retryably twice in every three calls.
            Tool::typed("Test_Flaky", move |_: Nothing| {
                let flaky = Arc::clone(&flaky);
                async move {
                    let n = flaky.fetch_add(1, Ordering::SeqCst);
                    if n % 3 < 2 {
                        Err(ToolError::new("busy").retry_after(Duration::from_millis(20)))
                    } else {
                        Ok::<_, ToolError>(n as i64)
                    }
                }
            })
            .toolkit("Test"),
            // Breaks its own output schema: the value is withheld.
            Tool::dynamic(
                "Test_Liar",
                json!({"type": "object"}),
                Some(json!({"type": "integer"})),
                |_context, _input: Value| async move {
                    Ok(ToolOutput::structured(json!("not a number")))
                },
            )
            .toolkit("Test"),
            // A gateway's tool whose handler checks its own output and, as
            // `proxy --on-invalid strip` does, sends the text without a value.
            Tool::dynamic(
                "Test_Stripped",
                json!({"type": "object"}),
                Some(json!({"type": "object", "required": ["count"]})),
                |_context, _input: Value| async move {
                    Ok(ToolOutput::content(vec![toolshape::protocol::ContentBlock::text(
                        "{\"count\": \"three\"}",
                    )]))
                },
            )
            .toolkit("Test")
            .unchecked_output(),
            // Needs a secret and a user id.
            Tool::typed_with_context(
                "Test_Secretive",
                |context: toolshape::ToolContext, _: Nothing| async move {
                    Ok::<_, ToolError>(format!(
                        "{}:{}",
                        context.user_id().unwrap_or(""),
                        context.secret("API_KEY").map_or(0, str::len)
                    ))
                },
            )
            .toolkit("Test")
            .requirements(Requirements::new().secret("API_KEY").user_id()),
            // Needs two providers' tokens.
            Tool::typed_with_context(
                "Test_Mail",
                |context: toolshape::ToolContext, _: Nothing| async move {
                    Ok::<_, ToolError>(context.authorization_token("google").map_or(0, str::len))
                },
            )
            .toolkit("Test")
            .requirements(
                Requirements::new()
                    .authorization("google", ["mail.read"])
                    .authorization("github", Vec::<String>::new()),
            ),
            // Text and content tools.
            Tool::text("Test_Shout", |i: SmsInput| async move {
                Ok(i.body.to_uppercase())
            })
            .toolkit("Test"),
            // Slow: for the time limit and for shutdown.
            Tool::typed("Test_Slow", |i: AddInput| async move {
                tokio::time::sleep(Duration::from_millis(u64::try_from(i.a).unwrap_or(0))).await;
                Ok::<_, ToolError>(i.b)
            })
            .toolkit("Test")
            .read_only(),
            // Two versions of one tool.
            Tool::typed("Test_Versioned", |_: Nothing| async move {
                Ok::<_, ToolError>("one".to_owned())
            })
            .toolkit("Test")
            .version("1.0.0"),
            Tool::typed("Test_Versioned", |_: Nothing| async move {
                Ok::<_, ToolError>("two".to_owned())
            })
            .toolkit("Test")
            .version("2.1.0"),
        ];
    if let Err(errors) = registry.register_all(tools) {
        panic!("the test tools must register: {errors:?}");
    }
    (registry, counters)
}
