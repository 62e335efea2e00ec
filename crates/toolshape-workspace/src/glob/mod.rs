//! Globs for `find`: checked against hard bounds, parsed by `globset`, and
//! compiled to a size-limited regular expression.
//!
//! The order matters: [`bounds::check`] runs first, so no pattern that could
//! exhaust the parser's stack or the compiler's memory reaches them. The
//! regular expression is compiled here (not by `GlobBuilder::compile_matcher`,
//! which panics when compilation fails) with [`GLOB_REGEX_SIZE_LIMIT`],
//! [`GLOB_REGEX_DFA_SIZE_LIMIT`] and [`GLOB_MAX_NESTING`], so a pattern that is
//! within the bounds yet still too big comes back as an error. The parser runs
//! under `catch_unwind` only as a last resort against a bug in it.

mod bounds;

use std::panic::{AssertUnwindSafe, catch_unwind};

use globset::GlobBuilder;
use regex::bytes::{Regex, RegexBuilder};

use crate::error::WorkspaceError;
use crate::limits::{GLOB_MAX_NESTING, GLOB_REGEX_DFA_SIZE_LIMIT, GLOB_REGEX_SIZE_LIMIT};

/// A checked glob and the directory its fixed leading segments name.
#[derive(Debug)]
pub(crate) struct Pattern {
    /// Leading segments without wildcards (`.` for none): where to walk.
    pub(crate) prefix: String,
    regex: Regex,
    /// It ended in `/`: only folders match.
    dirs_only: bool,
    /// How many segments deep every match is, when that is fixed (no `**`,
    /// no `{...}` alternation or `[...]` class, which may hold a `/`, no
    /// escape).
    depth: Option<usize>,
}

fn has_meta(segment: &str) -> bool {
    segment.contains(['*', '?', '[', ']', '{', '}', '\\'])
}

/// Nesting the regular expression may have: each glob alternation is a
/// group holding an alternation of concatenations, each wildcard a
/// repetition or class, plus the outer levels. A glob within
/// [`GLOB_MAX_NESTING`] stays far below it.
const REGEX_NEST_LIMIT: usize = GLOB_MAX_NESTING * 4 + 16;

impl Pattern {
    /// Checks, parses and compiles `glob`.
    pub(crate) fn parse(glob: &str) -> Result<Self, WorkspaceError> {
        if glob.is_empty() {
            return Err(WorkspaceError::invalid_glob(glob, "the pattern is empty"));
        }
        if glob.contains('\0') {
            return Err(WorkspaceError::invalid_glob(
                glob,
                "the pattern contains a NUL byte",
            ));
        }
        if let Some(why) = bounds::check(glob) {
            return Err(WorkspaceError::invalid_glob(glob, why));
        }
        if glob.starts_with('/') {
            return Err(WorkspaceError::outside_root(glob));
        }
        let (segments, dirs_only) = normalize(glob)?;
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
        let regex = compile(glob, &normalized)?;
        // (A class may match `/`, and an escape may stand for one.)
        let fixed_depth = !normalized.contains("**") && !normalized.contains(['{', '[', '\\']);
        Ok(Self {
            prefix,
            regex,
            dirs_only,
            depth: fixed_depth.then_some(segments.len()),
        })
    }

    /// Whether the folder `path` (relative to the root, `/`-separated) may
    /// hold a match: not when every match is fewer segments deep than its
    /// entries (`package.json` is not looked for in `node_modules`).
    pub(crate) fn may_match_below(&self, path: &str) -> bool {
        let segments = path.split('/').count();
        self.depth.is_none_or(|depth| segments < depth)
    }

    /// Whether `path` (relative to the root, `/`-separated) matches; a
    /// pattern ending in `/` matches folders only (`is_dir`).
    pub(crate) fn is_match(&self, path: &str, is_dir: bool) -> bool {
        (is_dir || !self.dirs_only) && self.regex.is_match(path.as_bytes())
    }
}

/// The glob's segments read as a path's are: empty and `.` segments left
/// out, a `..` taking the fixed segment before it away (`src/../src/*.rs`
/// is `src/*.rs`); whether it ended in `/` (folders only). A `..` that
/// climbs above the root is outside it; one after a wildcard is refused
/// (which folder it leaves is not fixed).
fn normalize(glob: &str) -> Result<(Vec<&str>, bool), WorkspaceError> {
    // `src/` and `src/.` alike, as a path reads them.
    let dirs_only = matches!(glob.rsplit('/').next(), Some("" | ".")) && glob.contains('/');
    let mut segments: Vec<&str> = Vec::new();
    for segment in glob.split('/') {
        match segment {
            "" | "." => {}
            ".." => match segments.last() {
                None => return Err(WorkspaceError::outside_root(glob)),
                Some(last) if has_meta(last) => {
                    return Err(WorkspaceError::invalid_glob(
                        glob,
                        "a `..` after a wildcard segment names no one folder",
                    ));
                }
                Some(_) => {
                    segments.pop();
                }
            },
            segment => segments.push(segment),
        }
    }
    if segments.is_empty() {
        return Err(WorkspaceError::invalid_glob(
            glob,
            "the pattern names the root itself; use `*` for its entries",
        ));
    }
    Ok((segments, dirs_only))
}

