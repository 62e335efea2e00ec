//! One module per tool: its input and output types and its `Workspace` method.

pub(crate) mod analyze_dataset;
pub(crate) mod analyze_project;
pub(crate) mod count_lines;
pub(crate) mod file_info;
pub(crate) mod find;
pub(crate) mod list_directory;
pub(crate) mod read_text;
