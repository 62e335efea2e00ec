//! Runs the official JSON Schema test suite (draft2020-12, draft2019-09, draft7)
//! through the engine, offline: every file under `remotes/` is registered as a
//! document at `http://localhost:1234/<path>`.
//!
//! Known failures live in `tests/suite-skips.txt`, one per line:
//! `<dialect>/<file> | <group description> | <test description or *> | <reason>`.
//! The test fails when a required test fails without an entry, and when an
//! entry is stale: it matches no test, or every test it matches passes.
//!
//! Each dialect prints `<dialect>: N passed, M failed, K skipped` and
//! `<dialect>-format: N passed, M failed, K skipped` for `optional/format`.
//! A skipped test is one that fails and has an entry; a test that an entry
//! covers but that passes counts as passed. No other line starts with
//! `<dialect>:`. The harness captures the output of passing tests: run with
//! `-- --nocapture` (or `--show-output`) to see the counts.
#![allow(clippy::expect_used, clippy::panic)]

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde_json::Value;
use toolshape_schema::{Dialect, SchemaEngine};

const REMOTE_BASE: &str = "http://localhost:1234/";

fn suite_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/json-schema-test-suite")
}

fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("cannot parse {}: {e}", path.display()))
}

/// Every `.json` file below `dir`, as paths relative to `dir` with `/` separators, sorted.
fn json_files(dir: &Path) -> Vec<String> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) {
        let entries =
            std::fs::read_dir(dir).unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()));
        for entry in entries {
            let path = entry.expect("directory entry").path();
            if path.is_dir() {
                walk(root, &path, out);
            } else if path.extension().is_some_and(|ext| ext == "json") {
                let relative = path.strip_prefix(root).expect("below the root");
                let parts: Vec<String> = relative
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect();
                out.push(parts.join("/"));
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

/// The dialect a remote is in: that of its `remotes/<dialect>/` directory, or,
/// for the remotes outside any dialect directory (which the draft7 tests use),
/// that of the dialect under test. `None` for draft3, which the engine does not know.
fn remote_dialect<'a>(relative: &str, dialect_under_test: &'a str) -> Option<&'a str> {
    match relative.split('/').next() {
        Some("draft2020-12") => Some("https://json-schema.org/draft/2020-12/schema"),
        Some("draft2019-09") => Some("https://json-schema.org/draft/2019-09/schema"),
        Some("draft7") => Some("http://json-schema.org/draft-07/schema#"),
        Some("draft6") => Some("http://json-schema.org/draft-06/schema#"),
        Some("draft4") => Some("http://json-schema.org/draft-04/schema#"),
        Some("draft3" | "v1") => None,
        _ => Some(dialect_under_test),
    }
}

/// An engine with every remote registered, so that nothing touches the network.
///
/// A remote without `$schema` gets that of its directory, as a test schema
/// does: the engine reads a registered document without one as 2020-12, where
/// draft7's `"$id": "#foo"` would not be an anchor.
///
/// A remote whose `$schema` names a dialect the engine does not know is left
/// out (and named): registering it would make the engine refuse every compile,
/// by design. That is `remotes/v1/`, `$schema: "https://json-schema.org/v1"`,
/// which only the suite's `v1` tests use.
fn engine(dialect: &str, meta_schema: &str) -> SchemaEngine {
    let remotes = suite_root().join("remotes");
    let mut builder = SchemaEngine::builder();
    let mut left_out = Vec::new();
    for relative in json_files(&remotes) {
        let document = read_json(&remotes.join(&relative));
        if let Some(meta) = document.get("$schema").and_then(Value::as_str)
            && Dialect::from_uri(meta).is_none()
        {
            left_out.push(format!("remotes/{relative} ($schema {meta})"));
            continue;
        }
        let document = match remote_dialect(&relative, meta_schema) {
            Some(meta) => in_dialect(&document, meta),
            None => document,
        };
        builder = builder.document(format!("{REMOTE_BASE}{relative}"), document);
    }
    println!(
        "remotes for {dialect}: {} not registered (unknown dialect): {}",
        left_out.len(),
        left_out.join(", ")
    );
    assert!(
        left_out.iter().all(|r| r.starts_with("remotes/v1/")),
        "only the v1 remotes may be left out"
    );
    builder
        .try_build()
        .unwrap_or_else(|e| panic!("the remotes do not register: {e}"))
}

struct Skip {
    line: usize,
    file: String,
    group: String,
    test: String,
    reason: String,
    matched: usize,
    failed: usize,
}

impl Skip {
    fn covers(&self, file: &str, group: &str, test: &str) -> bool {
        self.file == file
            && (self.group == "*" || self.group == group)
            && (self.test == "*" || self.test == test)
    }
}

/// The entries of `suite-skips.txt` for `dialect`.
fn skips(dialect: &str) -> Vec<Skip> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/suite-skips.txt");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let prefix = format!("{dialect}/");
    let mut entries = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let fields: Vec<&str> = line.splitn(4, '|').map(str::trim).collect();
        assert!(
            fields.len() == 4 && fields.iter().all(|f| !f.is_empty()),
            "suite-skips.txt:{}: expected `<dialect>/<file> | <group> | <test or *> | <reason>`",
            index + 1
        );
        let Some(file) = fields[0].strip_prefix(&prefix) else {
            continue;
        };
        entries.push(Skip {
            line: index + 1,
            file: file.to_owned(),
            group: fields[1].to_owned(),
            test: fields[2].to_owned(),
            reason: fields[3].to_owned(),
            matched: 0,
            failed: 0,
        });
    }
    entries
}

