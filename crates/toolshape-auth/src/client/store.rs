//! Where tokens and client registrations are kept between requests (and,
//! with [`FileTokenStore`], between runs): tokens by the resource they are
//! for, registrations by the authorization server that issued them.

use std::collections::HashMap;
use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;

use serde::{Deserialize, Serialize};

use crate::{BoxError, Secret};

/// A boxed future of a store operation.
pub type StoreFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, BoxError>> + Send + 'a>>;

/// A token, with what is needed to use and renew it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct StoredToken {
    /// The authorization server that issued it (its issuer identifier).
    pub issuer: String,
    /// The resource it is for (the `resource` it was requested with).
    pub resource: String,
    /// The client it was issued to.
    pub client_id: String,
    /// The access token.
    pub access_token: Secret,
    /// `Bearer` or `DPoP`.
    pub token_type: String,
    /// The refresh token, if one was issued.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_token: Option<Secret>,
    /// When it expires, seconds since the epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<u64>,
    /// The scopes requested for it.
    #[serde(default)]
    pub scopes: Vec<String>,
    /// The DPoP key it is bound to (PKCS#8, base64url).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dpop_key: Option<Secret>,
}

/// A client registered dynamically with one authorization server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct StoredClient {
    /// The client id.
    pub client_id: String,
    /// The client secret, if one was issued.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<Secret>,
    /// How it authenticates at the token endpoint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_endpoint_auth_method: Option<String>,
    /// The redirect URIs registered.
    #[serde(default)]
    pub redirect_uris: Vec<String>,
    /// When the secret expires (0 or absent: never), seconds since the epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret_expires_at: Option<u64>,
}

/// Keeps tokens (by resource) and registrations (by issuer).
pub trait TokenStore: Send + Sync + std::fmt::Debug + 'static {
    /// The token for `resource`.
    fn token<'a>(&'a self, resource: &'a str) -> StoreFuture<'a, Option<StoredToken>>;
    /// Replaces (or, with `None`, forgets) the token for `resource`.
    fn set_token<'a>(
        &'a self,
        resource: &'a str,
        token: Option<StoredToken>,
    ) -> StoreFuture<'a, ()>;
    /// The client registered with `issuer`.
    fn client<'a>(&'a self, issuer: &'a str) -> StoreFuture<'a, Option<StoredClient>>;
    /// Replaces (or forgets) the client registered with `issuer`.
    fn set_client<'a>(
        &'a self,
        issuer: &'a str,
        client: Option<StoredClient>,
    ) -> StoreFuture<'a, ()>;
}

#[derive(Debug, Default, Clone, Serialize, Deserialize)]
struct Contents {
    #[serde(default)]
    tokens: HashMap<String, StoredToken>,
    #[serde(default)]
    clients: HashMap<String, StoredClient>,
}

/// The issuers the `tokens` were issued by: their registrations are in use,
/// and are the last either store forgets to make room.
pub(super) fn issuers_in_use<'a>(
    tokens: impl IntoIterator<Item = &'a StoredToken>,
) -> std::collections::HashSet<&'a str> {
    tokens.into_iter().map(|t| t.issuer.as_str()).collect()
}

impl Contents {
    /// Forgets the registrations no kept token was issued through, but the
    /// one with `keep`'s issuer: what makes room when the file is full.
    fn forget_unused_registrations(&mut self, keep: Option<&str>) {
        let used = issuers_in_use(self.tokens.values());
        self.clients
            .retain(|issuer, _| used.contains(issuer.as_str()) || Some(issuer.as_str()) == keep);
    }
}

/// Largest store file read or written, in bytes (a change that would make
/// it larger first forgets the registrations no kept token uses; if it is
/// still larger, it is refused, the file left as it was).
pub const MAX_STORE_FILE_BYTES: u64 = 1024 * 1024;

/// Keeps everything in one JSON file, readable by its owner only (mode
/// 0600 on Unix, in folders made 0700 when it makes them), replaced
/// atomically on each change; a missing file is an empty store.
#[derive(Debug)]
pub struct FileTokenStore {
    path: PathBuf,
    lock: tokio::sync::Mutex<()>,
}

impl FileTokenStore {
    /// A store in the file at `path` (created when first written).
    pub fn new(path: impl Into<PathBuf>) -> Self {
        FileTokenStore {
            path: path.into(),
            lock: tokio::sync::Mutex::new(()),
        }
    }

    async fn read(&self) -> Result<Contents, BoxError> {
        let path = self.path.clone();
        tokio::task::spawn_blocking(move || read_file(&path)).await?
    }

