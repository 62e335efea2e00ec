//! The set of tools, shared by every protocol binding that serves them.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, PoisonError, RwLock};

use tokio::sync::watch;
use toolshape_schema::{CompileBudget, SchemaEngine, Trust};

use super::cursor::{self, InvalidCursor};
use super::definition::Tool;
use super::identity::ToolVersion;
use super::registered::{RegisteredTool, RegistrationError};

/// The registered tools: every version of each name (ascending), and which
/// name holds each qualified name (`Toolkit.Tool`).
#[derive(Clone, Default)]
struct Catalog {
    by_name: BTreeMap<Arc<str>, Vec<Arc<RegisteredTool>>>,
    qualified: HashMap<String, Arc<str>>,
}

impl Catalog {
    fn latest(&self, name: &str) -> Option<&Arc<RegisteredTool>> {
        self.by_name.get(name).and_then(|versions| versions.last())
    }

    /// Adds one version of a tool, or says why it cannot be added.
    fn insert(&mut self, tool: Arc<RegisteredTool>) -> Result<(), RegistrationError> {
        let qualified = tool.qualified.dotted();
        if let Some(versions) = self.by_name.get_mut(&tool.name) {
            if let Some(existing) = versions.first()
                && existing.qualified.toolkit != tool.qualified.toolkit
            {
                return Err(RegistrationError::ToolkitMismatch {
                    tool: tool.name.to_string(),
                    existing: existing.qualified.toolkit.clone(),
                    toolkit: tool.qualified.toolkit.clone(),
                });
            }
            return match versions.binary_search_by_key(&tool.version, |v| v.version) {
                Ok(_) => Err(RegistrationError::Duplicate(tool.name.to_string())),
                Err(at) => {
                    versions.insert(at, tool);
                    Ok(())
                }
            };
        }
        if tool.served_over_otc {
            if let Some(other) = self.qualified.get(&qualified) {
                return Err(RegistrationError::QualifiedNameTaken {
                    tool: tool.name.to_string(),
                    qualified,
                    other: other.to_string(),
                });
            }
            self.qualified.insert(qualified, Arc::clone(&tool.name));
        }
        self.by_name.insert(Arc::clone(&tool.name), vec![tool]);
        Ok(())
    }

    fn remove(&mut self, name: &str) -> bool {
        let Some(versions) = self.by_name.remove(name) else {
            return false;
        };
        if let Some(tool) = versions.first().filter(|tool| tool.served_over_otc) {
            self.qualified.remove(&tool.qualified.dotted());
        }
        true
    }
}

type Snapshot = Arc<Catalog>;

