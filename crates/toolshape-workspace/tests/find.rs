//! `find`: both input forms, glob semantics, caps and refusals.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::{Fixture, validated};
use toolshape_workspace::limits::FIND_MAX_MATCHES;
use toolshape_workspace::{EntryKind, FindInput, FindOutput, WorkspaceError};

fn tree() -> Fixture {
    let fx = Fixture::new();
    fx.write("Cargo.toml", "[package]\nname = \"x\"\n");
    fx.write("src/lib.rs", "pub fn a() {}\n");
    fx.write("src/bin/main.rs", "fn main() {}\n");
    fx.write("src/notes.md", "# notes\n");
    fx.write("tests/it.rs", "#[test] fn t() {}\n");
    fx
}

fn paths(out: &FindOutput) -> Vec<&str> {
    out.matches.iter().map(|m| m.path.as_str()).collect()
}

fn glob(fx: &Fixture, pattern: &str) -> FindOutput {
    let out = fx.ws.find(FindInput::Glob(pattern.into())).unwrap();
    validated::<FindOutput>(&out);
    out
}

#[test]
fn input_deserialises_from_both_forms_and_nothing_else() {
    let by_path: FindInput = serde_json::from_str(r#"{"path": "src/lib.rs"}"#).unwrap();
    assert_eq!(by_path, FindInput::Path("src/lib.rs".into()));
    let by_glob: FindInput = serde_json::from_str(r#"{"glob": "**/*.rs"}"#).unwrap();
    assert_eq!(by_glob, FindInput::Glob("**/*.rs".into()));
    for bad in [
        "{}",
        r#"{"path": "a", "glob": "b"}"#,
        r#"{"name": "a"}"#,
        r#"{"path": 3}"#,
        r#""src""#,
        "[]",
    ] {
        assert!(
            serde_json::from_str::<FindInput>(bad).is_err(),
            "{bad} was accepted"
        );
    }
    assert_eq!(
        serde_json::to_string(&by_glob).unwrap(),
        r#"{"glob":"**/*.rs"}"#
    );
}

#[test]
fn path_form_finds_one_entry_or_none() {
    let fx = tree();
    let out = fx
        .ws
        .find(FindInput::Path("./src/../src/lib.rs".into()))
        .unwrap();
    validated::<FindOutput>(&out);
    assert_eq!(paths(&out), ["src/lib.rs"]);
    assert_eq!(out.matches[0].kind, EntryKind::File);
    assert_eq!(out.matches[0].size, 14);
    assert!(!out.truncated);
    let dir = fx.ws.find(FindInput::Path("src".into())).unwrap();
    assert_eq!(dir.matches[0].kind, EntryKind::Dir);
    let none = fx.ws.find(FindInput::Path("src/nope.rs".into())).unwrap();
    assert!(none.matches.is_empty() && !none.truncated);
    let none = fx.ws.find(FindInput::Path("nope/deeper/x".into())).unwrap();
    assert!(none.matches.is_empty());
}

#[test]
fn globs_match_relative_paths_segment_by_segment() {
    let fx = tree();
    assert_eq!(
        paths(&glob(&fx, "src/**/*.rs")),
        ["src/bin/main.rs", "src/lib.rs"]
    );
    assert_eq!(paths(&glob(&fx, "src/*.rs")), ["src/lib.rs"]);
    assert_eq!(paths(&glob(&fx, "*.rs")), Vec::<&str>::new());
    assert_eq!(
        paths(&glob(&fx, "**/*.rs")),
        ["src/bin/main.rs", "src/lib.rs", "tests/it.rs"]
    );
    assert_eq!(paths(&glob(&fx, "./*.toml")), ["Cargo.toml"]);
    assert_eq!(
        paths(&glob(&fx, "src/*")),
        ["src/bin", "src/lib.rs", "src/notes.md"]
    );
    assert_eq!(
        paths(&glob(&fx, "{src,tests}/*.{rs,md}")),
        ["src/lib.rs", "src/notes.md", "tests/it.rs"]
    );
    assert_eq!(paths(&glob(&fx, "Cargo.toml")), ["Cargo.toml"]);
    assert!(glob(&fx, "missing/**/*.rs").matches.is_empty());
    assert!(glob(&fx, "Cargo.toml/*").matches.is_empty());
}

/// A glob's segments read as a path's: `.` and empty segments left out, a
/// `..` taking the folder before it away (these matched nothing, or were
/// "outside the root"), and a trailing `/` matching folders only.
#[test]
fn globs_read_their_segments_as_paths_do() {
    let fx = tree();
    for written in ["src/./*.rs", "src//*.rs", "src/../src/*.rs", "./src/*.rs"] {
        assert_eq!(paths(&glob(&fx, written)), ["src/lib.rs"], "{written}");
    }
    assert_eq!(paths(&glob(&fx, "src/")), ["src"]);
    assert_eq!(paths(&glob(&fx, "src/*/")), ["src/bin"]);
    assert_eq!(paths(&glob(&fx, "src/*/.")), ["src/bin"]);
    // A path naming a folder there is not: no match, as for a missing one.
    let none = fx.ws.find(FindInput::Path("Cargo.toml/".into())).unwrap();
    assert!(none.matches.is_empty());
    assert_eq!(paths(&glob(&fx, "Cargo.toml/")), Vec::<&str>::new());
    let err = fx.ws.find(FindInput::Glob("*/../x".into())).unwrap_err();
    assert!(matches!(err, WorkspaceError::InvalidGlob { .. }), "{err}");
    // A lone backslash is a dangling escape, not a path outside the root.
    let err = fx.ws.find(FindInput::Glob("\\".into())).unwrap_err();
    assert!(matches!(err, WorkspaceError::InvalidGlob { .. }), "{err}");
}

#[test]
fn matches_are_capped_and_flagged() {
    let fx = Fixture::new();
    for i in 0..=FIND_MAX_MATCHES {
        fx.write(&format!("many/f{i:04}.txt"), "");
    }
    let out = glob(&fx, "many/*.txt");
    assert_eq!(out.matches.len(), FIND_MAX_MATCHES);
    assert!(out.truncated);
    assert_eq!(out.matches[0].path, "many/f0000.txt");
    let out = glob(&fx, "many/f000*.txt");
    assert_eq!(out.matches.len(), 10);
    assert!(!out.truncated);
}

#[test]
fn deep_trees_are_flagged_when_the_depth_bound_cuts_them() {
    let fx = Fixture::new();
    let deep = (0..40)
        .map(|i| format!("d{i}"))
        .collect::<Vec<_>>()
        .join("/");
    fx.write(&format!("{deep}/leaf.txt"), "");
    let out = glob(&fx, "**/leaf.txt");
    assert!(out.matches.is_empty());
    assert!(out.truncated);
}

/// A glob whose matches are all a fixed number of segments deep enters no
/// folder below that depth: a deep or huge folder beside the match (a
/// `node_modules`, a `.git`) neither hides it nor truncates the search.
#[test]
fn a_glob_of_fixed_depth_walks_no_deeper() {
    let fx = Fixture::new();
    let deep = (0..40)
        .map(|i| format!("d{i}"))
        .collect::<Vec<_>>()
        .join("/");
    fx.write(&format!("a_deep/{deep}/package.json"), "{}");
    fx.write("package.json", "{}");
    fx.write("src/x/package.json", "{}");
    for pattern in ["package.json", "*.json", "package.*"] {
        let out = glob(&fx, pattern);
        assert_eq!(paths(&out), ["package.json"], "{pattern}");
        assert!(!out.truncated, "{pattern}");
    }
    let out = glob(&fx, "src/*/package.json");
    assert_eq!(paths(&out), ["src/x/package.json"]);
    assert!(!out.truncated);
    // A class may match `/`: such a glob looks deeper.
    fx.write("a/b", "");
    let out = glob(&fx, "a[!x]b");
    assert!(paths(&out).contains(&"a/b"), "{out:?}");
    // `**` still walks everything (and is cut by the depth bound).
    let out = glob(&fx, "**/package.json");
    assert_eq!(paths(&out), ["package.json", "src/x/package.json"]);
    assert!(out.truncated);
}

#[test]
fn bad_globs_are_refused_clearly() {
    let fx = tree();
    let err = fx.ws.find(FindInput::Glob("src/[".into())).unwrap_err();
    assert!(matches!(err, WorkspaceError::InvalidGlob { .. }), "{err}");
    assert!(
        err.to_string().starts_with("invalid glob `src/[`: "),
        "{err}"
    );
    let err = fx.ws.find(FindInput::Glob(String::new())).unwrap_err();
    assert!(matches!(err, WorkspaceError::InvalidGlob { .. }), "{err}");
    for outside in ["/etc/*", "../*", "src/../../*"] {
        let err = fx.ws.find(FindInput::Glob(outside.into())).unwrap_err();
        assert!(
            matches!(err, WorkspaceError::OutsideRoot { .. }),
            "{outside}: {err}"
        );
    }
}
