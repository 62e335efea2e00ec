//! Changes to the workspace's files, told as their resource URIs, and
//! changes to which files there are: what a server needs to send
//! `notifications/resources/updated` to the peers that subscribed to a file,
//! and `notifications/resources/list_changed`.
//!
//! The operating system's watcher (inotify on Linux, FSEvents on macOS,
//! through the `notify` crate) watches the root and every folder beneath
//! it, without following symbolic links out of it. Changes are gathered
//! for [`QUIET_PERIOD`] and each changed file is told once per period, so a
//! file written a thousand times a second costs its subscribers a few
//! notifications, not a thousand; files created, removed or renamed in a
//! period are told as one list change. Folders are counted when watching starts
//! and as they are created: past the bound, watching stops (and says so).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, TrySendError, sync_channel};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use notify::event::{CreateKind, EventKind, ModifyKind, RenameMode};
use notify::{Config, Event, RecommendedWatcher, RecursiveMode, Watcher};

use super::resources::file_uri;
use crate::Workspace;

/// How long changes are gathered before the files changed are told.
pub const QUIET_PERIOD: Duration = Duration::from_millis(100);

/// The least time between two counts of the folders after folders arrived
/// (created, or moved in with whatever they hold, which no event tells).
const RECOUNT_GAP: Duration = Duration::from_secs(2);
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

/// A change [`watch_files`] tells.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum FileChange {
    /// The file at this resource URI was created, written, renamed or removed.
    Changed(String),
    /// Files were created, removed or renamed: the listing differs (told
    /// once per period, after the files).
    ListChanged,
}

/// Watches the workspace's files while it lives; dropping it stops.
#[derive(Debug)]
pub struct FileWatcher {
    /// The watcher; the telling thread holds it weakly, to drop it when the
    /// folders outgrow their bound.
    _watcher: Arc<Mutex<Option<RecommendedWatcher>>>,
}

/// Starts watching `workspace`'s files: `changed` is called with the URI
/// (as [`file_uri`] makes it) of each file created, written, renamed or
/// removed, at most once per file per [`QUIET_PERIOD`], on a thread of its
/// own. (To hear of files coming and going too: [`watch_file_changes`].)
pub fn watch_files<F>(
    workspace: &Workspace,
    max_folders: usize,
    changed: F,
) -> Result<FileWatcher, WatchError>
where
    F: Fn(String) + Send + 'static,
{
    watch_file_changes(workspace, max_folders, move |change| {
        if let FileChange::Changed(uri) = change {
            changed(uri);
        }
    })
}

/// As [`watch_files`], telling each change as a [`FileChange`]: each file's
/// as [`FileChange::Changed`], then once per period
/// [`FileChange::ListChanged`] when any was created, removed or renamed. A root with more than `max_folders` folders (links not followed) is
/// not watched; when folders created later take it past the bound, watching
/// stops with a warning. Setting up the watches walks every folder under
/// the root, so on a large tree this takes a while: call it off the async
/// runtime.
pub fn watch_file_changes<F>(
    workspace: &Workspace,
    max_folders: usize,
    changed: F,
) -> Result<FileWatcher, WatchError>
where
    F: Fn(FileChange) + Send + 'static,
{
    let root = workspace.root().to_path_buf();
    let Some(folders) = count_folders(&root, max_folders) else {
        return Err(WatchError::TooManyFolders {
            root,
            limit: max_folders,
        });
    };
    let (sender, receiver) = sync_channel(MAX_QUEUED_CHANGES);
    let created = Arc::new(AtomicUsize::new(0));
    let listing_changed = Arc::new(AtomicBool::new(false));
    let forward = Forward {
        changes: sender,
        created_folders: Arc::clone(&created),
        listing_changed: Arc::clone(&listing_changed),
    };
    let config = Config::default().with_follow_symlinks(false);
    let mut watcher =
        RecommendedWatcher::new(forward, config).map_err(|source| WatchError::Watcher {
            root: root.clone(),
            source,
        })?;
    watcher
        .watch(&root, RecursiveMode::Recursive)
        .map_err(|source| WatchError::Watcher {
            root: root.clone(),
            source,
        })?;
    let watcher = Arc::new(Mutex::new(Some(watcher)));
    let telling = Telling {
        workspace: workspace.clone(),
        listing_changed,
        watcher: Arc::downgrade(&watcher),
        folders: Folders {
            counted: folders,
            created,
            seen: 0,
            limit: max_folders,
            last_count: Instant::now(),
        },
    };
    std::thread::Builder::new()
        .name("toolshape-watch".into())
        .spawn(move || telling.run(&receiver, &changed))
        .map_err(WatchError::Thread)?;
    Ok(FileWatcher { _watcher: watcher })
}

