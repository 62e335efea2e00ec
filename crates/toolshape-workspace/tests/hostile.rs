//! Files written to hurt the parsers: manifests and CSV files nested,
//! repeated or sized to exhaust the stack, memory or time. Every call must
//! come back (an answer or a clear error), quickly. A stack overflow would
//! abort this test binary.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::time::{Duration, Instant};

use common::{Fixture, validated};
use toolshape_workspace::limits::MANIFEST_MAX_BYTES;
use toolshape_workspace::{
    AnalysisType, AnalyzeDatasetInput, AnalyzeProjectInput, DatasetAnalysis, ProjectAnalysis,
};

/// Far more than any real file takes; a debug build on a loaded machine
/// still stays well below it.
const SLOW: Duration = Duration::from_secs(20);

fn manifest_sized(head: &str, unit: &str, tail: &str) -> String {
    let room = usize::try_from(MANIFEST_MAX_BYTES).unwrap() - head.len() - tail.len();
    format!("{head}{}{tail}", unit.repeat(room / unit.len()))
}

#[test]
fn deeply_nested_manifests_are_ignored_without_crashing() {
    let fx = Fixture::new();
    let cases = [
        ("Cargo.toml", manifest_sized("[package]\nname = ", "[", "")),
        (
            "Cargo.toml",
            manifest_sized("[dependencies]\nx = ", "{a=", ""),
        ),
        ("package.json", manifest_sized("", "[", "")),
        (
            "package.json",
            manifest_sized("{\"name\":\"web\",\"x\":", "{\"a\":", ""),
        ),
        (
            "package.json",
            manifest_sized("{\"dependencies\":{\"a\":", "[", ""),
        ),
        (
            "pyproject.toml",
            manifest_sized("[project]\ndependencies = ", "[", ""),
        ),
    ];
    for (round, (file, text)) in cases.iter().enumerate() {
        let dir = format!("p{round}");
        fx.write(&format!("{dir}/{file}"), text);
        let started = Instant::now();
        let out = fx
            .ws
            .analyze_project(AnalyzeProjectInput {
                path: Some(dir.clone()),
            })
            .unwrap();
        assert!(started.elapsed() < SLOW, "{file}: {:?}", started.elapsed());
        validated::<ProjectAnalysis>(&out);
        assert_eq!(
            out.project.name, dir,
            "{file}: not parsed, so the folder's name"
        );
    }
}

#[test]
fn manifests_full_of_keys_and_odd_types_still_parse() {
    let fx = Fixture::new();
    // Ten thousand dependencies, each a key.
    let deps: String = (0..10_000).map(|i| format!("d{i} = \"1\"\n")).collect();
    fx.write(
        "big/Cargo.toml",
        format!("[package]\nname = \"big\"\n[dependencies]\n{deps}"),
    );
    let out = fx
        .ws
        .analyze_project(AnalyzeProjectInput {
            path: Some("big".into()),
        })
        .unwrap();
    assert_eq!(out.project.name, "big");
    assert_eq!(out.project.dependencies.direct.len(), 10_000);
    // Fields of the wrong type are skipped, not fatal.
    fx.write(
        "odd/package.json",
        r#"{"name": 5, "version": ["1"], "dependencies": {"a": {"deep": [[[1]]]}, "b": "2"}, "other": [[[[{}]]]]}"#,
    );
    let out = fx
        .ws
        .analyze_project(AnalyzeProjectInput {
            path: Some("odd".into()),
        })
        .unwrap();
    assert_eq!(out.project.name, "odd");
    assert!(out.project.version.is_none());
    assert_eq!(out.project.dependencies.direct, ["a", "b"]);
    fx.write(
        "oddpy/pyproject.toml",
        "[project]\nname = 3\nversion = \"1.0\"\ndependencies = [\"x>=1\", 4, {a = 1}]\n",
    );
    let out = fx
        .ws
        .analyze_project(AnalyzeProjectInput {
            path: Some("oddpy".into()),
        })
        .unwrap();
    assert_eq!(out.project.version.as_deref(), Some("1.0"));
    assert_eq!(out.project.dependencies.direct, ["x"]);
}

#[test]
fn hostile_csv_files_are_answered_or_refused_quickly() {
    let fx = Fixture::new();
    let cases: Vec<(&str, String)> = vec![
        // One enormous quoted field spanning the whole file.
        (
            "quote.csv",
            format!("a\n\"{}\"\n", "x".repeat(4 * 1024 * 1024)),
        ),
        // Quotes opened and never closed.
        ("open.csv", format!("a,b\n1,\"{}", "2,3\n".repeat(100_000))),
        // The widest header allowed, then rows.
        (
            "wide.csv",
            format!(
                "{}\n{}\n",
                (0..1000)
                    .map(|i| format!("c{i}"))
                    .collect::<Vec<_>>()
                    .join(","),
                (0..1000)
                    .map(|i| i.to_string())
                    .collect::<Vec<_>>()
                    .join(",")
            ),
        ),
        // Numbers that overflow, underflow and hide in odd notations.
        (
            "numbers.csv",
            "a,b\n1e308,1e-320\n1e308,-0\n-1e308,0x10\n".to_owned(),
        ),
    ];
    for (name, text) in cases {
        fx.write(name, &text);
        for kind in [AnalysisType::Descriptive, AnalysisType::Correlation] {
            let started = Instant::now();
            let result = fx.ws.analyze_dataset(AnalyzeDatasetInput {
                path: name.into(),
                analysis_type: kind,
            });
            assert!(started.elapsed() < SLOW, "{name}: {:?}", started.elapsed());
            match result {
                Ok(out) => {
                    validated::<DatasetAnalysis>(&out);
                }
                Err(err) => assert!(err.to_string().len() < 600, "{name}: {err}"),
            }
        }
    }
}
