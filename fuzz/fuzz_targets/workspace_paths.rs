//! The workspace toolset's confinement (the sandbox property): whatever path
//! or glob a caller sends, nothing outside the root is ever read, listed or
//! named.
//!
//! The world: a temporary folder holding `outside/` (a file of 7,777 lines
//! and a CSV of 4,242 rows, both named `zq-outside-canary-*`) and `root/`,
//! the workspace, with ordinary files and symbolic links that lead out
//! (`link_out`, `link_secret`, `sub/link_up`, an absolute `link_abs`), in
//! (`link_in`) and nowhere (`loop`). The first byte picks the tool, the
//! rest is the path (or glob). No answer, result or error, may contain the
//! canary, and no count may be the outside files' (unless the caller wrote
//! the canary itself).
//!
//! This fuzzes the public API as it is on main (`Workspace::open` and the
//! tool methods); the cap-std rewrite keeps the same methods.

#![no_main]

use std::fs;
use std::path::Path;
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use serde_json::{Value, json};
use toolshape_workspace::Workspace;

const CANARY: &str = "zq-outside-canary";
const SECRET_LINES: u64 = 7777;
const SECRET_ROWS: u64 = 4242;

struct World {
    _base: tempfile::TempDir,
    workspace: Workspace,
    secret_size: u64,
}

fn write(path: &Path, text: &str) {
    if let Err(error) = fs::write(path, text) {
        panic!("cannot write {}: {error}", path.display());
    }
}

#[cfg(unix)]
fn link(target: impl AsRef<Path>, at: &Path) {
    if let Err(error) = std::os::unix::fs::symlink(target, at) {
        panic!("cannot link {}: {error}", at.display());
    }
}

fn world() -> &'static World {
    static WORLD: OnceLock<World> = OnceLock::new();
    WORLD.get_or_init(|| {
        let base = match tempfile::tempdir() {
            Ok(base) => base,
            Err(error) => panic!("no temporary folder: {error}"),
        };
        let outside = base.path().join("outside");
        let root = base.path().join("root");
        for dir in [&outside, &root, &root.join("sub/deep")] {
            if let Err(error) = fs::create_dir_all(dir) {
                panic!("cannot create {}: {error}", dir.display());
            }
        }
        let secret: String = (0..SECRET_LINES)
            .map(|_| format!("{CANARY}-line\n"))
            .collect();
        write(&outside.join(format!("{CANARY}-secret.txt")), &secret);
        let mut rows = String::from("a,b\n");
        for i in 0..SECRET_ROWS {
            rows.push_str(&format!("{i},{}\n", i * 2));
        }
        write(&outside.join(format!("{CANARY}-data.csv")), &rows);
        write(&root.join("a.txt"), "one\ntwo\nthree\n");
        write(&root.join("sub/b.csv"), "x,y\n1,2\n3,4\n");
        write(&root.join("sub/deep/c.md"), "# c\n");
        write(
            &root.join("Cargo.toml"),
            "[package]\nname = \"w\"\nversion = \"0.1.0\"\n",
        );
        #[cfg(unix)]
        {
            link("../outside", &root.join("link_out"));
            link(
                format!("../outside/{CANARY}-secret.txt"),
                &root.join("link_secret"),
            );
            link("../..", &root.join("sub/link_up"));
            link(&outside, &root.join("link_abs"));
            link("loop", &root.join("loop"));
            link("sub", &root.join("link_in"));
        }
        let workspace = match Workspace::open(&root) {
            Ok(workspace) => workspace,
            Err(error) => panic!("cannot open the workspace: {error}"),
        };
        World {
            secret_size: secret.len() as u64,
            _base: base,
            workspace,
        }
    })
}

fn input<T: serde::de::DeserializeOwned>(value: Value) -> Option<T> {
    serde_json::from_value(value).ok()
}

/// Runs tool `which` on `text`; returns what it answered, result or error, as JSON.
fn run(workspace: &Workspace, which: u8, text: &str) -> Option<(Value, Option<u64>)> {
    fn answer<T: serde::Serialize, E: std::fmt::Display>(result: Result<T, E>) -> Value {
        match result {
            Ok(value) => serde_json::to_value(value).unwrap_or(Value::Null),
            Err(error) => Value::String(error.to_string()),
        }
    }
    Some(match which % 9 {
        0 => (
            answer(workspace.list_directory(input(json!({"path": text}))?)),
            None,
        ),
        1 => {
            let info = workspace.file_info(input(json!({"path": text}))?);
            let size = info.as_ref().ok().map(|info| info.size);
            let lines = info
                .as_ref()
                .ok()
                .and_then(|info| info.text.as_ref())
                .map(|text| text.lines);
            if let (Some(size), Some(lines)) = (size, lines) {
                assert_ne!(lines, SECRET_LINES, "file_info counted the outside file");
                assert_ne!(
                    size,
                    world().secret_size,
                    "file_info sized the outside file"
                );
            }
            (answer(info), None)
        }
        2 => (
            answer(workspace.read_text(input(json!({"path": text}))?)),
            None,
        ),
        3 => {
            let counted = workspace.count_lines(input(json!({"path": text}))?);
            let lines = counted.as_ref().ok().copied();
            (answer(counted), lines)
        }
        4 => (answer(workspace.find(input(json!({"path": text}))?)), None),
        5 => (answer(workspace.find(input(json!({"glob": text}))?)), None),
        6 => (
            answer(workspace.analyze_project(input(json!({"path": text}))?)),
            None,
        ),
        7 => {
            let analysis = workspace
                .analyze_dataset(input(json!({"path": text, "analysisType": "descriptive"}))?);
            let rows = analysis.as_ref().ok().map(|a| a.summary.total_rows);
            (answer(analysis), rows)
        }
        _ => (
            answer(workspace.read_text(input(json!({"path": text, "maxBytes": 64}))?)),
            None,
        ),
    })
}

fuzz_target!(|data: &[u8]| {
    let [which, rest @ ..] = data else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    // A caller who names the canary may see it echoed in an error.
    if text.to_ascii_lowercase().contains("zq-outside") {
        return;
    }
    let world = world();
    let Some((answer, count)) = run(&world.workspace, *which, text) else {
        return;
    };
    let shown = answer.to_string();
    assert!(
        !shown.contains(CANARY),
        "tool {} on {text:?} revealed the outside: {}",
        which % 9,
        &shown[..shown.len().min(2000)]
    );
    if let Some(count) = count {
        assert!(
            count != SECRET_LINES && count != SECRET_ROWS,
            "tool {} on {text:?} counted an outside file: {count}",
            which % 9
        );
    }
});
