//! `list_directory`, `file_info`, `read_text` and `count_lines` on valid and
//! refused input; every output is checked against its own schema.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::fs::File;

use common::{Fixture, validated};
use toolshape_workspace::limits::{DATASET_MAX_BYTES, TEXT_SCAN_MAX_BYTES};
use toolshape_workspace::{
    AnalysisType, AnalyzeDatasetInput, CountLinesInput, DirEntry, EntryKind, FileInfo,
    FileInfoInput, ListDirectoryInput, ReadTextInput, WorkspaceError,
};

fn read(fx: &Fixture, path: &str, max_bytes: Option<u64>) -> Result<String, WorkspaceError> {
    fx.ws.read_text(ReadTextInput {
        path: path.into(),
        max_bytes,
    })
}

fn lines(fx: &Fixture, path: &str) -> Result<u64, WorkspaceError> {
    fx.ws.count_lines(CountLinesInput { path: path.into() })
}

/// A file of `size` zero bytes that takes no disk space.
fn sparse(fx: &Fixture, rel: &str, size: u64) {
    let file = File::create(fx.root().join(rel)).unwrap();
    file.set_len(size).unwrap();
}

#[test]
fn workspaces_open_on_directories_only() {
    let fx = Fixture::new();
    let file = fx.write("a.txt", "a");
    assert!(toolshape_workspace::Workspace::open(&file).is_err());
    assert!(toolshape_workspace::Workspace::open(fx.root().join("nope")).is_err());
    let again = toolshape_workspace::Workspace::open(fx.root().join("../root")).unwrap();
    assert_eq!(again.root(), fx.ws.root());
}

#[test]
fn list_directory_sorts_and_describes_entries() {
    let fx = Fixture::new();
    fx.write("b.txt", "12345");
    fx.write("a.txt", "");
    fx.mkdir("c");
    #[cfg(unix)]
    fx.symlink("a.txt", "d-link");
    let entries = fx
        .ws
        .list_directory(ListDirectoryInput { path: ".".into() })
        .unwrap();
    let json = validated::<Vec<DirEntry>>(&entries);
    assert!(json.is_array());
    let names: Vec<_> = entries.iter().map(|e| e.name.as_str()).collect();
    #[cfg(unix)]
    assert_eq!(names, ["a.txt", "b.txt", "c", "d-link"]);
    assert_eq!(entries[1].kind, EntryKind::File);
    assert_eq!(entries[1].size, 5);
    assert_eq!(entries[2].kind, EntryKind::Dir);
    #[cfg(unix)]
    assert_eq!(entries[3].kind, EntryKind::Symlink);
    let modified = entries[0].modified.as_deref().unwrap();
    assert_eq!(modified.len(), "2026-11-21T20:17:44Z".len());
    assert!(
        modified.ends_with('Z') && modified.as_bytes()[10] == b'T',
        "{modified}"
    );
}

#[test]
fn list_directory_refuses_files_and_missing_paths() {
    let fx = Fixture::new();
    fx.write("a.txt", "a");
    let err = fx
        .ws
        .list_directory(ListDirectoryInput {
            path: "a.txt".into(),
        })
        .unwrap_err();
    assert!(matches!(err, WorkspaceError::NotADirectory { .. }), "{err}");
    let err = fx
        .ws
        .list_directory(ListDirectoryInput {
            path: "nope".into(),
        })
        .unwrap_err();
    assert!(matches!(err, WorkspaceError::NotFound { .. }), "{err}");
    assert_eq!(err.to_string(), "`nope` does not exist in the workspace");
}

#[test]
fn file_info_describes_text_files() {
    let fx = Fixture::new();
    fx.write("src/lib.rs", "line one\nline two\nthree");
    let info = fx
        .ws
        .file_info(FileInfoInput {
            path: "./src//lib.rs".into(),
        })
        .unwrap();
    let json = validated::<FileInfo>(&info);
    assert_eq!(info.path, "src/lib.rs");
    assert_eq!(info.resolved_path, "src/lib.rs");
    assert!(!info.is_symlink && !info.binary);
    assert_eq!(info.kind, EntryKind::File);
    assert_eq!(info.size, 23);
    let text = info.text.as_ref().unwrap();
    assert_eq!((text.lines, text.is_utf8), (3, true));
    assert!(info.directory.is_none());
    assert_eq!(json["text"]["isUtf8"], true);
    assert!(json["directory"].is_null());
    #[cfg(unix)]
    assert_eq!(info.permissions.mode.as_deref().map(str::len), Some(4));
}

