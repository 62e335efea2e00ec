//! Bounded HTTP for discovery documents, key sets and token requests: no
//! redirects followed, time-limited, bodies read up to a limit, and only
//! `https` URLs (plain `http` only to loopback hosts, or when allowed).

use std::net::IpAddr;
use std::time::Duration;

use serde::de::DeserializeOwned;
use url::Url;

use crate::public_dns::{PrivateName, PublicOnly};

/// Largest document or token response read, in bytes.
pub(crate) const MAX_RESPONSE_BYTES: usize = 1024 * 1024;

/// Why fetching something failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FetchError {
    /// A URL that is neither `https` nor `http` to a loopback host.
    #[error("{url}: only https URLs are used (plain http only to loopback hosts)")]
    Insecure {
        /// The URL.
        url: String,
    },
    /// A URL naming a private, link-local or loopback address, met while
    /// working for an MCP server that is not on one itself.
    #[error("{url}: a private or link-local address, named for a server that is not on one")]
    PrivateAddress {
        /// The URL.
        url: String,
    },
    /// The request failed (connection, timeout, TLS).
    #[error("{url}: {source}")]
    Http {
        /// The URL.
        url: String,
        /// The cause.
        #[source]
        source: reqwest::Error,
    },
    /// The answer's status was not the one expected.
    #[error("{url}: answered HTTP {status}{}", if detail.is_empty() { String::new() } else { format!(": {detail}") })]
    Status {
        /// The URL.
        url: String,
        /// The HTTP status.
        status: u16,
        /// The start of the body.
        detail: String,
    },
    /// The body was larger than the limit.
    #[error("{url}: the response is larger than {limit} bytes")]
    TooLarge {
        /// The URL.
        url: String,
        /// The limit.
        limit: usize,
    },
    /// The body was not JSON of the expected shape.
    #[error("{url}: not the JSON expected: {source}")]
    Json {
        /// The URL.
        url: String,
        /// The cause.
        #[source]
        source: serde_json::Error,
    },
}

/// A response read whole.
#[derive(Debug)]
#[cfg_attr(not(feature = "client"), allow(dead_code))]
pub(crate) struct Fetched {
    pub(crate) status: u16,
    pub(crate) headers: http::HeaderMap,
    pub(crate) body: Vec<u8>,
}

impl Fetched {
    pub(crate) fn json<T: DeserializeOwned>(&self, url: &Url) -> Result<T, FetchError> {
        serde_json::from_slice(&self.body).map_err(|source| FetchError::Json {
            url: url.to_string(),
            source,
        })
    }

    /// The start of the body, for error messages.
    pub(crate) fn excerpt(&self) -> String {
        let text = String::from_utf8_lossy(&self.body[..self.body.len().min(300)]);
        text.chars().filter(|c| !c.is_control()).collect()
    }
}

/// The bounded HTTP client.
#[derive(Debug, Clone)]
pub(crate) struct Fetcher {
    http: reqwest::Client,
    /// For a server that is not on a private network: the same client,
    /// whose names resolve to public addresses only.
    public_http: Option<reqwest::Client>,
    timeout: Duration,
    allow_http: bool,
    /// Whether plain http may reach a loopback host.
    loopback_http: bool,
    /// Whether a URL may name a private, link-local or loopback address.
    private_hosts: bool,
}

/// The environment variables reqwest takes an HTTP proxy from.
const PROXY_VARIABLES: [&str; 6] = [
    "HTTPS_PROXY",
    "https_proxy",
    "HTTP_PROXY",
    "http_proxy",
    "ALL_PROXY",
    "all_proxy",
];

/// The HTTP proxies the environment names (reqwest follows them), as URLs
/// (a value without a scheme read as `http://`).
fn configured_proxies() -> Vec<Url> {
    PROXY_VARIABLES
        .iter()
        .filter_map(|name| std::env::var(name).ok())
        .filter(|value| !value.trim().is_empty())
        .filter_map(|value| {
            let value = value.trim();
            Url::parse(value)
                .ok()
                .filter(|url| url.has_host())
                .or_else(|| Url::parse(&format!("http://{value}")).ok())
        })
        .collect()
}

