//! `find`: entries by exact path or by glob, with a `oneOf` input.

use std::fs;

use globset::{GlobBuilder, GlobMatcher};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use walkdir::WalkDir;

use crate::Workspace;
use crate::error::WorkspaceError;
use crate::fsutil::EntryKind;
use crate::limits::{FIND_MAX_DEPTH, FIND_MAX_MATCHES, FIND_MAX_VISITED};
use crate::paths;

/// Input of `find`: exactly one of `path` or `glob`.
///
/// Externally tagged, so `{"path": "src/lib.rs"}` and `{"glob": "**/*.rs"}`
/// are the two accepted forms and the schema is a `oneOf` of two objects.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum FindInput {
    /// Look up one exact path, relative to the workspace root: the result
    /// has one match, or none when nothing is there.
    #[serde(rename = "path")]
    Path(String),
    /// Match every path in the workspace against a glob such as
    /// `src/**/*.rs` (relative to the root; `*` stays within one segment,
    /// `**` spans segments).
    #[serde(rename = "glob")]
    Glob(String),
}

/// Result of `find`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct FindOutput {
    /// The matching entries in walk order: depth first, each directory's
    /// entries sorted by name (at most 1000).
    pub matches: Vec<FindMatch>,
    /// True when the search stopped early: more than 1000 matches, more than
    /// 100000 entries looked at, or directories deeper than 32 levels below
    /// the glob's fixed prefix. Narrow the glob to see the rest.
    pub truncated: bool,
}

/// One entry found by `find`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct FindMatch {
    /// Path relative to the workspace root, `/`-separated.
    pub path: String,
    /// What the entry is; symbolic links are reported, not followed.
    pub kind: EntryKind,
    /// Size in bytes (for directories and links, the file system's own
    /// record size).
    pub size: u64,
}

impl Workspace {
    /// Finds entries by exact path or by glob (see [`FindInput`]).
    pub fn find(&self, input: FindInput) -> Result<FindOutput, WorkspaceError> {
        match input {
            FindInput::Path(path) => self.find_path(&path),
            FindInput::Glob(glob) => self.find_glob(&glob),
        }
    }

    fn find_path(&self, user: &str) -> Result<FindOutput, WorkspaceError> {
        let matches = match paths::resolve_nofollow(&self.root, user) {
            Ok((found, meta)) => vec![FindMatch {
                path: found.rel,
                kind: EntryKind::of(&meta),
                size: meta.len(),
            }],
            Err(WorkspaceError::NotFound { .. }) => Vec::new(),
            Err(err) => return Err(err),
        };
        Ok(FindOutput {
            matches,
            truncated: false,
        })
    }

    fn find_glob(&self, glob: &str) -> Result<FindOutput, WorkspaceError> {
        let pattern = Pattern::parse(glob)?;
        let mut out = FindOutput {
            matches: Vec::new(),
            truncated: false,
        };
        let base = match paths::resolve(&self.root, &pattern.prefix) {
            Ok(base) => base,
            Err(WorkspaceError::NotFound { .. }) => return Ok(out),
            Err(WorkspaceError::OutsideRoot { .. }) => {
                return Err(WorkspaceError::outside_root(glob));
            }
            Err(err) => return Err(err),
        };
        if !fs::metadata(&base.abs).is_ok_and(|meta| meta.is_dir()) {
            return Ok(out);
        }
        let walk = WalkDir::new(&base.abs)
            .min_depth(1)
            .max_depth(FIND_MAX_DEPTH)
            .follow_links(false)
            .sort_by_file_name();
        for (visited, entry) in walk.into_iter().enumerate() {
            if visited >= FIND_MAX_VISITED {
                out.truncated = true;
                break;
            }
            // Unreadable directories are skipped.
            let Ok(entry) = entry else {
                continue;
            };
            let file_type = entry.file_type();
            if entry.depth() == FIND_MAX_DEPTH && file_type.is_dir() && has_children(&entry) {
                out.truncated = true;
            }
            let below = paths::rel_of(&base.abs, entry.path());
            let path = if base.rel == "." {
                below
            } else {
                format!("{}/{below}", base.rel)
            };
            if !pattern.matcher.is_match(&path) {
                continue;
            }
            if out.matches.len() >= FIND_MAX_MATCHES {
                out.truncated = true;
                break;
            }
            // `follow_links(false)`: this is the entry's own metadata.
            let size = entry.metadata().map_or(0, |meta| meta.len());
            let kind = if file_type.is_symlink() {
                EntryKind::Symlink
            } else if file_type.is_dir() {
                EntryKind::Dir
            } else if file_type.is_file() {
                EntryKind::File
            } else {
                EntryKind::Other
            };
            out.matches.push(FindMatch { path, kind, size });
        }
        Ok(out)
    }
}

fn has_children(entry: &walkdir::DirEntry) -> bool {
    fs::read_dir(entry.path()).is_ok_and(|mut read| read.next().is_some())
}

/// A checked glob and the directory its fixed leading segments name.
struct Pattern {
    /// Leading segments without wildcards (`.` for none): where to walk.
    prefix: String,
    matcher: GlobMatcher,
}

impl Pattern {
    fn parse(glob: &str) -> Result<Self, WorkspaceError> {
        if glob.is_empty() {
            return Err(WorkspaceError::invalid_glob(glob, "the pattern is empty"));
        }
        if glob.contains('\0') {
            return Err(WorkspaceError::invalid_glob(
                glob,
                "the pattern contains a NUL byte",
            ));
        }
        if glob.starts_with('/') || glob.starts_with('\\') {
            return Err(WorkspaceError::outside_root(glob));
        }
        let mut segments: Vec<&str> = glob.split('/').collect();
        if segments.contains(&"..") {
            return Err(WorkspaceError::outside_root(glob));
        }
        while segments.len() > 1 && segments.first() == Some(&".") {
            segments.remove(0);
        }
        let normalized = segments.join("/");
        let fixed: Vec<&str> = segments[..segments.len().saturating_sub(1)]
            .iter()
            .take_while(|segment| !segment.is_empty() && !has_meta(segment))
            .copied()
            .collect();
        let prefix = if fixed.is_empty() {
            ".".to_owned()
        } else {
            fixed.join("/")
        };
        let matcher = GlobBuilder::new(&normalized)
            .literal_separator(true)
            .backslash_escape(true)
            .build()
            .map_err(|err| WorkspaceError::invalid_glob(glob, err.kind().to_string()))?
            .compile_matcher();
        Ok(Self { prefix, matcher })
    }
}

fn has_meta(segment: &str) -> bool {
    segment.contains(['*', '?', '[', ']', '{', '}', '\\'])
}
