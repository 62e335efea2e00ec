//! A server that asks its client's roots outside any request, as soon as
//! the client can be asked and again each time the client says they
//! changed (as the official filesystem server does), with a
//! [`ConnectedClient`]; its tool `roots_at_start` answers with what it
//! learnt (waiting for it). `test_server --roots-at-start` serves it: the
//! tests of asking outside a request, directly and through `toolshape
//! proxy`.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;
use toolshape::{ConnectedClient, ServerBuilder, Tool, ToolError};

/// Which answer to wait for.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Wanted {
    /// Wait until the roots were asked this many times (default 1).
    asked: Option<u32>,
}

/// What the server learnt.
#[derive(serde::Serialize, schemars::JsonSchema)]
struct Learnt {
    /// The roots' URIs.
    roots: Vec<String>,
    /// How many times the roots were asked.
    asked: u32,
}

/// What an asking came to: the roots' URIs, or why there are none.
type Answer = Result<Vec<String>, String>;

/// How long the server waits for a client it can ask, and the tool for
/// the answer.
const WAIT: Duration = Duration::from_secs(30);

/// `builder` with the asking and the `roots_at_start` tool. Spawns the
/// asking task: call inside a runtime.
pub fn serve_roots_at_start(builder: ServerBuilder) -> ServerBuilder {
    let client = ConnectedClient::new();
    let learnt: Arc<watch::Sender<(u32, Option<Answer>)>> = Arc::new(watch::Sender::new((0, None)));
    let asking = client.clone();
    let telling = Arc::clone(&learnt);
    tokio::spawn(async move {
        let mut changes = asking.roots_changes();
        loop {
            let answer = match asking.connected(WAIT).await {
                Some(context) => context
                    .roots()
                    .await
                    .map(|roots| roots.into_iter().map(|root| root.uri).collect())
                    .map_err(|error| error.to_string()),
                None => Err("no client could be asked outside its requests".to_owned()),
            };
            telling.send_modify(|(asked, learnt)| {
                *asked += 1;
                *learnt = Some(answer);
            });
            if changes.changed().await.is_err() {
                return;
            }
        }
    });
    let tool = Tool::typed("roots_at_start", move |wanted: Wanted| {
        let mut learnt = learnt.subscribe();
        let times = wanted.asked.unwrap_or(1).max(1);
        async move {
            let known = tokio::time::timeout(WAIT, learnt.wait_for(|(asked, _)| *asked >= times))
                .await
                .map_err(|_| ToolError::new("no roots learnt in time"))?
                .map_err(|_| ToolError::new("the asking ended"))?;
            match known.clone() {
                (asked, Some(Ok(roots))) => Ok(Learnt { roots, asked }),
                (_, Some(Err(error))) => Err(ToolError::new(error)),
                (_, None) => Err(ToolError::new("no roots learnt")),
            }
        }
    })
    .description(
        "The client's roots, asked outside any request (at the start, and when they change).",
    );
    builder.connected_client(client).tool(tool)
}
