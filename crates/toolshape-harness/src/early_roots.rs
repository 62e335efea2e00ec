//! A server that asks its client's roots outside any request, as soon as
//! the client can be asked (as the official filesystem server does right
//! after the handshake), with a [`ConnectedClient`]; its tool
//! `roots_at_start` answers with what it learnt (waiting for it).
//! `test_server --roots-at-start` serves it: the tests of asking outside a
//! request, directly and through `toolshape proxy`.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;
use toolshape::{ConnectedClient, ServerBuilder, Tool, ToolError};

/// No input.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Empty {}

/// What the server learnt.
#[derive(serde::Serialize, schemars::JsonSchema)]
struct Learnt {
    /// The roots' URIs.
    roots: Vec<String>,
}

/// What the asking came to: the roots' URIs, or why there are none.
type Answer = Result<Vec<String>, String>;

/// How long the server waits for a client it can ask, and the tool for
/// the answer.
const WAIT: Duration = Duration::from_secs(30);

/// `builder` with the asking at start and the `roots_at_start` tool.
/// Spawns the asking task: call inside a runtime.
pub fn serve_roots_at_start(builder: ServerBuilder) -> ServerBuilder {
    let client = ConnectedClient::new();
    let learnt: Arc<watch::Sender<Option<Answer>>> = Arc::new(watch::Sender::new(None));
    let asking = client.clone();
    let telling = Arc::clone(&learnt);
    tokio::spawn(async move {
        let answer = match asking.connected(WAIT).await {
            Some(context) => context
                .roots()
                .await
                .map(|roots| roots.into_iter().map(|root| root.uri).collect())
                .map_err(|error| error.to_string()),
            None => Err("no client could be asked outside its requests".to_owned()),
        };
        telling.send_replace(Some(answer));
    });
    let tool = Tool::typed("roots_at_start", move |_: Empty| {
        let mut learnt = learnt.subscribe();
        async move {
            let known = tokio::time::timeout(WAIT, learnt.wait_for(Option::is_some))
                .await
                .map_err(|_| ToolError::new("no roots learnt in time"))?
                .map_err(|_| ToolError::new("the asking ended"))?;
            match known.clone() {
                Some(Ok(roots)) => Ok(Learnt { roots }),
                Some(Err(error)) => Err(ToolError::new(error)),
                None => Err(ToolError::new("no roots learnt")),
            }
        }
    })
    .description("The client's roots, asked once outside any request.");
    builder.connected_client(client).tool(tool)
}