#[test]
fn file_info_describes_directories_and_binaries() {
    let fx = Fixture::new();
    fx.write("d/one.txt", "1");
    fx.write("d/two.bin", b"\x00\x01\x02");
    fx.mkdir("d/sub");
    fx.write("latin1.txt", b"caf\xe9\n");
    let info = fx.ws.file_info(FileInfoInput { path: "d".into() }).unwrap();
    validated::<FileInfo>(&info);
    assert_eq!(info.kind, EntryKind::Dir);
    let dir = info.directory.unwrap();
    assert_eq!(
        (dir.entries, dir.files, dir.dirs, dir.symlinks),
        (3, 2, 1, 0)
    );
    assert!(info.text.is_none());
    let bin = fx
        .ws
        .file_info(FileInfoInput {
            path: "d/two.bin".into(),
        })
        .unwrap();
    validated::<FileInfo>(&bin);
    assert!(bin.binary && bin.text.is_none());
    let latin = fx
        .ws
        .file_info(FileInfoInput {
            path: "latin1.txt".into(),
        })
        .unwrap();
    assert_eq!(latin.text.map(|t| (t.lines, t.is_utf8)), Some((1, false)));
    let root = fx.ws.file_info(FileInfoInput { path: ".".into() }).unwrap();
    assert_eq!(
        (root.path.as_str(), root.resolved_path.as_str()),
        (".", ".")
    );
}

#[test]
fn read_text_returns_whole_small_files() {
    let fx = Fixture::new();
    fx.write("hello.txt", "héllo\nwörld\n");
    fx.write("empty.txt", "");
    assert_eq!(read(&fx, "hello.txt", None).unwrap(), "héllo\nwörld\n");
    assert_eq!(read(&fx, "empty.txt", None).unwrap(), "");
    assert_eq!(read(&fx, "hello.txt", Some(14)).unwrap(), "héllo\nwörld\n");
}

#[test]
fn read_text_truncates_on_a_char_boundary_and_says_so() {
    let fx = Fixture::new();
    // "é" is two bytes: a limit of 2 cuts it in half.
    fx.write("accents.txt", "aé".repeat(10));
    let text = read(&fx, "accents.txt", Some(2)).unwrap();
    assert_eq!(
        text,
        "a\n[truncated: showing the first 1 of 30 bytes; call read_text again with a larger \
         maxBytes (at most 1048576) to see more]"
    );
    let text = read(&fx, "accents.txt", Some(3)).unwrap();
    assert!(
        text.starts_with("aé\n[truncated: showing the first 3 of 30 bytes"),
        "{text}"
    );
    let big = "x".repeat(2 * 1024 * 1024);
    fx.write("big.txt", &big);
    let text = read(&fx, "big.txt", None).unwrap();
    assert!(text.starts_with(&big[..65_536]));
    assert!(text.ends_with("[truncated: showing the first 65536 of 2097152 bytes; call read_text again with a larger maxBytes (at most 1048576) to see more]"));
    let text = read(&fx, "big.txt", Some(u64::MAX)).unwrap();
    assert!(text.contains("showing the first 1048576 of 2097152 bytes; this tool returns at most"));
}

#[test]
fn read_text_refuses_binary_and_non_utf8_files() {
    let fx = Fixture::new();
    fx.write("nul.bin", b"abc\x00def");
    fx.write("latin1.txt", b"caf\xe9\n");
    let mut late_nul = vec![b'a'; 5000];
    late_nul.push(0);
    fx.write("late.bin", &late_nul);
    let err = read(&fx, "nul.bin", None).unwrap_err();
    assert_eq!(
        err.to_string(),
        "`nul.bin` looks like a binary file (contains a NUL byte); this tool only reads text files"
    );
    // The NUL is found even when maxBytes stops before it.
    let err = read(&fx, "late.bin", Some(10)).unwrap_err();
    assert!(matches!(err, WorkspaceError::Binary { .. }), "{err}");
    let err = read(&fx, "latin1.txt", None).unwrap_err();
    assert!(
        err.to_string().contains("not valid UTF-8 at byte offset 3"),
        "{err}"
    );
    fx.mkdir("dir");
    let err = read(&fx, "dir", None).unwrap_err();
    assert!(matches!(err, WorkspaceError::NotAFile { .. }), "{err}");
}

#[cfg(unix)]
#[test]
fn fifos_are_refused_without_blocking() {
    let fx = Fixture::new();
    let status = std::process::Command::new("mkfifo")
        .arg(fx.root().join("pipe"))
        .status();
    if !status.is_ok_and(|s| s.success()) {
        return; // no mkfifo on this machine
    }
    let err = read(&fx, "pipe", None).unwrap_err();
    assert!(matches!(err, WorkspaceError::NotAFile { .. }), "{err}");
    let err = lines(&fx, "pipe").unwrap_err();
    assert!(matches!(err, WorkspaceError::NotAFile { .. }), "{err}");
    let info = fx
        .ws
        .file_info(FileInfoInput {
            path: "pipe".into(),
        })
        .unwrap();
    assert_eq!(info.kind, EntryKind::Other);
    assert_eq!(info.resolved_path, "pipe");
    // Through links to it and to its folder: resolved without opening it.
    std::fs::create_dir(fx.root().join("sub")).unwrap();
    std::os::unix::fs::symlink("../pipe", fx.root().join("sub/to_pipe")).unwrap();
    std::os::unix::fs::symlink("sub", fx.root().join("sub_link")).unwrap();
    for (path, resolved) in [("sub/to_pipe", "pipe"), ("sub_link/to_pipe", "pipe")] {
        let info = fx
            .ws
            .file_info(FileInfoInput { path: path.into() })
            .unwrap();
        assert_eq!(info.resolved_path, resolved, "{path}");
        assert!(info.is_symlink, "{path}");
    }
    std::os::unix::fs::symlink("../../pipe", fx.root().join("sub/out")).unwrap();
    let err = fx
        .ws
        .file_info(FileInfoInput {
            path: "sub/out".into(),
        })
        .unwrap_err();
    assert!(matches!(err, WorkspaceError::OutsideRoot { .. }), "{err}");
}

