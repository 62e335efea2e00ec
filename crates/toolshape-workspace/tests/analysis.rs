//! `analyze_project` and `analyze_dataset` on small known inputs.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::{Fixture, validated};
use toolshape_workspace::{
    AnalysisType, AnalyzeDatasetInput, AnalyzeProjectInput, DatasetAnalysis, ProjectAnalysis,
    WorkspaceError,
};

const DATASET: &str = "\
id,x,y,z,label,w,k
1,1,2,5,a,10,7
2,2,4,3,b,,7
3,3,6,4,c,NA,7
4,4,8,1,d,20,7
5,5,10,2,e,30,7
";

fn close(actual: f64, expected: f64) -> bool {
    (actual - expected).abs() < 1e-9
}

fn dataset(
    fx: &Fixture,
    path: &str,
    kind: AnalysisType,
) -> Result<DatasetAnalysis, WorkspaceError> {
    fx.ws.analyze_dataset(AnalyzeDatasetInput {
        path: path.into(),
        analysis_type: kind,
    })
}

#[test]
fn descriptive_statistics_are_right() {
    let fx = Fixture::new();
    fx.write("data/known.csv", DATASET);
    let out = dataset(&fx, "data/known.csv", AnalysisType::Descriptive).unwrap();
    let json = validated::<DatasetAnalysis>(&out);
    assert_eq!(json["analysisType"], "descriptive");
    assert!(json.get("correlations").is_none());
    assert_eq!(json["summary"]["totalRows"], 5);
    assert_eq!(json["summary"]["totalColumns"], 7);
    assert_eq!(json["summary"]["missingValues"], 2);
    let stats = out.statistics.unwrap();
    let names: Vec<_> = stats.keys().map(String::as_str).collect();
    assert_eq!(
        names,
        ["id", "k", "w", "x", "y", "z"],
        "label is not numeric"
    );
    let x = &stats["x"];
    assert_eq!((x.count, x.min, x.max), (5, 1.0, 5.0));
    assert!(close(x.mean, 3.0) && close(x.median, 3.0));
    assert!(close(x.standard_deviation, 1.581_138_830_084_189_8));
    let y = &stats["y"];
    assert!(close(y.mean, 6.0) && close(y.standard_deviation, 3.162_277_660_168_379_5));
    let w = &stats["w"];
    assert_eq!(w.count, 3);
    assert!(close(w.mean, 20.0) && close(w.median, 20.0) && close(w.standard_deviation, 10.0));
    let k = &stats["k"];
    assert!(close(k.standard_deviation, 0.0) && close(k.mean, 7.0));
}

#[test]
fn correlations_are_right() {
    let fx = Fixture::new();
    fx.write("known.csv", DATASET);
    let out = dataset(&fx, "known.csv", AnalysisType::Correlation).unwrap();
    let json = validated::<DatasetAnalysis>(&out);
    assert!(json.get("statistics").is_none());
    let found: Vec<(&str, &str, f64)> = out
        .correlations
        .as_ref()
        .unwrap()
        .iter()
        .map(|c| (c.variable1.as_str(), c.variable2.as_str(), c.coefficient))
        .collect();
    let expected = [
        ("id", "x", 1.0),
        ("id", "y", 1.0),
        ("id", "z", -0.8),
        ("id", "w", 0.960_768_922_830_522_7),
        ("x", "y", 1.0),
        ("x", "z", -0.8),
        ("x", "w", 0.960_768_922_830_522_7),
        ("y", "z", -0.8),
        ("y", "w", 0.960_768_922_830_522_7),
        ("z", "w", -0.720_576_692_122_892),
    ];
    assert_eq!(found.len(), expected.len(), "{found:?}");
    for ((a, b, r), (ea, eb, er)) in found.iter().zip(expected) {
        assert_eq!((*a, *b), (ea, eb));
        assert!(close(*r, er), "{a}/{b}: {r} != {er}");
    }
}

