//! A server's prompts, by name: shared by every server built with it, and
//! changeable while they serve (each change announced to the peers that
//! follow it, `notifications/prompts/list_changed`).

use std::collections::BTreeMap;
use std::sync::{Arc, PoisonError, RwLock};

use tokio::sync::watch;
use toolshape_protocol::prompts::Prompt as PromptDefinition;

use super::Prompt;
use crate::tool::RegistrationError;

/// The prompts one or more servers offer. Cheap to clone; clones are the
/// same registry. Give it to [`crate::ServerBuilder::prompt_registry`] to
/// change prompts while serving (a gateway following another server's).
#[derive(Clone, Default)]
pub struct PromptRegistry {
    inner: Arc<Inner>,
}

#[derive(Default)]
struct Inner {
    prompts: RwLock<Arc<BTreeMap<String, Arc<Prompt>>>>,
    /// Counts the changes, for the connections that announce them.
    version: watch::Sender<u64>,
}

impl std::fmt::Debug for PromptRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PromptRegistry")
            .field("prompts", &self.catalog().keys().collect::<Vec<_>>())
            .finish()
    }
}

impl PromptRegistry {
    /// An empty registry.
    pub fn new() -> PromptRegistry {
        PromptRegistry::default()
    }

    fn catalog(&self) -> Arc<BTreeMap<String, Arc<Prompt>>> {
        Arc::clone(
            &self
                .inner
                .prompts
                .read()
                .unwrap_or_else(PoisonError::into_inner),
        )
    }

    fn update(&self, change: impl FnOnce(&mut BTreeMap<String, Arc<Prompt>>) -> bool) -> bool {
        let mut prompts = self
            .inner
            .prompts
            .write()
            .unwrap_or_else(PoisonError::into_inner);
        let mut next = prompts.as_ref().clone();
        let changed = change(&mut next);
        if changed {
            *prompts = Arc::new(next);
            drop(prompts);
            self.inner.version.send_modify(|version| *version += 1);
        }
        changed
    }

    /// Adds `prompt`; fails if one of its name is there.
    pub fn register(&self, prompt: Prompt) -> Result<(), RegistrationError> {
        let name = prompt.name().to_owned();
        let mut taken = false;
        self.update(|prompts| {
            taken = prompts.contains_key(&name);
            if !taken {
                prompts.insert(name.clone(), Arc::new(prompt));
            }
            !taken
        });
        if taken {
            return Err(RegistrationError::DuplicatePrompt(name));
        }
        Ok(())
    }

    /// Makes the registry exactly `prompts` (one change, announced only when
    /// a definition differs); of several with one name the first is kept.
    /// Returns the names of those left out.
    pub fn replace_all(&self, prompts: impl IntoIterator<Item = Prompt>) -> Vec<String> {
        let mut repeated = Vec::new();
        let mut next = BTreeMap::new();
        for prompt in prompts {
            match next.entry(prompt.name().to_owned()) {
                std::collections::btree_map::Entry::Occupied(taken) => {
                    repeated.push(taken.key().clone());
                }
                std::collections::btree_map::Entry::Vacant(free) => {
                    free.insert(Arc::new(prompt));
                }
            }
        }
        self.update(|prompts| {
            let same = prompts.len() == next.len()
                && prompts
                    .values()
                    .zip(next.values())
                    .all(|(old, new)| old.definition == new.definition);
            *prompts = next;
            !same
        });
        repeated
    }

    /// Removes the prompt `name`; whether it was there.
    pub fn remove(&self, name: &str) -> bool {
        self.update(|prompts| prompts.remove(name).is_some())
    }

    /// The names of the prompts, in order.
    pub fn names(&self) -> Vec<String> {
        self.catalog().keys().cloned().collect()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.catalog().is_empty()
    }

    /// The prompts' definitions, in name order.
    pub fn list(&self) -> Vec<PromptDefinition> {
        self.catalog()
            .values()
            .map(|prompt| prompt.definition.clone())
            .collect()
    }

    /// One page of the prompts in name order, and the cursor of the next.
    pub(crate) fn page(
        &self,
        cursor: Option<&str>,
        size: usize,
    ) -> Result<(Vec<PromptDefinition>, Option<String>), toolshape_protocol::ErrorObject> {
        let catalog = self.catalog();
        let all = catalog.values().map(|prompt| &prompt.definition);
        crate::server::pages::page(all, cursor, size)
    }

    /// The prompt `name`.
    pub fn get(&self, name: &str) -> Option<Arc<Prompt>> {
        self.catalog().get(name).cloned()
    }

    /// A receiver that sees a new value whenever the prompts change.
    pub(crate) fn watch_changes(&self) -> watch::Receiver<u64> {
        self.inner.version.subscribe()
    }
}
