//! The logic of the read-only workspace toolset served by `toolshape serve`.
//!
//! A [`Workspace`] is opened on a root directory and offers one synchronous
//! method per tool (run them on a blocking thread from async code). Every
//! tool's input and output type derives `serde` and `schemars::JsonSchema`,
//! so the derived schemas can be served as the tools' `inputSchema` and
//! `outputSchema`; [`catalog`] holds their names and descriptions.
//!
//! All tools are read-only and confined to the root: see [`WorkspaceError`]
//! for what is refused, and [`limits`] for every bound they enforce. Every
//! call reserves its worst-case memory from one [`MemoryBudget`] shared by
//! all calls first, and waits (or is refused as busy) when it is full.
//!
//! | tool | input | output root |
//! | --- | --- | --- |
//! | [`list_directory`](Workspace::list_directory) | object | array of [`DirEntry`] |
//! | [`file_info`](Workspace::file_info) | object | object [`FileInfo`] |
//! | [`read_text`](Workspace::read_text) | object | string (sent as text, no output schema) |
//! | [`count_lines`](Workspace::count_lines) | object | integer |
//! | [`find`](Workspace::find) | `oneOf` two objects | object [`FindOutput`] |
//! | [`analyze_project`](Workspace::analyze_project) | object | object [`ProjectAnalysis`] |
//! | [`analyze_dataset`](Workspace::analyze_dataset) | object | object [`DatasetAnalysis`] with `allOf`/`if`/`then` |

mod budget;
mod call_end;
pub mod catalog;
mod error;
mod files;
mod fsutil;
mod glob;
pub mod limits;
pub mod mcp;
mod paths;
mod sandbox;
mod text;
mod time;
mod tools;

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub use budget::MemoryBudget;
pub use error::{MAX_ECHO_CHARS, WorkspaceError};
pub use files::{FileContents, ListedFile};
pub use fsutil::EntryKind;
pub use tools::analyze_dataset::{
    AnalysisType, AnalyzeDatasetInput, ColumnStatistics, Correlation, DatasetAnalysis,
    DatasetSummary,
};
pub use tools::analyze_project::{
    AnalyzeProjectInput, Dependencies, Language, Metrics, Project, ProjectAnalysis,
};
pub use tools::count_lines::CountLinesInput;
pub use tools::file_info::{DirectorySummary, FileInfo, FileInfoInput, Permissions, TextInfo};
pub use tools::find::{FindInput, FindMatch, FindOutput};
pub use tools::list_directory::{DirEntry, ListDirectoryInput};
pub use tools::read_text::ReadTextInput;

/// A directory tree the tools may read, and nothing outside it.
///
/// The root directory is opened once, by [`Workspace::open`]; every tool
/// reaches files only from that open handle, with the kernel refusing any
/// lookup that would leave it (see the `sandbox` module).
#[derive(Debug, Clone)]
pub struct Workspace {
    /// Canonical (absolute, symlink-free) root directory, for display.
    root_path: PathBuf,
    /// The root, open.
    root: Arc<sandbox::Root>,
    /// Shared by every clone: what running calls may reserve together.
    budget: MemoryBudget,
    /// Shared by every clone: room for the operations the MCP layer runs
    /// at once on blocking threads ([`limits::MAX_RUNNING_OPERATIONS`]).
    running: Arc<tokio::sync::Semaphore>,
}

impl Workspace {
    /// Opens the workspace rooted at `root`, which is canonicalized (made
    /// absolute, symbolic links resolved; on Windows written as users write
    /// it, `C:\dir`, not `\\?\C:\dir`, where that means the same folder)
    /// and must be a directory.
    pub fn open(root: impl AsRef<Path>) -> io::Result<Self> {
        let root_path = dunce::canonicalize(root)?;
        if !fs::metadata(&root_path)?.is_dir() {
            return Err(io::Error::new(
                io::ErrorKind::NotADirectory,
                "the workspace root is not a directory",
            ));
        }
        let root = Arc::new(sandbox::Root::open(&root_path)?);
        Ok(Self {
            root_path,
            root,
            budget: MemoryBudget::default(),
            running: Arc::new(tokio::sync::Semaphore::new(limits::MAX_RUNNING_OPERATIONS)),
        })
    }

    /// Uses `budget` for every call on this workspace and its clones (the
    /// default is [`limits::MEMORY_BUDGET_BYTES`], waiting at most
    /// [`limits::MEMORY_BUDGET_WAIT`]).
    #[must_use]
    pub fn with_memory_budget(mut self, budget: MemoryBudget) -> Self {
        self.budget = budget;
        self
    }

    /// The memory budget calls reserve from.
    pub fn memory_budget(&self) -> &MemoryBudget {
        &self.budget
    }

    /// The canonical root directory (as it was when the workspace was opened).
    pub fn root(&self) -> &Path {
        &self.root_path
    }
}
