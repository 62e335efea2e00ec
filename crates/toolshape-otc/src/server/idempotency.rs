//! `call_id` as an idempotency key: a call repeated with the same id, tool
//! and input within the window gets the stored response without the tool
//! running again; the same id with another tool or input is a conflict
//! (409). Keys are kept per caller (one caller cannot read another's
//! responses by guessing ids), and a repeat must bring the same credentials
//! (`authorization`, `secrets`): callers sharing one principal cannot read
//! each other's responses either. Memory is bounded by entries and by bytes;
//! the oldest answered calls go first.

use std::collections::hash_map::RandomState;
use std::collections::{HashMap, VecDeque};
use std::hash::{BuildHasher, Hash, Hasher};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use serde_json::Value;
use tokio::sync::watch;

/// A stored response.
#[derive(Debug, Clone)]
pub(crate) struct Stored {
    pub(crate) body: Bytes,
}

type Key = (String, String);

enum Slot {
    Running {
        fingerprint: u128,
        done: watch::Receiver<Option<Arc<Stored>>>,
        serial: u64,
    },
    Done {
        fingerprint: u128,
        stored: Arc<Stored>,
        at: Instant,
        serial: u64,
    },
}

struct Inner {
    slots: HashMap<Key, Slot>,
    /// Answered calls, oldest first, with the serial of their slot (a key
    /// answered again later has a newer serial; the older entry is stale).
    order: VecDeque<(Key, u64)>,
    bytes: usize,
    serial: u64,
}

/// The store.
pub(crate) struct IdempotencyStore {
    inner: Mutex<Inner>,
    window: Duration,
    max_entries: usize,
    max_bytes: usize,
    hashers: (RandomState, RandomState),
}

/// What to do with a call.
pub(crate) enum Claim {
    /// Run it, then [`Running::finish`] with its response.
    Run(Running),
    /// Answer with this stored response.
    Replay(Arc<Stored>),
    /// The same call is running: wait for its response.
    Wait(watch::Receiver<Option<Arc<Stored>>>),
    /// The id was used for a different call.
    Conflict,
}

/// A claimed call; dropped without finishing (the caller went away), it
/// frees its id and wakes any waiter to claim again.
pub(crate) struct Running {
    store: Arc<IdempotencyStore>,
    key: Key,
    serial: u64,
    sender: Option<watch::Sender<Option<Arc<Stored>>>>,
}

/// Hashes JSON with object keys in sorted order, so that key order does not matter.
fn hash_canonical<H: Hasher>(value: &Value, state: &mut H) {
    match value {
        Value::Null => 0u8.hash(state),
        Value::Bool(b) => (1u8, b).hash(state),
        Value::Number(n) => (2u8, n.to_string()).hash(state),
        Value::String(s) => (3u8, s).hash(state),
        Value::Array(items) => {
            (4u8, items.len()).hash(state);
            items.iter().for_each(|item| hash_canonical(item, state));
        }
        Value::Object(map) => {
            (5u8, map.len()).hash(state);
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort_unstable();
            for key in keys {
                key.hash(state);
                if let Some(item) = map.get(key) {
                    hash_canonical(item, state);
                }
            }
        }
    }
}

impl IdempotencyStore {
    pub(crate) fn new(window: Duration, max_entries: usize, max_bytes: usize) -> Self {
        IdempotencyStore {
            inner: Mutex::new(Inner {
                slots: HashMap::new(),
                order: VecDeque::new(),
                bytes: 0,
                serial: 0,
            }),
            window,
            max_entries: max_entries.max(1),
            max_bytes,
            hashers: (RandomState::new(), RandomState::new()),
        }
    }

