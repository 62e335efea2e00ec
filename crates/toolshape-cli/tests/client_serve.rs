#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The client against `toolshape serve --root <fixture> --page-size 2` (a
//! child process over pipes), in every negotiation mode: automatic (which
//! lands on 2026-07-28) and pinned to 2025-11-25, 2025-06-18 and 2025-03-26.
//!
//! Typed calls return the same values in every mode:
//! - 2026-07-28: `structuredContent` is the bare value (`3`, `[...]`);
//! - 2025-11-25 and 2025-06-18: the server wraps non-object values as
//!   `{"result": v}` and marks them; the client undoes the wrapping, so
//!   `ToolResult::structured` is the bare value again;
//! - 2025-03-26: there is no `structuredContent` (and no `outputSchema`):
//!   `ToolResult::structured` is `None`, the value arrives as JSON text, and
//!   the typed `call` decodes that text.
//!
#[path = "../../toolshape-harness/tests/client_common/mod.rs"]
mod client_common;

use std::path::Path;

use serde_json::{Value, json};
use tempfile::TempDir;
use toolshape::client::{Client, ClientErrorKind, Negotiation, ServerCommand, StderrMode};
use toolshape::protocol::ProtocolVersion;
use toolshape::protocol::meta::keys::WRAPPED_OUTPUT as WRAPPED_OUTPUT_META_KEY;

use client_common::{connect, options, toolshape_bin};

/// Every tool `toolshape serve` lists, in listing (name) order.
const TOOLS: [&str; 7] = [
    "analyze_dataset",
    "analyze_project",
    "count_lines",
    "file_info",
    "find",
    "list_directory",
    "read_text",
];

/// A small workspace: three files and a folder.
fn fixture() -> TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("three.txt"), "one\ntwo\nthree\n").unwrap();
    std::fs::write(dir.path().join("data.csv"), "a,b\n1,2\n3,4\n").unwrap();
    std::fs::write(dir.path().join("README.md"), "# fixture\n").unwrap();
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    std::fs::write(dir.path().join("sub/inner.txt"), "x").unwrap();
    dir
}

async fn serve(root: &Path, negotiation: Negotiation) -> Client {
    let command = ServerCommand::new(toolshape_bin())
        .arg("serve")
        .arg("--root")
        .arg(root)
        .arg("--page-size")
        .arg("2")
        .stderr(StderrMode::Capture);
    connect(command, negotiation, options()).await
}

/// What one connection observed.
#[derive(Debug, PartialEq)]
struct Observed {
    lines: u64,
    entries: Vec<Value>,
}

