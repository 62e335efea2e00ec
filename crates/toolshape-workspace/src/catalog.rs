//! Names, titles and descriptions of the workspace tools, as an MCP server
//! advertises them in `tools/list`.

/// How one tool presents itself to a client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ToolInfo {
    /// The tool's unique name (what `tools/call` uses).
    pub name: &'static str,
    /// A short human-readable title.
    pub title: &'static str,
    /// What the tool does, its limits, and what its output looks like.
    pub description: &'static str,
}

/// [`crate::Workspace::list_directory`].
pub const LIST_DIRECTORY: ToolInfo = ToolInfo {
    name: "list_directory",
    title: "List directory",
    description: "List the entries of a directory in the workspace, sorted by name. \
        `path` is relative to the workspace root (\".\" is the root). Returns an array of \
        {name, kind (file|dir|symlink|other), size in bytes, modified (RFC 3339 UTC)}. \
        Symbolic links are reported as `symlink` and not followed. \
        Directories with more than 10000 entries are refused: use `find` with a glob instead.",
};

/// [`crate::Workspace::file_info`].
pub const FILE_INFO: ToolInfo = ToolInfo {
    name: "file_info",
    title: "File information",
    description: "Describe one file or directory in the workspace: its kind, size, modification \
        time, permissions, whether it is a symbolic link and where that resolves, and for text \
        files the line count and whether it is UTF-8 (binary files are detected, not read), or \
        for directories how many entries of each kind it holds.",
};

/// [`crate::Workspace::read_text`].
pub const READ_TEXT: ToolInfo = ToolInfo {
    name: "read_text",
    title: "Read text file",
    description: "Return the contents of a UTF-8 text file in the workspace. Reads at most \
        `maxBytes` bytes (default 65536, at most 1048576), cut on a character boundary; a cut \
        file ends with a line starting `[truncated:` that says how much was shown. Binary files \
        (a NUL byte in the first 8 KiB, or invalid UTF-8) are refused.",
};

/// [`crate::Workspace::count_lines`].
pub const COUNT_LINES: ToolInfo = ToolInfo {
    name: "count_lines",
    title: "Count lines",
    description: "Count the lines of a text file in the workspace: newline characters, plus one \
        if the last line has none (an empty file has 0 lines). Returns a bare integer. Binary \
        files (a NUL byte in the first 8 KiB) and files over 64 MiB are refused.",
};

/// [`crate::Workspace::find`].
pub const FIND: ToolInfo = ToolInfo {
    name: "find",
    title: "Find files",
    description: "Find entries in the workspace, either by exact relative path \
        ({\"path\": \"src/lib.rs\"}: zero or one match) or by glob ({\"glob\": \"src/**/*.rs\"}). \
        In globs `*` and `?` stay within one path segment, `**` spans any number of segments, \
        and `[abc]` and `{a,b}` work as usual; patterns match paths relative to the root, so \
        use `**/name` to match at any depth; a glob ending in `/` matches directories only, and \
        `.`, `..` and empty segments read as in a path. Symbolic links are listed, never followed. \
        Returns {matches: [{path, kind, size}], truncated}: matches in depth-first order with \
        each directory's entries sorted by name, at most 1000 of them; `truncated` is true when \
        that cap, or the walk's bound (100000 entries, 32 levels), cut the search short. \
        A glob may be at most 1024 bytes, with at most 64 segments, 64 wildcards, 128 \
        alternation branches and 8 levels of nested `{...}`; larger ones are refused.",
};

/// [`crate::Workspace::analyze_project`].
pub const ANALYZE_PROJECT: ToolInfo = ToolInfo {
    name: "analyze_project",
    title: "Analyze project structure",
    description: "Summarise the project in a workspace directory (default: the root): its name \
        and version (from Cargo.toml, package.json or pyproject.toml, else the directory name), \
        its languages by share of recognised files, its direct dependencies as declared in those \
        manifests, and its lines of code (lines in programming-language files; Markdown, JSON, \
        TOML, YAML and other data files are counted as languages but not as code). Skips hidden \
        directories, `target`, `node_modules` and `__pycache__`, and looks at most at 20000 \
        files, 32 levels deep.",
};

/// [`crate::Workspace::analyze_dataset`].
pub const ANALYZE_DATASET: ToolInfo = ToolInfo {
    name: "analyze_dataset",
    title: "Analyze CSV dataset",
    description: "Statistics over a CSV file in the workspace (comma-separated, first row is the \
        header), computed in a streaming pass. `descriptive` returns count, mean, median, \
        sample standard deviation, min and max of every numeric column; the median is exact \
        (a column with more than 256 distinct values is read a second time for it). \
        `correlation` returns the Pearson coefficient of every pair of numeric columns (pairs \
        where a column is constant are left out). Empty cells and NA, N/A, NaN, null, None are \
        missing values; a column is numeric when all its other cells are numbers. Files over \
        16 MiB, 200000 rows or 1000 columns, and rows over 1 MiB, are refused, and so is a \
        correlation over more than 50 numeric columns.",
};

/// Every tool, in the order a server should list them.
pub const ALL: [ToolInfo; 7] = [
    LIST_DIRECTORY,
    FILE_INFO,
    READ_TEXT,
    COUNT_LINES,
    FIND,
    ANALYZE_PROJECT,
    ANALYZE_DATASET,
];
