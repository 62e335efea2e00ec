#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Every built-in tool of `toolshape serve`, over real pipes, on a fixture
//! folder: the values it returns, how it refuses invalid arguments, and how
//! it keeps to its root.

#[path = "../../toolshape-harness/tests/common/mod.rs"]
mod common;
mod fixture;

use common::{MODERN, OutputSchemas, Peer, is_error, text_of};
use fixture::{Fixture, SECRET};
use serde_json::{Value, json};

/// A server on a fresh fixture, at 2026-07-28, with the listed schemas.
async fn open() -> (Fixture, Peer, OutputSchemas) {
    let fixture = Fixture::new();
    let mut peer = fixture.serve(&[]);
    let tools = peer.list_all_tools(MODERN).await;
    let schemas = OutputSchemas::new(&tools);
    (fixture, peer, schemas)
}

/// Calls a structured tool and returns its checked `structuredContent`.
async fn structured(
    peer: &mut Peer,
    schemas: &OutputSchemas,
    name: &str,
    arguments: Value,
) -> Value {
    let result = peer.call_result(MODERN, name, arguments.clone()).await;
    assert!(!is_error(&result), "{name} {arguments}: {result}");
    schemas.check(name, &result)
}

/// Calls a tool that must fail; returns its message.
async fn failure(peer: &mut Peer, name: &str, arguments: Value) -> String {
    let result = peer.call_result(MODERN, name, arguments.clone()).await;
    assert!(
        is_error(&result),
        "{name} {arguments} should fail: {result}"
    );
    assert!(result.get("structuredContent").is_none(), "{result}");
    text_of(&result)
}

fn approx(value: &Value, expected: f64) {
    let actual = value
        .as_f64()
        .unwrap_or_else(|| panic!("not a number: {value}"));
    assert!((actual - expected).abs() < 1e-9, "{actual} != {expected}");
}

fn is_rfc3339_utc(value: &Value) -> bool {
    let Some(text) = value.as_str() else {
        return false;
    };
    let bytes = text.as_bytes();
    bytes.len() == 20
        && bytes[4] == b'-'
        && bytes[7] == b'-'
        && bytes[10] == b'T'
        && bytes[13] == b':'
        && bytes[16] == b':'
        && bytes[19] == b'Z'
}