#[derive(Default)]
struct Tally {
    passed: usize,
    failed: usize,
    skipped: usize,
    failures: Vec<String>,
}

impl Tally {
    fn line(&self, name: &str) -> String {
        format!(
            "{name}: {} passed, {} failed, {} skipped",
            self.passed, self.failed, self.skipped
        )
    }
}

/// The group's schema in the dialect of its directory: `$schema` is added when absent.
fn in_dialect(schema: &Value, meta_schema: &str) -> Value {
    match schema {
        Value::Object(map) if !map.contains_key("$schema") => {
            let mut map = map.clone();
            map.insert("$schema".into(), Value::String(meta_schema.into()));
            Value::Object(map)
        }
        // A boolean schema has no place for `$schema`, and a declared one stays.
        other => other.clone(),
    }
}

fn run_file(
    engine: &SchemaEngine,
    dialect_dir: &Path,
    file: &str,
    meta_schema: &str,
    skips: &mut [Skip],
    tally: &mut Tally,
) {
    let Value::Array(groups) = read_json(&dialect_dir.join(file)) else {
        panic!("{file}: not an array of test groups");
    };
    for group in &groups {
        let group_description = group["description"].as_str().expect("group description");
        let schema = in_dialect(&group["schema"], meta_schema);
        let compiled = engine.compile(&schema);
        for test in group["tests"].as_array().expect("tests") {
            let test_description = test["description"].as_str().expect("test description");
            let expected = test["valid"].as_bool().expect("valid");
            let outcome = match &compiled {
                Ok(compiled) => {
                    let result = compiled.validate(&test["data"]);
                    if result.is_ok() == expected {
                        Ok(())
                    } else {
                        match result {
                            Ok(()) => Err("valid, expected invalid".to_owned()),
                            Err(e) => Err(format!("invalid, expected valid: {e}")),
                        }
                    }
                }
                Err(e) => Err(format!("schema refused: {e}")),
            };
            let mut skipped = false;
            for skip in skips.iter_mut() {
                if skip.covers(file, group_description, test_description) {
                    skip.matched += 1;
                    if outcome.is_err() {
                        skip.failed += 1;
                        skipped = true;
                    }
                }
            }
            match outcome {
                Ok(()) => tally.passed += 1,
                Err(_) if skipped => tally.skipped += 1,
                Err(why) => {
                    tally.failed += 1;
                    tally.failures.push(format!(
                        "{file} | {group_description} | {test_description} | {why}"
                    ));
                }
            }
        }
    }
}

fn run_dialect(dialect: &str, meta_schema: &str) {
    let engine = engine(dialect, meta_schema);
    let dialect_dir = suite_root().join("tests").join(dialect);
    let mut skips = skips(dialect);

    let mut required = Tally::default();
    let mut files: Vec<String> = std::fs::read_dir(&dialect_dir)
        .expect("dialect directory")
        .filter_map(|entry| {
            let path = entry.ok()?.path();
            let name = path.file_name()?.to_str()?.to_owned();
            (path.is_file() && name.ends_with(".json")).then_some(name)
        })
        .collect();
    files.sort();
    assert!(
        !files.is_empty(),
        "no test files in {}",
        dialect_dir.display()
    );
    for file in &files {
        run_file(
            &engine,
            &dialect_dir,
            file,
            meta_schema,
            &mut skips,
            &mut required,
        );
    }

    let mut format = Tally::default();
    for file in json_files(&dialect_dir.join("optional/format")) {
        let file = format!("optional/format/{file}");
        run_file(
            &engine,
            &dialect_dir,
            &file,
            meta_schema,
            &mut skips,
            &mut format,
        );
    }

    println!("{}", required.line(dialect));
    println!("{}", format.line(&format!("{dialect}-format")));

    let mut problems = String::new();
    if !required.failures.is_empty() {
        let _ = writeln!(
            problems,
            "{dialect} required tests failing without a skip entry ({}):",
            required.failures.len()
        );
        for failure in &required.failures {
            let _ = writeln!(problems, "  {dialect}/{failure}");
        }
    }
    if !format.failures.is_empty() {
        // Optional: listed, but they do not fail the test.
        println!(
            "{dialect}-format optional tests failing without a skip entry ({}):",
            format.failures.len()
        );
        for failure in &format.failures {
            println!("  {dialect}/{failure}");
        }
    }
    let stale: BTreeSet<String> = skips
        .iter()
        .filter(|skip| skip.failed == 0)
        .map(|skip| {
            let why = if skip.matched == 0 {
                "matches no test"
            } else {
                "every test it matches passes"
            };
            format!(
                "  suite-skips.txt:{}: {dialect}/{} | {} | {} ({why}; reason was: {})",
                skip.line, skip.file, skip.group, skip.test, skip.reason
            )
        })
        .collect();
    if !stale.is_empty() {
        let _ = writeln!(problems, "{dialect} stale skip entries:");
        for line in stale {
            let _ = writeln!(problems, "{line}");
        }
    }
    assert!(problems.is_empty(), "\n{problems}");
}

#[test]
fn draft2020_12() {
    run_dialect(
        "draft2020-12",
        "https://json-schema.org/draft/2020-12/schema",
    );
}

#[test]
fn draft2019_09() {
    run_dialect(
        "draft2019-09",
        "https://json-schema.org/draft/2019-09/schema",
    );
}

#[test]
fn draft7() {
    run_dialect("draft7", "http://json-schema.org/draft-07/schema#");
}
