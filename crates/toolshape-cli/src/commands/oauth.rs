//! OAuth for the client commands (`tools`, `call`, `bench` with `--url`):
//! the server's `401` is answered by `toolshape_auth`'s client, with the
//! user's consent through the browser and a loopback redirect when stdin is
//! a terminal. Secrets come from the environment or files, never from the
//! command line (where other users could read them).

use std::io::{IsTerminal, Read};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use clap::Args;
use toolshape_auth::client::{
    ClientIdentity, FileTokenStore, Grant, LoopbackConsent, OAuthClient, SigningKey,
};

use super::connect::exit;

/// The environment variable holding the client id.
pub(crate) const CLIENT_ID_ENV: &str = "TOOLSHAPE_OAUTH_CLIENT_ID";
/// The environment variable holding the client secret.
pub(crate) const CLIENT_SECRET_ENV: &str = "TOOLSHAPE_OAUTH_CLIENT_SECRET";
/// The environment variable naming the authorization server the client is
/// registered with.
pub(crate) const CLIENT_ISSUER_ENV: &str = "TOOLSHAPE_OAUTH_CLIENT_ISSUER";
/// The environment variable naming the token file.
pub(crate) const TOKEN_STORE_ENV: &str = "TOOLSHAPE_OAUTH_TOKEN_STORE";
/// Largest secret or key file read, in bytes.
const MAX_SECRET_FILE_BYTES: u64 = 64 * 1024;

/// How the client commands authorize with a server behind OAuth.
#[derive(Debug, Args)]
#[command(next_help_heading = "OAuth (with --url)")]
pub(crate) struct OAuthArgs {
    /// Do not answer the server's 401 with OAuth.
    #[arg(long)]
    no_oauth: bool,
    /// A pre-registered client id (default: $TOOLSHAPE_OAUTH_CLIENT_ID; without
    /// one, the client registers itself or uses its metadata document).
    #[arg(long, value_name = "ID")]
    oauth_client_id: Option<String>,
    /// The authorization server (its issuer, as its metadata names it) the
    /// pre-registered client belongs to (default: $TOOLSHAPE_OAUTH_CLIENT_ISSUER);
    /// needed with a client secret, which is then shown to that server only.
    #[arg(long, value_name = "URL")]
    oauth_client_issuer: Option<String>,
    /// A file holding the client secret (default: $TOOLSHAPE_OAUTH_CLIENT_SECRET;
    /// there is no flag for the secret itself).
    #[arg(long, value_name = "PATH")]
    oauth_client_secret_file: Option<PathBuf>,
    /// A PEM private key for `private_key_jwt` client authentication.
    #[arg(long, value_name = "PATH")]
    oauth_private_key_file: Option<PathBuf>,
    /// The private key's signing algorithm.
    #[arg(long, value_name = "ALG", default_value = "ES256")]
    oauth_private_key_alg: String,
    /// Use the client credentials grant: no user, the client acts on its
    /// own behalf (needs a client id and a secret or key).
    #[arg(long)]
    oauth_client_credentials: bool,
    /// This client's Client ID Metadata Document (an https URL), used as
    /// the client id where the authorization server accepts them.
    #[arg(long, value_name = "URL")]
    oauth_client_metadata_url: Option<String>,
    /// A scope to ask for besides the ones the server names (repeatable).
    #[arg(long, value_name = "SCOPE")]
    oauth_scope: Vec<String>,
    /// The loopback port the browser is redirected to (default: a free one).
    #[arg(long, value_name = "PORT")]
    oauth_redirect_port: Option<u16>,
    /// Keep tokens and registrations in this file (owner-only), to reuse
    /// them next time (default: $TOOLSHAPE_OAUTH_TOKEN_STORE; unset: memory only).
    #[arg(long, value_name = "PATH")]
    oauth_token_store: Option<PathBuf>,
    /// Print the authorization URL without opening a browser.
    #[arg(long)]
    oauth_no_browser: bool,
    /// Let discovery and token requests use plain http to hosts that are
    /// not loopback, and reach private or link-local addresses a remote
    /// server names (never on a network you do not control).
    #[arg(long)]
    oauth_allow_http: bool,
}

/// The longest an OAuth request waits, whatever `--timeout` says (a
/// consent in the browser waits apart from it).
const OAUTH_REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

