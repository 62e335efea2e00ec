#![allow(clippy::unwrap_used, clippy::expect_used)]
//! `toolshape proxy` as a drop-in wrapper (its stdio front, a child process
//! of the client) passes its upstream's resource updates on: in front of a
//! Streamable HTTP server whose `touch` tool announces an update, a client
//! that subscribed through the proxy (`resources/subscribe` on 2025-11-25, a
//! `subscriptions/listen` stream on 2026-07-28) hears of it, for each pair
//! of upstream and client revision.

#[path = "../../toolshape-harness/tests/client_common/mod.rs"]
mod client_common;

use std::time::Duration;

use serde_json::json;
use toolshape::client::{Client, Negotiation, ServerCommand, StderrMode};
use toolshape::protocol::ProtocolVersion;
use toolshape::protocol::subscriptions::SubscriptionFilter;
use toolshape::resource::ResourceEvents;
use toolshape::{Resource, Server, Tool, ToolError};

const WATCHED: &str = "mem://watched";

/// No input.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Empty {}

/// A server with one resource, and a `touch` tool that announces it changed.
async fn serve() -> String {
    let events = ResourceEvents::new();
    let touched = events.clone();
    let touch = Tool::typed("touch", move |_: Empty| {
        touched.updated(WATCHED);
        async { Ok::<_, ToolError>(json!({"touched": WATCHED})) }
    });
    let server = Server::builder("changing", "1")
        .tool(touch)
        .resource(Resource::text(WATCHED, "watched", "text/plain", "watched"))
        .resource_events(events)
        .build()
        .unwrap();
    client_common::serve_over_http(server).await
}

#[tokio::test]
async fn an_http_upstreams_resource_update_reaches_the_client_over_stdio() {
    for upstream in ["2025-11-25", "2026-07-28"] {
        let url = serve().await;
        for client in [ProtocolVersion::V2025_11_25, ProtocolVersion::V2026_07_28] {
            let case = format!("upstream {upstream}, client {client:?}");
            let command = ServerCommand::new(client_common::toolshape_bin())
                .args(["proxy", "--protocol", upstream, "--url", &url])
                .stderr(StderrMode::Capture);
            let client = Client::builder()
                .negotiation(Negotiation::Pinned(client))
                .request_timeout(Duration::from_secs(20))
                .connect_stdio(command)
                .await
                .unwrap_or_else(|e| panic!("{case}: {e}"));
            let mut updates = client.resource_updates();
            let _listening = if client.protocol_version().is_stateless() {
                let mut filter = SubscriptionFilter::default();
                filter.resource_subscriptions = vec![WATCHED.into()];
                Some(client.listen(filter).await.unwrap())
            } else {
                client.subscribe(WATCHED).await.unwrap();
                None
            };
            // Touched until told (the proxy subscribes upstream a moment
            // after the client's subscription).
            let mut told = None;
            for _ in 0..50 {
                let _: serde_json::Value = client.call("touch", json!({})).await.unwrap();
                if let Ok(update) =
                    tokio::time::timeout(Duration::from_millis(200), updates.recv()).await
                {
                    told = Some(update.unwrap());
                    break;
                }
            }
            assert_eq!(told.as_deref(), Some(WATCHED), "{case}");
            client.close(Duration::from_secs(2)).await;
        }
    }
}