/// How many folders are watched, as far as is known.
struct Folders {
    /// The last count.
    counted: usize,
    /// Folders created since watching started (the watcher counts them,
    /// even when their events are dropped).
    created: Arc<AtomicUsize>,
    /// Of those, how many the last count saw.
    seen: usize,
    limit: usize,
    /// When they were last counted.
    last_count: Instant,
}

impl Folders {
    /// Whether folders arrived since the last count.
    fn arrived(&self) -> bool {
        self.created.load(Ordering::Relaxed) != self.seen
    }

    /// Whether the folders are still within the bound: counted again when
    /// the arrived ones may have taken them past it, and, at most every
    /// [`RECOUNT_GAP`], whenever folders arrived (a folder moved in, or
    /// made before its own watch, brings folders no event counts).
    fn within_bound(&mut self, root: &Path) -> bool {
        let created = self.created.load(Ordering::Relaxed);
        let estimate_over = self.counted + (created - self.seen) > self.limit;
        let due = created != self.seen && self.last_count.elapsed() >= RECOUNT_GAP;
        if !estimate_over && !due {
            return true;
        }
        self.seen = created;
        self.last_count = Instant::now();
        match count_folders(root, self.limit) {
            Some(counted) => {
                self.counted = counted;
                true
            }
            None => false,
        }
    }
}

/// The telling thread's state.
struct Telling {
    workspace: Workspace,
    /// Set by the watcher's thread when files come or go.
    listing_changed: Arc<AtomicBool>,
    watcher: Weak<Mutex<Option<RecommendedWatcher>>>,
    folders: Folders,
}

impl Telling {
    /// Gathers changed paths for a quiet period, then tells each file
    /// once; ends when the watcher is dropped, or stops it when the
    /// folders outgrow their bound.
    fn run(mut self, changes: &Receiver<PathBuf>, changed: &dyn Fn(FileChange)) {
        let root = self.workspace.root().to_path_buf();
        loop {
            // While folders that arrived wait to be counted, the count is
            // made after the gap even if nothing else happens.
            let first = if self.folders.arrived() {
                match changes.recv_timeout(RECOUNT_GAP) {
                    Ok(path) => Some(path),
                    Err(RecvTimeoutError::Timeout) => None,
                    Err(RecvTimeoutError::Disconnected) => return,
                }
            } else {
                match changes.recv() {
                    Ok(path) => Some(path),
                    Err(_) => return,
                }
            };
            if let Some(first) = first {
                self.tell(&root, first, changes, changed);
            }
            if !self.folders.within_bound(&root) {
                tracing::warn!(
                    root = %root.display(),
                    limit = self.folders.limit,
                    "the workspace now holds more folders than may be watched: file changes are no longer told (raise --watch-max-folders)"
                );
                if let Some(watcher) = self.watcher.upgrade()
                    && let Ok(mut watcher) = watcher.lock()
                {
                    watcher.take();
                }
                return;
            }
        }
    }

    /// Gathers changed paths from `first` on for a quiet period, then tells
    /// each file once, and whether the listing changed.
    fn tell(
        &self,
        root: &Path,
        first: PathBuf,
        changes: &Receiver<PathBuf>,
        changed: &dyn Fn(FileChange),
    ) {
        let mut gathered = BTreeSet::new();
        gather(&mut gathered, root, first);
        let until = Instant::now() + QUIET_PERIOD;
        loop {
            let left = until.saturating_duration_since(Instant::now());
            match changes.recv_timeout(left) {
                Ok(path) => gather(&mut gathered, root, path),
                Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => break,
            }
        }
        for relative in gathered {
            changed(FileChange::Changed(file_uri(&self.workspace, &relative)));
        }
        if self.listing_changed.swap(false, Ordering::Relaxed) {
            changed(FileChange::ListChanged);
        }
    }
}

/// How many folders `root` and those beneath it are (links not followed,
/// folders that cannot be read counted but not entered), or `None` past
/// `limit` (counting stops there).
fn count_folders(root: &Path, limit: usize) -> Option<usize> {
    let mut pending = vec![root.to_path_buf()];
    let mut counted = 0usize;
    while let Some(folder) = pending.pop() {
        counted += 1;
        if counted > limit {
            return None;
        }
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        for entry in entries.flatten() {
            // The entry's own type: a link to a folder is not a folder.
            if entry.file_type().is_ok_and(|kind| kind.is_dir()) {
                pending.push(entry.path());
                if pending.len() + counted > limit {
                    return None;
                }
            }
        }
    }
    Some(counted)
}

