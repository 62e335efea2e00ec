//! Every bound the tools enforce, in one place.
//!
//! The tools are read-only, but a workspace can hold anything: these limits
//! keep one call's time, memory and output size bounded whatever is on disk.

/// `list_directory`: a directory with more entries than this is refused
/// (use `find` with a glob to narrow it down).
pub const LIST_MAX_ENTRIES: u64 = 10_000;

/// `read_text`: bytes returned when `maxBytes` is not given (64 KiB).
pub const READ_DEFAULT_BYTES: u64 = 64 * 1024;

/// `read_text`: the largest `maxBytes` honoured (1 MiB); larger values are
/// lowered to this.
pub const READ_MAX_BYTES: u64 = 1024 * 1024;

/// Bytes at the start of a file searched for a NUL byte to tell binary
/// files from text (8 KiB).
pub const SNIFF_BYTES: u64 = 8 * 1024;

/// `count_lines` refuses larger files; `file_info` only counts the lines of
/// files up to this size (64 MiB).
pub const TEXT_SCAN_MAX_BYTES: u64 = 64 * 1024 * 1024;

/// `find`: the most matches returned; more set `truncated`.
pub const FIND_MAX_MATCHES: usize = 1_000;

/// `find`: the most entries (files, directories, links) looked at in one
/// glob walk; reaching it sets `truncated`.
pub const FIND_MAX_VISITED: usize = 100_000;

/// `find`: how many directory levels below the glob's fixed prefix are
/// walked.
pub const FIND_MAX_DEPTH: usize = 32;

/// `find`: the longest glob accepted, in bytes. Longer patterns are refused
/// before they are parsed.
pub const GLOB_MAX_BYTES: usize = 1_024;

/// `find`: the most `/`-separated segments in a glob.
pub const GLOB_MAX_SEGMENTS: usize = 64;

/// `find`: the most wildcards in a glob (`*`, `**`, `?` and `[...]` classes
/// each count one).
pub const GLOB_MAX_WILDCARDS: usize = 64;

/// `find`: the deepest nesting of `{...}` alternations in a glob
/// (`{a,{b,c}}` is 2).
pub const GLOB_MAX_NESTING: usize = 8;

/// `find`: the most alternation branches in a glob, over all its `{...}`
/// groups (`{a,b}/{c,d,e}` has 5).
pub const GLOB_MAX_BRANCHES: usize = 128;

/// `find`: the largest compiled matcher a glob may turn into (1 MiB); a glob
/// within the other bounds that still passes it is refused.
pub const GLOB_REGEX_SIZE_LIMIT: usize = 1024 * 1024;

/// `find`: the most memory the matcher's lazily built automaton may use while
/// matching (2 MiB).
pub const GLOB_REGEX_DFA_SIZE_LIMIT: usize = 2 * 1024 * 1024;

/// `find` and `analyze_project`: the most bytes of directory entries a walk
/// holds at once (listed but not yet visited; each entry counts its name plus
/// 48 bytes). A directory whose listing would pass it is cut there and the
/// result is marked truncated (8 MiB).
pub const WALK_MAX_PENDING_BYTES: usize = 8 * 1024 * 1024;

/// `analyze_project`: the most regular files looked at; the rest are not
/// counted.
pub const PROJECT_MAX_FILES: usize = 20_000;

/// `analyze_project`: the most entries (files, directories, links) looked
/// at in one walk.
pub const PROJECT_MAX_VISITED: usize = 100_000;

/// `analyze_project`: how many directory levels are walked.
pub const PROJECT_MAX_DEPTH: usize = 32;

/// `analyze_project`: source files larger than this (4 MiB) count towards
/// their language but not towards `linesOfCode` (they are usually generated).
pub const PROJECT_LOC_MAX_FILE_BYTES: u64 = 4 * 1024 * 1024;

