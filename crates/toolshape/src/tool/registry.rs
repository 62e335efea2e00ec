//! The set of tools, shared by every protocol binding that serves them.

use std::collections::BTreeMap;
use std::sync::{Arc, PoisonError, RwLock};

use tokio::sync::watch;
use toolshape_schema::{SchemaEngine, Trust};

use super::cursor::{self, InvalidCursor};
use super::definition::Tool;
use super::registered::{RegisteredTool, RegistrationError};

type Snapshot = Arc<BTreeMap<Arc<str>, Arc<RegisteredTool>>>;

/// The tools a server serves, in name order. Cheap to clone; clones share the set.
///
/// Tools can be added and removed while serving: each change bumps a version
/// that bindings watch (MCP sends `notifications/tools/list_changed`). Calls
/// and listings work on a snapshot, so a change never disturbs one in progress.
#[derive(Clone)]
pub struct ToolRegistry {
    inner: Arc<Inner>,
}

struct Inner {
    engine: SchemaEngine,
    tools: RwLock<Snapshot>,
    version: watch::Sender<u64>,
}

impl std::fmt::Debug for ToolRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolRegistry")
            .field("tools", &self.names())
            .finish()
    }
}

impl Default for ToolRegistry {
    fn default() -> Self {
        ToolRegistry::new()
    }
}

impl ToolRegistry {
    /// An empty registry whose schemas compile with a trusted engine.
    pub fn new() -> Self {
        ToolRegistry::with_engine(SchemaEngine::builder().trust(Trust::Trusted).build())
    }

    /// An empty registry that compiles schemas with `engine`.
    pub fn with_engine(engine: SchemaEngine) -> Self {
        ToolRegistry {
            inner: Arc::new(Inner {
                engine,
                tools: RwLock::new(Arc::default()),
                version: watch::channel(0).0,
            }),
        }
    }

    /// Registers a tool, compiling its schemas now.
    pub fn register(&self, tool: Tool) -> Result<(), RegistrationError> {
        let registered = Arc::new(RegisteredTool::new(tool, &self.inner.engine)?);
        self.update(|tools| {
            if tools.contains_key(&registered.name) {
                return Err(RegistrationError::Duplicate(registered.name.to_string()));
            }
            tools.insert(Arc::clone(&registered.name), registered);
            Ok(())
        })
    }

    /// Registers several tools at once: all of them, or (when any cannot be
    /// registered) none, with the reason for each that could not.
    pub fn register_all(
        &self,
        tools: impl IntoIterator<Item = Tool>,
    ) -> Result<(), Vec<RegistrationError>> {
        let mut errors = Vec::new();
        let mut ready = Vec::new();
        for tool in tools {
            match RegisteredTool::new(tool, &self.inner.engine) {
                Ok(registered) => ready.push(Arc::new(registered)),
                Err(error) => errors.push(error),
            }
        }
        if ready.is_empty() && errors.is_empty() {
            return Ok(());
        }
        self.update(|current| {
            let mut names = std::collections::BTreeSet::new();
            for tool in &ready {
                if current.contains_key(&tool.name) || !names.insert(Arc::clone(&tool.name)) {
                    errors.push(RegistrationError::Duplicate(tool.name.to_string()));
                }
            }
            if !errors.is_empty() {
                return Err(std::mem::take(&mut errors));
            }
            for tool in ready {
                current.insert(Arc::clone(&tool.name), tool);
            }
            Ok(())
        })
    }

    /// Removes the tool named `name`; says whether there was one.
    pub fn remove(&self, name: &str) -> bool {
        self.update(|tools| Ok::<_, RegistrationError>(tools.remove(name).is_some()))
            .unwrap_or(false)
    }

    /// The names of the registered tools, in order.
    pub fn names(&self) -> Vec<String> {
        self.snapshot()
            .keys()
            .map(|name| name.to_string())
            .collect()
    }

    /// The definitions of the registered tools, in order, as 2026-07-28 peers see them.
    pub fn definitions(&self) -> Vec<toolshape_protocol::ToolDefinition> {
        self.snapshot()
            .values()
            .map(|tool| tool.definition.clone())
            .collect()
    }

    /// How many tools are registered.
    pub fn len(&self) -> usize {
        self.snapshot().len()
    }

    /// Whether no tool is registered.
    pub fn is_empty(&self) -> bool {
        self.snapshot().is_empty()
    }

    /// A receiver that sees a new value whenever the set of tools changes.
    pub fn watch_changes(&self) -> watch::Receiver<u64> {
        self.inner.version.subscribe()
    }

    pub(crate) fn get(&self, name: &str) -> Option<Arc<RegisteredTool>> {
        self.snapshot().get(name).cloned()
    }

    /// One page of tools after `cursor`, and the cursor of the next page.
    pub(crate) fn page(
        &self,
        cursor: Option<&str>,
        size: usize,
    ) -> Result<(Vec<Arc<RegisteredTool>>, Option<String>), InvalidCursor> {
        let snapshot = self.snapshot();
        let after = cursor.map(cursor::decode).transpose()?;
        let mut remaining = match &after {
            Some(name) => Box::new(
                snapshot
                    .range::<str, _>((
                        std::ops::Bound::Excluded(name.as_str()),
                        std::ops::Bound::Unbounded,
                    ))
                    .map(|(_, tool)| tool),
            ) as Box<dyn Iterator<Item = &Arc<RegisteredTool>>>,
            None => Box::new(snapshot.values()),
        }
        .peekable();
        let page: Vec<Arc<RegisteredTool>> =
            remaining.by_ref().take(size.max(1)).cloned().collect();
        let next = match (remaining.peek(), page.last()) {
            (Some(_), Some(last)) => Some(cursor::encode(&last.name)),
            _ => None,
        };
        Ok((page, next))
    }

    fn snapshot(&self) -> Snapshot {
        Arc::clone(
            &self
                .inner
                .tools
                .read()
                .unwrap_or_else(PoisonError::into_inner),
        )
    }

    fn update<T, E>(
        &self,
        change: impl FnOnce(&mut BTreeMap<Arc<str>, Arc<RegisteredTool>>) -> Result<T, E>,
    ) -> Result<T, E> {
        let mut guard = self
            .inner
            .tools
            .write()
            .unwrap_or_else(PoisonError::into_inner);
        let mut tools = (**guard).clone();
        let outcome = change(&mut tools)?;
        *guard = Arc::new(tools);
        drop(guard);
        self.inner.version.send_modify(|version| *version += 1);
        Ok(outcome)
    }
}
