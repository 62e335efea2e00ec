//! What the client commands share: which server, which revision, and how a
//! failure maps to an exit code.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::Args;
use toolshape::client::{
    Client, ClientBuilder, ClientError, ClientErrorKind, Negotiation, ServerCommand, StderrMode,
};
use toolshape::protocol::ProtocolVersion;
use toolshape::protocol::asks::Root;
use toolshape_auth::client::OAuthClient;
use toolshape_proxy::UpstreamSpec;

use super::headers::{FixedHeader, header_map, parse_header};
use super::oauth::OAuthArgs;

/// Exit codes of the client commands (documented in `--help` and the README).
pub(crate) mod exit {
    /// The tool reported an error.
    pub(crate) const TOOL_ERROR: u8 = 1;
    /// The command line is wrong.
    pub(crate) const USAGE: u8 = 2;
    /// The output does not match its schema, or the schema is unusable.
    pub(crate) const VALIDATION: u8 = 3;
    /// Protocol or transport failure (including timeouts).
    pub(crate) const PROTOCOL: u8 = 4;
}

/// The text appended to the client commands' `--help`.
pub(crate) const EXIT_CODES_HELP: &str = "Exit codes: 0 success; 1 the tool reported an error; 2 usage error; \
3 validation failure (output does not match its outputSchema, or the schema is unusable); \
4 protocol or transport failure (including timeouts).";

/// How to reach the server: an MCP server, or (`--otc`) an OTC one.
#[derive(Debug, Args)]
pub(crate) struct ServerArgs {
    #[command(flatten)]
    pub(crate) mcp: McpServerArgs,
    /// Use an Open Tool Calling (OTC / OXP 1.0) server at this base URL
    /// (e.g. http://127.0.0.1:8081) instead of MCP. Credentials come from
    /// TOOLSHAPE_OTC_API_KEY, TOOLSHAPE_OTC_TOKEN, or TOOLSHAPE_OTC_JWT_SECRET
    /// (with TOOLSHAPE_OTC_JWT_AUDIENCE) in the environment.
    /// (MCP's options are refused beside it, not ignored.)
    #[arg(long, value_name = "URL", conflicts_with_all = [
        "command", "url", "headers", "roots", "protocol", "quiet_server", "no_oauth",
        "oauth_client_id", "oauth_client_issuer", "oauth_client_secret_file",
        "oauth_private_key_file", "oauth_private_key_alg", "oauth_client_credentials",
        "oauth_client_metadata_url", "oauth_scope", "oauth_redirect_port",
        "oauth_token_store", "oauth_no_browser", "oauth_allow_http",
    ])]
    pub(crate) otc: Option<String>,
}

impl ServerArgs {
    /// Connects to the MCP server, or says why not (and which exit code that is).
    pub(crate) async fn connect(&self) -> Result<Client, (u8, String)> {
        self.mcp.connect_with(|builder| builder).await
    }

    /// As [`ServerArgs::connect`], with the client `extend` makes of the
    /// command's own builder (handlers for the server's questions).
    pub(crate) async fn connect_with(
        &self,
        extend: impl FnOnce(ClientBuilder) -> ClientBuilder,
    ) -> Result<Client, (u8, String)> {
        self.mcp.connect_with(extend).await
    }
}

/// How to reach an MCP server: a command after `--`, or `--url`.
#[derive(Debug, Args)]
pub(crate) struct McpServerArgs {
    /// Revision to speak: `auto` (2026-07-28 discovery, falling back to the
    /// initialize handshake) or one of 2024-11-05, 2025-03-26, 2025-06-18,
    /// 2025-11-25, 2026-07-28. A handshake revision is what is asked for: a
    /// server answering with an older one it speaks is spoken to in that one
    /// (the handshake's rule; `-vv` logs the revision used).
    #[arg(long, value_name = "VERSION", default_value = "auto")]
    protocol: String,
    /// Seconds a request may wait for its answer.
    #[arg(long, value_name = "SECONDS", default_value_t = 60,
          value_parser = clap::value_parser!(u64).range(1..=super::MAX_SECONDS))]
    pub(crate) timeout: u64,
    /// Hide the server's stderr.
    #[arg(long)]
    quiet_server: bool,
    /// Connect to a Streamable HTTP endpoint (e.g. http://127.0.0.1:8080/mcp)
    /// instead of starting a server.
    #[arg(long, value_name = "URL", conflicts_with = "command")]
    url: Option<String>,
    /// With --url: send this header with every request (`Name: value`,
    /// repeatable), e.g. `Authorization: Bearer ${TOKEN}` or an API key;
    /// `${NAME}` is replaced with that environment variable's value, so a
    /// secret need not be on the command line. With an `Authorization`
    /// header, no OAuth; other headers go beside it.
    #[arg(long = "header", value_name = "NAME: VALUE", value_parser = parse_header)]
    headers: Vec<FixedHeader>,
    /// Offer the server this folder (a path, or a file:// URI) as a root
    /// (repeatable): a server that works where its client says (the
    /// filesystem server) may use it. `toolshape proxy` answers the
    /// server's roots/list with these itself, never with its clients' roots.
    #[arg(long = "root", value_name = "FOLDER", value_parser = parse_root)]
    pub(crate) roots: Vec<Root>,
    /// The server command and its arguments, after `--`.
    #[arg(last = true, value_name = "SERVER COMMAND")]
    command: Vec<String>,
    #[command(flatten)]
    oauth: OAuthArgs,
    /// The OAuth client, made (and authorized) once and shared by every
    /// connection (`bench --clients N` asks the user once).
    #[arg(skip)]
    authorized: tokio::sync::OnceCell<Option<OAuthClient>>,
}

