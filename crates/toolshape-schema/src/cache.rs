//! A bounded cache of compiled schemas, keyed by schema content.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use serde_json::Value;

use crate::compiled::CompiledSchema;
use crate::error::SchemaError;

/// What compiling one schema gave: refusals are cached too, so a peer that
/// sends the same bad schema on every listing costs one compile.
pub(crate) type Outcome = Result<Arc<CompiledSchema>, SchemaError>;

struct Entry {
    schema: Arc<Value>,
    outcome: Outcome,
    last_used: u64,
}

/// Least-recently-used, bounded by entry count.
pub(crate) struct Cache {
    capacity: usize,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    entries: HashMap<u64, Vec<Entry>>,
    len: usize,
    clock: u64,
}

impl Cache {
    pub(crate) fn new(capacity: usize) -> Self {
        Cache {
            capacity,
            state: Mutex::new(State::default()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // The state stays consistent at every await-free step, so a poisoned lock is still usable.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn get(&self, hash: u64, schema: &Value) -> Option<Outcome> {
        let mut state = self.lock();
        state.clock += 1;
        let now = state.clock;
        let entry = state
            .entries
            .get_mut(&hash)?
            .iter_mut()
            .find(|entry| *entry.schema == *schema)?;
        entry.last_used = now;
        Some(entry.outcome.clone())
    }

    pub(crate) fn insert(&self, hash: u64, schema: Arc<Value>, outcome: Outcome) {
        if self.capacity == 0 {
            return;
        }
        let mut state = self.lock();
        state.clock += 1;
        let now = state.clock;
        if state.len >= self.capacity {
            state.evict_oldest();
        }
        state.entries.entry(hash).or_default().push(Entry {
            schema,
            outcome,
            last_used: now,
        });
        state.len += 1;
    }

    pub(crate) fn len(&self) -> usize {
        self.lock().len
    }
}

impl State {
    fn evict_oldest(&mut self) {
        let oldest = self
            .entries
            .iter()
            .flat_map(|(hash, bucket)| {
                bucket
                    .iter()
                    .enumerate()
                    .map(move |(i, e)| (e.last_used, *hash, i))
            })
            .min();
        if let Some((_, hash, index)) = oldest
            && let Some(bucket) = self.entries.get_mut(&hash)
        {
            bucket.swap_remove(index);
            if bucket.is_empty() {
                self.entries.remove(&hash);
            }
            self.len -= 1;
        }
    }
}