#[test]
fn datasets_never_emit_non_finite_numbers() {
    let fx = Fixture::new();
    fx.write(
        "edge.csv",
        "big,tiny,inf,one,spread\n1e308,1e-308,inf,1,1.7e308\n1e308,-1e-308,1,,-1.7e308\nnan,0,2,,\n",
    );
    for kind in [AnalysisType::Descriptive, AnalysisType::Correlation] {
        let out = dataset(&fx, "edge.csv", kind).unwrap();
        let json = validated::<DatasetAnalysis>(&out);
        let text = serde_json::to_string(&json).unwrap();
        assert!(!text.contains("null"), "{text}");
        if kind == AnalysisType::Descriptive {
            let stats = out.statistics.unwrap();
            // Running means do not overflow where a sum would ...
            assert_eq!(stats["big"].mean, 1e308);
            assert_eq!(stats["big"].standard_deviation, 0.0);
            // ... but a spread wider than f64 is left out.
            assert!(!stats.contains_key("spread"), "the deviation overflows");
            assert!(!stats.contains_key("inf"), "`inf` is not a number here");
            assert_eq!(stats["one"].count, 1);
            assert_eq!(stats["one"].standard_deviation, 0.0);
        }
    }
}

#[test]
fn bad_datasets_are_refused_clearly() {
    let fx = Fixture::new();
    fx.write("empty.csv", "");
    fx.write("long_row.csv", "a,b\n1,2\n3,4,5\n");
    fx.write("dup.csv", "a,a\n1,2\n");
    fx.write("bin.csv", b"a,b\n\x00\x01,2\n");
    fx.write("latin1.csv", b"name\ncaf\xe9\n");
    let refuse = |path: &str| dataset(&fx, path, AnalysisType::Descriptive).unwrap_err();
    let err = refuse("empty.csv");
    assert!(
        matches!(err, WorkspaceError::InvalidCsv { line: 1, .. }),
        "{err}"
    );
    let err = refuse("long_row.csv");
    assert_eq!(
        err.to_string(),
        "invalid CSV at line 3: the row has 3 fields but the header names 2 columns"
    );
    assert!(matches!(
        refuse("dup.csv"),
        WorkspaceError::InvalidCsv { .. }
    ));
    assert!(matches!(refuse("bin.csv"), WorkspaceError::Binary { .. }));
    assert!(matches!(
        refuse("latin1.csv"),
        WorkspaceError::Binary { .. }
    ));
    fx.write("header_only.csv", "a,b\n");
    let out = dataset(&fx, "header_only.csv", AnalysisType::Correlation).unwrap();
    validated::<DatasetAnalysis>(&out);
    assert_eq!(out.summary.total_rows, 0);
    assert_eq!(out.correlations.map(|c| c.len()), Some(0));
}

#[test]
fn wide_correlations_are_refused() {
    let fx = Fixture::new();
    let header: Vec<String> = (0..51).map(|i| format!("c{i}")).collect();
    let row: Vec<String> = (0..51).map(|i| i.to_string()).collect();
    fx.write(
        "wide.csv",
        format!("{}\n{}\n", header.join(","), row.join(",")),
    );
    let err = dataset(&fx, "wide.csv", AnalysisType::Correlation).unwrap_err();
    assert!(
        matches!(err, WorkspaceError::TooMany { limit: 50, .. }),
        "{err}"
    );
    assert!(dataset(&fx, "wide.csv", AnalysisType::Descriptive).is_ok());
}

#[test]
fn rust_project_is_summarised() {
    let fx = Fixture::new();
    fx.write(
        "Cargo.toml",
        "[package]\nname = \"demo\"\nversion = \"0.3.1\"\n\n[dependencies]\nserde = \"1\"\nregex = \"1\"\n\n[dev-dependencies]\ntempfile = \"3\"\n",
    );
    fx.write("src/lib.rs", "pub mod a;\n\npub fn f() {}\n");
    fx.write("src/a.rs", "// a\n");
    fx.write("src/b.rs", "fn b() {}");
    fx.write("README.md", "# demo\n\nhello\n");
    fx.write("target/debug/junk.rs", "fn junk() {}\n".repeat(50));
    fx.write(".git/hooks/x.sh", "echo\n");
    fx.write("node_modules/m/index.js", "x\n");
    fx.write("image.png", b"\x89PNG\x00");
    let out = fx
        .ws
        .analyze_project(AnalyzeProjectInput::default())
        .unwrap();
    let json = validated::<ProjectAnalysis>(&out);
    let project = &out.project;
    assert_eq!(project.name, "demo");
    assert_eq!(project.version.as_deref(), Some("0.3.1"));
    assert_eq!(project.dependencies.direct, ["regex", "serde"]);
    let languages: Vec<_> = project
        .languages
        .iter()
        .map(|l| (l.name.as_str(), l.file_count, l.percentage))
        .collect();
    assert_eq!(
        languages,
        [("Rust", 3, 60.0), ("Markdown", 1, 20.0), ("TOML", 1, 20.0)]
    );
    assert_eq!(project.metrics.lines_of_code, 3 + 1 + 1);
    assert_eq!(json["project"]["languages"][0]["fileCount"], 3);
    assert_eq!(json["project"]["metrics"]["linesOfCode"], 5);
}

