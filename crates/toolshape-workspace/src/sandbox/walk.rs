//! A bounded, depth-first walk that descends by handle.
//!
//! Each directory is listed whole, sorted by name, and its subdirectories are
//! opened from its own handle with `O_NOFOLLOW` (`open_dir_nofollow`): a
//! directory swapped for a link after it was listed is skipped, never
//! followed, and no path is ever re-opened from the root by name. The walk
//! keeps an explicit stack (no recursion), at most `max_depth` levels deep.
//!
//! Bounds (any of them sets [`WalkEnd::truncated`]):
//! - `max_visited` entries handed to the visitor;
//! - `max_pending_bytes` of listed-but-not-yet-visited names held at once
//!   (each entry counts its name plus [`PENDING_ENTRY_OVERHEAD`]); a
//!   directory whose listing would pass it is cut there;
//! - directories at `max_depth` that have entries are not entered.
//!
//! Unreadable directories (permissions, or gone or swapped since they were
//! listed) are skipped; any other failure to list or open one (no
//! descriptor left, an I/O error) sets [`WalkEnd::truncated`].

use std::ffi::OsString;

use cap_fs_ext::DirExt;
use cap_std::fs::Dir;

use crate::fsutil::EntryKind;

/// Bytes one pending entry costs besides its name (the `OsString` header,
/// its kind, the vector slot).
pub(crate) const PENDING_ENTRY_OVERHEAD: usize = 48;

/// How far a walk may go.
#[derive(Debug, Clone, Copy)]
pub(crate) struct WalkLimits {
    /// Deepest level handed to the visitor; the base's own entries are level 1.
    pub(crate) max_depth: usize,
    /// Most entries handed to the visitor.
    pub(crate) max_visited: usize,
    /// Most bytes of listed names held at once.
    pub(crate) max_pending_bytes: usize,
}

/// One entry, as the visitor sees it.
#[derive(Debug)]
pub(crate) struct WalkEntry<'a> {
    /// Path relative to the walk's base, `/`-separated, prefixed with the
    /// base's own relative path unless that is `.`.
    pub(crate) rel: &'a str,
    /// The entry's file name.
    pub(crate) name: &'a std::ffi::OsStr,
    /// What the entry is, not following links.
    pub(crate) kind: EntryKind,
    /// The directory that holds the entry, to open or stat it by name.
    pub(crate) parent: &'a Dir,
}

/// What the visitor wants next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step {
    /// Go on (and into the entry if it is a directory).
    Continue,
    /// Go on, but do not enter this directory.
    Skip,
    /// End the walk.
    Stop,
}

/// How a walk ended.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct WalkEnd {
    /// A bound cut the walk short.
    pub(crate) truncated: bool,
}

struct Pending {
    name: OsString,
    kind: EntryKind,
}

struct Frame {
    dir: Dir,
    /// `rel` of the directory itself, or empty for the base when its path is `.`.
    prefix: String,
    entries: std::vec::IntoIter<Pending>,
    /// Level of this directory's entries.
    depth: usize,
}

struct Budget {
    limits: WalkLimits,
    pending_bytes: usize,
    truncated: bool,
}

fn cost(name: &OsString) -> usize {
    name.len().saturating_add(PENDING_ENTRY_OVERHEAD)
}

impl Budget {
    /// The entries of `dir`, sorted by name, as many as the pending budget allows.
    fn list(&mut self, dir: &Dir) -> Vec<Pending> {
        let read = match dir.entries() {
            Ok(read) => read,
            Err(error) => {
                self.failed(&error);
                return Vec::new();
            }
        };
        let mut listed = Vec::new();
        for entry in read {
            let entry = match entry {
                Ok(entry) => entry,
                Err(error) => {
                    self.failed(&error);
                    continue;
                }
            };
            let name = entry.file_name();
            let cost = cost(&name);
            if self.pending_bytes.saturating_add(cost) > self.limits.max_pending_bytes {
                self.truncated = true;
                break;
            }
            // The kind recorded in the directory, or (for file systems that
            // record none) the entry's own metadata; never a link's target.
            let kind = match entry.file_type().map(EntryKind::of_type) {
                Ok(EntryKind::Other) | Err(_) => entry
                    .metadata()
                    .map_or(EntryKind::Other, |meta| EntryKind::of(&meta)),
                Ok(kind) => kind,
            };
            self.pending_bytes += cost;
            listed.push(Pending { name, kind });
        }
        listed.sort_by(|a, b| a.name.cmp(&b.name));
        listed
    }
}