#[test]
fn count_lines_counts_like_an_editor() {
    let fx = Fixture::new();
    fx.write("three.txt", "a\nb\nc");
    fx.write("two.txt", "a\nb\n");
    fx.write("empty.txt", "");
    fx.write("blank.txt", "\n\n\n");
    assert_eq!(lines(&fx, "three.txt").unwrap(), 3);
    assert_eq!(lines(&fx, "two.txt").unwrap(), 2);
    assert_eq!(lines(&fx, "empty.txt").unwrap(), 0);
    assert_eq!(lines(&fx, "blank.txt").unwrap(), 3);
    let value = validated::<u64>(&3);
    assert!(value.is_u64());
}

#[test]
fn oversized_and_binary_files_are_refused() {
    let fx = Fixture::new();
    sparse(&fx, "huge.txt", TEXT_SCAN_MAX_BYTES + 1);
    let err = lines(&fx, "huge.txt").unwrap_err();
    assert!(
        matches!(err, WorkspaceError::TooLarge { size, limit, .. }
            if size == TEXT_SCAN_MAX_BYTES + 1 && limit == TEXT_SCAN_MAX_BYTES),
        "{err}"
    );
    sparse(&fx, "huge.csv", DATASET_MAX_BYTES + 1);
    let err = fx
        .ws
        .analyze_dataset(AnalyzeDatasetInput {
            path: "huge.csv".into(),
            analysis_type: AnalysisType::Descriptive,
        })
        .unwrap_err();
    assert!(matches!(err, WorkspaceError::TooLarge { .. }), "{err}");
    // A huge file is still described, without its line count.
    let info = fx
        .ws
        .file_info(FileInfoInput {
            path: "huge.txt".into(),
        })
        .unwrap();
    assert!(info.binary && info.text.is_none());
    fx.write("bin", b"\x7fELF\x00\x00");
    assert!(matches!(
        lines(&fx, "bin"),
        Err(WorkspaceError::Binary { .. })
    ));
}

/// The resources listing counts files only: 1,200 folders before the one
/// file do not crowd it out (they did, the listing cut at 1,000 entries of
/// any kind), and hidden files and folders (`.git`) are left out.
#[test]
fn list_files_lists_files_past_many_folders_and_leaves_hidden_ones_out() {
    let fx = Fixture::new();
    for i in 0..1200 {
        fx.mkdir(&format!("a{i:04}"));
    }
    fx.write("z.txt", "hi");
    fx.mkdir(".git");
    fx.write(".git/HEAD", "ref: refs/heads/main");
    fx.write(".env", "SECRET=1");
    fx.mkdir("src");
    fx.write("src/main.rs", "fn main() {}");
    let (files, truncated) = fx.ws.list_files(1000).unwrap();
    let paths: Vec<&str> = files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(paths, ["src/main.rs", "z.txt"]);
    assert_eq!(files[1].size, 2);
    assert!(!truncated);
    // At the bound: the first files, and a word that there are more.
    let (files, truncated) = fx.ws.list_files(1).unwrap();
    assert_eq!(files.len(), 1);
    assert!(truncated);
}

/// A path written with a trailing `/` names a directory, as the kernel
/// reads it: `notes.txt/` is not the file (it was read as the file).
#[test]
fn a_trailing_slash_names_a_directory() {
    let fx = Fixture::new();
    fx.write("notes.txt", "hi");
    fx.mkdir("src");
    for written in ["notes.txt/", "notes.txt/."] {
        let err = read(&fx, written, None).unwrap_err();
        assert!(
            matches!(err, WorkspaceError::NotADirectory { .. }),
            "{written}: {err}"
        );
        assert!(lines(&fx, written).is_err(), "{written}");
    }
    let listed = fx
        .ws
        .list_directory(ListDirectoryInput {
            path: "src/".into(),
        })
        .unwrap();
    assert!(listed.is_empty());
    let info = fx
        .ws
        .file_info(FileInfoInput {
            path: "src/".into(),
        })
        .unwrap();
    assert_eq!(info.kind, EntryKind::Dir);
}