/// `analyze_project`: manifests (`Cargo.toml`, `package.json`,
/// `pyproject.toml`) larger than this (128 KiB) are ignored. Parsing one
/// takes up to about 100 times its size in memory while it runs.
pub const MANIFEST_MAX_BYTES: u64 = 128 * 1024;

/// `analyze_dataset`: CSV files larger than this (16 MiB) are refused.
pub const DATASET_MAX_BYTES: u64 = 16 * 1024 * 1024;

/// `analyze_dataset`: CSV files with more data rows than this are refused.
pub const DATASET_MAX_ROWS: u64 = 200_000;

/// `analyze_dataset`: CSV files with more columns than this are refused.
pub const DATASET_MAX_COLUMNS: u64 = 1_000;

/// `analyze_dataset`: the longest row (header included) accepted, in bytes
/// (1 MiB); a longer one is refused, however it is quoted.
pub const DATASET_MAX_ROW_BYTES: usize = 1024 * 1024;

/// `analyze_dataset`: the median of a column is counted in the first pass
/// while the column has at most this many distinct values; beyond, the
/// file is read a second time keeping that column's values.
pub const DATASET_EXACT_MEDIAN_DISTINCT: usize = 256;

/// `analyze_dataset`: correlation analysis is refused when more columns than
/// this are numeric (the output would hold n·(n−1)/2 pairs).
pub const DATASET_MAX_CORRELATION_COLUMNS: u64 = 50;

/// Longest path accepted from a caller, in bytes.
pub const MAX_PATH_BYTES: usize = 4_096;

/// The memory all running tool calls may reserve together unless told
/// otherwise (512 MiB; `toolshape serve --memory-budget MIB`). See
/// [`crate::MemoryBudget`].
pub const MEMORY_BUDGET_BYTES: u64 = 512 * 1024 * 1024;

/// How long a call waits for room in the memory budget before it is refused
/// as busy, unless told otherwise (10 s; `toolshape serve` waits up to three
/// quarters of `--call-timeout`).
pub const MEMORY_BUDGET_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// Most workspace operations the MCP tools and resources run at once, each
/// on a blocking thread; more wait their turn (without a thread), at most
/// as long as a call waits for memory, then are refused as busy. An
/// operation holds its place until its work ends, which a cancelled call's
/// work does at its next step (a file, a 64 KiB read, a CSV row).
pub const MAX_RUNNING_OPERATIONS: usize = 64;

/// What one call reserves from the memory budget, by tool: its worst case
/// under the bounds above.
pub mod reserve {
    const KIB: u64 = 1024;
    const MIB: u64 = 1024 * KIB;

    /// `file_info`, `count_lines`, `find` by path: a 64 KiB read buffer and
    /// small records.
    pub const SMALL: u64 = 256 * KIB;

    /// `list_directory`: up to 10000 entries with names of up to 255 bytes,
    /// each byte that is not UTF-8 shown as U+FFFD (three bytes): about
    /// 7.6 MiB of names, and their JSON.
    pub const LIST_DIRECTORY: u64 = 12 * MIB;

    /// `read_text`: three copies of what is read (bytes, text, answer) plus
    /// this.
    pub const READ_TEXT_BASE: u64 = 256 * KIB;

    /// `find` by glob: the matcher (1 MiB program, 2 MiB automaton), the
    /// walk's pending entries (8 MiB) and up to 1000 matches of up to 8 KiB
    /// paths.
    pub const FIND_GLOB: u64 = 24 * MIB;

    /// `analyze_project`: the walk's pending entries (8 MiB) and a manifest
    /// being parsed (up to about 100 times its 128 KiB).
    pub const ANALYZE_PROJECT: u64 = 32 * MIB;

    /// `analyze_dataset`: the parser's row (1 MiB) and buffer, the header,
    /// and per column (up to 1000) running statistics with up to 256 counted
    /// distinct values. A description adds 4 bytes per byte of the file:
    /// every numeric value (8 bytes, at least 2 in the file) may be kept for
    /// the medians.
    pub const ANALYZE_DATASET: u64 = 12 * MIB;
}
