//! Every tool refuses paths that leave the workspace root.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::Fixture;
use toolshape_workspace::{
    AnalysisType, AnalyzeDatasetInput, AnalyzeProjectInput, CountLinesInput, FileInfoInput,
    FindInput, ListDirectoryInput, ReadTextInput, WorkspaceError,
};

/// Calls every path-taking tool with `path` and returns the errors (or `None`
/// for a call that succeeded).
fn every_tool(fx: &Fixture, path: &str) -> Vec<(&'static str, Option<WorkspaceError>)> {
    let ws = &fx.ws;
    let path = path.to_owned();
    vec![
        (
            "list_directory",
            ws.list_directory(ListDirectoryInput { path: path.clone() })
                .err(),
        ),
        (
            "file_info",
            ws.file_info(FileInfoInput { path: path.clone() }).err(),
        ),
        (
            "read_text",
            ws.read_text(ReadTextInput {
                path: path.clone(),
                max_bytes: None,
            })
            .err(),
        ),
        (
            "count_lines",
            ws.count_lines(CountLinesInput { path: path.clone() }).err(),
        ),
        ("find path", ws.find(FindInput::Path(path.clone())).err()),
        (
            "find glob",
            ws.find(FindInput::Glob(format!("{path}/*"))).err(),
        ),
        (
            "analyze_project",
            ws.analyze_project(AnalyzeProjectInput {
                path: Some(path.clone()),
            })
            .err(),
        ),
        (
            "analyze_dataset",
            ws.analyze_dataset(AnalyzeDatasetInput {
                path,
                analysis_type: AnalysisType::Descriptive,
            })
            .err(),
        ),
    ]
}

fn assert_all_outside(fx: &Fixture, path: &str) {
    for (tool, err) in every_tool(fx, path) {
        if tool == "find path" && fx.root().join(path).is_symlink() {
            // `find` (like `list_directory`) reports a link as a link without
            // following it; see `find_path_reports_outside_links_unfollowed`.
            assert!(err.is_none(), "{tool} with {path:?} gave {err:?}");
            continue;
        }
        assert!(
            matches!(err, Some(WorkspaceError::OutsideRoot { .. })),
            "{tool} with {path:?} gave {err:?}"
        );
    }
}

#[test]
fn parent_segments_that_leave_the_root_are_refused() {
    let fx = Fixture::new();
    fx.mkdir("sub");
    for path in [
        "..",
        "../outside",
        "../outside/secret.txt",
        "sub/../..",
        "./sub/../../root",
    ] {
        assert_all_outside(&fx, path);
    }
}

#[test]
fn absolute_paths_are_refused_even_inside_the_root() {
    let fx = Fixture::new();
    fx.write("a.txt", "a\n");
    let inside = fx.root().join("a.txt");
    for path in ["/", "/etc/passwd", inside.to_str().unwrap()] {
        assert_all_outside(&fx, path);
    }
}

#[test]
fn parent_segments_that_stay_inside_are_fine() {
    let fx = Fixture::new();
    fx.write("sub/a.txt", "hello\n");
    let text = fx
        .ws
        .read_text(ReadTextInput {
            path: "sub/../sub/./a.txt".into(),
            max_bytes: None,
        })
        .unwrap();
    assert_eq!(text, "hello\n");
}

#[cfg(unix)]
#[test]
fn symlinks_to_etc_are_refused() {
    let fx = Fixture::new();
    fx.symlink("/etc", "etc");
    fx.symlink("/etc/passwd", "passwd");
    for path in ["etc", "etc/passwd", "passwd", "etc/does-not-exist"] {
        assert_all_outside(&fx, path);
    }
}

#[cfg(unix)]
#[test]
fn symlinks_to_a_sibling_directory_are_refused() {
    let fx = Fixture::new();
    // `outside` shares the root's parent, and a sibling whose name starts
    // with the root's name must not pass a string-prefix check.
    let lookalike = fx.dir.path().join("root2");
    std::fs::create_dir(&lookalike).unwrap();
    std::fs::write(lookalike.join("data.csv"), "a\n1\n").unwrap();
    fx.symlink(fx.outside(), "out");
    fx.symlink(fx.outside().join("secret.txt"), "secret");
    fx.symlink(&lookalike, "lookalike");
    fx.symlink("../outside/secret.txt", "relative");
    for path in [
        "out",
        "out/secret.txt",
        "secret",
        "lookalike",
        "lookalike/data.csv",
        "relative",
    ] {
        assert_all_outside(&fx, path);
    }
}

