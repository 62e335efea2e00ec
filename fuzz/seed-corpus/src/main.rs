//! Builds each fuzz target's seed corpus from the repository's test vectors:
//! the MCP 2026-07-28 wire examples and schema.json files
//! (`testdata/mcp`), and the JSON-Schema-Test-Suite
//! (`testdata/json-schema-test-suite`), plus a few hand-written sessions,
//! headers and paths.
//!
//! ```text
//! cargo run --manifest-path fuzz/Cargo.toml -p toolshape-fuzz-seeds -- <repository> <corpus folder>
//! ```
//!
//! Each seed is written as `<corpus folder>/<target>/seed-<hash>`; running it
//! again writes the same files. It fails when the test vectors are missing.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use serde_json::{Value, json};

/// The request methods `request_params` picks from, in its order.
const REQUESTS: [&str; 8] = [
    "initialize",
    "server/discover",
    "ping",
    "tools/list",
    "tools/call",
    "logging/setLevel",
    "subscriptions/listen",
    "unknown/method",
];

/// Its notification methods, after the requests.
const NOTIFICATIONS: [&str; 9] = [
    "notifications/initialized",
    "notifications/cancelled",
    "notifications/progress",
    "notifications/tools/list_changed",
    "notifications/message",
    "notifications/resources/updated",
    "notifications/resources/list_changed",
    "notifications/prompts/list_changed",
    "notifications/subscriptions/acknowledged",
];

const REVISIONS: [&str; 5] = [
    "2024-11-05",
    "2025-03-26",
    "2025-06-18",
    "2025-11-25",
    "2026-07-28",
];

/// The drafts of the test suite used.
const DRAFTS: [&str; 3] = ["draft2020-12", "draft2019-09", "draft7"];

/// Seeds per target, deduplicated.
#[derive(Default)]
struct Corpus {
    seeds: BTreeMap<&'static str, BTreeMap<u64, Vec<u8>>>,
}

/// FNV-1a: a stable name for a seed.
fn hash(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(*byte)).wrapping_mul(0x0100_0000_01b3)
    })
}

impl Corpus {
    fn add(&mut self, target: &'static str, seed: impl Into<Vec<u8>>) {
        let seed = seed.into();
        self.seeds
            .entry(target)
            .or_default()
            .insert(hash(&seed), seed);
    }

    fn write(&self, folder: &Path) -> std::io::Result<()> {
        for (target, seeds) in &self.seeds {
            let dir = folder.join(target);
            fs::create_dir_all(&dir)?;
            for (hash, seed) in seeds {
                fs::write(dir.join(format!("seed-{hash:016x}")), seed)?;
            }
            println!("{target}: {} seeds", seeds.len());
        }
        Ok(())
    }
}

fn json_files(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let entries =
            fs::read_dir(&dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
        for entry in entries {
            let path = entry.map_err(|e| e.to_string())?.path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|ext| ext == "json") {
                found.push(path);
            }
        }
    }
    found.sort();
    Ok(found)
}

fn read_json(path: &Path) -> Result<(Vec<u8>, Value), String> {
    let bytes = fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let value = serde_json::from_slice(&bytes)
        .map_err(|e| format!("{} is not JSON: {e}", path.display()))?;
    Ok((bytes, value))
}

fn line(message: &Value) -> String {
    format!("{message}\n")
}

fn initialize(revision: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": revision, "capabilities": {},
        "clientInfo": {"name": "seed", "version": "0"}}})
}

fn modern_meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "seed", "version": "0"}
    })
}

/// The calls a session makes to the fuzz server's tools.
fn calls() -> Vec<(&'static str, Value)> {
    vec![
        ("echo", json!({"a": [1, 2, {"b": null}]})),
        ("double", json!({"n": 21})),
        ("double", json!({"n": -1})),
        (
            "header",
            json!({"region": "café", "count": 3, "flag": true}),
        ),
        ("fail", json!({})),
        ("bad", json!({})),
        ("slow", json!({})),
        ("missing", json!({})),
    ]
}