impl McpServerArgs {
    /// Connects, with the client `extend` makes of the command's own builder.
    pub(crate) async fn connect_with(
        &self,
        extend: impl FnOnce(ClientBuilder) -> ClientBuilder,
    ) -> Result<Client, (u8, String)> {
        let (builder, upstream) = self.upstream().await?;
        let builder = extend(builder);
        match upstream {
            UpstreamSpec::Url(url) => builder.connect_http(&url).await,
            UpstreamSpec::Command(command) => builder.connect_stdio(command).await,
        }
        .map_err(|e| {
            let mut message = crate::output::described(&e);
            if self.protocol == "2026-07-28" && knows_no_discover(&e) {
                message.push_str(
                    "; the server does not know server/discover, so it does not speak \
                     2026-07-28 (--protocol auto falls back to the initialize handshake)",
                );
            }
            (exit_code(&e), message)
        })
    }

    /// The client configuration (revision, timeout, authorization) and
    /// where the server is, without connecting: for `toolshape proxy`,
    /// which connects (and reconnects) itself.
    pub(crate) async fn upstream(&self) -> Result<(ClientBuilder, UpstreamSpec), (u8, String)> {
        let negotiation = match self.protocol.as_str() {
            "auto" => Negotiation::Auto,
            other => match ProtocolVersion::parse(other) {
                Some(version) => Negotiation::Pinned(version),
                None => return Err((exit::USAGE, format!("unknown protocol version {other:?}"))),
            },
        };
        let mut builder = Client::builder()
            .negotiation(negotiation)
            .request_timeout(Duration::from_secs(self.timeout.max(1)));
        if !self.roots.is_empty() {
            builder = builder.roots(self.roots.clone());
        }
        if let Some(url) = &self.url {
            let headers = header_map(&self.headers);
            if !headers.is_empty() {
                builder = builder.http_headers(headers.clone());
            }
            if self.headers.iter().any(FixedHeader::is_authorization) {
                // The headers carry the credentials: a 401 is the caller's.
                return Ok((builder, UpstreamSpec::Url(url.clone())));
            }
            let oauth = self
                .authorized
                .get_or_try_init(|| {
                    let timeout = Duration::from_secs(self.timeout.max(1));
                    authorize(&self.oauth, url, headers, timeout)
                })
                .await?;
            let builder = match oauth {
                Some(oauth) => builder.http_auth(Arc::new(oauth.clone())),
                None => builder,
            };
            return Ok((builder, UpstreamSpec::Url(url.clone())));
        }
        if !self.headers.is_empty() {
            return Err((exit::USAGE, "--header is for a server at a --url".into()));
        }
        let Some(command) = ServerCommand::from_argv(&self.command) else {
            return Err((
                exit::USAGE,
                "give the server command after `--`, or --url".into(),
            ));
        };
        let command = command
            .stderr(if self.quiet_server {
                StderrMode::Discard
            } else {
                StderrMode::Inherit
            })
            .own_process_group(!at_terminal());
        Ok((builder, UpstreamSpec::Command(command)))
    }
}

