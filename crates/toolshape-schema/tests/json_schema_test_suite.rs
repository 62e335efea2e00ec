//! Runs the official JSON Schema test suite (draft2020-12, draft2019-09, draft7)
//! through the engine, offline, from the copy the repository carries under
//! `testdata/json-schema-test-suite/` (its `SOURCE` names the upstream commit).
//! Every file under `remotes/` is registered as a document at
//! `http://localhost:1234/<path>`, so nothing is fetched.
//!
//! Three parts per dialect, each printed as one line
//! `<name>: N passed, M failed, 0 skipped` (no other line starts so):
//!
//! - `<dialect>`: the required tests, with the dialect's default configuration
//!   ([`FormatMode::DialectDefault`]: `format` an annotation in 2019-09 and
//!   2020-12). Every one must pass.
//! - `<dialect>-format`: `optional/format/`, with formats asserted
//!   ([`FormatMode::Assert`], the engine's default). Every one must pass.
//! - `<dialect>-optional`: the rest of `optional/`, with the default
//!   configuration. Every one must pass.
//!
//! Each dialect first prints a `suite <dialect>, ...` line, so that the count
//! lines start their lines even when the harness prints its progress dots.
//! Every instance is validated twice, as a `Value` and read from its JSON
//! text ([`InstanceText`]), and both must come out as the suite expects.
//! There is no skip list: a failing test fails the run, listed with why.
//! The harness captures the output of passing tests: run with
//! `-- --nocapture` (or `--show-output`) to see the counts.
#![allow(clippy::expect_used, clippy::panic)]

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde_json::Value;
use toolshape_schema::{FormatMode, InstanceText, SchemaEngine};

const REMOTE_BASE: &str = "http://localhost:1234/";

/// The suite's copy in the repository; a missing one fails with where it belongs.
fn suite_root() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/json-schema-test-suite");
    assert!(
        root.join("tests").is_dir() && root.join("remotes").is_dir(),
        "test data missing: {} must hold the JSON Schema test suite's tests/ and remotes/ \
         (the repository carries them; testdata/json-schema-test-suite/SOURCE names the upstream commit)",
        root.display()
    );
    root
}

fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("cannot parse {}: {e}", path.display()))
}

/// Every `.json` file below `dir` (not below `skip_dir`, a direct child),
/// as paths relative to `dir` with `/` separators, sorted.
fn json_files(dir: &Path, skip_dir: Option<&str>) -> Vec<String> {
    fn walk(root: &Path, dir: &Path, skip: Option<&Path>, out: &mut Vec<String>) {
        let entries =
            std::fs::read_dir(dir).unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()));
        for entry in entries {
            let path = entry.expect("directory entry").path();
            if path.is_dir() {
                if Some(path.as_path()) != skip {
                    walk(root, &path, skip, out);
                }
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
    let skip = skip_dir.map(|name| dir.join(name));
    let mut out = Vec::new();
    walk(dir, dir, skip.as_deref(), &mut out);
    out.sort();
    out
}

/// The meta-schema URI of a suite dialect directory.
fn meta_schema_of(dialect_dir: &str) -> Option<&'static str> {
    match dialect_dir {
        "draft2020-12" => Some("https://json-schema.org/draft/2020-12/schema"),
        "draft2019-09" => Some("https://json-schema.org/draft/2019-09/schema"),
        "draft7" => Some("http://json-schema.org/draft-07/schema#"),
        _ => None,
    }
}

/// `schema` in the dialect `meta_schema`: `$schema` is added when absent.
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

/// An engine with every remote registered, so that nothing touches the network.
///
/// A remote without `$schema` gets that of its `remotes/<dialect>/` directory,
/// or, outside any (the remotes the draft7 tests use), that of the dialect under
/// test: the engine reads a registered document without one as 2020-12, where
/// draft7's `"$id": "#foo"` would not be an anchor.
fn engine(meta_schema: &str, formats: FormatMode) -> SchemaEngine {
    let remotes = suite_root().join("remotes");
    let mut builder = SchemaEngine::builder().format_mode(formats);
    for relative in json_files(&remotes, None) {
        let document = read_json(&remotes.join(&relative));
        let directory = relative.split('/').next().unwrap_or_default();
        let meta = meta_schema_of(directory).unwrap_or(meta_schema);
        builder = builder.document(
            format!("{REMOTE_BASE}{relative}"),
            in_dialect(&document, meta),
        );
    }
    builder
        .try_build()
        .unwrap_or_else(|e| panic!("the remotes do not register: {e}"))
}

