#![allow(clippy::unwrap_used, clippy::expect_used)]
//! `toolshape serve` offers the workspace's files as resources: `file:///`
//! URIs under the root, listed, read whole (text or base64 blob) through the
//! same sandbox as the tools, completed by path; `find` and `file_info` link
//! to them (`resource_link`; left out for 2025-03-26, which has none).

#[path = "../../toolshape-harness/tests/client_common/mod.rs"]
mod client_common;

use std::path::Path;

use serde_json::{Map, json};
use tempfile::TempDir;
use toolshape::client::{Client, Negotiation, ServerCommand, StderrMode};
use toolshape::protocol::ProtocolVersion;
use toolshape::protocol::completion::{Completion, CompletionRef};
use toolshape::protocol::content::{ContentBlock, ResourceContents};

use client_common::{connect, options, toolshape_bin};

fn fixture() -> TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.md"), "# notes\n").unwrap();
    std::fs::write(dir.path().join("big.txt"), "x".repeat(1024 * 1024 + 1)).unwrap();
    std::fs::write(dir.path().join("blob.bin"), [0u8, 1, 2, 255]).unwrap();
    std::fs::create_dir(dir.path().join("src")).unwrap();
    std::fs::write(dir.path().join("src/main.rs"), "fn main() {}\n").unwrap();
    std::fs::write(dir.path().join("src/q?x.txt"), "asked").unwrap();
    dir
}

async fn serve(root: &Path, negotiation: Negotiation) -> Client {
    let command = ServerCommand::new(toolshape_bin())
        .arg("serve")
        .arg("--root")
        .arg(root)
        .stderr(StderrMode::Capture);
    connect(command, negotiation, options()).await
}

/// The template's completion of `path` from `partial`.
async fn complete_path(client: &Client, base: &str, partial: &str) -> Completion {
    client
        .complete(
            CompletionRef::Resource {
                uri: format!("{base}/{{+path}}"),
            },
            "path",
            partial,
        )
        .await
        .unwrap()
}

/// The JSON-RPC error a read of `uri` is refused with.
async fn read_refused(client: &Client, uri: &str) -> toolshape::protocol::ErrorObject {
    let refused = client.read_resource(uri).await.unwrap_err();
    match refused.kind() {
        toolshape::client::ClientErrorKind::Protocol(error) => error.clone(),
        other => panic!("{uri}: not a protocol error: {other:?}"),
    }
}

/// Resource not found: -32602 on 2026-07-28 (SEP-2164), -32002 before it.
#[tokio::test]
async fn the_workspace_files_are_resources() {
    let dir = fixture();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let base = format!("file://{}", root.display());
    for negotiation in [
        Negotiation::Auto,
        Negotiation::Pinned(ProtocolVersion::V2025_11_25),
    ] {
        let client = serve(&root, negotiation).await;
        let listed = client.list_resources().await.unwrap();
        let uris: Vec<_> = listed.iter().map(|r| r.uri.clone()).collect();
        assert_eq!(
            uris,
            [
                format!("{base}/big.txt"),
                format!("{base}/blob.bin"),
                format!("{base}/notes.md"),
                format!("{base}/src/main.rs"),
                format!("{base}/src/q%3Fx.txt")
            ]
        );
        let templates = client.list_resource_templates().await.unwrap();
        assert_eq!(templates[0].uri_template, format!("{base}/{{+path}}"));

        let text = client
            .read_resource(&format!("{base}/src/main.rs"))
            .await
            .unwrap();
        match &text[0] {
            ResourceContents::Text(text) => {
                assert_eq!(text.text, "fn main() {}\n");
                assert_eq!(text.mime_type.as_deref(), Some("text/x-rust"));
            }
            other => panic!("{other:?}"),
        }
        let blob = client
            .read_resource(&format!("{base}/blob.bin"))
            .await
            .unwrap();
        match &blob[0] {
            ResourceContents::Blob(blob) => assert_eq!(blob.blob, "AAEC/w=="),
            other => panic!("{other:?}"),
        }
        // Outside the root, missing, or a folder: no such resource.
        for uri in [
            format!("{base}/../etc/passwd"),
            format!("{base}/missing.txt"),
            format!("{base}/src"),
            format!("{base}/notes.md/"),
            "file:///etc/passwd".to_owned(),
        ] {
            client_common::assert_not_found(
                &client,
                &client.read_resource(&uri).await.unwrap_err(),
                &uri,
            );
        }
        // A path no file can have: invalid params, not an internal error.
        let error = read_refused(&client, &format!("{base}/a%00b")).await;
        assert_eq!(error.code, -32602, "{error:?}");
        assert!(error.message.contains("no possible file"), "{error:?}");
        assert!(error.data.is_none(), "{error:?}");
        // A file over the 1 MiB a read returns whole: said so, in a
        // resource's words.
        let error = read_refused(&client, &format!("{base}/big.txt")).await;
        assert_eq!(error.code, -32603, "{error:?}");
        assert!(error.message.contains("a resource read"), "{error:?}");
        let completed = complete_path(&client, &base, "src/m").await;
        assert_eq!(completed.values, ["src/main.rs"]);
        // A name with a `?` is suggested as the URI writes it, so that the
        // template's expansion reads that file; an absolute path suggests
        // nothing (no path under the root starts with `/`).
        let completed = complete_path(&client, &base, "src/q").await;
        assert_eq!(completed.values, ["src/q%3Fx.txt"]);
        let read = client
            .read_resource(&format!("{base}/{}", completed.values[0]))
            .await
            .unwrap();
        assert!(matches!(&read[0], ResourceContents::Text(t) if t.text == "asked"));
        let completed = complete_path(&client, &base, "/").await;
        assert!(completed.values.is_empty(), "{:?}", completed.values);
        client.close(std::time::Duration::from_secs(2)).await;
    }
}