#[cfg(unix)]
#[test]
fn find_path_reports_outside_links_unfollowed() {
    use toolshape_workspace::EntryKind;
    let fx = Fixture::new();
    fx.symlink("/etc", "etc");
    let found = fx.ws.find(FindInput::Path("etc".into())).unwrap();
    assert_eq!(found.matches.len(), 1);
    assert_eq!(found.matches[0].kind, EntryKind::Symlink);
    assert_eq!(found.matches[0].path, "etc");
    let listed = fx
        .ws
        .list_directory(ListDirectoryInput { path: ".".into() })
        .unwrap();
    assert_eq!(listed[0].kind, EntryKind::Symlink);
}

#[cfg(unix)]
#[test]
fn missing_files_behind_an_outside_link_do_not_reveal_existence() {
    let fx = Fixture::new();
    fx.symlink(fx.outside(), "out");
    for path in ["out/secret.txt", "out/nope.txt"] {
        let err = fx
            .ws
            .file_info(FileInfoInput { path: path.into() })
            .unwrap_err();
        assert!(
            matches!(err, WorkspaceError::OutsideRoot { .. }),
            "{path}: {err}"
        );
    }
    let err = fx
        .ws
        .file_info(FileInfoInput {
            path: "nope.txt".into(),
        })
        .unwrap_err();
    assert!(matches!(err, WorkspaceError::NotFound { .. }), "{err}");
}

#[cfg(unix)]
#[test]
fn symlinks_inside_the_root_are_followed_for_reading() {
    let fx = Fixture::new();
    fx.write("real/file.txt", "one\ntwo\n");
    fx.symlink("real", "alias");
    fx.symlink("real/file.txt", "link.txt");
    let text = fx
        .ws
        .read_text(ReadTextInput {
            path: "alias/file.txt".into(),
            max_bytes: None,
        })
        .unwrap();
    assert_eq!(text, "one\ntwo\n");
    assert_eq!(
        fx.ws
            .count_lines(CountLinesInput {
                path: "link.txt".into()
            })
            .unwrap(),
        2
    );
    let listed = fx
        .ws
        .list_directory(ListDirectoryInput {
            path: "alias".into(),
        })
        .unwrap();
    assert_eq!(listed.len(), 1);
    let info = fx
        .ws
        .file_info(FileInfoInput {
            path: "link.txt".into(),
        })
        .unwrap();
    assert!(info.is_symlink);
    assert_eq!(info.resolved_path, "real/file.txt");
}

#[cfg(unix)]
#[test]
fn walks_never_follow_links_out_of_the_root() {
    let fx = Fixture::new();
    fx.write("src/main.rs", "fn main() {}\n");
    fx.symlink(fx.outside(), "out");
    std::fs::write(fx.outside().join("leak.rs"), "fn leak() {}\n".repeat(100)).unwrap();
    let found = fx.ws.find(FindInput::Glob("**/*".into())).unwrap();
    let paths: Vec<_> = found.matches.iter().map(|m| m.path.as_str()).collect();
    assert_eq!(paths, ["out", "src", "src/main.rs"]);
    let found = fx.ws.find(FindInput::Glob("**/*.rs".into())).unwrap();
    assert_eq!(found.matches.len(), 1);
    let project = fx
        .ws
        .analyze_project(AnalyzeProjectInput::default())
        .unwrap();
    assert_eq!(project.project.metrics.lines_of_code, 1);
}

#[cfg(unix)]
#[test]
fn symlink_loops_are_an_error_not_a_hang() {
    let fx = Fixture::new();
    fx.symlink("loop2", "loop1");
    fx.symlink("loop1", "loop2");
    let err = fx.ws.read_text(ReadTextInput {
        path: "loop1".into(),
        max_bytes: None,
    });
    assert!(err.is_err());
    let found = fx.ws.find(FindInput::Glob("**".into())).unwrap();
    assert_eq!(found.matches.len(), 2);
}

#[test]
fn huge_paths_are_not_echoed_in_full() {
    let fx = Fixture::new();
    let long = format!("../{}", "x".repeat(100_000));
    let message = fx
        .ws
        .read_text(ReadTextInput {
            path: long,
            max_bytes: None,
        })
        .unwrap_err()
        .to_string();
    assert!(message.len() < 600, "{}", message.len());
    let glob = "[".repeat(10_000);
    let message = fx.ws.find(FindInput::Glob(glob)).unwrap_err().to_string();
    assert!(message.len() < 600, "{}", message.len());
}

#[test]
fn nul_bytes_in_paths_are_refused() {
    let fx = Fixture::new();
    let err = fx
        .ws
        .file_info(FileInfoInput {
            path: "a\0b".into(),
        })
        .unwrap_err();
    assert!(matches!(err, WorkspaceError::InvalidPath { .. }), "{err}");
}
