//! Small file-system helpers shared by the tools.

use std::fs::{self, File, Metadata};
use std::io::Read;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::WorkspaceError;
use crate::paths::Confined;
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
        let file_type = meta.file_type();
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
    meta.modified().ok().and_then(rfc3339_utc)
}

/// Metadata of a resolved path (following links; `abs` is canonical anyway).
pub(crate) fn metadata(target: &Confined, user: &str) -> Result<Metadata, WorkspaceError> {
    fs::metadata(&target.abs).map_err(|err| WorkspaceError::io(user, err))
}

/// Opens a resolved path that must be a regular file of at most `limit`
/// bytes (`None`: no limit). Never opens FIFOs or devices, which could block.
pub(crate) fn open_regular(
    target: &Confined,
    user: &str,
    limit: Option<u64>,
) -> Result<(File, Metadata), WorkspaceError> {
    let meta = metadata(target, user)?;
    if !meta.is_file() {
        return Err(WorkspaceError::not_a_file(user));
    }
    if let Some(limit) = limit
        && meta.len() > limit
    {
        return Err(WorkspaceError::too_large(user, meta.len(), limit));
    }
    let file = File::open(&target.abs).map_err(|err| WorkspaceError::io(user, err))?;
    Ok((file, meta))
}

/// Reads at most `limit` bytes of `file`, and tells whether there was more.
pub(crate) fn read_prefix(
    file: File,
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