impl OAuthArgs {
    /// The OAuth client for the server at `url` (none with --no-oauth), each
    /// of its requests (the probe of the endpoint, discovery, tokens) at
    /// most `timeout` (the command's `--timeout`), and at most 30 s.
    pub(crate) fn client(
        &self,
        url: &str,
        timeout: Duration,
    ) -> Result<Option<OAuthClient>, (u8, String)> {
        if self.no_oauth {
            return Ok(None);
        }
        let usage = |message: String| (exit::USAGE, message);
        if !secure_enough(url) && !self.oauth_allow_http {
            // No token is sent in clear to another machine: such a server gets none.
            tracing::debug!(%url, "plain http beyond loopback: no OAuth");
            return Ok(None);
        }
        let mut builder = OAuthClient::builder(url)
            .map_err(|e| usage(e.to_string()))?
            .client_name("toolshape")
            .timeout(timeout.min(OAUTH_REQUEST_TIMEOUT))
            .scopes(self.oauth_scope.iter().cloned())
            .allow_http(self.oauth_allow_http);
        if let Some(document) = &self.oauth_client_metadata_url {
            builder = builder
                .client_metadata_url(document)
                .map_err(|e| usage(format!("--oauth-client-metadata-url: {e}")))?;
        }
        let client_id = self
            .oauth_client_id
            .clone()
            .or_else(|| std::env::var(CLIENT_ID_ENV).ok().filter(|v| !v.is_empty()));
        let secret = match &self.oauth_client_secret_file {
            Some(path) => Some(read_secret(path).map_err(usage)?),
            None => std::env::var(CLIENT_SECRET_ENV)
                .ok()
                .filter(|v| !v.is_empty()),
        };
        let key = match &self.oauth_private_key_file {
            Some(path) => {
                let pem = read_secret(path).map_err(usage)?;
                let key = SigningKey::from_pem(pem.as_bytes(), &self.oauth_private_key_alg)
                    .map_err(|e| usage(format!("{}: {e}", path.display())))?;
                Some(key)
            }
            None => None,
        };
        match (client_id, &secret, &key) {
            (Some(id), _, _) => {
                let mut identity = ClientIdentity::new(id);
                if let Some(secret) = &secret {
                    identity = identity.secret(secret.as_str());
                }
                if let Some(key) = key {
                    identity = identity.private_key(key);
                }
                let issuer = self.oauth_client_issuer.clone().or_else(|| {
                    std::env::var(CLIENT_ISSUER_ENV)
                        .ok()
                        .filter(|v| !v.is_empty())
                });
                match issuer {
                    Some(issuer) => identity = identity.issuer(issuer),
                    None if secret.is_some() => {
                        return Err(usage(format!(
                            "a client secret is shown to the authorization server it was issued by only: name it (--oauth-client-issuer or ${CLIENT_ISSUER_ENV}, its issuer as its metadata says)"
                        )));
                    }
                    None => {}
                }
                builder = builder.identity(identity);
            }
            (None, None, None) => {}
            (None, _, _) => {
                return Err(usage(
                    "a client secret or key needs a client id (--oauth-client-id or $TOOLSHAPE_OAUTH_CLIENT_ID)".into(),
                ));
            }
        }
        if self.oauth_client_credentials {
            if secret.is_none() && self.oauth_private_key_file.is_none() {
                return Err(usage(format!(
                    "--oauth-client-credentials needs a client secret (${CLIENT_SECRET_ENV} or --oauth-client-secret-file) or --oauth-private-key-file"
                )));
            }
            builder = builder.grant(Grant::ClientCredentials);
        } else if std::io::stdin().is_terminal() {
            let consent = LoopbackConsent::bind(self.oauth_redirect_port.unwrap_or(0))
                .map_err(|e| usage(format!("cannot listen for the OAuth redirect: {e}")))?
                .open_browser(!self.oauth_no_browser);
            builder = builder.consent(Arc::new(consent));
        }
        let store = self.oauth_token_store.clone().or_else(|| {
            std::env::var_os(TOKEN_STORE_ENV)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        });
        if let Some(path) = store {
            builder = builder.store(Arc::new(FileTokenStore::new(path)));
        }
        builder.build().map(Some).map_err(|e| usage(e.to_string()))
    }
}

/// Whether `url` is https, or http to a loopback host.
fn secure_enough(url: &str) -> bool {
    let Ok(parsed) = url::Url::parse(url) else {
        return true; // the builder reports it
    };
    match (parsed.scheme(), parsed.host()) {
        ("https", _) => true,
        ("http", Some(url::Host::Domain(name))) => {
            name.eq_ignore_ascii_case("localhost")
                || name.to_ascii_lowercase().ends_with(".localhost")
        }
        ("http", Some(url::Host::Ipv4(ip))) => ip.is_loopback(),
        ("http", Some(url::Host::Ipv6(ip))) => ip.is_loopback(),
        _ => false,
    }
}

/// A secret file's text without its final line break.
fn read_secret(path: &Path) -> Result<String, String> {
    let file = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut text = String::new();
    file.take(MAX_SECRET_FILE_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    if text.len() as u64 > MAX_SECRET_FILE_BYTES {
        return Err(format!(
            "{}: larger than {MAX_SECRET_FILE_BYTES} bytes",
            path.display()
        ));
    }
    Ok(text.trim_end_matches(['\r', '\n']).to_owned())
}
