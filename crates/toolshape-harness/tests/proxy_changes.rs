#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The upstream's changes pass through the proxy: the proxy (the library,
//! served over HTTP on loopback) in front of `test_server --changing` (a
//! child process) on 2025-11-25 (`resources/subscribe`, list changes
//! unasked) or 2026-07-28 (`subscriptions/listen`), clients of either: a
//! resource update reaches the client subscribed (only for the resource it
//! follows), a tool the upstream adds reaches the client's listing, and a
//! resource list change reaches the client.

mod client_common;
mod common;
mod following;

use std::time::Duration;

use following::{builder, exercise};
use toolshape::client::{Negotiation, ServerCommand, StderrMode};
use toolshape::protocol::ProtocolVersion;
use toolshape_proxy::ProxyOptions;

const VERSIONS: [ProtocolVersion; 2] = [ProtocolVersion::V2025_11_25, ProtocolVersion::V2026_07_28];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_upstreams_changes_reach_the_proxys_clients() {
    for upstream in VERSIONS {
        for client in VERSIONS {
            let case = format!("upstream {upstream}, client {client}");
            // A fresh upstream each time: `add_tool` adds its tool once.
            let command = ServerCommand::new(common::test_server_path())
                .arg("--changing")
                .stderr(StderrMode::Discard);
            let era = Negotiation::Pinned(upstream);
            let proxy = client_common::start_proxy(command, era, ProxyOptions::default()).await;
            let server = proxy
                .add_to(toolshape::Server::builder("proxy", "1.0.0"))
                .build()
                .unwrap();
            let url = client_common::serve_over_http(server).await;
            let connected = builder(client).connect_http(&url).await.unwrap();
            exercise(&connected, &case).await;
            connected.close(Duration::from_secs(2)).await;
            proxy.shutdown(Duration::from_secs(2)).await;
        }
    }
}
