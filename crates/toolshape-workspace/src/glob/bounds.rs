//! The size of a glob, measured before any parser or compiler sees it.
//!
//! `globset` builds nested alternations (`{a,{b,…}}`) recursively and
//! compiles every pattern to a regular expression; a hostile pattern can
//! exhaust the stack or memory there. This module reads the pattern once,
//! iteratively, with `globset`'s own tokenisation (backslash escapes,
//! `[...]` classes in which nothing is special, `{` `,` `}` alternations) and
//! refuses it when any measure passes its bound in [`crate::limits`].

use crate::limits::{
    GLOB_MAX_BRANCHES, GLOB_MAX_BYTES, GLOB_MAX_NESTING, GLOB_MAX_SEGMENTS, GLOB_MAX_WILDCARDS,
};

/// What a glob holds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Measure {
    /// `/`-separated segments.
    pub(crate) segments: usize,
    /// `*`, `**`, `?` and `[...]` classes.
    pub(crate) wildcards: usize,
    /// Deepest nesting of `{...}` alternations.
    pub(crate) nesting: usize,
    /// Alternation branches, over all groups.
    pub(crate) branches: usize,
}

/// Measures `glob` (any length: the walk is linear and iterative).
pub(crate) fn measure(glob: &str) -> Measure {
    let mut m = Measure {
        segments: 1,
        ..Measure::default()
    };
    let mut depth = 0_usize;
    let mut chars = glob.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                // An escaped character is a literal (a dangling `\` is
                // refused by the parser later).
                chars.next();
            }
            '[' => {
                m.wildcards += 1;
                // `[!…]`/`[^…]` negate, and a `]` right after the opening
                // (or the negation) is a literal member.
                if matches!(chars.peek(), Some('!' | '^')) {
                    chars.next();
                }
                if chars.peek() == Some(&']') {
                    chars.next();
                }
                // An unclosed class is refused by the parser later.
                for member in chars.by_ref() {
                    if member == ']' {
                        break;
                    }
                }
            }
            '{' => {
                depth += 1;
                m.nesting = m.nesting.max(depth);
                m.branches += 1;
            }
            '}' => depth = depth.saturating_sub(1),
            ',' if depth > 0 => m.branches += 1,
            '*' => {
                m.wildcards += 1;
                if chars.peek() == Some(&'*') {
                    chars.next();
                }
            }
            '?' => m.wildcards += 1,
            '/' => m.segments += 1,
            _ => {}
        }
    }
    m
}

/// Why a glob is refused, naming the bound it passes; `None` when it is
/// within every bound.
pub(crate) fn check(glob: &str) -> Option<String> {
    if glob.len() > GLOB_MAX_BYTES {
        return Some(format!(
            "the pattern is {} bytes long; the limit is {GLOB_MAX_BYTES} bytes",
            glob.len()
        ));
    }
    let m = measure(glob);
    let over = |what: &str, count: usize, limit: usize| {
        (count > limit).then(|| format!("the pattern has {count} {what}; the limit is {limit}"))
    };
    over("path segments", m.segments, GLOB_MAX_SEGMENTS)
        .or_else(|| {
            over(
                "wildcards (`*`, `**`, `?`, `[...]`)",
                m.wildcards,
                GLOB_MAX_WILDCARDS,
            )
        })
        .or_else(|| {
            over(
                "levels of nested `{...}` alternations",
                m.nesting,
                GLOB_MAX_NESTING,
            )
        })
        .or_else(|| {
            over(
                "`{...}` alternation branches",
                m.branches,
                GLOB_MAX_BRANCHES,
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordinary_globs_are_measured_like_globset_reads_them() {
        let m = measure("{src,tests}/**/*.{rs,md}");
        assert_eq!(
            m,
            Measure {
                segments: 3,
                wildcards: 2,
                nesting: 1,
                branches: 4
            }
        );
        // Nothing is special inside a class or after a backslash.
        assert_eq!(measure("[{*?/]").wildcards, 1);
        assert_eq!(measure("[{*?/]").nesting, 0);
        assert_eq!(measure("[]{]").nesting, 0);
        assert_eq!(measure("[!]{]x{").nesting, 1);
        assert_eq!(measure(r"\{\*\?").wildcards, 0);
        assert_eq!(measure("a{b,{c,{d,e}}}").nesting, 3);
        assert_eq!(
            measure("a,b").branches,
            0,
            "a comma outside braces is a literal"
        );
    }

    #[test]
    fn each_bound_is_named_when_passed() {
        assert_eq!(check("src/**/*.rs"), None);
        let long = "a".repeat(GLOB_MAX_BYTES + 1);
        assert!(check(&long).is_some_and(|why| why.contains("bytes")));
        let nested = format!(
            "{}{}",
            "{a".repeat(GLOB_MAX_NESTING + 1),
            "}".repeat(GLOB_MAX_NESTING + 1)
        );
        assert!(
            check(&nested).is_some_and(|why| why.contains("nested")),
            "{:?}",
            check(&nested)
        );
        let stars = "*x".repeat(GLOB_MAX_WILDCARDS + 1);
        assert!(check(&stars).is_some_and(|why| why.contains("wildcards")));
        let segments = "a/".repeat(GLOB_MAX_SEGMENTS);
        assert!(check(&segments).is_some_and(|why| why.contains("segments")));
        let branches = format!("{{{}}}", "a,".repeat(GLOB_MAX_BRANCHES));
        assert!(check(&branches).is_some_and(|why| why.contains("branches")));
        // Classes cannot hide braces from the count.
        let hidden = format!(
            "{}{}",
            "{[}]".repeat(GLOB_MAX_NESTING + 1),
            "}".repeat(GLOB_MAX_NESTING + 1)
        );
        assert!(check(&hidden).is_some(), "{hidden}");
    }
}