/// Whole stdio sessions, one per revision.
fn sessions(corpus: &mut Corpus) {
    for revision in REVISIONS {
        let modern = revision == "2026-07-28";
        let meta = |params: Value| {
            let mut params = params;
            if modern {
                params["_meta"] = modern_meta();
            }
            params
        };
        let mut text = String::new();
        if modern {
            text.push_str(&line(&json!({"jsonrpc": "2.0", "id": "d", "method": "server/discover", "params": meta(json!({}))})));
        } else {
            text.push_str(&line(&initialize(revision)));
            text.push_str(&line(
                &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            ));
            text.push_str(&line(
                &json!({"jsonrpc": "2.0", "id": "p", "method": "ping"}),
            ));
        }
        text.push_str(&line(
            &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": meta(json!({}))}),
        ));
        text.push_str(&line(&json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": meta(json!({"cursor": "bad"}))})));
        for (i, (tool, arguments)) in calls().into_iter().enumerate() {
            let params = meta(json!({"name": tool, "arguments": arguments}));
            text.push_str(&line(
                &json!({"jsonrpc": "2.0", "id": 10 + i, "method": "tools/call", "params": params}),
            ));
        }
        text.push_str(&line(&json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 16}})));
        text.push_str("{not json\r\n\n   \n[1,2]\n");
        text.push_str(&line(&json!({"jsonrpc": "2.0", "id": 99, "result": {}})));
        corpus.add("stdio_frames", text.clone());
        corpus.add(
            "jsonrpc_classify",
            text.lines().next().unwrap_or_default().to_owned(),
        );
    }
    // A line over the limit, with its id first and last.
    let pad = "x".repeat(3000);
    corpus.add(
        "stdio_frames",
        format!("{{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\",\"params\":{{\"p\":\"{pad}\"}}}}\n{{\"params\":{{\"p\":\"{pad}\"}},\"id\":8}}\n"),
    );
}

fn examples(root: &Path, corpus: &mut Corpus) -> Result<(), String> {
    let dir = root.join("testdata/mcp/2026-07-28/examples");
    let files = json_files(&dir)?;
    if files.is_empty() {
        return Err(format!("no examples in {}", dir.display()));
    }
    let mut all_lines = String::new();
    for path in files {
        let (bytes, value) = read_json(&path)?;
        corpus.add("jsonrpc_classify", bytes);
        if value.get("jsonrpc").is_some() {
            corpus.add("jsonrpc_classify", value.to_string());
            corpus.add("stdio_frames", line(&value));
            all_lines.push_str(&line(&value));
        }
        if let (Some(method), Some(params)) = (
            value.get("method").and_then(Value::as_str),
            value.get("params"),
        ) {
            let selector = REQUESTS
                .iter()
                .chain(NOTIFICATIONS.iter())
                .position(|m| *m == method);
            if let Some(selector) = selector {
                for revision in 0..REVISIONS.len() {
                    let mut seed = vec![selector as u8, revision as u8];
                    seed.extend_from_slice(params.to_string().as_bytes());
                    corpus.add("request_params", seed);
                }
            }
            let version = params["_meta"]["io.modelcontextprotocol/protocolVersion"]
                .as_str()
                .unwrap_or("2026-07-28");
            let mut headers = json!({
                "host": "localhost",
                "content-type": "application/json",
                "accept": "application/json, text/event-stream",
                "mcp-protocol-version": version,
                "mcp-method": method,
            });
            if let Some(name) = params.get("name").and_then(Value::as_str) {
                headers["mcp-name"] = json!(name);
            }
            corpus.add("http_headers", json!([headers, value]).to_string());
        }
        for schema_key in ["inputSchema", "outputSchema"] {
            if let Some(schema) = value.get(schema_key) {
                corpus.add("schema_compile", schema.to_string());
            }
        }
    }
    corpus.add("stdio_frames", all_lines);
    Ok(())
}

