//! Changes to the workspace's files, told as their resource URIs: what a
//! server needs to send `notifications/resources/updated` to the peers that
//! subscribed to a file.
//!
//! The operating system's watcher (inotify on Linux, FSEvents on macOS,
//! through the `notify` crate) watches the root and every folder beneath
//! it, without following symbolic links out of it. Changes are gathered
//! for [`QUIET_PERIOD`] and each changed file is told once per period, so a
//! file written a thousand times a second costs its subscribers a few
//! notifications, not a thousand.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, TrySendError, sync_channel};
use std::time::{Duration, Instant};

use notify::event::EventKind;
use notify::{Config, Event, RecommendedWatcher, RecursiveMode, Watcher};

use super::resources::file_uri;
use crate::Workspace;

/// How long changes are gathered before the files changed are told.
pub const QUIET_PERIOD: Duration = Duration::from_millis(100);
/// Most changed paths waiting to be gathered; past it, changes are dropped
/// (a flood of changes, faster than they can be told).
const MAX_QUEUED_CHANGES: usize = 4096;
/// Most distinct files told per period; past it, the rest are dropped.
const MAX_FILES_PER_PERIOD: usize = 10_000;
/// The default of the most folders watched: each costs one of the
/// operating system's watches (on Linux `fs.inotify.max_user_watches`, which
/// other programs of the same user, editors among them, share).
pub const DEFAULT_MAX_WATCHED_FOLDERS: usize = 10_000;

/// Why the workspace's files cannot be watched.
#[derive(Debug, thiserror::Error)]
pub enum WatchError {
    /// The operating system's watcher refused (on Linux, often its limit
    /// of watches: `fs.inotify.max_user_watches`).
    #[error("cannot watch {root} for changes: {source}")]
    Watcher {
        /// The folder that could not be watched.
        root: PathBuf,
        /// What the watcher said.
        #[source]
        source: notify::Error,
    },
    /// The root holds more folders than may be watched.
    #[error(
        "{root} holds more than {limit} folders: file changes are not watched (raise the limit, or pass --no-watch)"
    )]
    TooManyFolders {
        /// The root.
        root: PathBuf,
        /// The most folders that may be watched.
        limit: usize,
    },
    /// The thread that tells the changes could not be started.
    #[error("cannot start the thread that tells file changes: {0}")]
    Thread(#[source] std::io::Error),
}

/// Watches the workspace's files while it lives; dropping it stops.
#[derive(Debug)]
pub struct FileWatcher {
    _watcher: RecommendedWatcher,
}

/// Starts watching `workspace`'s files: `changed` is called with the URI
/// (as [`file_uri`] makes it) of each file created, written, renamed or
/// removed, at most once per file per [`QUIET_PERIOD`], on a thread of its
/// own. A root with more than `max_folders` folders (links not followed) is
/// not watched. Setting up the watches walks every folder under the root,
/// so on a large tree this takes a while: call it off the async runtime.
pub fn watch_files<F>(
    workspace: &Workspace,
    max_folders: usize,
    changed: F,
) -> Result<FileWatcher, WatchError>
where
    F: Fn(String) + Send + 'static,
{
    let root = workspace.root().to_path_buf();
    if !has_at_most_folders(&root, max_folders) {
        return Err(WatchError::TooManyFolders {
            root,
            limit: max_folders,
        });
    }
    let (sender, receiver) = sync_channel(MAX_QUEUED_CHANGES);
    let config = Config::default().with_follow_symlinks(false);
    let mut watcher =
        RecommendedWatcher::new(Forward(sender), config).map_err(|source| WatchError::Watcher {
            root: root.clone(),
            source,
        })?;
    watcher
        .watch(&root, RecursiveMode::Recursive)
        .map_err(|source| WatchError::Watcher {
            root: root.clone(),
            source,
        })?;
    let workspace = workspace.clone();
    std::thread::Builder::new()
        .name("toolshape-watch".into())
        .spawn(move || tell(&workspace, &receiver, &changed))
        .map_err(WatchError::Thread)?;
    Ok(FileWatcher { _watcher: watcher })
}

/// Whether `root` and the folders beneath it (links not followed, folders
/// that cannot be read not counted) are at most `limit`; stops counting
/// past it.
fn has_at_most_folders(root: &Path, limit: usize) -> bool {
    let mut pending = vec![root.to_path_buf()];
    let mut counted = 0usize;
    while let Some(folder) = pending.pop() {
        counted += 1;
        if counted > limit {
            return false;
        }
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        for entry in entries.flatten() {
            // The entry's own type: a link to a folder is not a folder.
            if entry.file_type().is_ok_and(|kind| kind.is_dir()) {
                pending.push(entry.path());
                if pending.len() + counted > limit {
                    return false;
                }
            }
        }
    }
    true
}

/// Passes the watcher's events on, never blocking its thread.
struct Forward(SyncSender<PathBuf>);

impl notify::EventHandler for Forward {
    fn handle_event(&mut self, event: notify::Result<Event>) {
        let Ok(event) = event else { return };
        if !matches!(
            event.kind,
            EventKind::Create(_) | EventKind::Modify(_) | EventKind::Remove(_)
        ) {
            return;
        }
        for path in event.paths {
            match self.0.try_send(path) {
                Ok(()) | Err(TrySendError::Full(_)) => {}
                Err(TrySendError::Disconnected(_)) => return,
            }
        }
    }
}

/// Gathers changed paths for a quiet period, then tells each file once;
/// ends when the watcher is dropped.
fn tell(workspace: &Workspace, changes: &Receiver<PathBuf>, changed: &dyn Fn(String)) {
    let root = workspace.root();
    while let Ok(first) = changes.recv() {
        let mut gathered = BTreeSet::new();
        gather(&mut gathered, root, first);
        let until = Instant::now() + QUIET_PERIOD;
        loop {
            let left = until.saturating_duration_since(Instant::now());
            match changes.recv_timeout(left) {
                Ok(path) => gather(&mut gathered, root, path),
                Err(RecvTimeoutError::Timeout) => break,
                Err(RecvTimeoutError::Disconnected) => return,
            }
        }
        for relative in gathered {
            changed(file_uri(workspace, &relative));
        }
    }
}

/// Adds `path`, as a path relative to the root, unless it is the root, out
/// of it, not UTF-8, or one too many.
fn gather(gathered: &mut BTreeSet<String>, root: &Path, path: PathBuf) {
    if gathered.len() >= MAX_FILES_PER_PERIOD {
        return;
    }
    let Ok(relative) = path.strip_prefix(root) else {
        return;
    };
    match relative.to_str() {
        Some(relative) if !relative.is_empty() => {
            gathered.insert(relative.to_owned());
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::has_at_most_folders;

    #[test]
    fn folders_are_counted_up_to_the_limit_without_following_links() {
        let dir = tempfile::tempdir().unwrap();
        for path in ["a", "a/b", "c"] {
            std::fs::create_dir(dir.path().join(path)).unwrap();
        }
        std::fs::write(dir.path().join("a/file"), "x").unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink(dir.path(), dir.path().join("c/loop")).unwrap();
        // The root, a, a/b and c: four.
        assert!(has_at_most_folders(dir.path(), 4));
        assert!(!has_at_most_folders(dir.path(), 3));
        assert!(!has_at_most_folders(dir.path(), 0));
    }
}
