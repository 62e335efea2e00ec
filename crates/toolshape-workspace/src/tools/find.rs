//! `find`: entries by exact path or by glob, with a `oneOf` input.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::Workspace;
use crate::error::WorkspaceError;
use crate::fsutil::EntryKind;
use crate::glob::Pattern;
use crate::limits::{
    FIND_MAX_DEPTH, FIND_MAX_MATCHES, FIND_MAX_VISITED, WALK_MAX_PENDING_BYTES, reserve,
};
use crate::sandbox::walk::{self, Step, WalkLimits};

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
    /// `**` spans segments). At most 1024 bytes, 64 segments, 64 wildcards,
    /// 128 alternation branches and 8 levels of nested `{...}`.
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
        let _memory = self.budget.reserve("find", reserve::SMALL)?;
        let target = self.root.target(user)?;
        let matches = match self.root.symlink_metadata(&target, user) {
            Ok(meta) => vec![FindMatch {
                path: target.rel,
                kind: EntryKind::of(&meta),
                size: meta.len(),
            }],
            // `notes.txt/` names a folder there is not: no match.
            Err(WorkspaceError::NotFound { .. } | WorkspaceError::NotADirectory { .. }) => {
                Vec::new()
            }
            Err(err) => return Err(err),
        };
        Ok(FindOutput {
            matches,
            truncated: false,
        })
    }

    fn find_glob(&self, glob: &str) -> Result<FindOutput, WorkspaceError> {
        let _memory = self.budget.reserve("find", reserve::FIND_GLOB)?;
        let pattern = Pattern::parse(glob)?;
        let mut out = FindOutput {
            matches: Vec::new(),
            truncated: false,
        };
        let base = self
            .root
            .target(&pattern.prefix)
            .and_then(|target| Ok((self.root.open_dir(&target, glob)?, target)));
        let (dir, target) = match base {
            Ok(base) => base,
            Err(WorkspaceError::NotFound { .. } | WorkspaceError::NotADirectory { .. }) => {
                return Ok(out);
            }
            Err(WorkspaceError::OutsideRoot { .. }) => {
                return Err(WorkspaceError::outside_root(glob));
            }
            Err(err) => return Err(err),
        };
        let limits = WalkLimits {
            max_depth: FIND_MAX_DEPTH,
            max_visited: FIND_MAX_VISITED,
            max_pending_bytes: WALK_MAX_PENDING_BYTES,
        };
        let end = walk::walk(dir, &target.rel, limits, |entry| {
            let is_dir = entry.kind == EntryKind::Dir;
            // A folder entered only when a match may be below it.
            let next = if is_dir && !pattern.may_match_below(entry.rel) {
                Step::Skip
            } else {
                Step::Continue
            };
            if !pattern.is_match(entry.rel, is_dir) {
                return next;
            }
            if out.matches.len() >= FIND_MAX_MATCHES {
                out.truncated = true;
                return Step::Stop;
            }
            // The entry's own metadata, from its directory's handle.
            let size = entry
                .parent
                .symlink_metadata(entry.name)
                .map_or(0, |meta| meta.len());
            out.matches.push(FindMatch {
                path: entry.rel.to_owned(),
                kind: entry.kind,
                size,
            });
            next
        });
        out.truncated |= end.truncated;
        Ok(out)
    }
}