impl Budget {
    /// A folder that could not be listed or opened: one that is gone, or
    /// that the server may not read, is left out; any other failure (no
    /// descriptor left, an I/O error) leaves the walk incomplete.
    fn failed(&mut self, error: &std::io::Error) {
        use std::io::ErrorKind::{NotFound, PermissionDenied};
        if !matches!(error.kind(), NotFound | PermissionDenied) {
            self.truncated = true;
        }
    }
}

fn has_entries(parent: &Dir, name: &OsString) -> bool {
    parent
        .open_dir_nofollow(name)
        .and_then(|dir| dir.entries())
        .is_ok_and(|mut entries| entries.next().is_some())
}

/// Walks the tree below `base` (whose path relative to the root is
/// `base_rel`), handing every entry to `visit` in depth-first order with each
/// directory's entries sorted by name.
pub(crate) fn walk(
    base: Dir,
    base_rel: &str,
    limits: WalkLimits,
    mut visit: impl FnMut(&WalkEntry<'_>) -> Step,
) -> WalkEnd {
    let mut budget = Budget {
        limits,
        pending_bytes: 0,
        truncated: false,
    };
    let entries = budget.list(&base).into_iter();
    let prefix = if base_rel == "." {
        String::new()
    } else {
        base_rel.to_owned()
    };
    let mut stack = vec![Frame {
        dir: base,
        prefix,
        entries,
        depth: 1,
    }];
    let mut visited = 0_usize;
    while let Some(frame) = stack.last_mut() {
        let Some(pending) = frame.entries.next() else {
            stack.pop();
            continue;
        };
        budget.pending_bytes = budget.pending_bytes.saturating_sub(cost(&pending.name));
        if visited >= limits.max_visited || crate::call_end::call_ended() {
            budget.truncated = true;
            break;
        }
        visited += 1;
        let name = pending.name.to_string_lossy();
        let rel = if frame.prefix.is_empty() {
            name.into_owned()
        } else {
            format!("{}/{name}", frame.prefix)
        };
        let entry = WalkEntry {
            rel: &rel,
            name: &pending.name,
            kind: pending.kind,
            parent: &frame.dir,
        };
        match visit(&entry) {
            Step::Stop => break,
            Step::Skip => continue,
            Step::Continue => {}
        }
        if pending.kind != EntryKind::Dir {
            continue;
        }
        if frame.depth >= limits.max_depth {
            if has_entries(&frame.dir, &pending.name) {
                budget.truncated = true;
            }
            continue;
        }
        // A directory swapped for a link since it was listed fails here
        // (`O_NOFOLLOW`) and is skipped, as is one that cannot be read.
        let child = match frame.dir.open_dir_nofollow(&pending.name) {
            Ok(child) => child,
            Err(error) => {
                // (Swapped for something else since it was listed: skipped.)
                let still_a_dir = frame
                    .dir
                    .symlink_metadata(&pending.name)
                    .is_ok_and(|meta| meta.is_dir());
                if still_a_dir {
                    budget.failed(&error);
                }
                continue;
            }
        };
        let depth = frame.depth + 1;
        let entries = budget.list(&child).into_iter();
        stack.push(Frame {
            dir: child,
            prefix: rel,
            entries,
            depth,
        });
    }
    WalkEnd {
        truncated: budget.truncated,
    }
}
