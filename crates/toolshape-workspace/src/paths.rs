//! Lexical checks of caller paths, before anything is looked up: every path
//! is relative to the workspace root and may not climb above it.
//!
//! Rules:
//! - absolute paths (and, on Windows, drive prefixes) are refused;
//! - `.` segments are dropped and `..` pops the previous segment lexically
//!   (`a/../b` is `b`); a `..` that would climb above the root is refused;
//! - paths longer than [`MAX_PATH_BYTES`], or holding a NUL byte or invalid
//!   UTF-8, are refused.
//!
//! What the segments lead to (symbolic links included) is then resolved
//! beneath the open root by [`crate::sandbox`].

use std::path::{Component, Path};

use crate::error::WorkspaceError;
use crate::limits::MAX_PATH_BYTES;

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
