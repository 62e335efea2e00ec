//! `list_directory`: the entries of one directory, as a bare JSON array.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::Workspace;
use crate::error::WorkspaceError;
use crate::fsutil::{self, EntryKind};
use crate::limits::{LIST_MAX_ENTRIES, reserve};

/// Input of `list_directory`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListDirectoryInput {
    /// Directory to list, relative to the workspace root; "." is the root itself.
    pub path: String,
}

/// One entry of a directory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct DirEntry {
    /// The entry's file name (not a path). Names that are not valid UTF-8
    /// have the offending bytes replaced by U+FFFD.
    pub name: String,
    /// What the entry is; a symbolic link is `symlink` whatever it points to.
    pub kind: EntryKind,
    /// Size in bytes. For a file, its length; for a directory or a symbolic
    /// link, the size the file system records for the entry itself.
    pub size: u64,
    /// Last modification time, RFC 3339 in UTC (e.g. `2026-11-21T20:17:44Z`),
    /// or null when the file system does not record one.
    #[schemars(extend("format" = "date-time"))]
    pub modified: Option<String>,
}

impl Workspace {
    /// Lists the directory at `input.path` (links in the path are followed
    /// if they stay inside the root; entries that are links are not).
    pub fn list_directory(
        &self,
        input: ListDirectoryInput,
    ) -> Result<Vec<DirEntry>, WorkspaceError> {
        let _memory = self
            .budget
            .reserve("list_directory", reserve::LIST_DIRECTORY)?;
        let user = input.path.as_str();
        let target = self.root.target(user)?;
        let dir = self.root.open_dir(&target, user)?;
        let read = dir.entries().map_err(|err| WorkspaceError::io(user, err))?;
        let mut entries = Vec::new();
        for entry in read {
            let entry = entry.map_err(|err| WorkspaceError::io(user, err))?;
            if entries.len() as u64 >= LIST_MAX_ENTRIES {
                return Err(WorkspaceError::too_many(
                    user,
                    "directory entries",
                    LIST_MAX_ENTRIES,
                    "; use `find` with a glob to look for specific entries",
                ));
            }
            // `DirEntry::metadata` is the entry's own (`fstatat` on the open
            // directory, not following links). An entry removed since it was
            // listed is skipped.
            let Ok(meta) = entry.metadata() else {
                continue;
            };
            entries.push(DirEntry {
                name: entry.file_name().to_string_lossy().into_owned(),
                kind: EntryKind::of(&meta),
                size: meta.len(),
                modified: fsutil::modified(&meta),
            });
        }
        entries.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(entries)
    }
}
