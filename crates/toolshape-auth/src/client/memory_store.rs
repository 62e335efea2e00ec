//! [`MemoryTokenStore`]: tokens and registrations in memory, within a
//! budget of bytes: past it the registrations no kept token uses are
//! forgotten first, then the least recently stored.

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;

use serde::Serialize;

use super::store::{StoreFuture, StoredClient, StoredToken, TokenStore, issuers_in_use};

/// Most bytes of tokens and registrations (their JSON) a
/// [`MemoryTokenStore`] keeps, as [`MAX_STORE_FILE_BYTES`](super::MAX_STORE_FILE_BYTES)
/// for the file; past it the registrations no kept token uses are forgotten
/// first, then the least recently stored.
pub const MAX_MEMORY_STORE_BYTES: usize = 1024 * 1024;

/// Keeps everything in memory (the default): tokens live as long as the
/// client. At most [`MAX_MEMORY_STORE_BYTES`] are kept: a server that names
/// a new authorization server after each grant (one registration each)
/// cannot grow it past that. Past the budget the registrations no kept
/// token was issued through go first, the least recently stored first;
/// then, if still over, the least recently stored of the rest; never the
/// one just stored.
#[derive(Debug, Default)]
pub struct MemoryTokenStore {
    kept: Mutex<Kept>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Kind {
    Token,
    Client,
}

#[derive(Debug)]
struct Entry<T> {
    value: T,
    stored: u64,
    bytes: usize,
}

#[derive(Debug, Default)]
struct Kept {
    tokens: HashMap<String, Entry<StoredToken>>,
    clients: HashMap<String, Entry<StoredClient>>,
    /// Every entry by when it was stored, oldest first.
    order: BTreeMap<u64, (Kind, String)>,
    next: u64,
    bytes: usize,
}

fn size_of(key: &str, value: &impl Serialize) -> usize {
    // A value that cannot be written as JSON (none of these) counts as its
    // key alone.
    key.len() + serde_json::to_vec(value).map_or(0, |json| json.len())
}

impl Kept {
    fn set<T: Serialize>(
        &mut self,
        kind: Kind,
        key: &str,
        value: Option<T>,
        map: impl Fn(&mut Kept) -> &mut HashMap<String, Entry<T>>,
    ) {
        if let Some(old) = map(self).remove(key) {
            self.order.remove(&old.stored);
            self.bytes -= old.bytes;
        }
        let Some(value) = value else { return };
        let bytes = size_of(key, &value);
        let stored = self.next;
        self.next += 1;
        self.order.insert(stored, (kind, key.to_owned()));
        self.bytes += bytes;
        map(self).insert(
            key.to_owned(),
            Entry {
                value,
                stored,
                bytes,
            },
        );
        self.forget_oldest_past_budget(stored);
    }

    /// While the budget is exceeded: forgets the registrations no kept
    /// token was issued through, oldest first, then the oldest entries of
    /// any kind; never `newest`.
    fn forget_oldest_past_budget(&mut self, newest: u64) {
        if self.bytes <= MAX_MEMORY_STORE_BYTES {
            return;
        }
        let used = issuers_in_use(self.tokens.values().map(|e| &e.value));
        let unused: Vec<u64> = self
            .order
            .iter()
            .filter(|(_, (kind, key))| *kind == Kind::Client && !used.contains(key.as_str()))
            .map(|(&stored, _)| stored)
            .collect();
        let oldest: Vec<u64> = self.order.keys().copied().collect();
        for stored in unused.into_iter().chain(oldest) {
            if self.bytes <= MAX_MEMORY_STORE_BYTES {
                return;
            }
            if stored != newest {
                self.forget(stored);
            }
        }
    }

    /// Forgets the entry stored as `stored` (if it is still kept).
    fn forget(&mut self, stored: u64) {
        let Some((kind, key)) = self.order.remove(&stored) else {
            return;
        };
        let bytes = match kind {
            Kind::Token => self.tokens.remove(&key).map(|e| e.bytes),
            Kind::Client => self.clients.remove(&key).map(|e| e.bytes),
        };
        self.bytes -= bytes.unwrap_or(0);
    }
}

impl MemoryTokenStore {
    /// An empty store.
    pub fn new() -> Self {
        MemoryTokenStore::default()
    }

    fn with<T>(&self, f: impl FnOnce(&mut Kept) -> T) -> T {
        let mut kept = self
            .kept
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        f(&mut kept)
    }
}

impl TokenStore for MemoryTokenStore {
    fn token<'a>(&'a self, resource: &'a str) -> StoreFuture<'a, Option<StoredToken>> {
        let found = self.with(|k| k.tokens.get(resource).map(|e| e.value.clone()));
        Box::pin(async move { Ok(found) })
    }

