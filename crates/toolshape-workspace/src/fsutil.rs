//! Small file-system helpers shared by the tools.

use std::io::Read;

use cap_std::fs::{FileType, Metadata};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::WorkspaceError;
use crate::time::rfc3339_utc;

/// What a directory entry is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum EntryKind {
    /// A regular file.
    File,
    /// A directory.
    Dir,
    /// A symbolic link (reported as a link, not followed).
    Symlink,
    /// Anything else: a socket, a FIFO, a device.
    Other,
}

impl EntryKind {
    /// The kind recorded in `meta` (which is a link's own for `lstat` metadata).
    pub(crate) fn of(meta: &Metadata) -> Self {
        Self::of_type(meta.file_type())
    }

    /// The kind of `file_type`.
    pub(crate) fn of_type(file_type: FileType) -> Self {
        if file_type.is_symlink() {
            Self::Symlink
        } else if file_type.is_dir() {
            Self::Dir
        } else if file_type.is_file() {
            Self::File
        } else {
            Self::Other
        }
    }
}

/// Last modification time of `meta` as RFC 3339 UTC, if the platform has one.
pub(crate) fn modified(meta: &Metadata) -> Option<String> {
    meta.modified()
        .ok()
        .and_then(|time| rfc3339_utc(time.into_std()))
}

/// Reads at most `limit` bytes of `file`, and tells whether there was more.
pub(crate) fn read_prefix(
    file: impl Read,
    limit: u64,
    user: &str,
) -> Result<(Vec<u8>, bool), WorkspaceError> {
    let mut buf = Vec::new();
    file.take(limit.saturating_add(1))
        .read_to_end(&mut buf)
        .map_err(|err| WorkspaceError::io(user, err))?;
    let more = u64::try_from(buf.len()).map_or(true, |len| len > limit);
    if more {
        buf.truncate(usize::try_from(limit).unwrap_or(usize::MAX));
    }
    Ok((buf, more))
}