#[tokio::test]
async fn find_links_to_what_it_found_in_the_shape_each_revision_allows() {
    let dir = fixture();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let uri = format!("file://{}/src/main.rs", root.display());
    for (negotiation, links) in [
        (Negotiation::Auto, true),
        (Negotiation::Pinned(ProtocolVersion::V2025_06_18), true),
        (Negotiation::Pinned(ProtocolVersion::V2025_03_26), false),
    ] {
        let client = serve(&root, negotiation).await;
        let mut arguments = Map::new();
        arguments.insert("glob".into(), json!("**/*.rs"));
        let result = client.call_tool("find", Some(arguments)).await.unwrap();
        // The JSON text mirror first, then the link (none before 2025-06-18).
        assert!(matches!(result.content[0], ContentBlock::Text(_)));
        if !links {
            assert_eq!(result.content.len(), 1, "{:?}", result.content);
        } else {
            match &result.content[1] {
                ContentBlock::ResourceLink(link) => {
                    assert_eq!(link.uri, uri);
                    assert_eq!(link.name, "src/main.rs");
                    // The link is readable.
                    let read = client.read_resource(&link.uri).await.unwrap();
                    assert_eq!(read.len(), 1);
                }
                other => panic!("{negotiation:?}: {other:?}"),
            }
        }
        client.close(std::time::Duration::from_secs(2)).await;
    }
}

/// Serves `root` with `flags`, telling each `resources/updated` URI.
async fn serve_telling_updates(
    root: &Path,
    flags: &[&str],
) -> (Client, tokio::sync::mpsc::UnboundedReceiver<String>) {
    let command = ServerCommand::new(toolshape_bin())
        .arg("serve")
        .arg("--root")
        .arg(root)
        .args(flags.iter().copied())
        .stderr(StderrMode::Capture);
    let (sender, updates) = tokio::sync::mpsc::unbounded_channel();
    let client = Client::builder()
        .negotiation(Negotiation::Pinned(ProtocolVersion::V2025_11_25))
        .options(options())
        .on_message(move |message| {
            let message: serde_json::Value = serde_json::from_slice(message).unwrap_or_default();
            if message["method"] == "notifications/resources/updated"
                && let Some(uri) = message["params"]["uri"].as_str()
            {
                let _ = sender.send(uri.to_owned());
            }
        })
        .connect_stdio(command)
        .await
        .unwrap();
    (client, updates)
}

/// Writes `notes.md` (subscribed) and `blob.bin` (not) every 100 ms until
/// an update arrives or `wait` passes; the URIs told in that time.
async fn write_until_told(
    root: &Path,
    updates: &mut tokio::sync::mpsc::UnboundedReceiver<String>,
    wait: std::time::Duration,
) -> Vec<String> {
    let until = tokio::time::Instant::now() + wait;
    let mut told = Vec::new();
    let mut round = 0;
    while tokio::time::Instant::now() < until && told.is_empty() {
        round += 1;
        std::fs::write(root.join("blob.bin"), [round as u8]).unwrap();
        std::fs::write(root.join("notes.md"), format!("# notes, round {round}\n")).unwrap();
        let deadline = tokio::time::Instant::now() + std::time::Duration::from_millis(100);
        while let Ok(Some(uri)) = tokio::time::timeout_at(deadline, updates.recv()).await {
            told.push(uri);
        }
    }
    // Whatever else the last writes caused.
    while let Ok(Some(uri)) =
        tokio::time::timeout(std::time::Duration::from_millis(300), updates.recv()).await
    {
        told.push(uri);
    }
    told
}

