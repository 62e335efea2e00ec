//! A client with typed calls: start any MCP server as a child process,
//! list its tools, call one, and get its validated output as a Rust type.
//!
//! Run: `cargo run -p toolshape --example client -- toolshape serve --root .`
//! (any server command after `--`).

use serde::Deserialize;
use toolshape::client::{Client, ServerCommand};

/// The `file_info` tool's output, as far as this program cares.
#[derive(Debug, Deserialize)]
struct FileInfo {
    kind: String,
    size: u64,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let command = ServerCommand::from_argv(&argv).ok_or("usage: client <server command...>")?;
    let client = Client::builder().connect_stdio(command).await?;
    println!("connected on {}", client.protocol_version());
    for tool in client.list_tools().await? {
        println!(
            "tool {}: {}",
            tool.name,
            tool.description.unwrap_or_default()
        );
    }
    // Validated against the tool's outputSchema, unwrapped for older
    // revisions, then decoded: a mismatch is an error, never a bad value.
    let info: FileInfo = client
        .call("file_info", serde_json::json!({"path": "Cargo.toml"}))
        .await?;
    println!("Cargo.toml: {} of {} bytes", info.kind, info.size);
    client.close(std::time::Duration::from_secs(5)).await;
    Ok(())
}
