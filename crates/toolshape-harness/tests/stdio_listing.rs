#![allow(clippy::unwrap_used, clippy::expect_used)]
//! `tools/list` pagination against the test server over real pipes: small
//! pages followed to the end, name order, invalid cursors.

mod common;

use common::{MODERN, Peer, modern_meta, params_for};
use serde_json::{Value, json};

/// Every tool of the test server, in name order.
fn expected_names() -> Vec<String> {
    let mut names: Vec<String> = [
        "ask_both",
        "ask_model",
        "ask_roots",
        "ask_twice",
        "ask_two",
        "ask_user",
        "bad_output",
        "block",
        "burst",
        "constrained",
        "numbers",
        "panic",
        "points",
        "sleep",
    ]
    .iter()
    .map(ToString::to_string)
    .collect();
    names.extend((0..12).map(|i| format!("noop_{i:02}")));
    names.sort();
    names
}

/// Follows `nextCursor` to the end; returns the pages' tool names.
async fn pages(peer: &mut Peer, version: &str) -> Vec<Vec<String>> {
    let mut pages = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let mut params = json!({});
        if let Some(cursor) = &cursor {
            params["cursor"] = json!(cursor);
        }
        let page = peer.result("tools/list", params_for(version, params)).await;
        let names = page["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|tool| tool["name"].as_str().unwrap().to_owned())
            .collect();
        pages.push(names);
        assert!(pages.len() < 100, "the cursors never end");
        match page.get("nextCursor") {
            None => return pages,
            Some(Value::String(next)) => cursor = Some(next.clone()),
            Some(other) => panic!("nextCursor is not a string: {other}"),
        }
    }
}

#[tokio::test]
async fn small_pages_list_every_tool_once_in_name_order() {
    let expected = expected_names();
    for size in [2usize, 3] {
        let mut peer = Peer::test_server(["--page-size", &size.to_string()]);
        peer.initialize("2025-11-25").await;
        for version in ["2025-11-25", MODERN] {
            let pages = pages(&mut peer, version).await;
            assert_eq!(
                pages.len(),
                expected.len().div_ceil(size),
                "page size {size}, {version}: {pages:?}"
            );
            for page in &pages[..pages.len() - 1] {
                assert_eq!(
                    page.len(),
                    size,
                    "only the last page may be short: {pages:?}"
                );
            }
            let all: Vec<String> = pages.concat();
            assert_eq!(all, expected, "page size {size}, {version}");
            // The same walk again gives the same pages.
            assert_eq!(self::pages(&mut peer, version).await, pages);
        }
    }
}

#[tokio::test]
async fn the_page_size_can_come_from_the_environment() {
    let mut peer = Peer::spawn_with_env(
        common::test_server_path(),
        std::iter::empty::<&str>(),
        [("TEST_SERVER_PAGE_SIZE", "5")],
    );
    let first = peer
        .result("tools/list", json!({"_meta": modern_meta()}))
        .await;
    assert_eq!(first["tools"].as_array().unwrap().len(), 5, "{first}");
    assert!(first["nextCursor"].is_string(), "{first}");
}

#[tokio::test]
async fn an_invalid_cursor_is_invalid_params() {
    let mut peer = Peer::test_server(["--page-size", "2"]);
    peer.initialize("2025-11-25").await;
    for cursor in [
        json!("garbage"),
        json!(""),
        json!("after:"),
        json!("after:zz"),
        json!("after:ff"),
        json!(42),
        json!({"after": "noop_00"}),
    ] {
        for version in ["2025-11-25", MODERN] {
            let error = peer
                .error("tools/list", params_for(version, json!({"cursor": cursor})))
                .await;
            assert_eq!(error["code"], -32602, "cursor {cursor}, {version}: {error}");
        }
    }
    // A good cursor still works afterwards.
    let first = peer.result("tools/list", json!({})).await;
    let cursor = first["nextCursor"].clone();
    let second = peer.result("tools/list", json!({"cursor": cursor})).await;
    let first_len = first["tools"].as_array().map_or(0, Vec::len);
    assert_eq!(
        second["tools"][0]["name"],
        expected_names()[first_len],
        "{second}"
    );
}

#[tokio::test]
async fn modern_pages_carry_caching_hints_and_legacy_pages_do_not() {
    let mut peer = Peer::test_server(["--page-size", "3"]);
    let modern = peer
        .result("tools/list", json!({"_meta": modern_meta()}))
        .await;
    assert_eq!(modern["resultType"], "complete", "{modern}");
    assert!(modern["ttlMs"].is_u64(), "{modern}");
    assert!(modern["cacheScope"].is_string(), "{modern}");
    peer.initialize("2025-11-25").await;
    let legacy = peer.result("tools/list", json!({})).await;
    for key in ["resultType", "ttlMs", "cacheScope"] {
        assert!(legacy.get(key).is_none(), "{key}: {legacy}");
    }
    // Cursors are interchangeable between revisions: they name a position.
    let next = peer
        .result(
            "tools/list",
            json!({"cursor": modern["nextCursor"], "_meta": modern_meta()}),
        )
        .await;
    assert_eq!(next["tools"][0]["name"], expected_names()[3], "{next}");
}
