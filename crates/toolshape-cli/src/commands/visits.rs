//! `toolshape call` when the server needs the user elsewhere first (the
//! `-32042` error of 2025-11-25: sign in, consent): the pages to visit go to
//! stderr, and the call is made once more when the server says each visit is
//! complete (`notifications/elicitation/complete`), or, at a terminal, when
//! the user presses Enter; within the request timeout.

use std::collections::BTreeSet;
use std::io::IsTerminal;
use std::time::Duration;

use serde_json::{Map, Value};
use tokio::sync::broadcast::error::RecvError;
use toolshape::client::{Client, ClientError, ToolResult};

/// The most pages shown and waited for (the client remembers as many).
const MAX_PAGES: usize = 64;

/// Calls `tool`; when the server first needs pages visited, shows them and
/// calls once more after the visits (or fails with the server's error when
/// they are not done within `wait`).
pub(crate) async fn call_tool(
    client: &Client,
    tool: &str,
    arguments: Map<String, Value>,
    wait: Duration,
) -> Result<ToolResult, ClientError> {
    // Subscribed first: a visit may complete before the error is read.
    let mut completions = client.elicitation_completions();
    let error = match client.call_tool(tool, Some(arguments.clone())).await {
        Err(error) => error,
        done => return done,
    };
    let Some(required) = error.url_elicitation_required() else {
        return Err(error);
    };
    let mut waiting = BTreeSet::new();
    let shown = crate::output::quoted;
    errln!(
        "The server needs you to visit first ({}):",
        shown(&error_message(&error))
    );
    for elicitation in required.elicitations.iter().take(MAX_PAGES) {
        errln!(
            "  {}: {}",
            shown(&elicitation.message),
            shown(elicitation.url.as_deref().unwrap_or_default())
        );
        waiting.extend(elicitation.elicitation_id.clone());
    }
    if required.elicitations.len() > MAX_PAGES {
        errln!(
            "  (and {} more, not waited for)",
            required.elicitations.len() - MAX_PAGES
        );
    }
    let terminal = std::io::stdin().is_terminal();
    if terminal {
        errln!("Waiting for the server to say you are done (or press Enter)...");
    } else {
        errln!("Waiting for the server to say you are done...");
    }
    // Enter, or any line: a wait given up takes no line (`terminal.rs`).
    let pressed = async {
        if !terminal || super::terminal::next_line().await.is_none() {
            std::future::pending::<()>().await;
        }
    };
    let visited = async {
        while !waiting.is_empty() {
            match completions.recv().await {
                Ok(elicitation_id) => {
                    waiting.remove(&elicitation_id);
                }
                Err(RecvError::Lagged(_)) => {}
                Err(RecvError::Closed) => return false,
            }
        }
        true
    };
    let done = tokio::select! {
        visited = visited => visited,
        () = pressed => true,
        () = tokio::time::sleep(wait) => false,
    };
    if !done {
        return Err(error);
    }
    client.call_tool(tool, Some(arguments)).await
}

/// The server's own words in its error.
fn error_message(error: &ClientError) -> String {
    match error.kind() {
        toolshape::client::ClientErrorKind::Protocol(object) => object.message.clone(),
        _ => error.to_string(),
    }
}
