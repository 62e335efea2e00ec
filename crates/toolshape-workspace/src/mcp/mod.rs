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
use std::sync::Arc;
use std::time::Instant;

use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use toolshape::protocol::ContentBlock;
use toolshape::{RegistrationError, Tool, ToolError, ToolRegistry};

use crate::call_end::CallEnd;
use crate::catalog::{self, ToolInfo};
use crate::limits::MAX_RUNNING_OPERATIONS;
use crate::{Workspace, WorkspaceError};

/// Runs one workspace operation off the async runtime, once one of
/// [`MAX_RUNNING_OPERATIONS`] is free (waiting without a thread, at most as
/// long as for memory). The blocking thread goes on when the call's future
/// is dropped (cancelled, or past its time limit), so the operation holds
/// its place until its work ends, and is told the call ended: its loops
/// stop at their next step. A panic in it is raised again here, where the
/// call catches it: the caller is told only that the tool failed, never the
/// panic's message.
fn blocking<T, F>(
    workspace: &Workspace,
    operation: F,
) -> impl Future<Output = Result<T, ToolError>> + Send + use<T, F>
where
    T: Send + 'static,
    F: FnOnce(&Workspace) -> Result<T, WorkspaceError> + Send + 'static,
{
    let running = run_blocking(workspace, operation);
    async move { running.await?.map_err(ToolError::from_error) }
}

/// As [`blocking`], with the operation's own error as it is (the outer
/// error: its thread could not be joined).
fn run_blocking<T, F>(
    workspace: &Workspace,
    operation: F,
) -> impl Future<Output = Result<Result<T, WorkspaceError>, ToolError>> + Send + use<T, F>
where
    T: Send + 'static,
    F: FnOnce(&Workspace) -> Result<T, WorkspaceError> + Send + 'static,
{
    let workspace = workspace.clone();
    async move {
        // Set when this future is dropped, or done.
        let end = CallEnd::default();
        let wait = workspace.budget.wait();
        // The wait for memory counts from here: both within `wait`.
        let wait_until = Instant::now() + wait;
        let room = Arc::clone(&workspace.running);
        let Ok(Ok(place)) = tokio::time::timeout(wait, room.acquire_owned()).await else {
            return Ok(Err(WorkspaceError::TooManyRunning {
                running: MAX_RUNNING_OPERATIONS,
                waited: wait,
            }));
        };
        let flag = end.flag();
        let run = move || {
            let _place = place;
            let _working = flag.enter(wait_until);
            operation(&workspace)
        };
        match tokio::task::spawn_blocking(run).await {
            Ok(outcome) => Ok(outcome),
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

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::{Duration, Instant};

    use super::blocking;
    use crate::call_end::call_ended;
    use crate::limits::MAX_RUNNING_OPERATIONS;
    use crate::{MemoryBudget, Workspace};

    fn workspace(wait: Duration) -> (tempfile::TempDir, Workspace) {
        let root = tempfile::tempdir().unwrap();
        let workspace = Workspace::open(root.path())
            .unwrap()
            .with_memory_budget(MemoryBudget::new(1 << 20, wait));
        (root, workspace)
    }

    /// Works until its call ends (or 30 s), then counts itself done.
    fn until_the_call_ends(
        workspace: &Workspace,
        done: &Arc<AtomicUsize>,
    ) -> impl Future<Output = ()> + use<> {
        let done = Arc::clone(done);
        let workspace = workspace.clone();
        async move {
            let _ = blocking(&workspace, move |_| {
                let started = Instant::now();
                while !call_ended() && started.elapsed() < Duration::from_secs(30) {
                    std::thread::sleep(Duration::from_millis(1));
                }
                done.fetch_add(1, Ordering::SeqCst);
                Ok(())
            })
            .await;
        }
    }

    #[tokio::test]
    async fn a_dropped_call_stops_its_work_and_gives_back_its_place() {
        let done = Arc::new(AtomicUsize::new(0));
        let (_root, workspace) = workspace(Duration::from_secs(10));
        let running = Arc::clone(&workspace.running);
        let call = until_the_call_ends(&workspace, &done);
        // The call ends (its time limit, say) while the work runs.
        assert!(
            tokio::time::timeout(Duration::from_millis(200), call)
                .await
                .is_err()
        );
        let started = Instant::now();
        while done.load(Ordering::SeqCst) == 0 {
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "the work went on"
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        // Its place is given back once the work has ended.
        while running.available_permits() < MAX_RUNNING_OPERATIONS {
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "the place was kept"
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    #[tokio::test]
    async fn past_the_operations_running_at_once_a_call_waits_then_is_refused() {
        let (_root, workspace) = workspace(Duration::from_millis(300));
        let (release, released) = tokio::sync::watch::channel(false);
        let held: Vec<_> = (0..MAX_RUNNING_OPERATIONS)
            .map(|_| {
                let released = released.clone();
                tokio::spawn(blocking(&workspace, move |_| {
                    while !*released.borrow() {
                        std::thread::sleep(Duration::from_millis(1));
                    }
                    Ok(())
                }))
            })
            .collect();
        tokio::time::sleep(Duration::from_millis(100)).await;
        let refused = blocking(&workspace, |_| Ok(())).await;
        let message = refused.err().map(|error| error.to_string());
        assert!(
            message
                .as_deref()
                .is_some_and(|m| m.contains("the server is busy")),
            "{message:?}"
        );
        let _ = release.send(true);
        for call in held {
            assert!(call.await.is_ok_and(|outcome| outcome.is_ok()));
        }
        // Their places are free again.
        assert!(blocking(&workspace, |_| Ok(())).await.is_ok());
    }
}