/// A client builder with the bounds every fetch has.
fn bounded(timeout: Duration) -> reqwest::ClientBuilder {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(timeout)
        .connect_timeout(timeout.min(Duration::from_secs(10)))
        .user_agent(concat!("toolshape-auth/", env!("CARGO_PKG_VERSION")))
}

impl Fetcher {
    /// A client with `timeout` per request; `allow_http` lets plain http
    /// reach any host (tests, private networks).
    pub(crate) fn new(timeout: Duration, allow_http: bool) -> Result<Self, reqwest::Error> {
        Ok(Fetcher {
            http: bounded(timeout).build()?,
            public_http: None,
            timeout,
            allow_http,
            loopback_http: true,
            private_hosts: true,
        })
    }

    /// Lets plain http reach a loopback host only when `server` (the MCP
    /// server the requests are made for) is on one itself: a remote server
    /// naming `http://127.0.0.1:…` (metadata, token or registration
    /// endpoints) does not make this machine post to its own services.
    ///
    /// Likewise, a server that is not on a private or link-local address
    /// itself cannot make this machine reach one by naming its address
    /// (`https://169.254.169.254/…`, `https://10.0.0.5/…`) or a name that
    /// resolves to such addresses only (they are left out when it resolves;
    /// when the server's own name resolves to private addresses only, names
    /// are followed), unless plain http was allowed for private networks.
    /// The HTTP proxies configured (`HTTPS_PROXY` and the like) are reached
    /// wherever they are; the names they resolve for us are not checked.
    #[cfg_attr(not(feature = "client"), allow(dead_code))]
    pub(crate) fn for_server(mut self, server: &Url) -> Result<Self, reqwest::Error> {
        self.loopback_http = is_loopback(server);
        self.private_hosts = self.allow_http || is_private(server);
        self.public_http = if self.private_hosts {
            None
        } else {
            let resolver = PublicOnly::for_server(server, &configured_proxies());
            Some(
                bounded(self.timeout)
                    .dns_resolver(std::sync::Arc::new(resolver))
                    .build()?,
            )
        };
        Ok(self)
    }

    /// Refuses a URL that is not https (or http to a loopback host).
    pub(crate) fn check(&self, url: &Url) -> Result<(), FetchError> {
        let allowed = match url.scheme() {
            "https" => true,
            "http" => self.allow_http || (self.loopback_http && is_loopback(url)),
            _ => false,
        };
        if !allowed {
            return Err(FetchError::Insecure {
                url: url.to_string(),
            });
        }
        if !self.private_hosts && is_private(url) {
            return Err(FetchError::PrivateAddress {
                url: url.to_string(),
            });
        }
        Ok(())
    }

    /// The underlying client, to build requests with.
    #[cfg_attr(not(feature = "client"), allow(dead_code))]
    pub(crate) fn client(&self) -> &reqwest::Client {
        self.public_http.as_ref().unwrap_or(&self.http)
    }

    /// GET `url` with `Accept: application/json`.
    pub(crate) async fn get(&self, url: &Url) -> Result<Fetched, FetchError> {
        self.check(url)?;
        let request = self
            .client()
            .get(url.clone())
            .header(http::header::ACCEPT, "application/json");
        self.send(url, request).await
    }

    /// Sends `request` (to `url`, already checked) and reads the answer.
    pub(crate) async fn send(
        &self,
        url: &Url,
        request: reqwest::RequestBuilder,
    ) -> Result<Fetched, FetchError> {
        let http_error = |source: reqwest::Error| {
            if names_a_private_host(&source) {
                return FetchError::PrivateAddress {
                    url: url.to_string(),
                };
            }
            FetchError::Http {
                url: url.to_string(),
                source,
            }
        };
        let mut response = request.send().await.map_err(http_error)?;
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(http_error)? {
            if body.len() + chunk.len() > MAX_RESPONSE_BYTES {
                return Err(FetchError::TooLarge {
                    url: url.to_string(),
                    limit: MAX_RESPONSE_BYTES,
                });
            }
            body.extend_from_slice(&chunk);
        }
        Ok(Fetched {
            status,
            headers,
            body,
        })
    }