/// The tools a server serves, in name order. Cheap to clone; clones share the set.
///
/// Tools can be added and removed while serving: each change bumps a version
/// that bindings watch (MCP sends `notifications/tools/list_changed`). Calls
/// and listings work on a snapshot, so a change never disturbs one in progress.
///
/// Several versions of one tool may be registered ([`Tool::version`]): MCP
/// peers, which know no versions, see the latest; OTC callers may name any.
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

    /// Registers a tool (or another version of one), compiling its schemas now.
    pub fn register(&self, tool: Tool) -> Result<(), RegistrationError> {
        let registered = Arc::new(RegisteredTool::new(tool, &self.inner.engine)?);
        self.update(|catalog| catalog.insert(registered))
    }

    /// Registers several tools at once: all of them, or (when any cannot be
    /// registered) none, with the reason for each that could not. With an
    /// untrusted engine, their schemas draw on one compile budget
    /// (`Limits::listing_budget`, see [`CompileBudget`]).
    pub fn register_all(
        &self,
        tools: impl IntoIterator<Item = Tool>,
    ) -> Result<(), Vec<RegistrationError>> {
        self.register_all_or_check(tools, true)
    }

    /// As [`ToolRegistry::register_all`]; with `commit` false, only the
    /// errors registering would meet are found, and nothing is registered.
    pub(crate) fn register_all_or_check(
        &self,
        tools: impl IntoIterator<Item = Tool>,
        commit: bool,
    ) -> Result<(), Vec<RegistrationError>> {
        let mut errors = Vec::new();
        let mut ready = Vec::new();
        let engine = self.listing_engine();
        for tool in tools {
            match RegisteredTool::new(tool, &engine) {
                Ok(registered) => ready.push(Arc::new(registered)),
                Err(error) => errors.push(error),
            }
        }
        if ready.is_empty() && errors.is_empty() {
            return Ok(());
        }
        if !commit {
            // Checked against a copy, the registry left as it is (and no
            // change announced).
            let current = Arc::clone(
                &self
                    .inner
                    .tools
                    .read()
                    .unwrap_or_else(PoisonError::into_inner),
            );
            let mut next = (*current).clone();
            for tool in ready {
                if let Err(error) = next.insert(tool) {
                    errors.push(error);
                }
            }
            return if errors.is_empty() {
                Ok(())
            } else {
                Err(errors)
            };
        }
        self.update(|current| {
            // Into a copy: all of them, or none.
            let mut next = current.clone();
            for tool in ready {
                if let Err(error) = next.insert(tool) {
                    errors.push(error);
                }
            }
            if !errors.is_empty() {
                return Err(std::mem::take(&mut errors));
            }
            *current = next;
            Ok(())
        })
    }

    /// Registers every one of `tools` that can be, beside the tools already
    /// registered, in one change that bumps the version once; the others
    /// are left out, with their name and the reason. Their schemas draw on
    /// one compile budget as with [`ToolRegistry::replace_all`].
    pub fn register_each(
        &self,
        tools: impl IntoIterator<Item = Tool>,
    ) -> Vec<(String, RegistrationError)> {
        let engine = self.listing_engine();
        let mut ready = Vec::new();
        let mut errors = Vec::new();
        for tool in tools {
            let name = tool.name.clone();
            match RegisteredTool::new(tool, &engine) {
                Ok(registered) => ready.push((name, Arc::new(registered))),
                Err(error) => errors.push((name, error)),
            }
        }
        if ready.is_empty() {
            return errors;
        }
        // Nothing inserted (all of them duplicates, say): no change to tell.
        let _ = self.update(|current| {
            let mut inserted = 0;
            for (name, tool) in ready {
                match current.insert(tool) {
                    Ok(()) => inserted += 1,
                    Err(error) => errors.push((name, error)),
                }
            }
            if inserted == 0 {
                return Err(());
            }
            Ok(())
        });
        errors
    }

    /// Makes `tools` the whole set, in one change that bumps the version
    /// once: every tool registered before and not among them is gone. A tool
    /// that cannot be registered is left out, with its name and the reason.
    /// For mirroring another server's tools (`toolshape proxy`): with an
    /// untrusted engine their schemas draw on one compile budget
    /// (`Limits::listing_budget`, see [`CompileBudget`]); once it is spent,
    /// the tools whose schemas are not compiled yet are left out
    /// (`SchemaErrorKind::ListingTooCostly`), to be tried again at the
    /// next call.
    pub fn replace_all(
        &self,
        tools: impl IntoIterator<Item = Tool>,
    ) -> Vec<(String, RegistrationError)> {
        let mut next = Catalog::default();
        let mut errors = Vec::new();
        let engine = self.listing_engine();
        // What is registered now: a schema unchanged since is not compiled
        // again (nor drawn on the budget), however many there are.
        let current = self.snapshot();
        for tool in tools {
            let name = tool.name.clone();
            let earlier = current
                .by_name
                .get(name.as_str())
                .map_or(&[][..], Vec::as_slice);
            let inserted = RegisteredTool::reusing(tool, &engine, earlier)
                .and_then(|registered| next.insert(Arc::new(registered)));
            if let Err(error) = inserted {
                errors.push((name, error));
            }
        }
        let _ = self.update(|current| {
            *current = next;
            Ok::<_, RegistrationError>(())
        });
        errors
    }

    /// The engine for registering a batch of tools: with an untrusted
    /// engine (a peer's tools), their schemas draw on one
    /// [`toolshape_schema::CompileBudget`] of `Limits::listing_budget`.
    fn listing_engine(&self) -> SchemaEngine {
        let engine = &self.inner.engine;
        engine.with_budget(CompileBudget::new(engine.limits().listing_budget))
    }

    /// Removes the tool named `name`, every version of it; says whether there was one.
    pub fn remove(&self, name: &str) -> bool {
        self.update(|catalog| Ok::<_, RegistrationError>(catalog.remove(name)))
            .unwrap_or(false)
    }

    /// Removes one version of the tool named `name`; says whether there was
    /// one. MCP peers then see the latest version left.
    pub fn remove_version(&self, name: &str, version: ToolVersion) -> bool {
        self.update(|catalog| {
            let Some(versions) = catalog.by_name.get_mut(name) else {
                return Ok::<_, RegistrationError>(false);
            };
            let Ok(at) = versions.binary_search_by_key(&version, |v| v.version) else {
                return Ok(false);
            };
            versions.remove(at);
            if versions.is_empty() {
                catalog.remove(name);
            }
            Ok(true)
        })
        .unwrap_or(false)
    }

    /// The names of the registered tools, in order.
    pub fn names(&self) -> Vec<String> {
        self.snapshot()
            .by_name
            .keys()
            .map(|name| name.to_string())
            .collect()
    }

    /// The definitions of the registered tools (the latest version of
    /// each), in order, as 2026-07-28 peers see them.
    pub fn definitions(&self) -> Vec<toolshape_protocol::ToolDefinition> {
        self.snapshot()
            .by_name
            .values()
            .filter_map(|versions| versions.last())
            .map(|tool| tool.definition.clone())
            .collect()
    }

    /// Every registered tool, every version: by name, then version ascending.
    pub fn tools(&self) -> Vec<Arc<RegisteredTool>> {
        self.snapshot()
            .by_name
            .values()
            .flat_map(|versions| versions.iter().cloned())
            .collect()
    }

    /// The latest version of the tool named `name` (its MCP name).
    pub fn latest(&self, name: &str) -> Option<Arc<RegisteredTool>> {
        self.snapshot().latest(name).cloned()
    }

    /// The tool whose qualified name is `qualified` (`Toolkit.Tool`): the
    /// version given, or the latest.
    pub fn find_qualified(
        &self,
        qualified: &str,
        version: Option<ToolVersion>,
    ) -> Option<Arc<RegisteredTool>> {
        let snapshot = self.snapshot();
        let name = snapshot.qualified.get(qualified)?;
        let versions = snapshot.by_name.get(name)?;
        match version {
            None => versions.last().cloned(),
            Some(version) => versions
                .binary_search_by_key(&version, |v| v.version)
                .ok()
                .and_then(|at| versions.get(at).cloned()),
        }
    }

    /// How many tools are registered (names; versions of one count once).
    pub fn len(&self) -> usize {
        self.snapshot().by_name.len()
    }

    /// Whether no tool is registered.
    pub fn is_empty(&self) -> bool {
        self.snapshot().by_name.is_empty()
    }

    /// A receiver that sees a new value whenever the set of tools changes.
    pub fn watch_changes(&self) -> watch::Receiver<u64> {
        self.inner.version.subscribe()
    }

    /// The latest version of `name` (what MCP peers call).
    pub(crate) fn get(&self, name: &str) -> Option<Arc<RegisteredTool>> {
        self.latest(name)
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
                    .by_name
                    .range::<str, _>((
                        std::ops::Bound::Excluded(name.as_str()),
                        std::ops::Bound::Unbounded,
                    ))
                    .filter_map(|(_, versions)| versions.last()),
            ) as Box<dyn Iterator<Item = &Arc<RegisteredTool>>>,
            None => Box::new(
                snapshot
                    .by_name
                    .values()
                    .filter_map(|versions| versions.last()),
            ),
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

    fn update<T, E>(&self, change: impl FnOnce(&mut Catalog) -> Result<T, E>) -> Result<T, E> {
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

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::{ToolContext, ToolError, ToolOutput};

    fn tool(name: &str, input: Value) -> Tool {
        Tool::dynamic(
            name,
            input,
            None,
            |_context: ToolContext, _arguments: Value| async move {
                Ok::<_, ToolError>(ToolOutput::text("ok"))
            },
        )
    }

    #[test]
    fn register_each_keeps_what_it_can_in_one_change() {
        let registry = ToolRegistry::with_engine(SchemaEngine::default());
        registry
            .register(tool("first", json!({"type": "object"})))
            .unwrap();
        let changes = registry.watch_changes();
        let before = *changes.borrow();
        let failed = registry.register_each([
            tool("second", json!({"type": "object"})),
            tool("broken", json!({"type": "object", "pattern": "("})),
            tool("first", json!({"type": "object"})),
            tool("third", json!({"type": "object"})),
        ]);
        let failed: Vec<&str> = failed.iter().map(|(name, _)| name.as_str()).collect();
        assert_eq!(failed, ["broken", "first"]);
        assert_eq!(registry.names(), ["first", "second", "third"]);
        assert_eq!(*changes.borrow(), before + 1, "one change");
        // Nothing new: no change told.
        let failed = registry.register_each([tool("second", json!({"type": "object"}))]);
        assert_eq!(failed.len(), 1);
        assert_eq!(*changes.borrow(), before + 1, "a change told for nothing");
    }

    #[test]
    fn replacing_compiles_only_the_schemas_that_changed() {
        // No cache: what is not compiled again is the registered tool's.
        let engine = SchemaEngine::builder().cache_capacity(0).build();
        let registry = ToolRegistry::with_engine(engine);
        let tools = |output: Value| {
            (0..3).map(move |n| {
                Tool::dynamic(
                    format!("t{n}"),
                    json!({"type": "object", "x-n": n}),
                    Some(output.clone()),
                    |_context: ToolContext, _arguments: Value| async move {
                        Ok::<_, ToolError>(ToolOutput::structured(json!([])))
                    },
                )
            })
        };
        assert!(
            registry
                .replace_all(tools(json!({"type": "array"})))
                .is_empty()
        );
        let before = registry.latest("t1").unwrap();
        assert!(
            registry
                .replace_all(tools(json!({"type": "array"})))
                .is_empty()
        );
        let again = registry.latest("t1").unwrap();
        assert!(Arc::ptr_eq(&before.input, &again.input));
        assert!(Arc::ptr_eq(
            before.output.as_ref().unwrap(),
            again.output.as_ref().unwrap()
        ));
        // A changed output schema is compiled anew; the input kept.
        assert!(
            registry
                .replace_all(tools(json!({"type": "integer"})))
                .is_empty()
        );
        let changed = registry.latest("t1").unwrap();
        assert!(Arc::ptr_eq(&before.input, &changed.input));
        assert_eq!(
            changed.output.as_ref().unwrap().schema(),
            &json!({"type": "integer"})
        );
    }
}
