//! What the change tests (`changes.rs`, `proxy_changes.rs`) share: a client following a server's changes
//! (`toolshape_harness::changing`) and the checks that each reaches it.

#![allow(dead_code, unreachable_pub)]

use std::time::Duration;

use serde_json::json;
use toolshape::client::{Client, ClientBuilder, Listening, Negotiation};
use toolshape::protocol::ProtocolVersion;
use toolshape::protocol::subscriptions::SubscriptionFilter;
use toolshape_harness::changing::{OTHER, WATCHED};

const WAIT: Duration = Duration::from_secs(5);

pub fn builder(version: ProtocolVersion) -> ClientBuilder {
    let negotiation = if version.is_stateless() {
        Negotiation::Auto
    } else {
        Negotiation::Pinned(version)
    };
    Client::builder()
        .negotiation(negotiation)
        .request_timeout(Duration::from_secs(10))
}

/// What a 2026-07-28 client asks to follow.
pub fn everything() -> SubscriptionFilter {
    let mut filter = SubscriptionFilter::default();
    filter.tools_list_changed = true;
    filter.resources_list_changed = true;
    filter.prompts_list_changed = true;
    filter.resource_subscriptions = vec![WATCHED.to_owned()];
    filter
}

/// Follows the server's changes and `WATCHED`: a listen stream on
/// 2026-07-28 (checked acknowledged), a subscription before.
pub async fn follow(client: &Client, label: &str) -> Option<Listening> {
    if client.protocol_version().is_stateless() {
        let listening = client.listen(everything()).await.unwrap();
        let honoured = listening.acknowledged();
        assert!(honoured.tools_list_changed, "{label}");
        assert!(honoured.resources_list_changed, "{label}");
        assert!(honoured.prompts_list_changed, "{label}");
        assert_eq!(honoured.resource_subscriptions, [WATCHED], "{label}");
        Some(listening)
    } else {
        client.subscribe(WATCHED).await.unwrap();
        None
    }
}

/// Each change reaches `client`, and only the resource it follows.
pub async fn exercise(client: &Client, label: &str) {
    let capabilities = &client.negotiated().capabilities;
    assert_eq!(
        capabilities.resources.as_ref().and_then(|r| r.list_changed),
        Some(true),
        "{label}: resources listChanged declared"
    );
    assert_eq!(
        capabilities.prompts.as_ref().and_then(|p| p.list_changed),
        Some(true),
        "{label}: prompts listChanged declared"
    );
    let mut updates = client.resource_updates();
    let mut tools = client.tool_list_changes();
    let mut listed = client.resource_list_changes();
    let mut prompts = client.prompt_list_changes();
    let listening = follow(client, label).await;

    let _: serde_json::Value = client.call("touch", json!({ "uri": OTHER })).await.unwrap();
    // Touched until an update comes (through a gateway, a subscription
    // takes hold upstream a moment after the client's): the first is the
    // followed resource's, never the other's.
    let deadline = tokio::time::Instant::now() + WAIT;
    let first = loop {
        let _: serde_json::Value = client
            .call("touch", json!({ "uri": WATCHED }))
            .await
            .unwrap();
        match tokio::time::timeout(Duration::from_millis(200), updates.recv()).await {
            Ok(update) => break update.unwrap(),
            Err(_) if tokio::time::Instant::now() < deadline => {}
            Err(_) => panic!("{label}: no update"),
        }
    };
    assert_eq!(
        first, WATCHED,
        "{label}: the unfollowed resource's update came"
    );
    // Further touches may still be on their way: none after a pause.
    tokio::time::sleep(Duration::from_millis(300)).await;
    while let Ok(late) = updates.try_recv() {
        assert_eq!(late, WATCHED, "{label}");
    }

    let _: serde_json::Value = client
        .call("add_tool", json!({ "name": "fresh" }))
        .await
        .unwrap();
    heard_then_listed(&mut tools, &format!("{label}: tools"), || async {
        let listed = client.list_tools().await.unwrap();
        listed.iter().any(|tool| tool.name == "fresh")
    })
    .await;

    let _: serde_json::Value = client
        .call("add_prompt", json!({ "name": "fresh_prompt" }))
        .await
        .unwrap();
    heard_then_listed(&mut prompts, &format!("{label}: prompts"), || async {
        let listed = client.list_prompts().await.unwrap();
        listed.iter().any(|prompt| prompt.name == "fresh_prompt")
    })
    .await;
    let rendered = client.get_prompt("fresh_prompt", None).await.unwrap();
    assert_eq!(
        rendered.messages[0].content.as_text(),
        Some("Hello from fresh_prompt"),
        "{label}"
    );

    let _: serde_json::Value = client
        .call("add_template", json!({ "name": "fresh" }))
        .await
        .unwrap();
    heard_then_listed(&mut listed, &format!("{label}: templates"), || async {
        let templates = client.list_resource_templates().await.unwrap();
        templates
            .iter()
            .any(|t| t.uri_template == "changes://fresh/{id}")
    })
    .await;
    let contents = client.read_resource("changes://fresh/7").await.unwrap();
    assert_eq!(
        serde_json::to_value(&contents).unwrap()[0]["text"],
        "fresh 7",
        "{label}"
    );

    let _: serde_json::Value = client.call("announce_resources", json!({})).await.unwrap();
    tokio::time::timeout(WAIT, listed.changed())
        .await
        .expect("no resources/list_changed")
        .unwrap();

    if let Some(mut listening) = listening {
        // Dropped: the stream is cancelled and says no more.
        let ended = tokio::time::timeout(Duration::from_millis(1), listening.ended()).await;
        assert!(ended.is_err(), "{label}: ended early");
        drop(listening);
        let _: serde_json::Value = client
            .call("touch", json!({ "uri": WATCHED }))
            .await
            .unwrap();
        let late = tokio::time::timeout(Duration::from_millis(300), updates.recv()).await;
        assert!(
            late.is_err(),
            "{label}: an update after the cancel: {late:?}"
        );
    }
}

/// A change is heard on `changes`, and `listed` (listing again) shows it,
/// listed again on each change heard until it does (through a gateway the
/// change may be told before the gateway has listed its upstream again).
async fn heard_then_listed<F, Fut>(
    changes: &mut tokio::sync::watch::Receiver<u64>,
    what: &str,
    listed: F,
) where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    tokio::time::timeout(WAIT, changes.changed())
        .await
        .unwrap_or_else(|_| panic!("{what}: no list change heard"))
        .unwrap();
    let deadline = tokio::time::Instant::now() + WAIT;
    while !listed().await {
        tokio::time::timeout_at(deadline, changes.changed())
            .await
            .unwrap_or_else(|_| panic!("{what}: the new one never listed"))
            .unwrap();
    }
}
