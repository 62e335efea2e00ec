//! [`LoopbackConsent`]: the native-app flow of RFC 8252 — the user's
//! browser opens the authorization URL, and the authorization server
//! redirects it to a listener on `http://127.0.0.1:<port>/callback`.

use std::io::{self, Write};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use toolshape::client::AuthFuture;
use url::Url;

use super::consent::Consent;

/// The callback path.
pub const CALLBACK_PATH: &str = "/callback";
/// Largest request head read from the browser.
const MAX_HEAD_BYTES: usize = 8 * 1024;
/// Most connections served at once while waiting (favicon requests and the
/// like); the wait itself is bounded by its time.
const MAX_CONNECTIONS: usize = 64;

const DONE_PAGE: &str = "<!doctype html><meta charset=utf-8><title>Authorized</title>\
<p>Authorization finished. You can close this window and return to the terminal.</p>";

/// Opens the browser (or prints the URL) and waits for the redirect on a
/// loopback port.
#[derive(Debug)]
pub struct LoopbackConsent {
    listener: std::net::TcpListener,
    redirect_uri: Url,
    open_browser: bool,
    timeout: Duration,
}

impl LoopbackConsent {
    /// Listens on `127.0.0.1:port` (0: any free port) for the redirect.
    pub fn bind(port: u16) -> io::Result<Self> {
        let listener = std::net::TcpListener::bind(("127.0.0.1", port))?;
        listener.set_nonblocking(true)?;
        let port = listener.local_addr()?.port();
        let redirect_uri = Url::parse(&format!("http://127.0.0.1:{port}{CALLBACK_PATH}"))
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
        Ok(LoopbackConsent {
            listener,
            redirect_uri,
            open_browser: true,
            timeout: Duration::from_secs(300),
        })
    }

    /// Whether to try to open the system browser (default yes; the URL is
    /// printed on stderr either way).
    #[must_use]
    pub fn open_browser(mut self, open: bool) -> Self {
        self.open_browser = open;
        self
    }

    /// How long to wait for the user (default five minutes).
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Serves connections (each on its own, so that an idle one a browser
    /// opened ahead does not hold up the one with the callback) until the
    /// callback of this authorization arrives: one with another `state`
    /// (a stale tab, a page on this machine guessing the port) is
    /// answered and discarded, and the wait goes on.
    async fn wait(&self, state: Option<String>) -> Result<Url, crate::BoxError> {
        let listener = TcpListener::from_std(self.listener.try_clone()?)?;
        let mut connections = tokio::task::JoinSet::new();
        loop {
            tokio::select! {
                incoming = listener.accept(), if connections.len() < MAX_CONNECTIONS => {
                    let (stream, _) = incoming?;
                    let redirect = self.redirect_uri.clone();
                    let state = state.clone();
                    connections.spawn(tokio::time::timeout(
                        Duration::from_secs(10),
                        serve(redirect, state, stream),
                    ));
                }
                Some(done) = connections.join_next() => match done {
                    Ok(Ok(Ok(Some(callback)))) => return Ok(callback),
                    Ok(Ok(Ok(None))) => {}
                    Ok(Ok(Err(error))) => tracing::debug!(%error, "a connection to the redirect listener failed"),
                    Ok(Err(_)) => tracing::debug!("a connection to the redirect listener sent nothing in time"),
                    Err(error) => tracing::debug!(%error, "a redirect listener task failed"),
                },
                else => return Err("too many requests to the redirect listener without the callback".into()),
            }
        }
    }
}

/// Reads one request; the callback's URL when it is the callback, with
/// `state` when one is expected.
async fn serve(
    redirect: Url,
    state: Option<String>,
    mut stream: TcpStream,
) -> io::Result<Option<Url>> {
    let mut head = Vec::with_capacity(1024);
    let mut buffer = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        let read = stream.read(&mut buffer).await?;
        if read == 0 || head.len() + read > MAX_HEAD_BYTES {
            return Ok(None);
        }
        head.extend_from_slice(&buffer[..read]);
    }
    let line = head.split(|&b| b == b'\r').next().unwrap_or_default();
    let line = String::from_utf8_lossy(line);
    let mut words = line.split(' ');
    let (method, target) = (
        words.next().unwrap_or_default(),
        words.next().unwrap_or_default(),
    );
    // Only a path on this listener (origin form), never an absolute URL
    // nor a network-path reference (`//host/callback`).
    let callback = match redirect.join(target) {
        Ok(url)
            if method == "GET"
                && target.starts_with('/')
                && !target.starts_with("//")
                && url.path() == CALLBACK_PATH =>
        {
            Some(url)
        }
        _ => None,
    };
    let ours = |url: &Url| {
        state.as_deref().is_none_or(|expected| {
            url.query_pairs()
                .any(|(name, value)| name == "state" && value == expected)
        })
    };
    let (status, body, callback) = match callback {
        Some(url) if ours(&url) => ("200 OK", DONE_PAGE, Some(url)),
        Some(_) => (
            "400 Bad Request",
            "not the callback of the authorization under way",
            None,
        ),
        None => ("404 Not Found", "not found", None),
    };
    let response = format!(
        "HTTP/1.1 {status}\r\ncontent-type: text/html; charset=utf-8\r\ncontent-length: {}\r\ncache-control: no-store\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(response.as_bytes()).await?;
    stream.shutdown().await.ok();
    Ok(callback)
}

impl Consent for LoopbackConsent {
    fn redirect_uri(&self) -> &Url {
        &self.redirect_uri
    }

    fn authorize<'a>(&'a self, authorization_url: &'a Url) -> AuthFuture<'a, Url> {
        Box::pin(async move {
            // Said on stderr; a stderr nobody reads must not end the flow.
            let _ = writeln!(
                io::stderr(),
                "To authorize, open this URL in a browser:\n\n  {authorization_url}\n"
            );
            if self.open_browser {
                open_in_browser(authorization_url);
            }
            let state = authorization_url
                .query_pairs()
                .find(|(name, _)| name == "state")
                .map(|(_, value)| value.into_owned());
            match tokio::time::timeout(self.timeout, self.wait(state)).await {
                Ok(callback) => callback,
                Err(_) => Err(format!(
                    "no authorization within {} seconds",
                    self.timeout.as_secs()
                )
                .into()),
            }
        })
    }
}

/// Starts the platform's URL opener; failure is fine (the URL was printed).
fn open_in_browser(url: &Url) {
    let url = url.as_str();
    let mut command = if cfg!(target_os = "macos") {
        std::process::Command::new("open")
    } else if cfg!(windows) {
        // Not `cmd /C start`: cmd would read the URL's `&` as a command separator.
        let mut command = std::process::Command::new("rundll32");
        command.arg("url.dll,FileProtocolHandler");
        command
    } else {
        std::process::Command::new("xdg-open")
    };
    let started = command
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
    match started {
        // Reaped in the background so that no zombie is left.
        Ok(mut child) => {
            std::thread::spawn(move || child.wait());
        }
        Err(error) => tracing::debug!(%error, "could not start a browser"),
    }
}
