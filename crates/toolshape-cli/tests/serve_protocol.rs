#![allow(clippy::unwrap_used, clippy::expect_used)]
//! `toolshape serve` as an MCP server over real pipes: handshakes, listing,
//! the shaping of each result for each revision (checked against the schemas
//! the same connection listed), malformed input, logs and the end of input.

#[path = "../../toolshape-harness/tests/common/mod.rs"]
mod common;
mod fixture;

use common::{ALL, LEGACY, MODERN, OutputSchemas, WRAPPED_KEY, is_error, modern_meta, text_of};
use fixture::Fixture;
use serde_json::{Value, json};
use toolshape::protocol::meta::keys::SERVER_INFO;

const TOOLS: [&str; 7] = [
    "analyze_dataset",
    "analyze_project",
    "count_lines",
    "file_info",
    "find",
    "list_directory",
    "read_text",
];

#[tokio::test]
async fn handshake_on_each_revision_and_discover() {
    let fixture = Fixture::new();
    for version in LEGACY {
        let mut peer = fixture.serve(&[]);
        let result = peer.initialize(version).await;
        assert_eq!(result["protocolVersion"], version, "{result}");
        assert_eq!(result["serverInfo"]["name"], "toolshape", "{result}");
        assert_eq!(
            result["capabilities"]["tools"]["listChanged"], true,
            "{result}"
        );
        let instructions = result["instructions"].as_str().unwrap();
        assert!(instructions.contains("Read-only"), "{instructions}");
        assert_eq!(peer.result("ping", Value::Null).await, json!({}));
    }
    let mut peer = fixture.serve(&[]);
    let result = peer.initialize("2000-01-01").await;
    assert_eq!(result["protocolVersion"], "2025-11-25");

    let mut peer = fixture.serve(&[]);
    let discover = peer
        .result("server/discover", json!({"_meta": modern_meta()}))
        .await;
    let supported: Vec<&str> = discover["supportedVersions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    for version in ALL {
        assert!(supported.contains(&version), "{version}: {discover}");
    }
    assert_eq!(discover["resultType"], "complete");
    assert!(
        discover["ttlMs"].is_u64() && discover["cacheScope"].is_string(),
        "{discover}"
    );
    assert_eq!(
        discover["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "toolshape"
    );
    let mut meta = modern_meta();
    meta["io.modelcontextprotocol/protocolVersion"] = json!("2030-01-01");
    let error = peer.error("tools/list", json!({"_meta": meta})).await;
    assert_eq!(error["code"], -32022, "{error}");
    assert!(
        error["data"]["supported"]
            .as_array()
            .unwrap()
            .contains(&json!(MODERN))
    );
    let error = peer.error("tools/list", Value::Null).await;
    // No version, no handshake: a 2026-07-28 request missing a required field.
    assert_eq!(error["code"], -32602, "no version, no handshake: {error}");
    // 2026-07-28 has no ping, logging level or resource subscription: a
    // request naming it is refused them over stdio as over HTTP.
    for method in ["ping", "logging/setLevel", "resources/subscribe"] {
        let params = json!({"_meta": modern_meta(), "level": "info", "uri": "file:///x"});
        let error = peer.error(method, params).await;
        assert_eq!(error["code"], -32601, "{method}: {error}");
    }
    assert_eq!(peer.result("ping", Value::Null).await, json!({}));
}

#[tokio::test]
async fn small_pages_list_every_tool_once_in_name_order() {
    let fixture = Fixture::new();
    for size in [2, 3] {
        let mut peer = fixture.serve(&["--page-size", &size.to_string()]);
        peer.initialize("2025-11-25").await;
        for version in ["2025-11-25", MODERN] {
            let mut names = Vec::new();
            let mut cursor: Option<Value> = None;
            let mut pages = 0;
            loop {
                let mut params = json!({});
                if let Some(cursor) = cursor.take() {
                    params["cursor"] = cursor;
                }
                let page = peer
                    .result("tools/list", common::params_for(version, params))
                    .await;
                pages += 1;
                let tools = page["tools"].as_array().unwrap();
                assert!(tools.len() <= size, "{page}");
                names.extend(tools.iter().map(|t| t["name"].as_str().unwrap().to_owned()));
                match page.get("nextCursor") {
                    Some(next) => cursor = Some(next.clone()),
                    None => break,
                }
                assert!(pages < 20, "the cursors never end");
            }
            assert_eq!(names, TOOLS, "page size {size}, {version}");
            assert_eq!(
                pages,
                TOOLS.len().div_ceil(size),
                "page size {size}, {version}"
            );
        }
        let error = peer
            .error("tools/list", json!({"cursor": "not-a-cursor"}))
            .await;
        assert_eq!(error["code"], -32602, "{error}");
    }
}

/// What one revision sees of a non-object (`list_directory`, `count_lines`)
/// and an object (`file_info`) output, with every `structuredContent`
/// checked against the `outputSchema` listed on the same connection.
#[tokio::test]
async fn results_are_shaped_for_each_revision() {
    let fixture = Fixture::new();
    for version in ALL {
        let mut peer = fixture.serve(&[]);
        peer.open(version).await;
        let tools = peer.list_all_tools(version).await;
        assert_eq!(tools.len(), TOOLS.len(), "{version}");
        let schemas = OutputSchemas::new(&tools);
        let structured = version >= "2025-06-18";
        let native = version == MODERN;

        for tool in &tools {
            let annotations = tool.get("annotations");
            if version >= "2025-03-26" {
                assert_eq!(
                    annotations.unwrap()["readOnlyHint"],
                    true,
                    "{version}: {tool}"
                );
            } else {
                assert!(annotations.is_none(), "{version}: {tool}");
            }
            if !structured {
                assert!(tool.get("outputSchema").is_none(), "{version}: {tool}");
                assert!(tool.get("title").is_none(), "{version}: {tool}");
            }
        }

        let listing = peer
            .call_result(version, "list_directory", json!({"path": "src"}))
            .await;
        let count = peer
            .call_result(version, "count_lines", json!({"path": "src/lib.rs"}))
            .await;
        let info = peer
            .call_result(version, "file_info", json!({"path": "src/lib.rs"}))
            .await;
        for result in [&listing, &count, &info] {
            assert!(!is_error(result), "{version}: {result}");
            assert_eq!(
                result.get("resultType").is_some(),
                native,
                "{version}: {result}"
            );
        }
        let listing_names = |entries: &Value| -> Vec<String> {
            entries
                .as_array()
                .unwrap()
                .iter()
                .map(|e| e["name"].as_str().unwrap().to_owned())
                .collect()
        };

        if !structured {
            for result in [&listing, &count, &info] {
                assert!(
                    result.get("structuredContent").is_none(),
                    "{version}: {result}"
                );
                assert!(result.get("_meta").is_none(), "{version}: {result}");
            }
            let entries: Value = serde_json::from_str(&text_of(&listing)).unwrap();
            assert_eq!(listing_names(&entries), ["lib.rs", "main.rs"]);
            assert_eq!(text_of(&count), "7");
            let info: Value = serde_json::from_str(&text_of(&info)).unwrap();
            assert_eq!(info["path"], "src/lib.rs");
            continue;
        }

        let listed = schemas.tool("list_directory");
        let listing_value = schemas.check("list_directory", &listing);
        let count_value = schemas.check("count_lines", &count);
        let info_value = schemas.check("file_info", &info);
        if native {
            assert_eq!(listed["outputSchema"]["type"], "array", "{listed}");
            assert_eq!(
                schemas.tool("count_lines")["outputSchema"]["type"],
                "integer"
            );
            assert!(listed.get("_meta").is_none(), "{listed}");
            assert_eq!(listing_names(&listing_value), ["lib.rs", "main.rs"]);
            assert_eq!(count_value, json!(7));
            // Not wrapped; the server named (2026-07-28's SHOULD), and
            // nothing else in `_meta`.
            for result in [&listing, &count] {
                let meta = result["_meta"].as_object().expect("a _meta");
                assert_eq!(meta.len(), 1, "{result}");
                assert_eq!(meta[SERVER_INFO]["name"], "toolshape", "{result}");
                assert_eq!(
                    meta[SERVER_INFO]["version"],
                    env!("CARGO_PKG_VERSION"),
                    "{result}"
                );
            }
        } else {
            let schema = &listed["outputSchema"];
            assert_eq!(schema["type"], "object", "{version}: {schema}");
            assert_eq!(schema["required"], json!(["result"]), "{schema}");
            assert_eq!(schema["properties"]["result"]["type"], "array", "{schema}");
            assert_eq!(listed["_meta"][WRAPPED_KEY], "result", "{listed}");
            let count_schema = &schemas.tool("count_lines")["outputSchema"];
            assert_eq!(
                count_schema["properties"]["result"]["type"], "integer",
                "{count_schema}"
            );
            assert_eq!(
                listing_names(&listing_value["result"]),
                ["lib.rs", "main.rs"]
            );
            assert_eq!(count_value, json!({"result": 7}));
            for result in [&listing, &count] {
                assert_eq!(
                    result["_meta"][WRAPPED_KEY], "result",
                    "{version}: {result}"
                );
                assert!(result["_meta"].get(SERVER_INFO).is_none(), "{result}");
            }
        }
        // An object output is never wrapped, on any revision.
        assert_eq!(info_value["path"], "src/lib.rs", "{version}: {info_value}");
        // Only a 2026-07-28 result names the server.
        let meta_keys: Vec<&str> = info["_meta"]
            .as_object()
            .map_or(Vec::new(), |meta| meta.keys().map(String::as_str).collect());
        let expected: &[&str] = if native { &[SERVER_INFO] } else { &[] };
        assert_eq!(meta_keys, expected, "{version}: {info}");
        let info_schema = &schemas.tool("file_info")["outputSchema"];
        assert!(
            info_schema["properties"].get("path").is_some(),
            "{info_schema}"
        );
        assert!(schemas.tool("file_info").get("_meta").is_none());

        // The other structured tools validate too.
        for (tool, arguments) in [
            ("find", json!({"glob": "**"})),
            ("find", json!({"path": "README.md"})),
            ("analyze_project", json!({})),
            (
                "analyze_dataset",
                json!({"path": "data/values.csv", "analysisType": "descriptive"}),
            ),
            (
                "analyze_dataset",
                json!({"path": "data/values.csv", "analysisType": "correlation"}),
            ),
            ("list_directory", json!({"path": "."})),
            ("file_info", json!({"path": "."})),
        ] {
            let result = peer.call_result(version, tool, arguments).await;
            schemas.check(tool, &result);
        }
    }
}

#[tokio::test]
async fn malformed_input_gets_errors_and_the_server_keeps_serving() {
    let fixture = Fixture::new();
    let mut peer = fixture.serve(&[]);
    peer.initialize("2025-11-25").await;
    for (line, code) in [
        (&b"{oops"[..], Some(-32700)),
        (b"[]", Some(-32600)),
        (br#"{"jsonrpc":"2.0","id":1,"method":7}"#, Some(-32600)),
        (
            br#"{"jsonrpc":"2.0","id":2,"method":"tools/list","params":"x"}"#,
            Some(-32600),
        ),
        (
            br#"{"jsonrpc":"2.0","id":3,"method":"prompts/list"}"#,
            Some(-32601),
        ),
        (br#"{"jsonrpc":"2.0","id":4,"result":{}}"#, None),
    ] {
        peer.send_line(line).await;
        if let Some(code) = code {
            let answer = peer.next_response().await;
            assert_eq!(
                answer["error"]["code"],
                code,
                "{}: {answer}",
                String::from_utf8_lossy(line)
            );
        }
        let id = peer.send_request("ping", Value::Null).await;
        let next = peer.next_response().await;
        assert_eq!(next, json!({"jsonrpc": "2.0", "id": id, "result": {}}));
    }
}

/// A 2025-03-26 session takes JSON-RPC batches (that revision's MUST): the
/// answers of a batch's requests come back together as one array,
/// notifications get none, a broken, empty or over-long batch one error;
/// every other revision refuses a batch.
#[tokio::test]
async fn batches_are_taken_on_2025_03_26_only() {
    let fixture = Fixture::new();
    let mut peer = fixture.serve(&[]);
    peer.accept_batches();
    peer.initialize("2025-03-26").await;
    peer.send(&json!([
        {"jsonrpc": "2.0", "id": "ping", "method": "ping"},
        {"jsonrpc": "2.0", "method": "notifications/cancelled",
         "params": {"requestId": "nothing"}},
        {"jsonrpc": "2.0", "id": "list", "method": "tools/list"},
        {"jsonrpc": "2.0", "id": "unknown", "method": "no/such"},
        {"jsonrpc": "2.0", "id": "again", "method": "initialize",
         "params": {"protocolVersion": "2025-03-26", "capabilities": {},
                    "clientInfo": {"name": "x", "version": "0"}}},
        7,
    ]))
    .await;
    let answers = peer.next_batch().await;
    assert_eq!(answers.len(), 5, "{answers:?}");
    let by_id = |id: &str| {
        answers
            .iter()
            .find(|answer| answer["id"] == id)
            .unwrap_or_else(|| panic!("no answer to {id}: {answers:?}"))
    };
    assert_eq!(by_id("ping")["result"], json!({}));
    let tools = by_id("list")["result"]["tools"].as_array().unwrap();
    assert_eq!(tools.len(), TOOLS.len());
    assert_eq!(by_id("unknown")["error"]["code"], -32601);
    assert_eq!(by_id("again")["error"]["code"], -32600);
    let invalid = answers.iter().find(|a| a.get("id").is_none()).unwrap();
    assert_eq!(invalid["error"]["code"], -32600);

    // Notifications alone: nothing comes back (the ping after it is next).
    peer.send(
        &json!([{"jsonrpc": "2.0", "method": "notifications/cancelled",
                       "params": {"requestId": "nothing"}}]),
    )
    .await;
    let id = peer.send_request("ping", Value::Null).await;
    let next = peer.next_message(common::TIMEOUT).await.unwrap();
    assert_eq!(next, json!({"jsonrpc": "2.0", "id": id, "result": {}}));

    // Refused whole, with one error, and the session goes on.
    let over_long = Value::Array(
        (0..65)
            .map(|n| json!({"jsonrpc": "2.0", "id": n, "method": "ping"}))
            .collect(),
    )
    .to_string();
    for (line, code) in [
        ("[]", -32600),
        ("[{}, ", -32700),
        (over_long.as_str(), -32600),
    ] {
        peer.send_line(line.as_bytes()).await;
        let answer = peer.next_response().await;
        assert_eq!(answer["error"]["code"], code, "{answer}");
    }
    let at_most = Value::Array(
        (0..64)
            .map(|n| json!({"jsonrpc": "2.0", "id": n, "method": "ping"}))
            .collect(),
    );
    peer.send(&at_most).await;
    assert_eq!(peer.next_batch().await.len(), 64);

    // Any other revision: a batch is an invalid request.
    let mut later = fixture.serve(&[]);
    later.initialize("2025-06-18").await;
    later
        .send(&json!([{"jsonrpc": "2.0", "id": 1, "method": "ping"}]))
        .await;
    let refused = later.next_response().await;
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
    assert!(refused.get("id").is_none(), "{refused}");
}

/// With debug logging on, stdout carries only JSON-RPC (the harness fails on
/// anything else) and the logs go to stderr; closing stdin ends with 0.
#[tokio::test]
async fn logs_go_to_stderr_and_end_of_input_exits_0() {
    let fixture = Fixture::new();
    let mut peer = fixture::serve_at(&fixture.root(), &["-vv"], &[("RUST_LOG", "debug")]);
    peer.initialize("2025-11-25").await;
    peer.send_line(b"not json").await;
    peer.send_line(b"[1]").await;
    let _ = peer
        .call_result("2025-11-25", "list_directory", json!({"path": ".."}))
        .await;
    let _ = peer.call_result(MODERN, "analyze_project", json!({})).await;
    let id = peer
        .send_request(
            "tools/call",
            json!({"name": "count_lines", "arguments": {"path": "src/lib.rs"}}),
        )
        .await;
    peer.close_stdin();
    let rest = peer.drain_to_eof().await;
    let answer = rest
        .iter()
        .find(|m| m["id"] == id)
        .expect("the last call is answered");
    assert_eq!(answer["result"]["structuredContent"], json!({"result": 7}));
    let status = peer.wait_exit().await;
    assert_eq!(status.code(), Some(0), "{status}");
    let stderr = peer.stderr();
    assert!(
        stderr.contains("serving the workspace toolset"),
        "the logs went to stderr: {stderr}"
    );
}

#[tokio::test]
async fn a_root_that_cannot_be_opened_exits_2_with_a_message() {
    let fixture = Fixture::new();
    let missing = fixture.root().join("does-not-exist");
    let mut peer = fixture::serve_at(&missing, &[], &[]);
    let rest = peer.drain_to_eof().await;
    assert!(rest.is_empty(), "{rest:?}");
    let status = peer.wait_exit().await;
    assert_eq!(status.code(), Some(2), "{status}");
    assert!(peer.stderr().contains("cannot open"), "{}", peer.stderr());
}
