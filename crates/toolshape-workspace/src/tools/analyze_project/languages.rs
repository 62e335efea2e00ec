//! Languages recognised by file extension.

/// A recognised language.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Lang {
    /// Display name, e.g. `Rust`.
    pub(crate) name: &'static str,
    /// Whether its lines count as lines of code (false for docs and data).
    pub(crate) code: bool,
}

const fn code(name: &'static str) -> Option<Lang> {
    Some(Lang { name, code: true })
}

const fn data(name: &'static str) -> Option<Lang> {
    Some(Lang { name, code: false })
}

/// The language of a file, from its name's extension (case-insensitive).
pub(crate) fn language_of(file_name: &str) -> Option<Lang> {
    let (stem, ext) = file_name.rsplit_once('.')?;
    if stem.is_empty() && !file_name[1..].contains('.') {
        // A dotfile such as `.json` has no extension.
        return None;
    }
    match ext.to_ascii_lowercase().as_str() {
        "rs" => code("Rust"),
        "py" | "pyi" => code("Python"),
        "ts" | "tsx" | "mts" | "cts" => code("TypeScript"),
        "js" | "jsx" | "mjs" | "cjs" => code("JavaScript"),
        "go" => code("Go"),
        "c" | "h" => code("C"),
        "cc" | "cpp" | "cxx" | "c++" | "hh" | "hpp" | "hxx" => code("C++"),
        "java" => code("Java"),
        "kt" | "kts" => code("Kotlin"),
        "scala" => code("Scala"),
        "swift" => code("Swift"),
        "cs" => code("C#"),
        "rb" => code("Ruby"),
        "php" => code("PHP"),
        "lua" => code("Lua"),
        "pl" | "pm" => code("Perl"),
        "r" => code("R"),
        "dart" => code("Dart"),
        "hs" => code("Haskell"),
        "ml" | "mli" => code("OCaml"),
        "ex" | "exs" => code("Elixir"),
        "erl" | "hrl" => code("Erlang"),
        "clj" | "cljs" => code("Clojure"),
        "zig" => code("Zig"),
        "sh" | "bash" | "zsh" => code("Shell"),
        "ps1" => code("PowerShell"),
        "sql" => code("SQL"),
        "html" | "htm" => code("HTML"),
        "css" | "scss" | "sass" | "less" => code("CSS"),
        "vue" => code("Vue"),
        "svelte" => code("Svelte"),
        "md" | "markdown" => data("Markdown"),
        "rst" => data("reStructuredText"),
        "toml" => data("TOML"),
        "json" => data("JSON"),
        "yaml" | "yml" => data("YAML"),
        "xml" => data("XML"),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extensions() {
        assert_eq!(language_of("main.rs").map(|l| l.name), Some("Rust"));
        assert_eq!(language_of("A.HPP").map(|l| l.name), Some("C++"));
        assert_eq!(language_of("README.md").map(|l| l.code), Some(false));
        assert_eq!(language_of("Makefile"), None);
        assert_eq!(language_of(".json"), None);
        assert_eq!(language_of(".eslintrc.json").map(|l| l.name), Some("JSON"));
        assert_eq!(language_of("x."), None);
    }
}