    /// GET a JSON document: `Ok(None)` when the server has none there (a 4xx
    /// status), an error for anything else that is not a 200 with JSON.
    pub(crate) async fn get_json<T: DeserializeOwned>(
        &self,
        url: &Url,
    ) -> Result<Option<T>, FetchError> {
        let fetched = self.get(url).await?;
        match fetched.status {
            200 => fetched.json(url).map(Some),
            400..=499 => Ok(None),
            status => Err(FetchError::Status {
                url: url.to_string(),
                status,
                detail: fetched.excerpt(),
            }),
        }
    }
}

/// Whether a request failed because its host's name resolved to private
/// addresses only ([`PublicOnly`]'s refusal, somewhere in its causes).
fn names_a_private_host(error: &reqwest::Error) -> bool {
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(error) = cause {
        if error.is::<PrivateName>() {
            return true;
        }
        cause = error.source();
    }
    false
}

/// Whether `ip` is not a public address (see [`is_private`]).
pub(crate) fn is_private_ip(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(ip) => is_private_v4(ip),
        IpAddr::V6(ip) => is_private_v6(ip),
    }
}

/// Whether `url` names a loopback host (`localhost`, `*.localhost`, 127/8, ::1).
pub(crate) fn is_loopback(url: &Url) -> bool {
    match url.host() {
        Some(url::Host::Domain(name)) => {
            let name = name.trim_end_matches('.').to_ascii_lowercase();
            name == "localhost" || name.ends_with(".localhost")
        }
        Some(url::Host::Ipv4(ip)) => IpAddr::V4(ip).is_loopback(),
        Some(url::Host::Ipv6(ip)) => IpAddr::V6(ip).is_loopback(),
        None => false,
    }
}

/// Whether `url` names a loopback host or a literal address that is not
/// public: private (RFC 1918, unique and site local), link-local (cloud
/// metadata services live there), shared (100.64/10), benchmarking,
/// reserved, "this network", unspecified; an IPv6 address carrying an IPv4
/// one (mapped, compatible, NAT64, 6to4) as that address.
pub(crate) fn is_private(url: &Url) -> bool {
    match url.host() {
        Some(url::Host::Ipv4(ip)) => is_private_v4(ip),
        Some(url::Host::Ipv6(ip)) => is_private_v6(ip),
        _ => is_loopback(url),
    }
}

fn is_private_v4(ip: std::net::Ipv4Addr) -> bool {
    let [a, b, c, _] = ip.octets();
    ip.is_loopback()
        || ip.is_private()
        || ip.is_link_local()
        || ip.is_broadcast()
        || a == 0
        || (a == 100 && (64..128).contains(&b))
        || (a == 198 && (18..20).contains(&b))
        || (a == 192 && b == 0 && c == 0)
        || a >= 240
}

fn is_private_v6(ip: std::net::Ipv6Addr) -> bool {
    let segments = ip.segments();
    let embedded = |high: u16, low: u16| {
        let [h1, h2] = high.to_be_bytes();
        let [l1, l2] = low.to_be_bytes();
        is_private_v4(std::net::Ipv4Addr::new(h1, h2, l1, l2))
    };
    if ip.is_loopback() || ip.is_unspecified() {
        return true;
    }
    match segments {
        // Mapped (`::ffff:a.b.c.d`) and compatible (`::a.b.c.d`).
        [0, 0, 0, 0, 0, 0xffff | 0, high, low] => embedded(high, low),
        // NAT64's well-known prefix (64:ff9b::/96) carries an IPv4
        // address; its local-use prefix (64:ff9b:1::/48) is the site's own.
        [0x64, 0xff9b, 0, 0, 0, 0, high, low] => embedded(high, low),
        [0x64, 0xff9b, 1, ..] => true,
        // 6to4: the IPv4 address in the second and third groups.
        [0x2002, high, low, ..] => embedded(high, low),
        [first, ..] => {
            (first & 0xfe00) == 0xfc00 || (first & 0xffc0) == 0xfe80 || (first & 0xffc0) == 0xfec0
        }
    }
}

