//! Tools that send the user to a URL (URL-mode elicitation, 2025-11-25 on)
//! and announce the visit complete a moment later, as a server whose sign-in
//! page calls it back would: for the tests of `-32042`,
//! `notifications/elicitation/complete` and their 2026-07-28 rounds,
//! directly and through the proxy.

use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolshape::protocol::content::{ContentBlock, Role};
use toolshape::protocol::prompts::{GetPromptResult, PromptMessage};
use toolshape::tool::{Elicitation, UrlElicitationRequired, UrlElicitations};
use toolshape::{Prompt, ServerBuilder, Tool, ToolContext};

/// How long after the URL is handed out its visit is announced complete.
pub const VISIT_TAKES: Duration = Duration::from_millis(150);

/// Which account to sign in.
#[derive(Deserialize, JsonSchema)]
struct Account {
    /// The account's name.
    account: String,
}

/// No input.
#[derive(Deserialize, JsonSchema)]
struct Empty {}

/// What `visit_page` learnt.
#[derive(Serialize, JsonSchema)]
struct Visited {
    /// What the user did (`accept`, `decline`, `cancel`).
    action: String,
    /// The id the elicitation was sent with, whose completion follows.
    #[serde(rename = "elicitationId")]
    elicitation_id: String,
}

/// What `sign_in_then_ask` asks once the account is signed in.
#[derive(Deserialize, JsonSchema)]
struct Name {
    /// Your name.
    name: String,
}

/// What `sign_in_then_ask` says.
#[derive(Serialize, JsonSchema)]
struct SignedInAs {
    /// The account.
    signed_in: String,
    /// The name given, if any.
    name: Option<String>,
}

/// What `sign_in` says once the account is signed in.
#[derive(Serialize, JsonSchema)]
struct SignedIn {
    /// The account.
    signed_in: String,
}

/// The accounts signed in, and those whose sign-in is under way.
#[derive(Default)]
struct Accounts {
    done: HashSet<String>,
    pending: HashSet<String>,
}

/// The server's sign-in pages, as far as the tests need them.
#[derive(Clone)]
struct Pages {
    elicitations: UrlElicitations,
    accounts: Arc<Mutex<Accounts>>,
    next: Arc<AtomicU64>,
}

impl Pages {
    /// Whether `account` is signed in; if not, the error to answer with
    /// (its sign-in completing [`VISIT_TAKES`] after the first).
    fn signed_in(&self, account: &str) -> Result<(), UrlElicitationRequired> {
        let start = {
            let mut accounts = self.accounts.lock().unwrap_or_else(PoisonError::into_inner);
            if accounts.done.contains(account) {
                return Ok(());
            }
            accounts.pending.insert(account.to_owned())
        };
        let elicitation_id = format!("sign-in-{account}");
        if start {
            self.complete_later(elicitation_id.clone(), Some(account.to_owned()));
        }
        let url = format!("https://example.com/sign-in?account={account}");
        Err(
            UrlElicitationRequired::new(format!("Sign {account} in first")).elicitation(
                "Sign in",
                url,
                elicitation_id,
            ),
        )
    }

    /// Announces `elicitation_id` complete after [`VISIT_TAKES`] (and signs
    /// `account` in first, if any).
    fn complete_later(&self, elicitation_id: String, account: Option<String>) {
        let pages = self.clone();
        tokio::spawn(async move {
            tokio::time::sleep(VISIT_TAKES).await;
            if let Some(account) = account {
                let mut accounts = pages
                    .accounts
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner);
                accounts.pending.remove(&account);
                accounts.done.insert(account);
            }
            pages.elicitations.complete(&elicitation_id);
        });
    }
}

/// `builder` with the tools `visit_page` (asks the user to open a page, by
/// URL-mode elicitation, and announces the visit complete shortly after)
/// and `sign_in` (`{"account"}`: fails with [`UrlElicitationRequired`]
/// until the account's sign-in page was visited, which completes
/// [`VISIT_TAKES`] after the first such failure; the elicitation id is
/// `sign-in-<account>`), `sign_in_then_ask` (the same, then asks the
/// user's name: `{"signed_in", "name"}`), and the prompt `greeting`
/// (`{"account"}`: the same sign-in first, then `Hello, <account>`).
pub fn serve_url_elicitation(builder: ServerBuilder) -> ServerBuilder {
    let pages = Pages {
        elicitations: UrlElicitations::new(),
        accounts: Arc::default(),
        next: Arc::default(),
    };
    let visiting = pages.clone();
    let signing = pages.clone();
    let greeting = pages.clone();
    let asking = pages.clone();
    builder
        .url_elicitations(pages.elicitations.clone())
        .tool(
            Tool::typed_with_context("visit_page", move |context: ToolContext, _: Empty| {
                let pages = visiting.clone();
                async move {
                    let n = pages.next.fetch_add(1, Ordering::Relaxed) + 1;
                    let elicitation_id = format!("visit-{n}");
                    let url = format!("https://example.com/page?visit={n}");
                    let action = context
                        .elicit_url("Open the page", url, elicitation_id.clone())
                        .await?;
                    pages.complete_later(elicitation_id.clone(), None);
                    let action = serde_json::to_value(action)
                        .ok()
                        .and_then(|value| value.as_str().map(str::to_owned))
                        .unwrap_or_default();
                    Ok(Visited {
                        action,
                        elicitation_id,
                    })
                }
            })
            .description("Asks the user to open a page; its visit is announced complete."),
        )
        .tool(
            Tool::typed_with_context("sign_in", move |_: ToolContext, input: Account| {
                let pages = signing.clone();
                async move {
                    pages.signed_in(&input.account)?;
                    Ok(SignedIn {
                        signed_in: input.account,
                    })
                }
            })
            .description("Signs an account in: the user visits its sign-in page first."),
        )
        .tool(
            Tool::typed_with_context(
                "sign_in_then_ask",
                move |context: ToolContext, input: Account| {
                    let pages = asking.clone();
                    async move {
                        pages.signed_in(&input.account)?;
                        let name = match context.elicit::<Name>("Your name?").await? {
                            Elicitation::Accepted(given) => Some(given.name),
                            _ => None,
                        };
                        Ok(SignedInAs {
                            signed_in: input.account,
                            name,
                        })
                    }
                },
            )
            .description("Signs an account in, then asks the user's name."),
        )
        .prompt(
            Prompt::typed("greeting", move |_: ToolContext, input: Account| {
                let pages = greeting.clone();
                async move {
                    pages.signed_in(&input.account)?;
                    let text = format!("Hello, {}", input.account);
                    Ok(GetPromptResult::new(vec![PromptMessage::new(
                        Role::User,
                        ContentBlock::text(text),
                    )]))
                }
            })
            .description("Greets a signed-in account (its sign-in page first)."),
        )
}
