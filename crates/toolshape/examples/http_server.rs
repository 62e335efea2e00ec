//! The MCP endpoint mounted in an axum app of your own, beside your routes
//! and under your middleware (here: a request counter; in practice auth,
//! TLS, tracing).
//!
//! Run: `cargo run -p toolshape --example http_server`, then
//! `toolshape tools --url http://127.0.0.1:8080/mcp`.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use axum::Router;
use axum::extract::Request;
use axum::middleware::{self, Next};
use axum::routing::get;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolshape::{Server, Tool};

#[derive(Deserialize, JsonSchema)]
struct Greet {
    /// Who to greet.
    name: String,
}

#[derive(Serialize, JsonSchema)]
struct Greeting {
    greeting: String,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let greet = Tool::typed("greet", |input: Greet| async move {
        Ok(Greeting {
            greeting: format!("Hello, {}!", input.name),
        })
    })
    .read_only();
    let server = Server::builder("greeter", "1.0.0").tool(greet).build()?;

    let served = Arc::new(AtomicU64::new(0));
    let counter = Arc::clone(&served);
    let app = Router::new()
        .route(
            "/requests",
            get(move || {
                let served = Arc::clone(&served);
                async move { served.load(Ordering::Relaxed).to_string() }
            }),
        )
        .merge(server.into_router())
        .layer(middleware::from_fn(move |request: Request, next: Next| {
            counter.fetch_add(1, Ordering::Relaxed);
            next.run(request)
        }));

    let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
    eprintln!("MCP on http://{}/mcp", listener.local_addr()?);
    axum::serve(listener, app).await?;
    Ok(())
}