/// A `--root`: a file:// URI as given, or a folder that exists, as the
/// file:// URI of its canonical path (a server resolves it on its side).
fn parse_root(text: &str) -> Result<Root, String> {
    if text.starts_with("file:") {
        let uri = url::Url::parse(text).map_err(|e| format!("not a file:// URI: {e}"))?;
        if uri.to_file_path().is_err() {
            return Err("not a file:// URI of a local path".into());
        }
        return Ok(Root::new(uri.to_string(), None));
    }
    let folder = std::fs::canonicalize(text).map_err(|e| format!("no folder {text:?}: {e}"))?;
    if !folder.is_dir() {
        return Err(format!("{text:?} is not a folder"));
    }
    let name = folder
        .file_name()
        .map(|name| name.to_string_lossy().into_owned());
    let uri = url::Url::from_directory_path(&folder)
        .map_err(|()| format!("{text:?} has no file:// URI"))?;
    // Without the trailing slash, as clients write a folder's root (but
    // for the root folder, `file:///`).
    let uri = match folder.parent() {
        Some(_) => uri.as_str().strip_suffix('/').unwrap_or(uri.as_str()),
        None => uri.as_str(),
    };
    Ok(Root::new(uri, name))
}

/// The OAuth client for `url`, authorized before the first request if the
/// endpoint, asked with the fixed `headers` (an API key may answer it
/// without OAuth), wants it: a user's consent then counts against no
/// request timeout.
async fn authorize(
    oauth: &OAuthArgs,
    url: &str,
    headers: axum::http::HeaderMap,
    timeout: Duration,
) -> Result<Option<OAuthClient>, (u8, String)> {
    let Some(client) = oauth.client(url, timeout)? else {
        return Ok(None);
    };
    client.authorize_with(&headers).await.map_err(|e| {
        // A key in a fixed header that the server refused looks like a
        // server wanting OAuth: say which it may be.
        let stored = matches!(e, toolshape_auth::client::AuthError::Store(_));
        let hint = if headers.is_empty() || stored {
            ""
        } else {
            "; the server answered 401 with the --header values too: check them, \
             or add --no-oauth for the server's own answer"
        };
        (exit::PROTOCOL, format!("authorization failed: {e}{hint}"))
    })?;
    Ok(Some(client))
}

/// The exit code for a client error.
pub(crate) fn exit_code(error: &ClientError) -> u8 {
    match error.kind() {
        ClientErrorKind::Tool { .. } => exit::TOOL_ERROR,
        _ if error.is_validation_error() => exit::VALIDATION,
        _ => exit::PROTOCOL,
    }
}

/// Whether `error` is a server's `-32601` (the method is not found): to
/// `server/discover`, the sign of a server on the handshake revisions.
fn knows_no_discover(error: &ClientError) -> bool {
    matches!(error.kind(), ClientErrorKind::Protocol(object)
        if object.code == toolshape::protocol::error_code::METHOD_NOT_FOUND)
}

/// Prints `message` to stderr and returns `code`.
pub(crate) fn fail(command: &str, (code, message): (u8, String)) -> ExitCode {
    // The message may quote the server: shown safely.
    errln!("toolshape {command}: {}", crate::output::shown(&message));
    ExitCode::from(code)
}

/// Whether this process runs at a terminal (its input or its error output
/// one): a server started from here may then need to read it (a password
/// prompt), so it stays in this process's group, where Ctrl-C reaches it
/// too; elsewhere it gets a group of its own, stopped whole.
pub(crate) fn at_terminal() -> bool {
    use std::io::IsTerminal;
    std::io::stdin().is_terminal() || std::io::stderr().is_terminal()
}

#[cfg(test)]
mod tests {
    use super::parse_root;

    #[test]
    fn a_root_is_a_file_uri_or_a_folder_that_exists() {
        let here = std::env::current_dir().unwrap_or_default();
        let root = parse_root(".").map_err(|e| e.to_string());
        let expected = url::Url::from_directory_path(std::fs::canonicalize(&here).unwrap_or(here))
            .map(|uri| uri.as_str().trim_end_matches('/').to_owned());
        assert_eq!(root.map(|root| root.uri).ok(), expected.ok());
        assert_eq!(
            parse_root("/").map(|root| root.uri).ok().as_deref(),
            Some("file:///")
        );
        assert_eq!(
            parse_root("file:///srv/data%20x")
                .map(|root| root.uri)
                .ok()
                .as_deref(),
            Some("file:///srv/data%20x")
        );
        assert!(parse_root("/no/such/folder/here").is_err());
        assert!(parse_root("file://host:bad").is_err());
        assert!(parse_root("Cargo.toml").is_err());
    }
}
