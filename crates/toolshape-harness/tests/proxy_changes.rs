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
use toolshape::client::{Client, Negotiation, ServerCommand, StderrMode};
use toolshape::protocol::ProtocolVersion;
use toolshape_proxy::{Proxy, ProxyOptions, UpstreamSpec};

const VERSIONS: [ProtocolVersion; 2] = [ProtocolVersion::V2025_11_25, ProtocolVersion::V2026_07_28];

/// `proxy` served over HTTP on loopback (tools, resources and prompts): its URL.
async fn serve(proxy: &Proxy) -> String {
    let server = proxy
        .add_to(toolshape::Server::builder("proxy", "1.0.0"))
        .build()
        .unwrap();
    client_common::serve_over_http(server).await
}

/// The proxy in front of the Streamable HTTP server at `url`, spoken to on
/// `upstream`, and the proxy's own URL.
async fn proxy_in_front_of(url: String, upstream: ProtocolVersion) -> (Proxy, String) {
    let proxy = Proxy::start(
        UpstreamSpec::Url(url),
        Client::builder().negotiation(Negotiation::Pinned(upstream)),
        ProxyOptions::default(),
    )
    .await
    .unwrap();
    let url = serve(&proxy).await;
    (proxy, url)
}

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
            let url = serve(&proxy).await;
            let connected = builder(client).connect_http(&url).await.unwrap();
            exercise(&connected, &case).await;
            connected.close(Duration::from_secs(2)).await;
            proxy.shutdown(Duration::from_secs(2)).await;
        }
    }
}

/// An HTTP upstream that forgets the proxy's session (restarted on the same
/// address) is followed again on the session the proxy opens in its place:
/// a client's subscription made before still brings updates after.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forgotten_upstream_session_is_followed_again() {
    use toolshape_harness::changing::serve_changes;

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let upstream_url = format!("http://{address}/mcp");
    let serve = |listener: tokio::net::TcpListener| {
        let upstream = serve_changes(toolshape::Server::builder("changing", "1"))
            .build()
            .unwrap();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let serving = tokio::spawn(async move {
            let stopped = async move {
                let _ = stopped.await;
            };
            upstream
                .serve_http(listener, toolshape::HttpOptions::default(), stopped)
                .await
        });
        (stop, serving)
    };
    let (stop, serving) = serve(listener);
    let (proxy, url) = proxy_in_front_of(upstream_url, ProtocolVersion::V2025_11_25).await;
    let client = builder(ProtocolVersion::V2025_11_25)
        .connect_http(&url)
        .await
        .unwrap();
    let mut updates = client.resource_updates();
    client
        .subscribe(toolshape_harness::changing::WATCHED)
        .await
        .unwrap();
    // The upstream restarted: its sessions, and the proxy's subscription on
    // one, are gone.
    stop.send(()).unwrap();
    tokio::time::timeout(Duration::from_secs(10), serving)
        .await
        .expect("the upstream did not stop")
        .unwrap()
        .unwrap();
    let listener = tokio::net::TcpListener::bind(address).await.unwrap();
    let (_stop, _serving) = serve(listener);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    let update = loop {
        let touched: Result<serde_json::Value, _> = client
            .call(
                "touch",
                serde_json::json!({ "uri": toolshape_harness::changing::WATCHED }),
            )
            .await;
        touched.unwrap();
        match tokio::time::timeout(Duration::from_millis(200), updates.recv()).await {
            Ok(update) => break update.unwrap(),
            Err(_) if tokio::time::Instant::now() < deadline => {}
            Err(_) => panic!("no update after the upstream's session was renewed"),
        }
    };
    assert_eq!(update, toolshape_harness::changing::WATCHED);
    client.close(Duration::from_secs(2)).await;
    proxy.shutdown(Duration::from_secs(2)).await;
}

/// A Streamable HTTP upstream on 2026-07-28, its changes followed through
/// a `subscriptions/listen` stream over HTTP (the response to a POST that
/// stays open), for clients of either revision.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stateless_http_upstream_is_followed() {
    use toolshape_harness::changing::serve_changes;

    for client in VERSIONS {
        // A fresh upstream each time: `add_tool` adds its tool once.
        let upstream = serve_changes(toolshape::Server::builder("changing", "1"))
            .build()
            .unwrap();
        let upstream_url = client_common::serve_over_http(upstream).await;
        let (proxy, url) = proxy_in_front_of(upstream_url, ProtocolVersion::V2026_07_28).await;
        let connected = builder(client).connect_http(&url).await.unwrap();
        exercise(
            &connected,
            &format!("HTTP upstream 2026-07-28, client {client}"),
        )
        .await;
        connected.close(Duration::from_secs(2)).await;
        proxy.shutdown(Duration::from_secs(2)).await;
    }
}
