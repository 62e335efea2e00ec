//! A process that can write inside the root races the tools: it keeps
//! swapping a file between a regular file and a symbolic link to a secret
//! outside the root, and a directory between a real directory and a link to
//! the outside, while every tool reads through those names. Not one read may
//! return anything from outside. Bounded: about two seconds.
#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::fs;
use std::os::unix::fs::symlink;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use common::Fixture;
use toolshape_workspace::{
    AnalysisType, AnalyzeDatasetInput, AnalyzeProjectInput, CountLinesInput, FileInfoInput,
    FindInput, ListDirectoryInput, ReadTextInput, Workspace,
};

/// What no tool may return: the secret file's content and the names of the
/// outside directory's entries.
const SECRET: &str = "OUTSIDE-SECRET-7319";
const SECRET_NAME: &str = "outside-only-name";
/// How long the readers race the swapper.
const RACE: Duration = Duration::from_secs(2);

/// Swaps `root/victim.txt` between a regular file and a link to the secret,
/// and `root/victim_dir` between a directory and a link to the outside
/// directory, by atomic renames, until `stop`. Returns the number of swaps.
fn swap(root: &Path, outside: &Path, stop: &AtomicBool) -> u64 {
    let mut swaps = 0;
    let file = root.join("victim.txt");
    let dir = root.join("victim_dir");
    let staged_file = root.join(".staged-file");
    let staged_link = root.join(".staged-link");
    let parked_dir = root.join(".parked-dir");
    let dir_link = root.join(".dir-link");
    while !stop.load(Ordering::Relaxed) {
        // The file: a link to the secret, then a regular file, each renamed
        // over the name in one step.
        let _ = fs::remove_file(&staged_link);
        symlink(outside.join("secret.csv"), &staged_link).unwrap();
        fs::rename(&staged_link, &file).unwrap();
        fs::write(&staged_file, "a,b\n1,2\n3,5\n").unwrap();
        fs::rename(&staged_file, &file).unwrap();
        // The directory: parked away and replaced by a link, then back.
        fs::rename(&dir, &parked_dir).unwrap();
        let _ = fs::remove_file(&dir_link);
        symlink(outside, &dir_link).unwrap();
        fs::rename(&dir_link, &dir).unwrap();
        std::thread::yield_now();
        fs::rename(&dir, &dir_link).unwrap();
        fs::rename(&parked_dir, &dir).unwrap();
        swaps += 1;
    }
    swaps
}

/// Every tool, through the swapped names; returns what each answered.
fn read_all(ws: &Workspace) -> Vec<String> {
    let mut answers = Vec::new();
    let text = |path: &str| ReadTextInput {
        path: path.into(),
        max_bytes: None,
    };
    for path in [
        "victim.txt",
        "victim_dir/secret.csv",
        "victim_dir/inner.csv",
    ] {
        answers.push(format!("{:?}", ws.read_text(text(path))));
        answers.push(format!(
            "{:?}",
            ws.count_lines(CountLinesInput { path: path.into() })
        ));
        answers.push(format!(
            "{:?}",
            ws.file_info(FileInfoInput { path: path.into() })
        ));
        answers.push(format!(
            "{:?}",
            ws.analyze_dataset(AnalyzeDatasetInput {
                path: path.into(),
                analysis_type: AnalysisType::Descriptive,
            })
        ));
        answers.push(format!("{:?}", ws.find(FindInput::Path(path.into()))));
    }
    for path in ["victim_dir", "."] {
        answers.push(format!(
            "{:?}",
            ws.list_directory(ListDirectoryInput { path: path.into() })
        ));
        answers.push(format!(
            "{:?}",
            ws.file_info(FileInfoInput { path: path.into() })
        ));
    }
    answers.push(format!(
        "{:?}",
        ws.find(FindInput::Glob("victim_dir/**".into()))
    ));
    answers.push(format!("{:?}", ws.find(FindInput::Glob("**".into()))));
    answers.push(format!(
        "{:?}",
        ws.analyze_project(AnalyzeProjectInput {
            path: Some("victim_dir".into()),
        })
    ));
    answers
}

#[test]
fn swapping_files_and_directories_for_links_never_leaks_the_outside() {
    let fx = Fixture::new();
    let outside = fx.outside();
    // The secret is a valid CSV so that analyze_dataset would read it too.
    fs::write(
        outside.join("secret.csv"),
        format!("{SECRET}\n1000001\n1000003\n"),
    )
    .unwrap();
    fs::write(outside.join(format!("{SECRET_NAME}.rs")), "fn f() {}\n").unwrap();
    fs::write(
        outside.join("Cargo.toml"),
        format!("[package]\nname = \"{SECRET}\"\n"),
    )
    .unwrap();
    fx.write("victim.txt", "a,b\n1,2\n");
    fx.write("victim_dir/inner.csv", "a,b\n1,2\n");
    fx.write("victim_dir/secret.csv", "a,b\n1,2\n");

    let stop = Arc::new(AtomicBool::new(false));
    let swapper = {
        let (root, outside, stop) = (fx.root(), outside.clone(), Arc::clone(&stop));
        std::thread::spawn(move || swap(&root, &outside, &stop))
    };
    let leaks = Arc::new(AtomicU64::new(0));
    let calls = Arc::new(AtomicU64::new(0));
    let inside = Arc::new(AtomicU64::new(0));
    let deadline = Instant::now() + RACE;
    let readers: Vec<_> = (0..3)
        .map(|_| {
            let ws = fx.ws.clone();
            let (leaks, calls, inside) =
                (Arc::clone(&leaks), Arc::clone(&calls), Arc::clone(&inside));
            std::thread::spawn(move || {
                let mut first_leak = None;
                while Instant::now() < deadline {
                    for answer in read_all(&ws) {
                        calls.fetch_add(1, Ordering::Relaxed);
                        if answer.contains(SECRET)
                            || answer.contains(SECRET_NAME)
                            || answer.contains("1000001")
                        {
                            leaks.fetch_add(1, Ordering::Relaxed);
                            first_leak.get_or_insert(answer);
                        } else if answer.starts_with("Ok(") {
                            inside.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                }
                first_leak
            })
        })
        .collect();
    let first_leak: Vec<String> = readers
        .into_iter()
        .filter_map(|reader| reader.join().unwrap())
        .collect();
    stop.store(true, Ordering::Relaxed);
    let swaps = swapper.join().unwrap();
    let (leaks, calls, inside) = (
        leaks.load(Ordering::Relaxed),
        calls.load(Ordering::Relaxed),
        inside.load(Ordering::Relaxed),
    );
    eprintln!(
        "race: {swaps} swaps, {calls} tool calls, {inside} answered from inside, {leaks} leaks"
    );
    assert!(swaps > 100, "the swapper barely ran: {swaps} swaps");
    assert!(
        inside > 100,
        "the readers barely got through: {inside} answers"
    );
    assert_eq!(
        leaks,
        0,
        "{leaks} of {calls} calls returned something from outside the root; first: {}",
        first_leak.first().map_or("", |leak| leak.as_str())
    );
}
