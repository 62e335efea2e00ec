//! The workspace tools as MCP tools: each runs on a blocking thread, read-only.

use std::future::Future;

use toolshape::{RegistrationError, Tool, ToolError, ToolRegistry};

use crate::catalog::{self, ToolInfo};
use crate::{Workspace, WorkspaceError};

/// Runs one workspace operation off the async runtime.
fn blocking<T, F>(
    workspace: &Workspace,
    operation: F,
) -> impl Future<Output = Result<T, ToolError>> + Send + use<T, F>
where
    T: Send + 'static,
    F: FnOnce(&Workspace) -> Result<T, WorkspaceError> + Send + 'static,
{
    let workspace = workspace.clone();
    async move { Ok(tokio::task::spawn_blocking(move || operation(&workspace)).await??) }
}

fn describe(tool: Tool, info: &ToolInfo) -> Tool {
    tool.title(info.title)
        .description(info.description)
        .read_only()
}

/// Every workspace tool, described and marked read-only (`readOnlyHint`,
/// `idempotentHint`, `openWorldHint: false`).
pub fn tools(workspace: &Workspace) -> Vec<Tool> {
    let ws = workspace.clone();
    let list_directory = Tool::typed(catalog::LIST_DIRECTORY.name, move |input| {
        blocking(&ws, move |w| w.list_directory(input))
    });
    let ws = workspace.clone();
    let file_info = Tool::typed(catalog::FILE_INFO.name, move |input| {
        blocking(&ws, move |w| w.file_info(input))
    });
    let ws = workspace.clone();
    let read_text = Tool::text(catalog::READ_TEXT.name, move |input| {
        blocking(&ws, move |w| w.read_text(input))
    });
    let ws = workspace.clone();
    let count_lines = Tool::typed(catalog::COUNT_LINES.name, move |input| {
        blocking(&ws, move |w| w.count_lines(input))
    });
    let ws = workspace.clone();
    let find = Tool::typed(catalog::FIND.name, move |input| {
        blocking(&ws, move |w| w.find(input))
    });
    let ws = workspace.clone();
    let analyze_project = Tool::typed(catalog::ANALYZE_PROJECT.name, move |input| {
        blocking(&ws, move |w| w.analyze_project(input))
    });
    let ws = workspace.clone();
    let analyze_dataset = Tool::typed(catalog::ANALYZE_DATASET.name, move |input| {
        blocking(&ws, move |w| w.analyze_dataset(input))
    });
    vec![
        describe(list_directory, &catalog::LIST_DIRECTORY),
        describe(file_info, &catalog::FILE_INFO),
        describe(read_text, &catalog::READ_TEXT),
        describe(count_lines, &catalog::COUNT_LINES),
        describe(find, &catalog::FIND),
        describe(analyze_project, &catalog::ANALYZE_PROJECT),
        describe(analyze_dataset, &catalog::ANALYZE_DATASET),
    ]
}

/// Registers every workspace tool in `registry`.
pub fn register(registry: &ToolRegistry, workspace: &Workspace) -> Result<(), RegistrationError> {
    tools(workspace)
        .into_iter()
        .try_for_each(|tool| registry.register(tool))
}
