//! Which upstream tools a proxy shows: allow and deny lists of name globs,
//! and read-only tools only.

use toolshape::protocol::ToolDefinition;

/// A filter over tool names and annotations. The default admits every tool.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct ToolFilter {
    /// Globs (`*` any run of characters, `?` one character); when any is
    /// given, only tools matching one are shown.
    pub allow: Vec<String>,
    /// Globs; a tool matching one is never shown (deny wins over allow).
    pub deny: Vec<String>,
    /// Only tools annotated `readOnlyHint: true`.
    pub read_only: bool,
}

impl ToolFilter {
    /// Whether the tool is shown.
    pub fn admits(&self, tool: &ToolDefinition) -> bool {
        let name = tool.name.as_str();
        if self.deny.iter().any(|glob| glob_matches(glob, name)) {
            return false;
        }
        if !self.allow.is_empty() && !self.allow.iter().any(|glob| glob_matches(glob, name)) {
            return false;
        }
        if self.read_only {
            let read_only = tool
                .annotations
                .as_ref()
                .and_then(|annotations| annotations.read_only_hint)
                .unwrap_or(false);
            return read_only;
        }
        true
    }
}

/// Whether `name` matches `glob`: `*` matches any run of characters, `?`
/// exactly one, anything else itself. Linear in time: the last `*` is
/// remembered and retried, never recursed into.
pub fn glob_matches(glob: &str, name: &str) -> bool {
    let pattern: Vec<char> = glob.chars().collect();
    let text: Vec<char> = name.chars().collect();
    let (mut p, mut t) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        match pattern.get(p) {
            Some('*') => {
                star = Some((p, t));
                p += 1;
            }
            Some(&c) if c == '?' || c == text[t] => {
                p += 1;
                t += 1;
            }
            _ => match star {
                Some((star_p, star_t)) => {
                    p = star_p + 1;
                    t = star_t + 1;
                    star = Some((star_p, star_t + 1));
                }
                None => return false,
            },
        }
    }
    pattern[p..].iter().all(|&c| c == '*')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_runs_and_single_characters() {
        assert!(glob_matches("read_*", "read_text"));
        assert!(glob_matches("*", ""));
        assert!(glob_matches("*_file", "read_file"));
        assert!(glob_matches("a?c", "abc"));
        assert!(!glob_matches("a?c", "ac"));
        assert!(glob_matches("*a*b*", "xxaYYbZ"));
        assert!(!glob_matches("*a*b", "xxaYYbZ"));
        assert!(glob_matches("exact", "exact"));
        assert!(!glob_matches("exact", "exactly"));
        // A long adversarial pattern stays linear-ish and answers.
        let glob = "*a".repeat(50);
        assert!(!glob_matches(&glob, &"a".repeat(49)));
    }

    fn tool(name: &str, read_only: Option<bool>) -> ToolDefinition {
        let mut value = serde_json::json!({"name": name, "inputSchema": {"type": "object"}});
        if let Some(hint) = read_only {
            value["annotations"] = serde_json::json!({"readOnlyHint": hint});
        }
        serde_json::from_value(value).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn deny_wins_and_read_only_needs_the_hint() {
        let filter = ToolFilter {
            allow: vec!["read_*".into(), "find".into()],
            deny: vec!["*secret*".into()],
            read_only: false,
        };
        assert!(filter.admits(&tool("read_text", None)));
        assert!(filter.admits(&tool("find", None)));
        assert!(!filter.admits(&tool("write_file", None)));
        assert!(!filter.admits(&tool("read_secret_key", None)));
        let read_only = ToolFilter {
            read_only: true,
            ..ToolFilter::default()
        };
        assert!(read_only.admits(&tool("a", Some(true))));
        assert!(!read_only.admits(&tool("b", Some(false))));
        assert!(!read_only.admits(&tool("c", None)));
    }
}
