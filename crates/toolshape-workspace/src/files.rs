//! The workspace's files as whole contents (what an MCP resource read
//! returns), and the files there are to list.

use crate::error::WorkspaceError;
use crate::fsutil::{self, EntryKind};
use crate::limits::{
    FIND_MAX_DEPTH, FIND_MAX_VISITED, READ_MAX_BYTES, SNIFF_BYTES, WALK_MAX_PENDING_BYTES, reserve,
};
use crate::sandbox::walk::{self, Step, WalkLimits};
use crate::{Workspace, text};

/// A file's contents, whole.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileContents {
    /// UTF-8 text without NUL bytes.
    Text(String),
    /// Anything else.
    Binary(Vec<u8>),
}

/// One file of the workspace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListedFile {
    /// Path relative to the root, `/`-separated.
    pub path: String,
    /// Size in bytes.
    pub size: u64,
}

impl Workspace {
    /// The whole contents of the file at `user` (relative to the root), text
    /// when it is UTF-8 without NUL bytes. Files over 1 MiB
    /// ([`READ_MAX_BYTES`]) are refused, never cut: a resource is read whole.
    pub fn read_file(&self, user: &str) -> Result<FileContents, WorkspaceError> {
        let _memory = self.budget.reserve(
            "read_file",
            3 * READ_MAX_BYTES.max(SNIFF_BYTES) + reserve::READ_TEXT_BASE,
        )?;
        let target = self.root.target(user)?;
        let (file, _meta) = self.root.open_file(&target, user, Some(READ_MAX_BYTES))?;
        let (bytes, more) = fsutil::read_prefix(file, READ_MAX_BYTES, user)?;
        if more {
            // Grew past the limit since it was opened.
            return Err(WorkspaceError::too_large(
                user,
                READ_MAX_BYTES + 1,
                READ_MAX_BYTES,
            ));
        }
        if text::looks_binary(&bytes) {
            return Ok(FileContents::Binary(bytes));
        }
        match String::from_utf8(bytes) {
            Ok(text) => Ok(FileContents::Text(text)),
            Err(not_text) => Ok(FileContents::Binary(not_text.into_bytes())),
        }
    }

    /// The regular files of the workspace, depth first in name order, at
    /// most `max` of them; says whether there were more. Hidden files and
    /// folders (names starting with `.`: `.git`, `.env`) are left out (they
    /// stay readable by path), and folders count for nothing but the walk's
    /// bounds (100000 entries looked at, 32 levels, as `find`'s): a tree of
    /// many folders does not crowd its files out.
    pub fn list_files(&self, max: usize) -> Result<(Vec<ListedFile>, bool), WorkspaceError> {
        let _memory = self.budget.reserve("resources/list", reserve::FIND_GLOB)?;
        let target = self.root.target(".")?;
        let dir = self.root.open_dir(&target, ".")?;
        let limits = WalkLimits {
            max_depth: FIND_MAX_DEPTH,
            max_visited: FIND_MAX_VISITED,
            max_pending_bytes: WALK_MAX_PENDING_BYTES,
        };
        let mut files = Vec::new();
        let mut truncated = false;
        let end = walk::walk(dir, &target.rel, limits, |entry| {
            if entry.name.as_encoded_bytes().starts_with(b".") {
                return Step::Skip;
            }
            if entry.kind != EntryKind::File {
                return Step::Continue;
            }
            if files.len() >= max {
                truncated = true;
                return Step::Stop;
            }
            let size = entry
                .parent
                .symlink_metadata(entry.name)
                .map_or(0, |meta| meta.len());
            files.push(ListedFile {
                path: entry.rel.to_owned(),
                size,
            });
            Step::Continue
        });
        Ok((files, truncated || end.truncated))
    }
}
