#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The proxy in front of each peer of `peers/` (rmcp, TypeScript SDK 1.x and
//! 2.x, Python SDK, FastMCP; real child processes), served over HTTP on loopback to
//! clients of both eras: every valid call's value is the one the peer gives
//! directly, and arguments that break the peer's `inputSchema` are refused
//! by the proxy.
//!
//! Needs the peers installed (`scripts/setup-peers.sh`) and
//! `TOOLSHAPE_PEERS` set; unset, the test prints a skip notice and passes.

mod client_common;

use serde_json::{Map, Value, json};
use toolshape::client::{Client, Negotiation};
use toolshape::protocol::ProtocolVersion;
use toolshape_proxy::{Proxy, ProxyOptions, UpstreamSpec};

use client_common::{PEERS_SKIPPED, PeerKind, connect, installed_peers, options, peer_command};

fn arguments(value: Value) -> Option<Map<String, Value>> {
    value.as_object().cloned()
}

async fn through_proxy(peer: PeerKind, installed: &std::path::Path) -> (Proxy, String) {
    let upstream = UpstreamSpec::Command(peer_command(peer, installed));
    let proxy = Proxy::start(upstream, Client::builder(), ProxyOptions::default())
        .await
        .unwrap_or_else(|e| panic!("{}: the proxy does not start: {e}", peer.name()));
    let url = client_common::serve_proxy_over_http(proxy.registry().clone()).await;
    (proxy, url)
}

#[tokio::test]
async fn every_peer_passes_through_unchanged() {
    let Some(installed) = installed_peers() else {
        eprintln!("{PEERS_SKIPPED}");
        return;
    };
    let calls = [
        ("add", json!({"a": 2, "b": 40})),
        ("add", json!({"a": -5, "b": 3})),
        ("get_weather_data", json!({"location": "Paris"})),
    ];
    for peer in PeerKind::ALL {
        let direct = connect(peer_command(peer, &installed), Negotiation::Auto, options()).await;
        let (_proxy, url) = through_proxy(peer, &installed).await;
        for era in [ProtocolVersion::V2025_06_18, ProtocolVersion::V2026_07_28] {
            let client = Client::builder()
                .negotiation(Negotiation::Pinned(era))
                .options(options())
                .connect_http(&url)
                .await
                .unwrap();
            let mut listed: Vec<String> = client
                .list_tools()
                .await
                .unwrap()
                .into_iter()
                .map(|t| t.name)
                .collect();
            listed.sort();
            assert_eq!(listed, ["add", "get_weather_data"], "{} {era}", peer.name());
            for (tool, args) in &calls {
                let want = direct
                    .call_tool(tool, arguments(args.clone()))
                    .await
                    .unwrap();
                let got = client
                    .call_tool(tool, arguments(args.clone()))
                    .await
                    .unwrap();
                assert!(
                    !got.is_error,
                    "{} {era} {tool}: {}",
                    peer.name(),
                    got.text()
                );
                assert!(want.structured.is_some(), "{} {tool}", peer.name());
                assert_eq!(
                    got.structured,
                    want.structured,
                    "{} {era} {tool}",
                    peer.name()
                );
            }
            let refused = client
                .call_tool("add", arguments(json!({"a": "two", "b": 40})))
                .await
                .unwrap();
            assert!(refused.is_error, "{} {era}", peer.name());
            assert!(
                refused.text().contains("Invalid arguments"),
                "{} {era}: {}",
                peer.name(),
                refused.text()
            );
        }
    }
}
