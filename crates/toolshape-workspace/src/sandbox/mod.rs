//! Confinement by handle: the root is opened once, and every caller path is
//! resolved beneath that open handle by the kernel, never re-opened by name.
//!
//! Rules:
//! - a caller path is normalised lexically first ([`crate::paths::normalize`]):
//!   absolute paths and `..` that climb above the root are refused outright;
//! - the rest is resolved with `cap-std` from the root's [`Dir`]: on Linux one
//!   `openat2` with `RESOLVE_BENEATH`, elsewhere component by component with
//!   `O_NOFOLLOW`. A symbolic link is followed only while it stays beneath the
//!   root; one that leads out (an absolute target, or `..` above the root)
//!   makes the whole lookup fail, whatever lies behind it, so a link to the
//!   outside cannot even tell which files exist there;
//! - what a tool reads (metadata, contents, entries) comes from the handle it
//!   opened, so swapping a name for a link between a check and a use cannot
//!   redirect it (there is no check-then-use).
//!
//! [`walk`] descends directory trees the same way: each subdirectory is opened
//! from its parent's handle without following links.

pub(crate) mod walk;

use std::io;
use std::path::{Path, PathBuf};

use cap_fs_ext::{FollowSymlinks, OpenOptionsFollowExt, OpenOptionsSyncExt};
use cap_std::fs::{Dir, File, Metadata, OpenOptions};

use crate::error::WorkspaceError;
use crate::paths;

/// The workspace root, open.
#[derive(Debug)]
pub(crate) struct Root {
    dir: Dir,
}

/// A caller path, normalised and ready to be resolved beneath the root.
#[derive(Debug, Clone)]
pub(crate) struct Target {
    /// `/`-separated, relative to the root; `.` is the root itself.
    pub(crate) rel: String,
    /// The same as a relative path (`.` for the root).
    path: PathBuf,
    /// Written with a trailing `/` (or `/.`): it must be a directory, as
    /// the kernel reads such a path (`file.txt/` is not `file.txt`).
    dir_only: bool,
}

impl Target {
    /// Whether this is the root itself.
    fn is_root(&self) -> bool {
        self.rel == "."
    }
}

/// True for the error `cap-std` returns when a lookup would leave the root
/// (`EXDEV` from `openat2`, or its own check on other systems): a
/// `PermissionDenied` with no OS error code, unlike a real `EACCES`.
fn is_escape(err: &io::Error) -> bool {
    err.kind() == io::ErrorKind::PermissionDenied && err.raw_os_error().is_none()
}

/// True when nothing is at the path: a missing entry, or a file where a
/// directory was needed on the way.
fn is_missing(err: &io::Error) -> bool {
    matches!(
        err.kind(),
        io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
    )
}

/// The caller-facing error for a failed lookup of `user`.
pub(crate) fn lookup_error(err: io::Error, user: &str) -> WorkspaceError {
    if is_escape(&err) {
        WorkspaceError::outside_root(user)
    } else if is_missing(&err) {
        WorkspaceError::not_found(user)
    } else {
        WorkspaceError::io(user, err)
    }
}

/// Most links followed by their text to resolve a path that ends at a
/// FIFO, socket or device (as the kernel's own limit on a lookup).
const MAX_LINK_HOPS: usize = 40;

/// Options to open a file for reading without ever blocking: a FIFO or a
/// device swapped in after a check opens at once and is then refused.
fn read_options(follow: FollowSymlinks) -> OpenOptions {
    let mut options = OpenOptions::new();
    options.read(true).nonblock(true).follow(follow);
    options
}

impl Root {
    /// Opens the directory at `path`. The only use of ambient authority in
    /// the crate: everything else is reached from this handle.
    pub(crate) fn open(path: &Path) -> io::Result<Self> {
        let dir = Dir::open_ambient_dir(path, cap_std::ambient_authority())?;
        Ok(Self { dir })
    }

    /// Normalises a caller path (see [`paths::normalize`]).
    pub(crate) fn target(&self, user: &str) -> Result<Target, WorkspaceError> {
        let parts = paths::normalize(user)?;
        let mut path = PathBuf::from(".");
        path.extend(&parts);
        let dir_only = !parts.is_empty() && (user.ends_with('/') || user.ends_with("/."));
        Ok(Target {
            rel: paths::rel_string(&parts),
            path,
            dir_only,
        })
    }

    /// Metadata of what `target` leads to, following links beneath the root.
    pub(crate) fn metadata(&self, target: &Target, user: &str) -> Result<Metadata, WorkspaceError> {
        let meta = if target.is_root() {
            self.dir.dir_metadata()
        } else {
            self.dir.metadata(&target.path)
        };
        let meta = meta.map_err(|err| lookup_error(err, user))?;
        if target.dir_only && !meta.is_dir() {
            return Err(WorkspaceError::not_a_directory(user));
        }
        Ok(meta)
    }

