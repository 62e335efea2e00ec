//! `file_info`: a nested description of one file or directory.

use std::io::Read;

use cap_std::fs::{Dir, File, Metadata};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::Workspace;
use crate::error::WorkspaceError;
use crate::fsutil::{self, EntryKind};
use crate::limits::{SNIFF_BYTES, TEXT_SCAN_MAX_BYTES, reserve};
use crate::text;

/// Input of `file_info`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FileInfoInput {
    /// File or directory to describe, relative to the workspace root; "." is the root.
    pub path: String,
}

/// What `file_info` found at a path.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FileInfo {
    /// The path as asked, normalised and relative to the workspace root.
    pub path: String,
    /// Whether `path` itself is a symbolic link. Everything below describes
    /// what it resolves to.
    pub is_symlink: bool,
    /// Where `path` leads once symbolic links are followed, relative to the
    /// workspace root (equal to `path` when no link is involved).
    pub resolved_path: String,
    /// What the resolved entry is: `file`, `dir` or `other` (never `symlink`).
    pub kind: EntryKind,
    /// Size in bytes (for a directory, what the file system records for it).
    pub size: u64,
    /// Last modification time, RFC 3339 in UTC, or null when not recorded.
    #[schemars(extend("format" = "date-time"))]
    pub modified: Option<String>,
    /// Access permissions.
    pub permissions: Permissions,
    /// True for a regular file with a NUL byte in its first 8 KiB (treated as
    /// binary: `read_text` and `count_lines` refuse it).
    pub binary: bool,
    /// Text facts for a regular, non-binary file of at most 64 MiB; null
    /// otherwise.
    pub text: Option<TextInfo>,
    /// Entry counts for a directory; null otherwise.
    pub directory: Option<DirectorySummary>,
}

/// Access permissions of an entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Permissions {
    /// True when nobody may write to the entry.
    pub readonly: bool,
    /// Unix permission bits in octal, e.g. `0644`; null on other platforms.
    pub mode: Option<String>,
}

/// Text facts about a file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TextInfo {
    /// Lines: newline characters plus one if the last line has none.
    pub lines: u64,
    /// Whether the whole file is valid UTF-8 (`read_text` needs it to be).
    pub is_utf8: bool,
}

/// How many entries of each kind a directory holds directly (not recursively).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct DirectorySummary {
    /// All entries.
    pub entries: u64,
    /// Regular files.
    pub files: u64,
    /// Subdirectories.
    pub dirs: u64,
    /// Symbolic links (not followed).
    pub symlinks: u64,
    /// Anything else (sockets, FIFOs, devices).
    pub other: u64,
}

impl Workspace {
    /// Describes the file or directory at `input.path`. A symbolic link is
    /// followed (and must resolve inside the root); what is described comes
    /// from the handle that was opened, not from a second lookup by name.
    pub fn file_info(&self, input: FileInfoInput) -> Result<FileInfo, WorkspaceError> {
        let _memory = self.budget.reserve("file_info", reserve::SMALL)?;
        let user = input.path.as_str();
        let target = self.root.target(user)?;
        // The path's own entry (a link is described, not followed) ...
        let own = self.root.symlink_metadata(&target, user)?;
        // ... and where it leads: a link out of the root fails here.
        let resolved_path = self.root.resolved(&target, user)?;
        let followed = self.root.metadata(&target, user)?;
        let (meta, binary, text, directory) = if followed.is_file() {
            let (file, meta) = self.root.open_file(&target, user, None)?;
            let (binary, text) = text_facts(file, &meta, user)?;
            (meta, binary, text, None)
        } else if followed.is_dir() {
            let dir = self.root.open_dir(&target, user)?;
            let meta = dir
                .dir_metadata()
                .map_err(|err| WorkspaceError::io(user, err))?;
            let summary = summarize_dir(&dir, user)?;
            (meta, false, None, Some(summary))
        } else {
            // A FIFO, socket or device: described, never opened.
            (followed, false, None, None)
        };
        Ok(FileInfo {
            resolved_path,
            path: target.rel,
            is_symlink: own.file_type().is_symlink(),
            kind: EntryKind::of(&meta),
            size: meta.len(),
            modified: fsutil::modified(&meta),
            permissions: permissions(&meta),
            binary,
            text,
            directory,
        })
    }
}

fn text_facts(
    file: File,
    meta: &Metadata,
    user: &str,
) -> Result<(bool, Option<TextInfo>), WorkspaceError> {
    if meta.len() > TEXT_SCAN_MAX_BYTES {
        let mut prefix = Vec::new();
        file.take(SNIFF_BYTES)
            .read_to_end(&mut prefix)
            .map_err(|err| WorkspaceError::io(user, err))?;
        return Ok((text::looks_binary(&prefix), None));
    }
    // Bounded even if the file grows while it is read.
    let scan =
        text::scan(file.take(TEXT_SCAN_MAX_BYTES)).map_err(|err| WorkspaceError::io(user, err))?;
    if scan.binary {
        return Ok((true, None));
    }
    Ok((
        false,
        Some(TextInfo {
            lines: scan.lines,
            is_utf8: scan.utf8,
        }),
    ))
}

fn summarize_dir(dir: &Dir, user: &str) -> Result<DirectorySummary, WorkspaceError> {
    let mut summary = DirectorySummary {
        entries: 0,
        files: 0,
        dirs: 0,
        symlinks: 0,
        other: 0,
    };
    let read = dir.entries().map_err(|err| WorkspaceError::io(user, err))?;
    for entry in read {
        if crate::call_end::call_ended() {
            return Err(WorkspaceError::CallEnded);
        }
        let entry = entry.map_err(|err| WorkspaceError::io(user, err))?;
        // The kind recorded in the directory (links are not followed), or
        // the entry's own metadata where none is recorded; a vanished entry
        // is skipped.
        let kind = match entry.file_type() {
            Ok(file_type)
                if file_type.is_symlink() || file_type.is_dir() || file_type.is_file() =>
            {
                EntryKind::of_type(file_type)
            }
            _ => match entry.metadata() {
                Ok(meta) => EntryKind::of(&meta),
                Err(_) => continue,
            },
        };
        summary.entries += 1;
        match kind {
            EntryKind::Symlink => summary.symlinks += 1,
            EntryKind::Dir => summary.dirs += 1,
            EntryKind::File => summary.files += 1,
            EntryKind::Other => summary.other += 1,
        }
    }
    Ok(summary)
}

fn permissions(meta: &Metadata) -> Permissions {
    #[cfg(unix)]
    let mode = {
        use cap_std::fs::PermissionsExt;
        Some(format!("{:04o}", meta.permissions().mode() & 0o7777))
    };
    #[cfg(not(unix))]
    let mode = None;
    Permissions {
        readonly: meta.permissions().readonly(),
        mode,
    }
}