    /// Reads the file, changes it and writes it back; `keep` names the
    /// issuer whose registration is never forgotten to make room.
    async fn update(
        &self,
        keep: Option<String>,
        change: impl FnOnce(&mut Contents) + Send + 'static,
    ) -> Result<(), BoxError> {
        let _one_writer = self.lock.lock().await;
        let path = self.path.clone();
        tokio::task::spawn_blocking(move || {
            let mut contents = read_file(&path)?;
            change(&mut contents);
            write_file(&path, &mut contents, keep.as_deref())
        })
        .await?
    }
}

fn read_file(path: &std::path::Path) -> Result<Contents, BoxError> {
    use std::io::Read;
    let file = match std::fs::File::open(path) {
        Ok(file) => file,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            return Ok(Contents::default());
        }
        Err(error) => return Err(format!("{}: {error}", path.display()).into()),
    };
    let mut text = Vec::new();
    file.take(MAX_STORE_FILE_BYTES + 1).read_to_end(&mut text)?;
    if text.len() as u64 > MAX_STORE_FILE_BYTES {
        return Err(format!(
            "{} is larger than {MAX_STORE_FILE_BYTES} bytes",
            path.display()
        )
        .into());
    }
    serde_json::from_slice(&text).map_err(|e| format!("{}: {e}", path.display()).into())
}

fn write_file(
    path: &std::path::Path,
    contents: &mut Contents,
    keep: Option<&str>,
) -> Result<(), BoxError> {
    use std::io::Write;
    let mut text = serde_json::to_vec_pretty(contents)?;
    if text.len() as u64 > MAX_STORE_FILE_BYTES {
        // Registrations no kept token uses (a server that named a new
        // authorization server after each grant leaves many) make room.
        contents.forget_unused_registrations(keep);
        text = serde_json::to_vec_pretty(contents)?;
    }
    // A file past what is read back would lose every token in it: the
    // change is refused instead, the file left as it was.
    if text.len() as u64 > MAX_STORE_FILE_BYTES {
        return Err(format!(
            "{} would be larger than {MAX_STORE_FILE_BYTES} bytes; the change was not saved",
            path.display()
        )
        .into());
    }
    let directory = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
        _ => PathBuf::from("."),
    };
    // A folder made here is its owner's only (0700 on Unix); one that
    // exists is left as it is.
    let mut folder = std::fs::DirBuilder::new();
    folder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut folder, 0o700);
    folder.create(&directory)?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "tokens".into());
    // A random name, created exclusively and owner-only (0600 on Unix):
    // nobody else's file or link in a shared folder is written through.
    let mut file = tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(".tmp")
        .tempfile_in(&directory)?;
    file.write_all(&text)?;
    file.as_file().sync_all()?;
    file.persist(path).map_err(|error| error.error)?;
    Ok(())
}

impl TokenStore for FileTokenStore {
    fn token<'a>(&'a self, resource: &'a str) -> StoreFuture<'a, Option<StoredToken>> {
        Box::pin(async move { Ok(self.read().await?.tokens.remove(resource)) })
    }