/// Lists, calls `count_lines` and `list_directory` typed and raw, and checks
/// what each revision puts on the wire.
async fn exercise(root: &Path, negotiation: Negotiation, expected: ProtocolVersion) -> Observed {
    let client = serve(root, negotiation).await;
    assert_eq!(client.protocol_version(), expected);
    assert_eq!(client.server_info().unwrap().name, "toolshape");

    // Seven tools over four pages of two.
    let tools = client.list_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, TOOLS, "{expected}");
    let structured = expected.supports_structured_output();
    for tool in &tools {
        if tool.name == "read_text" {
            continue; // a text tool: no outputSchema in any revision
        }
        assert_eq!(
            tool.output_schema.is_some(),
            structured,
            "{expected}: outputSchema of {}",
            tool.name
        );
    }

    // Typed calls.
    let lines: u64 = client
        .call("count_lines", json!({"path": "three.txt"}))
        .await
        .unwrap();
    let entries: Vec<Value> = client
        .call("list_directory", json!({"path": "."}))
        .await
        .unwrap();

    // The raw results: what the client hands on after validation.
    let raw = client
        .call_tool(
            "count_lines",
            json!({"path": "three.txt"}).as_object().cloned(),
        )
        .await
        .unwrap();
    assert!(!raw.is_error);
    let marked = raw
        .meta
        .as_ref()
        .is_some_and(|m| m.contains_key(WRAPPED_OUTPUT_META_KEY));
    match expected {
        ProtocolVersion::V2026_07_28 => {
            assert_eq!(raw.structured, Some(json!(3)));
            assert!(!marked);
        }
        ProtocolVersion::V2025_11_25 | ProtocolVersion::V2025_06_18 => {
            // Sent as {"result": 3}, marked; unwrapped by the client.
            assert_eq!(raw.structured, Some(json!(3)));
            assert!(marked, "{expected}: the wrapping is marked in _meta");
            assert_eq!(raw.text(), r#"{"result":3}"#);
        }
        _ => {
            // No structuredContent before 2025-06-18: only the JSON text.
            assert_eq!(raw.structured, None);
            assert_eq!(raw.text(), "3");
        }
    }

    // A tool error is its own kind in every revision.
    let missing = client
        .call::<u64>("count_lines", json!({"path": "nope.txt"}))
        .await
        .unwrap_err();
    assert!(
        matches!(missing.kind(), ClientErrorKind::Tool { tool, .. } if tool == "count_lines"),
        "{expected}: {missing:?}"
    );
    // And the connection is still usable.
    let again: u64 = client
        .call("count_lines", json!({"path": "data.csv"}))
        .await
        .unwrap();
    assert_eq!(again, 3);

    let status = client.close(std::time::Duration::from_secs(5)).await;
    assert!(
        status.is_some_and(|s| s.success()),
        "{expected}: {status:?}"
    );
    Observed { lines, entries }
}

fn check(observed: &Observed) {
    assert_eq!(observed.lines, 3);
    let summary: Vec<(String, String, u64)> = observed
        .entries
        .iter()
        .map(|e| {
            (
                e["name"].as_str().unwrap().to_owned(),
                e["kind"].as_str().unwrap().to_owned(),
                e["size"].as_u64().unwrap(),
            )
        })
        .collect();
    let files: Vec<(String, String, u64)> = summary
        .iter()
        .filter(|(_, kind, _)| kind == "file")
        .cloned()
        .collect();
    assert_eq!(
        files,
        [
            ("README.md".into(), "file".into(), 10),
            ("data.csv".into(), "file".into(), 12),
            ("three.txt".into(), "file".into(), 14),
        ]
    );
    assert!(
        summary
            .iter()
            .any(|(name, kind, _)| name == "sub" && kind == "dir")
    );
    assert_eq!(summary.len(), 4);
    for entry in &observed.entries {
        assert!(
            entry["modified"].as_str().unwrap().ends_with('Z'),
            "{entry}"
        );
    }
}

#[tokio::test]
async fn auto_negotiates_2026_07_28() {
    let root = fixture();
    let observed = exercise(root.path(), Negotiation::Auto, ProtocolVersion::V2026_07_28).await;
    check(&observed);
}

#[tokio::test]
async fn pinned_2025_11_25_unwraps() {
    let root = fixture();
    let v = ProtocolVersion::V2025_11_25;
    check(&exercise(root.path(), Negotiation::Pinned(v), v).await);
}

#[tokio::test]
async fn pinned_2025_06_18_unwraps() {
    let root = fixture();
    let v = ProtocolVersion::V2025_06_18;
    check(&exercise(root.path(), Negotiation::Pinned(v), v).await);
}

#[tokio::test]
async fn pinned_2025_03_26_decodes_text() {
    let root = fixture();
    let v = ProtocolVersion::V2025_03_26;
    check(&exercise(root.path(), Negotiation::Pinned(v), v).await);
}

#[tokio::test]
async fn same_values_in_every_mode() {
    let root = fixture();
    let modern = exercise(root.path(), Negotiation::Auto, ProtocolVersion::V2026_07_28).await;
    for v in [
        ProtocolVersion::V2025_11_25,
        ProtocolVersion::V2025_06_18,
        ProtocolVersion::V2025_03_26,
    ] {
        let observed = exercise(root.path(), Negotiation::Pinned(v), v).await;
        assert_eq!(observed, modern, "{v} differs from 2026-07-28");
    }
}
