//! The workspace as MCP: its tools (each runs on a blocking thread,
//! read-only) and its files as resources.

mod resources;
mod watch;

pub use resources::{MAX_LISTED_FILES, file_lister, file_template, file_uri};
pub use watch::{
    DEFAULT_MAX_WATCHED_FOLDERS, FileChange, FileWatcher, QUIET_PERIOD, WatchError,
    watch_file_changes, watch_files,
};

use std::future::Future;

use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use toolshape::protocol::ContentBlock;
use toolshape::{RegistrationError, Tool, ToolError, ToolRegistry};

use crate::catalog::{self, ToolInfo};
use crate::{Workspace, WorkspaceError};

/// Runs one workspace operation off the async runtime. A panic in it is
/// raised again here, where the call catches it: the caller is told only
/// that the tool failed, never the panic's message.
fn blocking<T, F>(
    workspace: &Workspace,
    operation: F,
) -> impl Future<Output = Result<T, ToolError>> + Send + use<T, F>
where
    T: Send + 'static,
    F: FnOnce(&Workspace) -> Result<T, WorkspaceError> + Send + 'static,
{
    let workspace = workspace.clone();
    async move {
        match tokio::task::spawn_blocking(move || operation(&workspace)).await {
            Ok(outcome) => outcome.map_err(ToolError::from_error),
            Err(join) if join.is_panic() => std::panic::resume_unwind(join.into_panic()),
            Err(join) => Err(ToolError::from_error(join)),
        }
    }
}

fn describe(tool: Tool, info: &ToolInfo) -> Tool {
    tool.title(info.title)
        .description(info.description)
        .read_only()
}

/// One workspace operation as a typed, read-only tool.
fn typed<I, O>(
    workspace: &Workspace,
    info: &ToolInfo,
    operation: fn(&Workspace, I) -> Result<O, WorkspaceError>,
) -> Tool
where
    I: DeserializeOwned + JsonSchema + Send + 'static,
    O: Serialize + JsonSchema + Send + 'static,
{
    let workspace = workspace.clone();
    let tool = Tool::typed(info.name, move |input: I| {
        blocking(&workspace, move |w| operation(w, input))
    });
    describe(tool, info)
}

/// Most resource links a result carries (the structured output lists all).
const MAX_LINKS: usize = 50;

/// As [`typed`], with `resource_link`s to the files the output names.
fn linked<I, O>(
    workspace: &Workspace,
    info: &ToolInfo,
    operation: fn(&Workspace, I) -> Result<O, WorkspaceError>,
    links: fn(&Workspace, &O) -> Vec<ContentBlock>,
) -> Tool
where
    I: DeserializeOwned + JsonSchema + Send + 'static,
    O: Serialize + JsonSchema + Send + 'static,
{
    let workspace = workspace.clone();
    let tool = Tool::typed_with_content(info.name, move |input: I| {
        let run = blocking(&workspace, move |w| operation(w, input));
        let workspace = workspace.clone();
        async move {
            let output = run.await?;
            let content = links(&workspace, &output);
            Ok((output, content))
        }
    });
    describe(tool, info)
}

/// Every workspace tool, described and marked read-only (`readOnlyHint`,
/// `idempotentHint`, `openWorldHint: false`).
pub fn tools(workspace: &Workspace) -> Vec<Tool> {
    let ws = workspace.clone();
    let read_text = Tool::text(catalog::READ_TEXT.name, move |input| {
        blocking(&ws, move |w| w.read_text(input))
    });
    vec![
        typed(
            workspace,
            &catalog::LIST_DIRECTORY,
            Workspace::list_directory,
        ),
        linked(
            workspace,
            &catalog::FILE_INFO,
            Workspace::file_info,
            |w, info| match info.kind {
                crate::EntryKind::File => {
                    vec![resources::link(w, &info.resolved_path, Some(info.size))]
                }
                _ => Vec::new(),
            },
        ),
        describe(read_text, &catalog::READ_TEXT),
        typed(workspace, &catalog::COUNT_LINES, Workspace::count_lines),
        linked(workspace, &catalog::FIND, Workspace::find, |w, found| {
            found
                .matches
                .iter()
                .filter(|entry| entry.kind == crate::EntryKind::File)
                .take(MAX_LINKS)
                .map(|entry| resources::link(w, &entry.path, Some(entry.size)))
                .collect()
        }),
        typed(
            workspace,
            &catalog::ANALYZE_PROJECT,
            Workspace::analyze_project,
        ),
        typed(
            workspace,
            &catalog::ANALYZE_DATASET,
            Workspace::analyze_dataset,
        ),
    ]
}

/// Registers every workspace tool in `registry` (all of them, or none).
pub fn register(
    registry: &ToolRegistry,
    workspace: &Workspace,
) -> Result<(), Vec<RegistrationError>> {
    registry.register_all(tools(workspace))
}