/// Passes the watcher's events on, never blocking its thread, and counts
/// the folders created.
struct Forward {
    changes: SyncSender<PathBuf>,
    created_folders: Arc<AtomicUsize>,
    /// Set when files come or go (created, removed, renamed).
    listing_changed: Arc<AtomicBool>,
}

impl notify::EventHandler for Forward {
    fn handle_event(&mut self, event: notify::Result<Event>) {
        let Ok(event) = event else { return };
        match event.kind {
            EventKind::Create(CreateKind::Folder) => {
                self.created_folders.fetch_add(1, Ordering::Relaxed);
                self.listing_changed.store(true, Ordering::Relaxed);
            }
            // A folder moved in (its own type, links not followed).
            EventKind::Modify(ModifyKind::Name(
                RenameMode::To | RenameMode::Both | RenameMode::Any,
            )) if event
                .paths
                .last()
                .and_then(|path| path.symlink_metadata().ok())
                .is_some_and(|meta| meta.is_dir()) =>
            {
                self.created_folders.fetch_add(1, Ordering::Relaxed);
                self.listing_changed.store(true, Ordering::Relaxed);
            }
            EventKind::Create(_)
            | EventKind::Remove(_)
            | EventKind::Modify(ModifyKind::Name(_)) => {
                self.listing_changed.store(true, Ordering::Relaxed);
            }
            EventKind::Modify(_) => {}
            _ => return,
        }
        for path in event.paths {
            match self.changes.try_send(path) {
                Ok(()) | Err(TrySendError::Full(_)) => {}
                Err(TrySendError::Disconnected(_)) => return,
            }
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
    use std::sync::mpsc::channel;
    use std::time::Duration;

    use super::{count_folders, watch_files};
    use crate::Workspace;

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
        assert_eq!(count_folders(dir.path(), 4), Some(4));
        assert_eq!(count_folders(dir.path(), 3), None);
        assert_eq!(count_folders(dir.path(), 0), None);
    }

    /// Writes `name` until a change is told (or 10 s pass): whether one was.
    fn told_after_writing(
        root: &std::path::Path,
        name: &str,
        told: &std::sync::mpsc::Receiver<String>,
    ) -> bool {
        for round in 0..50u8 {
            std::fs::write(root.join(name), [round]).unwrap();
            if told.recv_timeout(Duration::from_millis(200)).is_ok() {
                return true;
            }
        }
        false
    }

    /// A workspace on a fresh folder watched with a bound of 3 folders,
    /// told of a first change.
    fn watched_with_three_folders() -> (
        tempfile::TempDir,
        Workspace,
        std::sync::mpsc::Receiver<String>,
        super::FileWatcher,
    ) {
        let dir = tempfile::tempdir().unwrap();
        let workspace = Workspace::open(dir.path()).unwrap();
        let (sender, told) = channel();
        let watcher = watch_files(&workspace, 3, move |uri| {
            let _ = sender.send(uri);
        })
        .unwrap();
        assert!(told_after_writing(workspace.root(), "x.txt", &told));
        (dir, workspace, told, watcher)
    }

    #[test]
    fn watching_stops_when_created_folders_pass_the_bound() {
        let (_dir, workspace, told, _watcher) = watched_with_three_folders();
        // The root and two folders: within the bound; a third passes it.
        for folder in ["a", "b"] {
            std::fs::create_dir(workspace.root().join(folder)).unwrap();
        }
        assert!(told_after_writing(workspace.root(), "y.txt", &told));
        std::fs::create_dir(workspace.root().join("c")).unwrap();
        // Told of c (or of writes before the count), then nothing more.
        std::thread::sleep(Duration::from_millis(500));
        while told.try_recv().is_ok() {}
        assert!(!told_after_writing(workspace.root(), "z.txt", &told));
    }

    /// A tree of folders moved in (one event, which counts none of what
    /// it holds) is counted once the gap has passed.
    #[test]
    fn watching_stops_when_a_moved_in_tree_passes_the_bound() {
        let outside = tempfile::tempdir().unwrap();
        let (_dir, workspace, told, _watcher) = watched_with_three_folders();
        std::fs::create_dir_all(outside.path().join("tree/a/b/c/d")).unwrap();
        std::fs::rename(outside.path().join("tree"), workspace.root().join("tree")).unwrap();
        std::thread::sleep(super::RECOUNT_GAP + Duration::from_millis(2_500));
        while told.try_recv().is_ok() {}
        assert!(!told_after_writing(workspace.root(), "z.txt", &told));
    }
}
