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
/// Reads a chunk at a time, and stops with an error once the call it works
/// for has ended (a slow file system, a cancelled call).
pub(crate) fn read_prefix(
    file: impl Read,
    limit: u64,
    user: &str,
) -> Result<(Vec<u8>, bool), WorkspaceError> {
    const CHUNK: u64 = 64 * 1024;
    let mut buf = Vec::new();
    let mut reader = file.take(limit.saturating_add(1));
    loop {
        if crate::call_end::call_ended() {
            return Err(WorkspaceError::io(user, crate::call_end::ended_reading()));
        }
        let read = (&mut reader)
            .take(CHUNK)
            .read_to_end(&mut buf)
            .map_err(|err| WorkspaceError::io(user, err))?;
        if read == 0 {
            break;
        }
    }
    let more = u64::try_from(buf.len()).map_or(true, |len| len > limit);
    if more {
        buf.truncate(usize::try_from(limit).unwrap_or(usize::MAX));
    }
    Ok((buf, more))
}

#[cfg(test)]
mod tests {
    use std::io::Read;
    use std::time::{Duration, Instant};

    use super::read_prefix;
    use crate::call_end::CallEnd;

    /// Endless `a`s, counting what was read; ends `call` at the first read.
    struct Endless {
        read: usize,
        call: Option<CallEnd>,
    }

    impl Read for Endless {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            self.call.take();
            let n = buf.len().min(4096);
            buf[..n].fill(b'a');
            self.read += n;
            Ok(n)
        }
    }

    #[test]
    fn reads_up_to_the_limit_and_says_there_is_more() {
        let mut file = Endless {
            read: 0,
            call: None,
        };
        let (bytes, more) = read_prefix(&mut file, 200_000, "f").unwrap();
        assert_eq!((bytes.len(), more), (200_000, true));
        let (bytes, more) = read_prefix(&b"short"[..], 200_000, "f").unwrap();
        assert_eq!((bytes, more), (b"short".to_vec(), false));
    }

    #[test]
    fn stops_within_a_chunk_once_its_call_has_ended() {
        let end = CallEnd::default();
        let _working = end.flag().enter(Instant::now() + Duration::from_secs(60));
        let mut file = Endless {
            read: 0,
            call: Some(end),
        };
        assert!(read_prefix(&mut file, 1 << 20, "f").is_err());
        assert!(file.read <= 64 * 1024, "{}", file.read);
    }
}