/// `scheme://host[:port]` (the port only when not the default).
#[cfg_attr(not(feature = "client"), allow(dead_code))]
pub(crate) fn origin(url: &Url) -> String {
    url.origin().ascii_serialization()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(text: &str) -> Url {
        Url::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"))
    }

    fn fetcher(allow_http: bool, server: &str) -> Fetcher {
        Fetcher::new(Duration::from_secs(1), allow_http)
            .unwrap_or_else(|e| panic!("{e}"))
            .for_server(&url(server))
            .unwrap_or_else(|e| panic!("{e}"))
    }

    /// A name that resolves to this machine only, met for a remote server:
    /// refused when it resolves, before any connection; for a local server,
    /// followed.
    #[tokio::test]
    async fn a_name_resolving_to_private_addresses_only_is_refused_for_a_remote_server() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let port = listener.local_addr().map(|a| a.port()).unwrap_or_default();
        tokio::spawn(async move {
            while let Ok((mut socket, _)) = listener.accept().await {
                use tokio::io::{AsyncReadExt, AsyncWriteExt};
                // The request's head, read before answering (closing with
                // it unread would reset the connection).
                let mut head = Vec::new();
                let mut buffer = [0u8; 1024];
                while !head.ends_with(b"\r\n\r\n") {
                    match socket.read(&mut buffer).await {
                        Ok(0) | Err(_) => break,
                        Ok(read) => head.extend_from_slice(&buffer[..read]),
                    }
                }
                let answer = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\n{}";
                let _ = socket.write_all(answer).await;
            }
        });
        // `send` is `get` past its check of the URL's literal host.
        let target = url(&format!("http://localhost:{port}/metadata"));
        let remote = fetcher(false, "https://mcp.example.com/mcp");
        let sent = remote
            .send(&target, remote.client().get(target.clone()))
            .await;
        assert!(
            matches!(sent, Err(FetchError::PrivateAddress { .. })),
            "{sent:?}"
        );
        let local = fetcher(false, "http://127.0.0.1:8080/mcp");
        let sent = local
            .send(&target, local.client().get(target.clone()))
            .await;
        assert_eq!(
            sent.map(|fetched| fetched.status)
                .map_err(|e| e.to_string()),
            Ok(200)
        );
    }

    #[test]
    fn plain_http_reaches_a_loopback_host_only_for_a_loopback_server() {
        let local = fetcher(false, "http://127.0.0.1:8080/mcp");
        assert!(local.check(&url("http://localhost:9000/token")).is_ok());
        assert!(local.check(&url("http://as.example/token")).is_err());
        // A remote server naming this machine's own services.
        let remote = fetcher(false, "https://mcp.example.com/mcp");
        assert!(
            remote
                .check(&url("http://127.0.0.1:8500/metadata"))
                .is_err()
        );
        assert!(remote.check(&url("http://[::1]:8500/register")).is_err());
        assert!(remote.check(&url("https://as.example/token")).is_ok());
        // Nor, over https, its private or link-local addresses.
        for inner in [
            "https://169.254.169.254/latest/meta-data",
            "https://10.0.0.5/token",
            "https://192.168.1.1/",
            "https://172.16.0.1/",
            "https://100.64.0.1/",
            "https://[fd00::1]/",
            "https://[fe80::1]/",
            "https://[::ffff:10.0.0.1]/",
            "https://[::10.0.0.1]/",
            "https://[64:ff9b::a00:5]/",
            "https://[64:ff9b:1::1]/",
            "https://[2002:a00:5::1]/",
            "https://[fec0::1]/",
            "https://localhost/",
            "https://0.0.0.0/",
            "https://0.1.2.3/",
            "https://198.18.0.1/",
            "https://192.0.0.8/",
            "https://240.0.0.1/",
            "https://2130706433/",
        ] {
            assert!(
                matches!(
                    remote.check(&url(inner)),
                    Err(FetchError::PrivateAddress { .. })
                ),
                "{inner}"
            );
        }
        for public in [
            "https://8.8.8.8/",
            "https://[2001:db8::1]/",
            "https://[::ffff:8.8.8.8]/",
            "https://[64:ff9b::808:808]/",
            "https://[2002:808:808::1]/",
            "https://192.0.2.1/",
        ] {
            assert!(remote.check(&url(public)).is_ok(), "{public}");
        }
        // A server on a private network may name its neighbours.
        let private = fetcher(false, "https://10.0.0.2/mcp");
        assert!(private.check(&url("https://10.0.0.5/token")).is_ok());
        // Plain http allowed by the user: anywhere.
        let allowed = fetcher(true, "https://mcp.example.com/mcp");
        assert!(
            allowed
                .check(&url("http://127.0.0.1:8500/metadata"))
                .is_ok()
        );
    }
}