    fn set_token<'a>(
        &'a self,
        resource: &'a str,
        token: Option<StoredToken>,
    ) -> StoreFuture<'a, ()> {
        let resource = resource.to_owned();
        let keep = token.as_ref().map(|t| t.issuer.clone());
        Box::pin(self.update(keep, move |c| {
            match token {
                Some(token) => c.tokens.insert(resource, token),
                None => c.tokens.remove(&resource),
            };
        }))
    }

    fn client<'a>(&'a self, issuer: &'a str) -> StoreFuture<'a, Option<StoredClient>> {
        Box::pin(async move { Ok(self.read().await?.clients.remove(issuer)) })
    }

    fn set_client<'a>(
        &'a self,
        issuer: &'a str,
        client: Option<StoredClient>,
    ) -> StoreFuture<'a, ()> {
        let issuer = issuer.to_owned();
        Box::pin(self.update(Some(issuer.clone()), move |c| {
            match client {
                Some(client) => c.clients.insert(issuer, client),
                None => c.clients.remove(&issuer),
            };
        }))
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::{FileTokenStore, MAX_STORE_FILE_BYTES, StoredClient, StoredToken, TokenStore};
    use crate::Secret;

    /// A registration whose client id is about `bytes` long.
    pub(in crate::client) fn registration(n: usize, bytes: usize) -> StoredClient {
        StoredClient {
            client_id: format!("client {n} {}", "x".repeat(bytes)),
            client_secret: None,
            token_endpoint_auth_method: None,
            redirect_uris: Vec::new(),
            client_secret_expires_at: None,
        }
    }

    /// Whether `store` holds a registration with `issuer`.
    pub(in crate::client) async fn has_client(store: &dyn TokenStore, issuer: &str) -> bool {
        store.client(issuer).await.ok().flatten().is_some()
    }

    /// A bearer token from `https://as.example`.
    pub(in crate::client) fn token(resource: &str, access: String) -> StoredToken {
        StoredToken {
            issuer: "https://as.example".into(),
            resource: resource.into(),
            client_id: "client".into(),
            access_token: Secret::new(access),
            token_type: "Bearer".into(),
            refresh_token: None,
            expires_at: None,
            scopes: Vec::new(),
            dpop_key: None,
        }
    }

    /// The file is written through a temporary file of a random name: one
    /// planted at the name the writer used to take (`.tokens.json.<pid>.tmp`)
    /// is left alone, never written through, and the file is owner-only.
    #[tokio::test]
    async fn the_file_is_written_through_a_temporary_file_nobody_planted() {
        let folder = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let planted = folder
            .path()
            .join(format!(".tokens.json.{}.tmp", std::process::id()));
        std::fs::write(&planted, "planted").unwrap_or_else(|e| panic!("{e}"));
        let path = folder.path().join("tokens.json");
        let store = FileTokenStore::new(&path);
        let saved = token("https://a.example/mcp", "a".repeat(32));
        assert!(store.set_token("a", Some(saved)).await.is_ok());
        assert_eq!(
            std::fs::read_to_string(&planted).unwrap_or_default(),
            "planted"
        );
        let names: Vec<_> = std::fs::read_dir(folder.path())
            .unwrap_or_else(|e| panic!("{e}"))
            .filter_map(Result::ok)
            .map(|entry| entry.file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names.len(), 2, "a temporary file left behind: {names:?}");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path)
                .unwrap_or_else(|e| panic!("{e}"))
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
            // A folder the store makes is its owner's only.
            let nested = folder.path().join("made/here/tokens.json");
            let store = FileTokenStore::new(&nested);
            let saved = token("https://a.example/mcp", "a".repeat(32));
            assert!(store.set_token("a", Some(saved)).await.is_ok());
            for made in ["made", "made/here"] {
                let mode = std::fs::metadata(folder.path().join(made))
                    .unwrap_or_else(|e| panic!("{e}"))
                    .permissions()
                    .mode();
                assert_eq!(mode & 0o777, 0o700, "{made}");
            }
        }
    }

    #[tokio::test]
    async fn a_change_past_the_file_bound_is_refused_and_the_file_kept() {
        let folder = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let store = FileTokenStore::new(folder.path().join("tokens.json"));
        let kept = token("https://a.example/mcp", "a".repeat(32));
        assert!(store.set_token("a", Some(kept.clone())).await.is_ok());
        let huge = usize::try_from(MAX_STORE_FILE_BYTES).unwrap_or(usize::MAX);
        let huge = token("https://b.example/mcp", "b".repeat(huge));
        assert!(store.set_token("b", Some(huge)).await.is_err());
        // The file still reads, with what it held.
        assert_eq!(store.token("a").await.ok().flatten(), Some(kept));
        assert_eq!(store.token("b").await.ok().flatten(), None);
    }

    #[tokio::test]
    async fn a_full_file_forgets_the_registrations_no_token_uses() {
        let folder = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let store = FileTokenStore::new(folder.path().join("tokens.json"));
        let registration = |n: usize| registration(n, 20_000);
        // The token's issuer ("https://as.example") is registered first.
        assert!(
            store
                .set_client("https://as.example", Some(registration(0)))
                .await
                .is_ok()
        );
        let kept = token("https://a.example/mcp", "a".repeat(32));
        assert!(store.set_token("a", Some(kept.clone())).await.is_ok());
        // A server naming a new authorization server per grant: 100
        // registrations of about 20 KB, twice the file's bound.
        for n in 1..=100 {
            let issuer = format!("https://as{n}.example");
            let stored = store.set_client(&issuer, Some(registration(n))).await;
            assert!(stored.is_ok(), "registration {n}: {stored:?}");
        }
        let size = std::fs::metadata(folder.path().join("tokens.json")).map(|m| m.len());
        assert!(size.is_ok_and(|size| size <= MAX_STORE_FILE_BYTES));
        // The token, its issuer's registration and the newest are kept.
        assert_eq!(store.token("a").await.ok().flatten(), Some(kept));
        assert!(has_client(&store, "https://as.example").await);
        assert!(has_client(&store, "https://as100.example").await);
    }
}