    fn set_token<'a>(
        &'a self,
        resource: &'a str,
        token: Option<StoredToken>,
    ) -> StoreFuture<'a, ()> {
        self.with(|k| k.set(Kind::Token, resource, token, |k| &mut k.tokens));
        Box::pin(async { Ok(()) })
    }

    fn client<'a>(&'a self, issuer: &'a str) -> StoreFuture<'a, Option<StoredClient>> {
        let found = self.with(|k| k.clients.get(issuer).map(|e| e.value.clone()));
        Box::pin(async move { Ok(found) })
    }

    fn set_client<'a>(
        &'a self,
        issuer: &'a str,
        client: Option<StoredClient>,
    ) -> StoreFuture<'a, ()> {
        self.with(|k| k.set(Kind::Client, issuer, client, |k| &mut k.clients));
        Box::pin(async { Ok(()) })
    }
}

#[cfg(test)]
mod tests {
    use super::{MAX_MEMORY_STORE_BYTES, MemoryTokenStore};
    use crate::client::TokenStore;
    use crate::client::store::tests::{has_client, registration, token};

    const RESOURCE: &str = "https://mcp.example/mcp";

    fn client(n: usize) -> crate::client::StoredClient {
        registration(n, 1000)
    }

    async fn held(store: &MemoryTokenStore, issuers: usize) -> usize {
        let mut held = 0;
        for n in 0..issuers {
            if has_client(store, &format!("https://as{n}.example")).await {
                held += 1;
            }
        }
        held
    }

    #[tokio::test]
    async fn registrations_past_the_budget_forget_the_oldest_not_the_token() {
        let store = MemoryTokenStore::new();
        let resource = RESOURCE;
        assert!(
            store
                .set_token(resource, Some(token(RESOURCE, "t".into())))
                .await
                .is_ok()
        );
        // A server naming a new authorization server per grant: 4,000
        // registrations of about 1 KiB, 4 MiB in all.
        let issuers = 4000;
        for n in 0..issuers {
            let issuer = format!("https://as{n}.example");
            assert!(store.set_client(&issuer, Some(client(n))).await.is_ok());
            // The token in use is stored again on each grant.
            if n % 100 == 0 {
                assert!(
                    store
                        .set_token(resource, Some(token(RESOURCE, format!("t{n}"))))
                        .await
                        .is_ok()
                );
            }
        }
        let kept = store.with(|k| k.bytes);
        assert!(kept <= MAX_MEMORY_STORE_BYTES, "{kept} bytes kept");
        let held = held(&store, issuers).await;
        assert!((900..issuers).contains(&held), "{held} registrations kept");
        // The newest are the ones kept, and the token stored last with them.
        assert!(has_client(&store, "https://as3999.example").await);
        assert!(!has_client(&store, "https://as0.example").await);
        let token = store.token(resource).await.ok().flatten();
        assert_eq!(
            token.map(|t| t.access_token.expose().to_owned()).as_deref(),
            Some("t3900")
        );
    }

    #[tokio::test]
    async fn a_flood_of_registrations_spares_the_token_and_its_issuers_registration() {
        let store = MemoryTokenStore::new();
        // The token in use, from https://as.example, stored once, and that
        // issuer's registration.
        assert!(
            store
                .set_client("https://as.example", Some(client(0)))
                .await
                .is_ok()
        );
        let kept = token(RESOURCE, "t".into());
        assert!(store.set_token(RESOURCE, Some(kept.clone())).await.is_ok());
        // A server naming a new authorization server per grant: 4 MiB of
        // registrations, none of them used by a token.
        for n in 1..=4000 {
            let issuer = format!("https://as{n}.example");
            assert!(store.set_client(&issuer, Some(client(n))).await.is_ok());
        }
        assert!(store.with(|k| k.bytes) <= MAX_MEMORY_STORE_BYTES);
        assert_eq!(store.token(RESOURCE).await.ok().flatten(), Some(kept));
        assert!(has_client(&store, "https://as.example").await);
        assert!(has_client(&store, "https://as4000.example").await);
    }

    #[tokio::test]
    async fn one_entry_over_the_budget_is_kept_alone_and_forgetting_frees_its_bytes() {
        let store = MemoryTokenStore::new();
        assert!(
            store
                .set_client("https://a.example", Some(client(0)))
                .await
                .is_ok()
        );
        let huge = token(RESOURCE, "h".repeat(MAX_MEMORY_STORE_BYTES + 1));
        assert!(
            store
                .set_token("https://mcp.example/mcp", Some(huge))
                .await
                .is_ok()
        );
        assert!(
            store
                .token("https://mcp.example/mcp")
                .await
                .ok()
                .flatten()
                .is_some()
        );
        assert!(!has_client(&store, "https://a.example").await);
        assert!(
            store
                .set_token("https://mcp.example/mcp", None)
                .await
                .is_ok()
        );
        assert_eq!(store.with(|k| (k.bytes, k.order.len())), (0, 0));
    }
}