#[tokio::test]
async fn a_subscriber_is_told_when_its_file_changes() {
    let dir = fixture();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let notes = format!("file://{}/notes.md", root.display());
    let (client, mut updates) = serve_telling_updates(&root, &[]).await;
    client.subscribe(&notes).await.unwrap();
    let told = write_until_told(&root, &mut updates, std::time::Duration::from_secs(10)).await;
    assert!(!told.is_empty(), "no resources/updated within 10 s");
    // Only the subscribed file, and each change period told once (writes
    // were 100 ms apart: a few, never one per write event).
    assert!(told.iter().all(|uri| *uri == notes), "{told:?}");
    assert!(told.len() <= 3, "{told:?}");
    client.close(std::time::Duration::from_secs(2)).await;

    // --no-watch, or a root with more folders than may be watched (the
    // root and src: two): subscribing works, nothing is ever told.
    for flags in [&["--no-watch"][..], &["--watch-max-folders", "1"]] {
        let (client, mut updates) = serve_telling_updates(&root, flags).await;
        client.subscribe(&notes).await.unwrap();
        let told = write_until_told(&root, &mut updates, std::time::Duration::from_secs(1)).await;
        assert!(told.is_empty(), "{flags:?}: {told:?}");
        if flags[0] == "--watch-max-folders" {
            let stderr = client.stderr_tail().join("\n");
            assert!(stderr.contains("holds more than 1 folders"), "{stderr}");
        }
        client.close(std::time::Duration::from_secs(2)).await;
    }
}

/// Files that come and go are announced as a resource list change
/// (`listChanged` declared): to a 2025-11-25 session unasked, to a
/// 2026-07-28 `subscriptions/listen` stream that asked; writing a file that
/// is there is not one. With `--no-watch`, or when the watcher cannot
/// start (more folders than may be watched), nothing is declared.
#[tokio::test]
async fn files_that_come_and_go_are_a_list_change() {
    let dir = fixture();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    for negotiation in [
        Negotiation::Pinned(ProtocolVersion::V2025_11_25),
        Negotiation::Auto,
    ] {
        let client = serve(&root, negotiation).await;
        let declared = client.negotiated().capabilities.resources.clone();
        assert_eq!(declared.and_then(|r| r.list_changed), Some(true));
        let mut changes = client.resource_list_changes();
        let _listening = if client.protocol_version().is_stateless() {
            let mut filter = toolshape::protocol::subscriptions::SubscriptionFilter::default();
            filter.resources_list_changed = true;
            let listening = client.listen(filter).await.unwrap();
            assert!(listening.acknowledged().resources_list_changed);
            Some(listening)
        } else {
            None
        };
        // Watching starts on a thread of its own: new files until one is told.
        let mut told = false;
        for round in 0..50 {
            std::fs::write(root.join(format!("new-{round}.txt")), "new").unwrap();
            let wait =
                tokio::time::timeout(std::time::Duration::from_millis(200), changes.changed());
            if wait.await.is_ok() {
                told = true;
                break;
            }
        }
        assert!(
            told,
            "{negotiation:?}: no resources/list_changed within 10 s"
        );
        // Whatever the last creation still causes, then writes only.
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        changes.borrow_and_update();
        for round in 0..3u8 {
            std::fs::write(root.join("notes.md"), [round]).unwrap();
            tokio::time::sleep(std::time::Duration::from_millis(150)).await;
        }
        assert!(
            !changes.has_changed().unwrap(),
            "{negotiation:?}: a write was a list change"
        );
        client.close(std::time::Duration::from_secs(2)).await;
    }
    for flags in [&["--no-watch"][..], &["--watch-max-folders", "1"]] {
        let command = ServerCommand::new(toolshape_bin())
            .arg("serve")
            .arg("--root")
            .arg(&root)
            .args(flags.iter().copied());
        let client = connect(command, Negotiation::Auto, options()).await;
        let declared = client.negotiated().capabilities.resources.clone();
        assert!(
            declared.is_some(),
            "{flags:?}: the files are still resources"
        );
        assert_eq!(declared.and_then(|r| r.list_changed), None, "{flags:?}");
        client.close(std::time::Duration::from_secs(2)).await;
    }
}