/// Parses `normalized` with `globset` (`*` within a segment, `**` across,
/// backslash escapes) and compiles its regular expression within the limits.
fn compile(glob: &str, normalized: &str) -> Result<Regex, WorkspaceError> {
    let parsed = catch_unwind(AssertUnwindSafe(|| {
        GlobBuilder::new(normalized)
            .literal_separator(true)
            .backslash_escape(true)
            .build()
    }));
    let parsed = match parsed {
        Ok(Ok(parsed)) => parsed,
        Ok(Err(err)) => return Err(WorkspaceError::invalid_glob(glob, err.kind().to_string())),
        Err(_) => {
            return Err(WorkspaceError::invalid_glob(
                glob,
                "the glob parser failed on it",
            ));
        }
    };
    let nest_limit = u32::try_from(REGEX_NEST_LIMIT).unwrap_or(u32::MAX);
    // globset's regular expressions are byte-oriented (`(?-u)`) and let `.`
    // match a newline; the same settings as its own matcher.
    RegexBuilder::new(parsed.regex())
        .dot_matches_new_line(true)
        .size_limit(GLOB_REGEX_SIZE_LIMIT)
        .dfa_size_limit(GLOB_REGEX_DFA_SIZE_LIMIT)
        .nest_limit(nest_limit)
        .build()
        .map_err(|err| {
            let why = match err {
                regex::Error::CompiledTooBig(limit) => format!(
                    "it compiles to a matcher over the limit of {limit} bytes; use fewer wildcards or alternations"
                ),
                _ => "it cannot be compiled to a matcher".to_owned(),
            };
            WorkspaceError::invalid_glob(glob, why)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matches(glob: &str, path: &str) -> bool {
        Pattern::parse(glob).is_ok_and(|p| p.is_match(path, false))
    }

    #[test]
    fn globs_match_like_globset() {
        assert!(matches("src/**/*.rs", "src/a/b/c.rs"));
        assert!(matches("src/**/*.rs", "src/c.rs"));
        assert!(!matches("src/*.rs", "src/a/c.rs"));
        assert!(matches("**", "a/b/c"));
        assert!(matches("{src,tests}/*.{rs,md}", "tests/x.md"));
        assert!(matches(r"a\*b", "a*b"));
        assert!(!matches(r"a\*b", "axb"));
        assert!(matches("[!a]?", "bc"));
        assert!(matches("*", "line\nbreak"));
    }

    #[test]
    fn prefixes_are_the_fixed_leading_segments() {
        let prefix = |glob: &str| Pattern::parse(glob).map(|p| p.prefix).unwrap_or_default();
        assert_eq!(prefix("src/**/*.rs"), "src");
        assert_eq!(prefix("./src/bin/*"), "src/bin");
        assert_eq!(prefix("*.rs"), ".");
        assert_eq!(prefix("Cargo.toml"), ".");
    }

    #[test]
    fn globs_at_every_bound_still_compile() {
        use crate::limits::{GLOB_MAX_BRANCHES, GLOB_MAX_BYTES, GLOB_MAX_WILDCARDS};
        let nested = format!(
            "{}**/x*{}",
            "{a*,".repeat(GLOB_MAX_NESTING),
            "}".repeat(GLOB_MAX_NESTING)
        );
        assert!(Pattern::parse(&nested).is_ok(), "{nested}");
        let stars = "*a".repeat(GLOB_MAX_WILDCARDS);
        assert!(Pattern::parse(&stars).is_ok());
        let branches = format!("{{{}b}}", "ab,".repeat(GLOB_MAX_BRANCHES - 1));
        assert!(Pattern::parse(&branches).is_ok(), "{branches}");
        let literal = "é".repeat(GLOB_MAX_BYTES / 2);
        assert!(Pattern::parse(&literal).is_ok_and(|p| p.is_match(&literal, false)));
    }

    #[test]
    fn hostile_globs_are_errors_not_panics() {
        for glob in [
            "{".repeat(20_000) + &"}".repeat(20_000),
            "{a".repeat(260) + &"}".repeat(260),
            "*".repeat(100_000),
            "a".repeat(1_000_000),
            "[".repeat(10_000),
        ] {
            let err = Pattern::parse(&glob)
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default();
            assert!(err.starts_with("invalid glob `"), "{err}");
            assert!(err.len() < 600, "{}", err.len());
        }
    }
}