#[derive(Default)]
struct Tally {
    passed: usize,
    failures: Vec<String>,
}

impl Tally {
    fn line(&self, name: &str) -> String {
        format!(
            "{name}: {} passed, {} failed, 0 skipped",
            self.passed,
            self.failures.len()
        )
    }
}

/// Runs every group of `file` (relative to `dialect_dir`) against `engine`.
fn run_file(engine: &SchemaEngine, dialect_dir: &Path, file: &str, meta: &str, tally: &mut Tally) {
    let Value::Array(groups) = read_json(&dialect_dir.join(file)) else {
        panic!("{file}: not an array of test groups");
    };
    // `no-schema.json` checks what a schema without `$schema` means: it keeps none.
    let keep_as_is = file.ends_with("no-schema.json");
    for group in &groups {
        let group_description = group["description"].as_str().expect("group description");
        let schema = if keep_as_is {
            group["schema"].clone()
        } else {
            in_dialect(&group["schema"], meta)
        };
        let compiled = engine.compile(&schema);
        for test in group["tests"].as_array().expect("tests") {
            let test_description = test["description"].as_str().expect("test description");
            let expected = test["valid"].as_bool().expect("valid");
            // The instance as a `Value`, and read from its JSON text.
            let text = serde_json::to_string(&test["data"]).expect("serializes");
            let outcome = match &compiled {
                Ok(compiled) => match (
                    compiled.validate(&test["data"]),
                    InstanceText::parse(&text).map(|instance| compiled.validate_text(&instance)),
                ) {
                    (_, Err(e)) => Err(format!("its text does not read: {e}")),
                    (Ok(()), Ok(Ok(()))) if expected => Ok(()),
                    (Err(_), Ok(Err(_))) if !expected => Ok(()),
                    (Ok(()), Ok(Err(e))) => Err(format!("valid, but not read from text: {e}")),
                    (Err(_), Ok(Ok(()))) => Err("invalid, but valid read from text".to_owned()),
                    (Ok(()), _) => Err("valid, expected invalid".to_owned()),
                    (Err(e), _) => Err(format!("invalid, expected valid: {e}")),
                },
                Err(e) => Err(format!("schema refused: {e}")),
            };
            match outcome {
                Ok(()) => tally.passed += 1,
                Err(why) => tally.failures.push(format!(
                    "{file} | {group_description} | {test_description} | {why}"
                )),
            }
        }
    }
}

fn run_dialect(dialect: &str) {
    let meta = meta_schema_of(dialect).expect("a suite dialect");
    let dialect_dir = suite_root().join("tests").join(dialect);
    let by_default = engine(meta, FormatMode::DialectDefault);
    let asserting = engine(meta, FormatMode::Assert);
    // Also ends whatever the harness left on the current line.
    println!(
        "\nsuite {dialect}, from {} (see its SOURCE), remotes registered at {REMOTE_BASE}",
        suite_root().display()
    );

    let required_files: Vec<String> = json_files(&dialect_dir, Some("optional"));
    let optional_dir = dialect_dir.join("optional");
    let format_files: Vec<String> = json_files(&optional_dir.join("format"), None)
        .into_iter()
        .map(|file| format!("optional/format/{file}"))
        .collect();
    let optional_files: Vec<String> = json_files(&optional_dir, Some("format"))
        .into_iter()
        .map(|file| format!("optional/{file}"))
        .collect();

    let parts = [
        (dialect.to_owned(), &by_default, required_files),
        (format!("{dialect}-format"), &asserting, format_files),
        (format!("{dialect}-optional"), &by_default, optional_files),
    ];
    let mut problems = String::new();
    for (name, engine, files) in parts {
        assert!(
            !files.is_empty(),
            "test data missing: no {name} test files in {}",
            dialect_dir.display()
        );
        let mut tally = Tally::default();
        for file in &files {
            run_file(engine, &dialect_dir, file, meta, &mut tally);
        }
        println!("{}", tally.line(&name));
        if !tally.failures.is_empty() {
            let _ = writeln!(problems, "{name} failing ({}):", tally.failures.len());
            for failure in &tally.failures {
                let _ = writeln!(problems, "  {dialect}/{failure}");
            }
        }
    }
    assert!(problems.is_empty(), "\n{problems}");
}

#[test]
fn draft2020_12() {
    run_dialect("draft2020-12");
}

#[test]
fn draft2019_09() {
    run_dialect("draft2019-09");
}

#[test]
fn draft7() {
    run_dialect("draft7");
}