fn hand_written(corpus: &mut Corpus) {
    // request_params: every method on every revision, with the fuzz server's tools.
    for (selector, method) in REQUESTS.iter().chain(NOTIFICATIONS.iter()).enumerate() {
        let params = match *method {
            "initialize" => {
                json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "s", "version": "1"}})
            }
            "tools/list" => json!({"cursor": "after:6563686f"}),
            "logging/setLevel" => json!({"level": "debug"}),
            "subscriptions/listen" => json!({"notifications": {"toolsListChanged": true}}),
            "notifications/cancelled" => json!({"requestId": 1, "reason": "r"}),
            "notifications/progress" => json!({"progressToken": "t", "progress": 0.5, "total": 1}),
            "notifications/message" => json!({"level": "info", "data": {"x": 1}}),
            _ => json!({}),
        };
        for revision in 0..REVISIONS.len() {
            let mut seed = vec![selector as u8, revision as u8];
            seed.extend_from_slice(params.to_string().as_bytes());
            corpus.add("request_params", seed);
        }
    }
    let tools_call = REQUESTS
        .iter()
        .position(|m| *m == "tools/call")
        .unwrap_or(4) as u8;
    for (tool, arguments) in calls() {
        for revision in 0..REVISIONS.len() {
            let mut seed = vec![tools_call, revision as u8];
            let params =
                json!({"name": tool, "arguments": arguments, "_meta": {"progressToken": 5}});
            seed.extend_from_slice(params.to_string().as_bytes());
            corpus.add("request_params", seed);
        }
    }
    // http_headers: sentinel values, x-mcp-header rules, header calls.
    for text in [
        "get_weather",
        "=?base64?Y2Fmw6k=?=",
        "=?base64?!!?=",
        " padded ",
        "=?base64??=",
        "caf\u{e9}",
    ] {
        corpus.add("http_headers", text);
    }
    let schema = json!({"type": "object", "properties": {
        "region": {"type": "string", "x-mcp-header": "Region"},
        "count": {"type": "integer", "x-mcp-header": "Count"},
        "flag": {"type": "boolean", "x-mcp-header": "Flag"}}});
    for arguments in [
        json!({"region": "café", "count": 3, "flag": true}),
        json!({"region": " =?base64?x?= ", "count": 12345678901234567890u64}),
        json!({"count": 1.5, "flag": null}),
    ] {
        corpus.add("http_headers", json!([schema, arguments]).to_string());
        let mut params = json!({"name": "header", "arguments": arguments});
        params["_meta"] = modern_meta();
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params});
        let headers = json!({
            "host": "127.0.0.1:8080",
            "mcp-protocol-version": "2026-07-28",
            "mcp-method": "tools/call",
            "mcp-name": "header",
            "mcp-param-region": "=?base64?Y2Fmw6k=?=",
            "mcp-param-count": "3",
            "mcp-param-flag": "true",
        });
        corpus.add("http_headers", json!([headers, body]).to_string());
    }
    let legacy = json!([{"content-type": "application/json", "mcp-protocol-version": "2025-11-25"},
        initialize("2025-11-25")]);
    corpus.add("http_headers", legacy.to_string());
    corpus.add(
        "http_headers",
        json!([{"origin": "http://evil.example", "host": "evil.example"}, "{\"jsonrpc\":\"2.0\""])
            .to_string(),
    );
    // otc_call: both envelopes, both input spellings, every tool, bad versions.
    for (tool, input) in [
        ("Tools.double", json!({"n": 21})),
        ("Tools.double@1", json!({"n": 1001})),
        ("Tools.double@1.0.0", json!({"n": "x"})),
        ("Tools.echo", json!({"any": [1, 2]})),
        ("Tools.fail", json!({})),
        ("Tools.bad", json!({})),
        ("Tools.slow", json!({})),
        ("Tools.missing", json!({})),
        ("double", json!({"n": 2})),
    ] {
        corpus.add(
            "otc_call",
            json!({"$schema": "urn:oxp:1.0", "request": {"tool_id": tool, "call_id": "c-1", "input": input}}).to_string(),
        );
        corpus.add(
            "otc_call",
            json!({"tool_id": tool, "inputs": input}).to_string(),
        );
    }
    corpus.add(
        "otc_call",
        json!({"$schema": "otc://2.0", "tool_id": "Tools.echo", "input": {}}).to_string(),
    );
    corpus.add("otc_call", "{\"request\": 7}".to_owned());
    // workspace_paths: every tool on paths in, out and across links.
    for path in [
        ".",
        "",
        "a.txt",
        "sub",
        "sub/b.csv",
        "sub/deep/c.md",
        "Cargo.toml",
        "link_out",
        "link_out/x",
        "link_secret",
        "sub/link_up",
        "sub/link_up/outside",
        "link_abs",
        "loop",
        "link_in/b.csv",
        "../outside",
        "/etc/passwd",
        "sub/../a.txt",
        "**/*",
        "**",
        "*.txt",
        "link_*/**",
        "sub/**/*.csv",
        "./././a.txt",
        "a.txt/..",
        "sub/deep/../../link_out",
        "{a,link_out}/**",
        "[!a]*/**/*",
    ] {
        for tool in 0..9u8 {
            let mut seed = vec![tool];
            seed.extend_from_slice(path.as_bytes());
            corpus.add("workspace_paths", seed);
        }
    }
    // schema targets: the wrapping's corners (pointers, ids, old dialects).
    for pair in [
        json!([{"type": "array", "items": {"$ref": "#/$defs/e"}, "$defs": {"e": {"type": "integer"}}}, [1, 2]]),
        json!([{"$schema": "http://json-schema.org/draft-04/schema#", "id": "http://x.example/s", "definitions": {"a": {"type": "string"}}, "$ref": "#/definitions/a"}, "s"]),
        json!([{"$schema": "https://json-schema.org/draft/2019-09/schema", "$recursiveAnchor": true, "type": ["integer", "array"], "items": {"$recursiveRef": "#"}}, [1, [2]]]),
        json!([{"$dynamicAnchor": "n", "type": ["integer", "array"], "items": {"$dynamicRef": "#n"}}, [1, [2, "x"]]]),
        json!([{"$id": "http://x.example/root", "$defs": {"a": {"type": "null"}}, "$ref": "#/$defs/a"}, null]),
        json!([true, 1]),
        json!([false, 1]),
        json!([{"anyOf": [{"$ref": "#"}, {"type": "string"}]}, "x"]),
    ] {
        corpus.add("wrap_output_schema", pair.to_string());
        corpus.add("schema_validate", pair.to_string());
        corpus.add("schema_compile", pair[0].to_string());
    }
}

