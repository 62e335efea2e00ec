//! `mcp-peer-rmcp`: the peer over stdio (newline-delimited JSON-RPC), on
//! rmcp's `stdio_pipes` transport. Logs nothing; exits when stdin closes.
#![forbid(unsafe_code)]

use mcp_peer_rmcp::PeerServer;
use rmcp::{ServiceExt, transport::stdio_pipes};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let running = PeerServer::new().serve(stdio_pipes()).await?;
    running.waiting().await?;
    Ok(())
}