#[tokio::test]
async fn list_directory_lists_entries_by_name_with_kinds_and_sizes() {
    let (_fixture, mut peer, schemas) = open().await;
    let root = structured(&mut peer, &schemas, "list_directory", json!({"path": "."})).await;
    let entries: Vec<(&str, &str)> = root
        .as_array()
        .unwrap()
        .iter()
        .map(|entry| {
            (
                entry["name"].as_str().unwrap(),
                entry["kind"].as_str().unwrap(),
            )
        })
        .collect();
    let mut expected = vec![
        ("Cargo.toml", "file"),
        ("README.md", "file"),
        ("data", "dir"),
        ("scripts", "dir"),
        ("src", "dir"),
    ];
    if cfg!(unix) {
        expected.extend([
            ("dir_out", "symlink"),
            ("link_in", "symlink"),
            ("link_out", "symlink"),
        ]);
    }
    expected.sort_unstable();
    assert_eq!(entries, expected);
    for entry in root.as_array().unwrap() {
        assert!(is_rfc3339_utc(&entry["modified"]), "{entry}");
    }
    let cargo = root
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == "Cargo.toml")
        .unwrap();
    assert_eq!(cargo["size"], fixture::CARGO_TOML.len());

    let src = structured(
        &mut peer,
        &schemas,
        "list_directory",
        json!({"path": "src"}),
    )
    .await;
    let src: Vec<(&str, u64)> = src
        .as_array()
        .unwrap()
        .iter()
        .map(|entry| {
            (
                entry["name"].as_str().unwrap(),
                entry["size"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        src,
        [
            ("lib.rs", fixture::LIB_RS.len() as u64),
            ("main.rs", fixture::MAIN_RS.len() as u64)
        ]
    );

    let message = failure(&mut peer, "list_directory", json!({"path": "src/lib.rs"})).await;
    assert!(message.contains("src/lib.rs"), "{message}");
    let message = failure(&mut peer, "list_directory", json!({"path": "nowhere"})).await;
    assert!(message.contains("nowhere"), "{message}");
}

#[tokio::test]
async fn file_info_describes_files_directories_and_links() {
    let (_fixture, mut peer, schemas) = open().await;
    let lib = structured(
        &mut peer,
        &schemas,
        "file_info",
        json!({"path": "src/lib.rs"}),
    )
    .await;
    assert_eq!(lib["path"], "src/lib.rs");
    assert_eq!(lib["kind"], "file");
    assert_eq!(lib["size"], fixture::LIB_RS.len());
    assert_eq!(lib["isSymlink"], false);
    assert_eq!(lib["resolvedPath"], "src/lib.rs");
    assert_eq!(lib["binary"], false);
    assert_eq!(lib["text"], json!({"lines": 7, "isUtf8": true}));
    assert_eq!(lib["directory"], Value::Null);
    assert!(is_rfc3339_utc(&lib["modified"]), "{lib}");

    let root = structured(&mut peer, &schemas, "file_info", json!({"path": "."})).await;
    assert_eq!(root["kind"], "dir");
    let links = if cfg!(unix) { 3 } else { 0 };
    assert_eq!(
        root["directory"],
        json!({"entries": 5 + links, "files": 2, "dirs": 3, "symlinks": links, "other": 0})
    );

    let blob = structured(
        &mut peer,
        &schemas,
        "file_info",
        json!({"path": "data/blob.bin"}),
    )
    .await;
    assert_eq!(blob["binary"], true, "{blob}");
    assert_eq!(blob["size"], fixture::BLOB.len());

    if cfg!(unix) {
        let link = structured(&mut peer, &schemas, "file_info", json!({"path": "link_in"})).await;
        assert_eq!(link["isSymlink"], true);
        assert_eq!(link["resolvedPath"], "src/lib.rs");
        assert_eq!(link["kind"], "file");
        assert_eq!(link["size"], fixture::LIB_RS.len());
    }
    let message = failure(&mut peer, "file_info", json!({"path": "missing.txt"})).await;
    assert!(message.contains("missing.txt"), "{message}");
}

#[tokio::test]
async fn read_text_returns_the_text_and_says_when_it_cuts() {
    let (_fixture, mut peer, schemas) = open().await;
    let read_text = schemas.tool("read_text");
    assert!(
        read_text.get("outputSchema").is_none(),
        "a text tool: {read_text}"
    );
    let result = peer
        .call_result(MODERN, "read_text", json!({"path": "src/main.rs"}))
        .await;
    assert!(!is_error(&result), "{result}");
    assert!(result.get("structuredContent").is_none(), "{result}");
    assert_eq!(text_of(&result), fixture::MAIN_RS);

    let cut = peer
        .call_result(
            MODERN,
            "read_text",
            json!({"path": "src/main.rs", "maxBytes": 5}),
        )
        .await;
    let text = text_of(&cut);
    assert!(text.starts_with("fn ma\n[truncated:"), "{text}");
    assert!(text.contains(&fixture::MAIN_RS.len().to_string()), "{text}");
}

#[tokio::test]
async fn count_lines_returns_a_bare_integer() {
    let (_fixture, mut peer, schemas) = open().await;
    for (path, lines) in [
        ("src/lib.rs", 7),
        ("src/main.rs", 3),
        ("Cargo.toml", 8),
        ("README.md", 1),
    ] {
        let count = structured(&mut peer, &schemas, "count_lines", json!({"path": path})).await;
        assert_eq!(count, json!(lines), "{path}");
    }
}

#[tokio::test]
async fn find_matches_by_path_and_by_glob() {
    let (_fixture, mut peer, schemas) = open().await;
    let by_path = structured(&mut peer, &schemas, "find", json!({"path": "src/lib.rs"})).await;
    assert_eq!(
        by_path,
        json!({"matches": [{"path": "src/lib.rs", "kind": "file", "size": fixture::LIB_RS.len()}], "truncated": false})
    );
    let nothing = structured(&mut peer, &schemas, "find", json!({"path": "src/nope.rs"})).await;
    assert_eq!(nothing, json!({"matches": [], "truncated": false}));

    let paths = |found: &Value| -> Vec<String> {
        found["matches"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["path"].as_str().unwrap().to_owned())
            .collect()
    };
    for (glob, expected) in [
        ("**/*.rs", vec!["src/lib.rs", "src/main.rs"]),
        ("src/*", vec!["src/lib.rs", "src/main.rs"]),
        ("**/*.{py,csv}", vec!["data/values.csv", "scripts/tool.py"]),
        ("*.toml", vec!["Cargo.toml"]),
        ("**/*.java", vec![]),
    ] {
        let found = structured(&mut peer, &schemas, "find", json!({"glob": glob})).await;
        assert_eq!(paths(&found), expected, "{glob}");
        assert_eq!(found["truncated"], false);
    }
    let everything = structured(&mut peer, &schemas, "find", json!({"glob": "**"})).await;
    let everything = paths(&everything);
    assert!(
        everything.contains(&"data/blob.bin".to_owned()),
        "{everything:?}"
    );
    assert!(
        everything.iter().all(|path| !path.starts_with("dir_out/")),
        "symbolic links are not followed: {everything:?}"
    );
    let message = failure(&mut peer, "find", json!({"glob": "["})).await;
    assert!(message.contains("glob"), "{message}");
}

#[tokio::test]
async fn analyze_project_reads_the_manifest_and_counts_languages_and_lines() {
    let (_fixture, mut peer, schemas) = open().await;
    let analysis = structured(&mut peer, &schemas, "analyze_project", json!({})).await;
    let project = &analysis["project"];
    assert_eq!(project["name"], "fixture");
    assert_eq!(project["version"], "0.3.1");
    assert_eq!(
        project["dependencies"]["direct"],
        json!(["anyhow", "serde"])
    );
    // main.rs 3 + lib.rs 7 + tool.py 4; Markdown and TOML are not code.
    assert_eq!(project["metrics"]["linesOfCode"], 14);
    let languages: Vec<(&str, u64)> = project["languages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            (
                l["name"].as_str().unwrap(),
                l["fileCount"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        languages,
        [("Rust", 2), ("Markdown", 1), ("Python", 1), ("TOML", 1)]
    );
    approx(&project["languages"][0]["percentage"], 40.0);
    approx(&project["languages"][1]["percentage"], 20.0);

    let same = structured(&mut peer, &schemas, "analyze_project", json!({"path": "."})).await;
    assert_eq!(same, analysis);
    let scripts = structured(
        &mut peer,
        &schemas,
        "analyze_project",
        json!({"path": "scripts"}),
    )
    .await;
    assert_eq!(
        scripts["project"]["name"], "scripts",
        "no manifest: the folder's name"
    );
    assert!(scripts["project"].get("version").is_none(), "{scripts}");
    assert_eq!(scripts["project"]["metrics"]["linesOfCode"], 4);
}

#[tokio::test]
async fn analyze_dataset_computes_descriptive_statistics_and_correlations() {
    let (_fixture, mut peer, schemas) = open().await;
    let descriptive = structured(
        &mut peer,
        &schemas,
        "analyze_dataset",
        json!({"path": "data/values.csv", "analysisType": "descriptive"}),
    )
    .await;
    assert_eq!(descriptive["analysisType"], "descriptive");
    assert_eq!(
        descriptive["summary"],
        json!({"totalRows": 4, "totalColumns": 4, "missingValues": 1})
    );
    assert!(descriptive.get("correlations").is_none(), "{descriptive}");
    let stats = &descriptive["statistics"];
    let columns: Vec<&String> = stats.as_object().unwrap().keys().collect();
    assert_eq!(columns, ["x", "y", "z"], "`label` is not numeric");
    // (column, count, mean, median, sample sd, min, max)
    for (column, count, mean, median, sd, min, max) in [
        ("x", 4, 2.5, 2.5, (5.0f64 / 3.0).sqrt(), 1.0, 4.0),
        ("y", 4, 5.0, 5.0, (20.0f64 / 3.0).sqrt(), 2.0, 8.0),
        ("z", 3, 26.0 / 3.0, 9.0, (7.0f64 / 3.0).sqrt(), 7.0, 10.0),
    ] {
        let s = &stats[column];
        assert_eq!(s["count"], count, "{column}");
        approx(&s["mean"], mean);
        approx(&s["median"], median);
        approx(&s["standardDeviation"], sd);
        approx(&s["min"], min);
        approx(&s["max"], max);
    }

    let correlation = structured(
        &mut peer,
        &schemas,
        "analyze_dataset",
        json!({"path": "data/values.csv", "analysisType": "correlation"}),
    )
    .await;
    assert_eq!(correlation["analysisType"], "correlation");
    assert!(correlation.get("statistics").is_none(), "{correlation}");
    let pairs = correlation["correlations"].as_array().unwrap();
    let expected = [("x", "y", 1.0), ("x", "z", -1.0), ("y", "z", -1.0)];
    assert_eq!(pairs.len(), expected.len(), "{correlation}");
    for (pair, (a, b, r)) in pairs.iter().zip(expected) {
        assert_eq!(
            (pair["variable1"].as_str(), pair["variable2"].as_str()),
            (Some(a), Some(b))
        );
        approx(&pair["coefficient"], r);
    }

    let message = failure(
        &mut peer,
        "analyze_dataset",
        json!({"path": "data/missing.csv", "analysisType": "descriptive"}),
    )
    .await;
    assert!(message.contains("data/missing.csv"), "{message}");
}

/// Wrong types, missing required properties and unknown properties, for
/// every tool: a tool error naming the problem, never the whole argument.
#[tokio::test]
async fn invalid_arguments_are_tool_errors_that_name_the_violation() {
    let (_fixture, mut peer, _schemas) = open().await;
    let huge = "x".repeat(100 * 1024);
    let cases: Vec<(&str, Value, &str)> = vec![
        ("list_directory", json!({}), "path"),
        ("list_directory", json!({"path": 5}), "/path"),
        (
            "list_directory",
            json!({"path": ".", "extra": huge}),
            "extra",
        ),
        ("list_directory", json!({"path": [huge]}), "/path"),
        ("file_info", json!({"path": null}), "/path"),
        (
            "file_info",
            json!({"path": ".", "recursive": true}),
            "recursive",
        ),
        ("file_info", json!({}), "path"),
        (
            "read_text",
            json!({"path": "src/main.rs", "maxBytes": 0}),
            "/maxBytes",
        ),
        (
            "read_text",
            json!({"path": "src/main.rs", "maxBytes": "10"}),
            "/maxBytes",
        ),
        ("read_text", json!({"path": {"nested": huge}}), "/path"),
        ("count_lines", json!({"path": true}), "/path"),
        ("count_lines", json!({"file": "src/lib.rs"}), "file"),
        ("find", json!({}), "oneOf"),
        ("find", json!({"path": "a", "glob": "b"}), "oneOf"),
        ("find", json!({"glob": 3}), "oneOf"),
        ("find", json!({"glob": "**", "huge": huge}), "oneOf"),
        ("analyze_project", json!({"path": 1}), "/path"),
        ("analyze_project", json!({"deep": true}), "deep"),
        (
            "analyze_dataset",
            json!({"path": "data/values.csv"}),
            "analysisType",
        ),
        (
            "analyze_dataset",
            json!({"path": "data/values.csv", "analysisType": "regression"}),
            "/analysisType",
        ),
        (
            "analyze_dataset",
            json!({"path": "data/values.csv", "analysisType": "descriptive", "x": huge}),
            "x",
        ),
    ];
    for (tool, arguments, mentions) in cases {
        let response = peer.call(MODERN, tool, arguments.clone()).await;
        let result = &response["result"];
        assert!(
            is_error(result),
            "{tool} {}: {response}",
            common::excerpt(&arguments.to_string(), 200)
        );
        let text = text_of(result);
        assert!(
            text.starts_with(&format!("Invalid arguments for tool {tool}"))
                && text.contains(mentions),
            "{tool}: the message names {mentions}: {text}"
        );
        let size = response.to_string().len();
        assert!(
            size < 2048,
            "{tool}: a {size}-byte answer echoes the arguments"
        );
        assert!(
            !text.contains(&"x".repeat(200)),
            "{tool}: echoes the argument: {text}"
        );
    }
}

#[tokio::test]
async fn a_huge_path_is_refused_without_being_echoed() {
    let (_fixture, mut peer, _schemas) = open().await;
    let huge = "x".repeat(100 * 1024);
    for (tool, arguments) in [
        ("list_directory", json!({"path": huge})),
        ("file_info", json!({"path": huge})),
        ("read_text", json!({"path": huge})),
        ("count_lines", json!({"path": huge})),
        ("find", json!({"path": huge})),
        ("analyze_project", json!({"path": huge})),
        (
            "analyze_dataset",
            json!({"path": huge, "analysisType": "correlation"}),
        ),
    ] {
        let response = peer.call(MODERN, tool, arguments).await;
        assert!(
            is_error(&response["result"]),
            "{tool}: {}",
            common::excerpt(&response.to_string(), 300)
        );
        let size = response.to_string().len();
        assert!(size < 2048, "{tool}: a {size}-byte answer echoes the path");
    }
    // A huge glob is refused before it is parsed, naming the limit.
    let response = peer.call(MODERN, "find", json!({"glob": huge})).await;
    assert!(
        is_error(&response["result"]),
        "{}",
        common::excerpt(&response.to_string(), 300)
    );
    let text = text_of(&response["result"]);
    assert!(text.contains("the limit is 1024 bytes"), "{text}");
    let size = response.to_string().len();
    assert!(size < 2048, "find: a {size}-byte answer echoes the glob");
}

/// `..`, absolute paths and symbolic links that lead outside the root are
/// all refused, and nothing outside is ever read.
#[tokio::test]
async fn paths_outside_the_root_are_refused() {
    let (fixture, mut peer, _schemas) = open().await;
    let outside = fixture.outside().join("secret.txt");
    let outside = outside.to_str().unwrap();
    let mut escapes: Vec<(&str, Value)> = vec![
        ("list_directory", json!({"path": ".."})),
        ("list_directory", json!({"path": "../outside"})),
        ("list_directory", json!({"path": "/"})),
        ("list_directory", json!({"path": "src/../.."})),
        ("read_text", json!({"path": "/etc/passwd"})),
        ("read_text", json!({"path": "../outside/secret.txt"})),
        ("read_text", json!({"path": "src/../../outside/secret.txt"})),
        ("read_text", json!({"path": outside})),
        ("file_info", json!({"path": ".."})),
        ("file_info", json!({"path": "/etc/passwd"})),
        ("count_lines", json!({"path": "../outside/secret.txt"})),
        ("count_lines", json!({"path": "/etc/passwd"})),
        ("find", json!({"path": "../outside/secret.txt"})),
        ("find", json!({"glob": "../**"})),
        ("find", json!({"glob": "/etc/*"})),
        ("analyze_project", json!({"path": ".."})),
        (
            "analyze_dataset",
            json!({"path": "../outside/secret.txt", "analysisType": "descriptive"}),
        ),
    ];
    if cfg!(unix) {
        escapes.extend([
            ("read_text", json!({"path": "link_out"})),
            ("read_text", json!({"path": "dir_out/secret.txt"})),
            ("list_directory", json!({"path": "dir_out"})),
            ("file_info", json!({"path": "link_out"})),
            ("file_info", json!({"path": "dir_out"})),
            ("count_lines", json!({"path": "link_out"})),
            ("find", json!({"path": "dir_out/secret.txt"})),
            ("find", json!({"glob": "dir_out/**"})),
            ("analyze_project", json!({"path": "dir_out"})),
            (
                "analyze_dataset",
                json!({"path": "link_out", "analysisType": "descriptive"}),
            ),
        ]);
    }
    for (tool, arguments) in escapes {
        let response = peer.call(MODERN, tool, arguments.clone()).await;
        assert!(
            is_error(&response["result"]),
            "{tool} {arguments} escaped: {response}"
        );
        let text = text_of(&response["result"]);
        assert!(
            text.contains("outside the workspace root"),
            "{tool} {arguments}: {text}"
        );
        assert!(
            !response.to_string().contains(SECRET),
            "{tool} {arguments} leaked: {response}"
        );
    }
    // A link that stays inside is followed.
    if cfg!(unix) {
        let result = peer
            .call_result(MODERN, "read_text", json!({"path": "link_in"}))
            .await;
        assert_eq!(text_of(&result), fixture::LIB_RS);
    }
}

#[tokio::test]
async fn binary_files_are_refused_clearly() {
    let (_fixture, mut peer, _schemas) = open().await;
    for tool in ["read_text", "count_lines"] {
        let message = failure(&mut peer, tool, json!({"path": "data/blob.bin"})).await;
        assert!(
            message.contains("binary") && message.contains("data/blob.bin"),
            "{tool}: {message}"
        );
    }
    let message = failure(
        &mut peer,
        "analyze_dataset",
        json!({"path": "data/blob.bin", "analysisType": "descriptive"}),
    )
    .await;
    assert!(message.contains("data/blob.bin"), "{message}");
}
