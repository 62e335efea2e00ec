//! `mcp-peer-rmcp-http HOST:PORT`: the peer over rmcp's Streamable HTTP
//! server on axum at `http://HOST:PORT/mcp`, stateless, answering
//! request-response calls with one `application/json` body. See
//! `bench/README.md` for why each setting is chosen.
#![forbid(unsafe_code)]

use std::sync::Arc;

use mcp_peer_rmcp::PeerServer;
use rmcp::transport::streamable_http_server::{
    StreamableHttpServerConfig, StreamableHttpService, session::never::NeverSessionManager,
};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let address = std::env::args()
        .nth(1)
        .ok_or("usage: mcp-peer-rmcp-http HOST:PORT")?;
    let listener = tokio::net::TcpListener::bind(&address).await?;
    // No sessions at all (legacy requests are stateless too), JSON bodies
    // instead of one-event SSE streams, no keep-alive pings; the Host
    // allow-list keeps its loopback default.
    let config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(false)
        .with_json_response(true)
        .with_sse_keep_alive(None);
    let server = PeerServer::new();
    let service = StreamableHttpService::new(
        move || Ok(server.clone()),
        Arc::new(NeverSessionManager::default()),
        config,
    );
    let router = axum::Router::new().nest_service("/mcp", service);
    eprintln!(
        "mcp-peer-rmcp-http listening on http://{}/mcp",
        listener.local_addr()?
    );
    axum::serve(listener, router)
        .with_graceful_shutdown(async {
            // Without a signal handler, run until killed.
            if tokio::signal::ctrl_c().await.is_err() {
                std::future::pending::<()>().await;
            }
        })
        .await?;
    Ok(())
}
