//! A typed tool served over stdio: what an MCP host (Claude Desktop, an
//! IDE) starts as a child process.
//!
//! Run: `cargo run -p toolshape --example stdio_server`, then talk to it
//! with any MCP client, e.g. `toolshape tools -- target/debug/examples/stdio_server`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolshape::{Server, Tool, ToolError};

/// The arguments: two integers.
#[derive(Deserialize, JsonSchema)]
struct AddInput {
    /// The first term.
    a: i64,
    /// The second term.
    b: i64,
}

/// The result: their sum. Its JSON Schema is the tool's `outputSchema`.
#[derive(Serialize, JsonSchema)]
struct Sum {
    sum: i64,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let add = Tool::typed("add", |input: AddInput| async move {
        let sum = input
            .a
            .checked_add(input.b)
            .ok_or_else(|| ToolError::new("the sum does not fit in 64 bits"))?;
        Ok(Sum { sum })
    })
    .description("Add two integers")
    .read_only();

    let server = Server::builder("adder", "1.0.0").tool(add).build()?;
    server.serve_stdio().await?;
    Ok(())
}