#[test]
fn virtual_workspaces_node_and_bare_directories() {
    let fx = Fixture::new();
    fx.write(
        "ws/Cargo.toml",
        "[workspace]\nmembers = [\"a\"]\n[workspace.package]\nversion = \"2.0.0\"\n[workspace.dependencies]\nanyhow = \"1\"\n",
    );
    fx.write("ws/a/src/main.rs", "fn main() {}\n");
    fx.write("web/package.json", r#"{"name":"web","version":"1.0.0","dependencies":{"react":"18","zod":"3"},"devDependencies":{"vitest":"1"}}"#);
    fx.write("web/src/app.ts", "export {}\n");
    fx.write("web/src/util.js", "1\n2\n");
    fx.write("bare/notes.txt", "no language\n");
    let analyze = |path: &str| {
        let out = fx
            .ws
            .analyze_project(AnalyzeProjectInput {
                path: Some(path.into()),
            })
            .unwrap();
        validated::<ProjectAnalysis>(&out);
        out.project
    };
    let ws = analyze("ws");
    assert_eq!(
        (ws.name.as_str(), ws.version.as_deref()),
        ("ws", Some("2.0.0"))
    );
    assert_eq!(ws.dependencies.direct, ["anyhow"]);
    let web = analyze("web");
    assert_eq!(
        (web.name.as_str(), web.version.as_deref()),
        ("web", Some("1.0.0"))
    );
    assert_eq!(web.dependencies.direct, ["react", "zod"]);
    let total: f64 = web.languages.iter().map(|l| l.percentage).sum();
    assert!((total - 100.0).abs() < 0.1, "{total}");
    assert_eq!(web.metrics.lines_of_code, 3);
    let bare = analyze("bare");
    assert_eq!(bare.name, "bare");
    assert!(bare.version.is_none() && bare.languages.is_empty());
    let json = serde_json::to_value(&bare).unwrap();
    assert!(json.get("version").is_none());
    let err = fx
        .ws
        .analyze_project(AnalyzeProjectInput {
            path: Some("web/package.json".into()),
        })
        .unwrap_err();
    assert!(matches!(err, WorkspaceError::NotADirectory { .. }), "{err}");
}

#[cfg(unix)]
#[test]
fn manifests_linked_from_outside_are_ignored() {
    let fx = Fixture::new();
    std::fs::write(
        fx.outside().join("Cargo.toml"),
        "[package]\nname = \"stolen\"\n",
    )
    .unwrap();
    fx.symlink(fx.outside().join("Cargo.toml"), "Cargo.toml");
    let out = fx
        .ws
        .analyze_project(AnalyzeProjectInput::default())
        .unwrap();
    assert_eq!(out.project.name, "root");
}

/// Tiny deterministic generator (xorshift) for the robustness test.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

#[test]
fn arbitrary_csv_like_content_never_panics_and_always_fits_the_schema() {
    use toolshape_workspace::{CountLinesInput, FileInfo, FileInfoInput, ReadTextInput};
    let fx = Fixture::new();
    let pieces = [
        ",", "\n", "\r\n", "\"", "1", "-2.5", "1e308", "a", " ", "NA", "", "é", "\u{feff}", "\0",
        "\u{ff}", "nan", "inf", "x,y",
    ];
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for round in 0..300 {
        let len = rng.next() % 60;
        let text: String = (0..len)
            .map(|_| pieces[usize::try_from(rng.next() % pieces.len() as u64).unwrap()])
            .collect();
        let path = format!("r{round}.csv");
        fx.write(&path, &text);
        for kind in [AnalysisType::Descriptive, AnalysisType::Correlation] {
            if let Ok(out) = dataset(&fx, &path, kind) {
                validated::<DatasetAnalysis>(&out);
            }
        }
        let _ = fx.ws.read_text(ReadTextInput {
            path: path.clone(),
            max_bytes: Some(rng.next() % 70 + 1),
        });
        let _ = fx.ws.count_lines(CountLinesInput { path: path.clone() });
        let info = fx.ws.file_info(FileInfoInput { path }).unwrap();
        validated::<FileInfo>(&info);
    }
}