    /// A 128-bit fingerprint of what makes two calls the same (the tool, the
    /// input, the user, the credentials), under keys random to this process.
    pub(crate) fn fingerprint(&self, parts: &[&Value]) -> u128 {
        let mut first = self.hashers.0.build_hasher();
        let mut second = self.hashers.1.build_hasher();
        for part in parts {
            hash_canonical(part, &mut first);
            hash_canonical(part, &mut second);
        }
        (u128::from(first.finish()) << 64) | u128::from(second.finish())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn claim(self: &Arc<Self>, caller: &str, call_id: &str, fingerprint: u128) -> Claim {
        let key = (caller.to_owned(), call_id.to_owned());
        let mut inner = self.lock();
        self.expire(&mut inner);
        match inner.slots.get(&key) {
            Some(Slot::Done {
                fingerprint: stored,
                stored: response,
                ..
            }) => {
                return if *stored == fingerprint {
                    Claim::Replay(Arc::clone(response))
                } else {
                    Claim::Conflict
                };
            }
            Some(Slot::Running {
                fingerprint: running,
                done,
                ..
            }) => {
                return if *running == fingerprint {
                    Claim::Wait(done.clone())
                } else {
                    Claim::Conflict
                };
            }
            None => {}
        }
        inner.serial += 1;
        let serial = inner.serial;
        let (sender, done) = watch::channel(None);
        inner.slots.insert(
            key.clone(),
            Slot::Running {
                fingerprint,
                done,
                serial,
            },
        );
        Claim::Run(Running {
            store: Arc::clone(self),
            key,
            serial,
            sender: Some(sender),
        })
    }

    /// Drops answered calls older than the window, then the oldest until
    /// the bounds hold.
    fn expire(&self, inner: &mut Inner) {
        let now = Instant::now();
        while let Some((key, serial)) = inner.order.front().cloned() {
            let (expired, size) = match inner.slots.get(&key) {
                Some(Slot::Done {
                    at,
                    serial: current,
                    stored,
                    ..
                }) if *current == serial => (
                    now.duration_since(*at) >= self.window
                        || inner.order.len() > self.max_entries
                        || inner.bytes > self.max_bytes,
                    stored.body.len(),
                ),
                // Stale: the slot was replaced or removed.
                _ => {
                    inner.order.pop_front();
                    continue;
                }
            };
            if !expired {
                break;
            }
            inner.order.pop_front();
            inner.slots.remove(&key);
            inner.bytes = inner.bytes.saturating_sub(size);
        }
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.lock().slots.len()
    }
}

impl Running {
    /// Stores the response and wakes the waiters.
    pub(crate) fn finish(mut self, stored: Stored) {
        let stored = Arc::new(stored);
        let mut inner = self.store.lock();
        let fingerprint = match inner.slots.get(&self.key) {
            Some(Slot::Running {
                fingerprint,
                serial,
                ..
            }) if *serial == self.serial => *fingerprint,
            _ => return,
        };
        inner.bytes += stored.body.len();
        inner.slots.insert(
            self.key.clone(),
            Slot::Done {
                fingerprint,
                stored: Arc::clone(&stored),
                at: Instant::now(),
                serial: self.serial,
            },
        );
        inner.order.push_back((self.key.clone(), self.serial));
        self.store.expire(&mut inner);
        drop(inner);
        if let Some(sender) = self.sender.take() {
            let _ = sender.send(Some(stored));
        }
    }
}

impl Running {
    /// Answers the waiters with the response without storing it (a failure
    /// the caller may retry, a timeout): the id is free again, and a repeat
    /// runs the call anew.
    pub(crate) fn release(mut self, stored: Stored) {
        {
            let mut inner = self.store.lock();
            if matches!(inner.slots.get(&self.key), Some(Slot::Running { serial, .. }) if *serial == self.serial)
            {
                inner.slots.remove(&self.key);
            }
        }
        if let Some(sender) = self.sender.take() {
            let _ = sender.send(Some(Arc::new(stored)));
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if self.sender.is_none() {
            return;
        }
        let mut inner = self.store.lock();
        if matches!(inner.slots.get(&self.key), Some(Slot::Running { serial, .. }) if *serial == self.serial)
        {
            inner.slots.remove(&self.key);
        }
        // Dropping the sender wakes the waiters, who claim again.
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn stored(text: &str) -> Stored {
        Stored {
            body: Bytes::from(text.to_owned()),
        }
    }

    #[test]
    fn same_call_replays_different_call_conflicts() {
        let store = Arc::new(IdempotencyStore::new(Duration::from_secs(60), 10, 1 << 20));
        let a = store.fingerprint(&[&json!("T.x"), &json!({"a": 1, "b": 2})]);
        let same = store.fingerprint(&[&json!("T.x"), &json!({"b": 2, "a": 1})]);
        let other = store.fingerprint(&[&json!("T.x"), &json!({"a": 2})]);
        assert_eq!(a, same);
        assert_ne!(a, other);
        let Claim::Run(running) = store.claim("me", "c1", a) else {
            panic!("first claim must run");
        };
        assert!(matches!(store.claim("me", "c1", a), Claim::Wait(_)));
        assert!(matches!(store.claim("me", "c1", other), Claim::Conflict));
        running.finish(stored("answer"));
        assert!(matches!(store.claim("me", "c1", a), Claim::Replay(s) if s.body == "answer"));
        assert!(matches!(store.claim("me", "c1", other), Claim::Conflict));
        // Another caller's id space is its own.
        assert!(matches!(store.claim("you", "c1", other), Claim::Run(_)));
    }

    #[test]
    fn an_abandoned_call_frees_its_id() {
        let store = Arc::new(IdempotencyStore::new(Duration::from_secs(60), 10, 1 << 20));
        let Claim::Run(running) = store.claim("me", "c1", 7) else {
            panic!("first claim must run");
        };
        drop(running);
        assert!(matches!(store.claim("me", "c1", 8), Claim::Run(_)));
    }

    #[test]
    fn a_released_call_answers_its_waiters_and_is_not_kept() {
        let store = Arc::new(IdempotencyStore::new(Duration::from_secs(60), 10, 1 << 20));
        let Claim::Run(running) = store.claim("me", "c1", 7) else {
            panic!("first claim must run");
        };
        let Claim::Wait(mut waiter) = store.claim("me", "c1", 7) else {
            panic!("the same call must wait");
        };
        running.release(stored("try again"));
        assert!(matches!(&*waiter.borrow_and_update(), Some(s) if s.body == "try again"));
        // Not kept: the same call runs again.
        assert!(matches!(store.claim("me", "c1", 7), Claim::Run(_)));
    }

    #[test]
    fn memory_stays_bounded() {
        let store = Arc::new(IdempotencyStore::new(Duration::from_secs(60), 3, 1 << 20));
        for n in 0..10 {
            if let Claim::Run(running) = store.claim("me", &n.to_string(), n) {
                running.finish(stored("x"));
            }
        }
        assert!(store.len() <= 4, "{}", store.len());
        let by_bytes = Arc::new(IdempotencyStore::new(Duration::from_secs(60), 100, 10));
        for n in 0..10 {
            if let Claim::Run(running) = by_bytes.claim("me", &n.to_string(), n) {
                running.finish(stored("0123456789"));
            }
        }
        assert!(by_bytes.len() <= 2, "{}", by_bytes.len());
        let expiring = Arc::new(IdempotencyStore::new(Duration::ZERO, 100, 1 << 20));
        if let Claim::Run(running) = expiring.claim("me", "c", 1) {
            running.finish(stored("x"));
        }
        assert!(matches!(expiring.claim("me", "c", 2), Claim::Run(_)));
    }
}