    /// Metadata of the entry `target` names: links in its parent directories
    /// are followed beneath the root, a link at the end is described, not
    /// followed.
    pub(crate) fn symlink_metadata(
        &self,
        target: &Target,
        user: &str,
    ) -> Result<Metadata, WorkspaceError> {
        if target.dir_only {
            // A trailing `/` follows a link at the end, as the kernel does.
            return self.metadata(target, user);
        }
        let meta = if target.is_root() {
            self.dir.dir_metadata()
        } else {
            self.dir.symlink_metadata(&target.path)
        };
        meta.map_err(|err| lookup_error(err, user))
    }

    /// Opens `target` as a regular file of at most `limit` bytes (`None`: no
    /// limit), following links beneath the root. The checks are made on the
    /// open handle, so they hold for what is read.
    pub(crate) fn open_file(
        &self,
        target: &Target,
        user: &str,
        limit: Option<u64>,
    ) -> Result<(File, Metadata), WorkspaceError> {
        // Refuse what is plainly not a regular file without opening it (a
        // device's open can have effects); the handle's own metadata below
        // settles it.
        if !self.metadata(target, user)?.is_file() {
            return Err(WorkspaceError::not_a_file(user));
        }
        let file = self
            .dir
            .open_with(&target.path, &read_options(FollowSymlinks::Yes))
            .map_err(|err| lookup_error(err, user))?;
        let meta = file
            .metadata()
            .map_err(|err| WorkspaceError::io(user, err))?;
        if !meta.is_file() {
            return Err(WorkspaceError::not_a_file(user));
        }
        if let Some(limit) = limit
            && meta.len() > limit
        {
            return Err(WorkspaceError::too_large(user, meta.len(), limit));
        }
        Ok((file, meta))
    }

    /// Opens `target` as a directory, following links beneath the root.
    pub(crate) fn open_dir(&self, target: &Target, user: &str) -> Result<Dir, WorkspaceError> {
        if !self.metadata(target, user)?.is_dir() {
            return Err(WorkspaceError::not_a_directory(user));
        }
        let opened = if target.is_root() {
            self.dir.try_clone()
        } else {
            self.dir.open_dir(&target.path)
        };
        opened.map_err(|err| match err.kind() {
            io::ErrorKind::NotADirectory => WorkspaceError::not_a_directory(user),
            _ => lookup_error(err, user),
        })
    }

    /// Where `target` leads once links are followed, relative to the root
    /// (`.` for the root itself). The resolution is itself confined.
    ///
    /// A FIFO, socket or device at the end is never opened to resolve it
    /// (where `/proc` cannot be used, as on macOS, resolving opens the
    /// last component for reading, which blocks on a FIFO without a
    /// writer): links to it are followed by their text, and its folder
    /// resolved instead.
    pub(crate) fn resolved(&self, target: &Target, user: &str) -> Result<String, WorkspaceError> {
        let mut path = target.path.clone();
        let mut special_name = None;
        let mut hops = 0;
        loop {
            let meta = self
                .dir
                .symlink_metadata(&path)
                .map_err(|err| lookup_error(err, user))?;
            if meta.is_file() || meta.is_dir() {
                break;
            }
            if !meta.file_type().is_symlink() {
                special_name = path.file_name().map(std::ffi::OsStr::to_owned);
                path = path.parent().map(Path::to_path_buf).unwrap_or_default();
                break;
            }
            hops += 1;
            if hops > MAX_LINK_HOPS {
                // Not handed on to a resolution that would open what it ends at.
                return Err(WorkspaceError::io(
                    user,
                    io::Error::other("too many levels of symbolic links"),
                ));
            }
            let leads_to = self
                .dir
                .read_link(&path)
                .map_err(|err| lookup_error(err, user))?;
            if leads_to.is_absolute() {
                return Err(WorkspaceError::outside_root(user));
            }
            path = path.parent().unwrap_or(Path::new("")).join(leads_to);
        }
        if path.as_os_str().is_empty() {
            path = PathBuf::from(".");
        }
        let mut canonical = self
            .dir
            .canonicalize(&path)
            .map_err(|err| lookup_error(err, user))?;
        if let Some(name) = special_name {
            canonical.push(name);
        }
        let parts: Vec<String> = canonical
            .components()
            .filter_map(|part| match part {
                std::path::Component::Normal(name) => Some(name.to_string_lossy().into_owned()),
                _ => None,
            })
            .collect();
        Ok(paths::rel_string(&parts))
    }
}

/// Opens the entry `name` of `dir` for reading without following a link
/// there (links in a walk are reported, never followed).
pub(crate) fn open_entry_nofollow(dir: &Dir, name: &Path) -> io::Result<File> {
    dir.open_with(name, &read_options(FollowSymlinks::No))
}

/// Opens `name` beneath `dir` for reading, following links only while they
/// stay beneath `dir`.
pub(crate) fn open_entry_following(dir: &Dir, name: &Path) -> io::Result<File> {
    dir.open_with(name, &read_options(FollowSymlinks::Yes))
}
