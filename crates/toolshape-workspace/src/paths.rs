//! Path confinement: every caller path is relative to the workspace root and
//! must stay inside it, lexically and after symbolic links are resolved.
//!
//! Rules:
//! - absolute paths (and, on Windows, drive prefixes) are refused;
//! - `.` segments are dropped and `..` pops the previous segment lexically
//!   (`a/../b` is `b`); a `..` that would climb above the root is refused;
//! - the result is canonicalized (all symlinks followed) and must still start
//!   with the canonical root, component by component;
//! - when the path does not exist, its deepest existing ancestor decides
//!   between `NotFound` and `OutsideRoot`, so a link to the outside cannot be
//!   used to probe which files exist there.

use std::fs;
use std::io;
use std::path::{Component, Path, PathBuf};

use crate::error::WorkspaceError;
use crate::limits::MAX_PATH_BYTES;

/// A caller path that was checked against the root.
#[derive(Debug, Clone)]
pub(crate) struct Confined {
    /// The path relative to the root, `/`-separated and normalised; `.` is the root.
    pub(crate) rel: String,
    /// Where it is on disk (canonical, or canonical parent + final name for
    /// [`resolve_nofollow`]).
    pub(crate) abs: PathBuf,
}

/// Lexically normalises `user` into the segments below the root.
pub(crate) fn normalize(user: &str) -> Result<Vec<String>, WorkspaceError> {
    if user.contains('\0') {
        return Err(WorkspaceError::invalid_path(user, "it contains a NUL byte"));
    }
    if user.len() > MAX_PATH_BYTES {
        return Err(WorkspaceError::invalid_path(
            user,
            "it is longer than 4096 bytes",
        ));
    }
    let mut parts: Vec<String> = Vec::new();
    for component in Path::new(user).components() {
        match component {
            Component::Prefix(_) | Component::RootDir => {
                return Err(WorkspaceError::outside_root(user));
            }
            Component::CurDir => {}
            Component::ParentDir => {
                if parts.pop().is_none() {
                    return Err(WorkspaceError::outside_root(user));
                }
            }
            Component::Normal(name) => match name.to_str() {
                Some(name) => parts.push(name.to_owned()),
                None => return Err(WorkspaceError::invalid_path(user, "it is not valid UTF-8")),
            },
        }
    }
    Ok(parts)
}

/// Joins normalised segments into the `/`-separated relative form (`.` for none).
pub(crate) fn rel_string(parts: &[String]) -> String {
    if parts.is_empty() {
        ".".to_owned()
    } else {
        parts.join("/")
    }
}

/// The `/`-separated form of `abs` relative to `root` (`.` for the root).
pub(crate) fn rel_of(root: &Path, abs: &Path) -> String {
    let Ok(rest) = abs.strip_prefix(root) else {
        return ".".to_owned();
    };
    let parts: Vec<String> = rest
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    rel_string(&parts)
}

fn join(root: &Path, parts: &[String]) -> PathBuf {
    let mut path = root.to_path_buf();
    path.extend(parts);
    path
}

fn is_missing(err: &io::Error) -> bool {
    matches!(
        err.kind(),
        io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
    )
}

/// Canonicalizes `joined` and checks it against `root`.
fn confine(root: &Path, joined: &Path, user: &str) -> Result<PathBuf, WorkspaceError> {
    match fs::canonicalize(joined) {
        Ok(canonical) if canonical.starts_with(root) => Ok(canonical),
        Ok(_) => Err(WorkspaceError::outside_root(user)),
        Err(err) if is_missing(&err) => Err(classify_missing(root, joined, user)),
        Err(err) => Err(WorkspaceError::io(user, err)),
    }
}

/// For a path that does not resolve: outside if its deepest existing
/// ancestor resolves outside the root, else not found.
fn classify_missing(root: &Path, joined: &Path, user: &str) -> WorkspaceError {
    for ancestor in joined.ancestors().skip(1) {
        if let Ok(canonical) = fs::canonicalize(ancestor) {
            return if canonical.starts_with(root) {
                WorkspaceError::not_found(user)
            } else {
                WorkspaceError::outside_root(user)
            };
        }
    }
    WorkspaceError::not_found(user)
}

/// Resolves `user` following every symlink; the target must be inside `root`.
pub(crate) fn resolve(root: &Path, user: &str) -> Result<Confined, WorkspaceError> {
    let parts = normalize(user)?;
    let abs = confine(root, &join(root, &parts), user)?;
    Ok(Confined {
        rel: rel_string(&parts),
        abs,
    })
}

/// Resolves `user` following symlinks in its parent directories only: the
/// parent must resolve inside `root`, and the final segment is looked at
/// with `lstat` (a symlink there is reported, never followed).
pub(crate) fn resolve_nofollow(
    root: &Path,
    user: &str,
) -> Result<(Confined, fs::Metadata), WorkspaceError> {
    let mut parts = normalize(user)?;
    let rel = rel_string(&parts);
    let abs = match parts.pop() {
        None => root.to_path_buf(),
        Some(name) => {
            let parent = confine(root, &join(root, &parts), user)?;
            parent.join(name)
        }
    };
    match fs::symlink_metadata(&abs) {
        Ok(meta) => Ok((Confined { rel, abs }, meta)),
        Err(err) if is_missing(&err) => Err(WorkspaceError::not_found(user)),
        Err(err) => Err(WorkspaceError::io(user, err)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalize_handles_dots_and_refuses_escapes() {
        assert_eq!(
            normalize("a/./b/../c").ok(),
            Some(vec!["a".to_owned(), "c".to_owned()])
        );
        assert_eq!(normalize(".").ok(), Some(vec![]));
        assert_eq!(normalize("").ok(), Some(vec![]));
        assert!(matches!(
            normalize(".."),
            Err(WorkspaceError::OutsideRoot { .. })
        ));
        assert!(matches!(
            normalize("a/../../b"),
            Err(WorkspaceError::OutsideRoot { .. })
        ));
        assert!(matches!(
            normalize("/etc"),
            Err(WorkspaceError::OutsideRoot { .. })
        ));
        assert!(matches!(
            normalize("a\0b"),
            Err(WorkspaceError::InvalidPath { .. })
        ));
    }
}