fn schemas(root: &Path, corpus: &mut Corpus) -> Result<(), String> {
    let suite = root.join("testdata/json-schema-test-suite");
    for draft in DRAFTS {
        let files = json_files(&suite.join("tests").join(draft))?;
        if files.is_empty() {
            return Err(format!("no tests for {draft} in {}", suite.display()));
        }
        for path in files {
            let (_, groups) = read_json(&path)?;
            for group in groups.as_array().into_iter().flatten() {
                let schema = &group["schema"];
                corpus.add("schema_compile", schema.to_string());
                // One valid and one invalid instance per group keeps the
                // corpora small enough to replay in a brief run.
                let mut seen = (false, false);
                for test in group["tests"].as_array().into_iter().flatten() {
                    let valid = test["valid"].as_bool().unwrap_or(false);
                    let slot = if valid { &mut seen.0 } else { &mut seen.1 };
                    if *slot {
                        continue;
                    }
                    *slot = true;
                    let pair = json!([schema, test["data"]]).to_string();
                    corpus.add("schema_validate", pair.clone());
                    corpus.add("wrap_output_schema", pair);
                }
            }
        }
    }
    for path in json_files(&suite.join("remotes"))? {
        let (bytes, _) = read_json(&path)?;
        corpus.add("schema_compile", bytes);
    }
    for revision in ["2025-06-18", "2025-11-25", "2026-07-28"] {
        let path = root.join("testdata/mcp").join(revision).join("schema.json");
        let (_, document) = read_json(&path)?;
        let definitions = document
            .get("$defs")
            .or_else(|| document.get("definitions"))
            .and_then(Value::as_object)
            .ok_or_else(|| format!("{} has no definitions", path.display()))?;
        for definition in definitions.values() {
            corpus.add("schema_compile", definition.to_string());
        }
    }
    Ok(())
}

fn run() -> Result<(), String> {
    let mut args = std::env::args_os().skip(1);
    let (Some(root), Some(out)) = (args.next(), args.next()) else {
        return Err("usage: toolshape-fuzz-seeds <repository> <corpus folder>".into());
    };
    let (root, out) = (PathBuf::from(root), PathBuf::from(out));
    let mut corpus = Corpus::default();
    examples(&root, &mut corpus)?;
    schemas(&root, &mut corpus)?;
    sessions(&mut corpus);
    hand_written(&mut corpus);
    corpus
        .write(&out)
        .map_err(|e| format!("cannot write the corpus under {}: {e}", out.display()))
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("toolshape-fuzz-seeds: {error}");
            ExitCode::FAILURE
        }
    }
}
