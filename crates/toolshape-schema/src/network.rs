//! The opt-in network resolver: an explicit host allowlist, a timeout, a size
//! cap, and no loopback, link-local or private addresses. Off unless configured.

use std::io::Read;
use std::net::{IpAddr, SocketAddr, ToSocketAddrs};
use std::time::Duration;

use referencing::Uri;
use serde_json::Value;

type FetchError = Box<dyn std::error::Error + Send + Sync>;

/// Which remote `$ref`s may be fetched, and how.
///
/// ```
/// use std::time::Duration;
/// let policy = toolshape_schema::NetworkPolicy::allow_hosts(["schemas.example.com"])
///     .timeout(Duration::from_secs(2))
///     .max_bytes(256 * 1024);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct NetworkPolicy {
    hosts: Vec<String>,
    timeout: Duration,
    max_bytes: usize,
}

impl NetworkPolicy {
    /// Allows fetching from exactly these hosts (compared case-insensitively),
    /// over `http` or `https`, with a 5 s timeout and a 1 MiB size cap.
    pub fn allow_hosts<I, S>(hosts: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        NetworkPolicy {
            hosts: hosts
                .into_iter()
                .map(|h| h.as_ref().to_ascii_lowercase())
                .collect(),
            timeout: Duration::from_secs(5),
            max_bytes: 1024 * 1024,
        }
    }

    /// Sets the time one fetch may take, connection included.
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Sets the largest document one fetch may return.
    #[must_use]
    pub fn max_bytes(mut self, max_bytes: usize) -> Self {
        self.max_bytes = max_bytes;
        self
    }

    pub(crate) fn allows(&self, uri: &Uri<String>) -> bool {
        let scheme = uri.scheme().as_str();
        if scheme != "http" && scheme != "https" {
            return false;
        }
        uri.authority()
            .map(|authority| authority.host().to_ascii_lowercase())
            .is_some_and(|host| self.hosts.contains(&host))
    }

    /// Fetches one allowed document. Runs on its own thread, so that the
    /// blocking client never runs inside an async runtime.
    pub(crate) fn fetch(&self, uri: &Uri<String>) -> Result<Value, FetchError> {
        let policy = self.clone();
        let uri = uri.as_str().to_owned();
        std::thread::spawn(move || policy.fetch_now(&uri))
            .join()
            .map_err(|_| FetchError::from("the fetching thread failed"))?
    }

    fn fetch_now(&self, uri: &str) -> Result<Value, FetchError> {
        let url = reqwest::Url::parse(uri)?;
        let host = url.host_str().ok_or("no host")?.to_owned();
        let port = url.port_or_known_default().ok_or("no port")?;
        let address = public_address(&host, port)?;
        let client = reqwest::blocking::Client::builder()
            .timeout(self.timeout)
            .redirect(reqwest::redirect::Policy::none())
            // Connect to the address that was checked, not to a second lookup's answer.
            .resolve(&host, address)
            .build()?;
        let response = client.get(url).send()?.error_for_status()?;
        let mut body = Vec::new();
        let limit = u64::try_from(self.max_bytes).unwrap_or(u64::MAX);
        response
            .take(limit.saturating_add(1))
            .read_to_end(&mut body)?;
        if body.len() > self.max_bytes {
            return Err(format!("document is larger than {} bytes", self.max_bytes).into());
        }
        Ok(serde_json::from_slice(&body)?)
    }
}

/// The first address of `host`, if none of its addresses is local or private.
fn public_address(host: &str, port: u16) -> Result<SocketAddr, FetchError> {
    let addresses: Vec<SocketAddr> = (host, port).to_socket_addrs()?.collect();
    if let Some(blocked) = addresses.iter().find(|a| !is_public(a.ip())) {
        return Err(format!("{host} resolves to a non-public address {}", blocked.ip()).into());
    }
    addresses
        .into_iter()
        .next()
        .ok_or_else(|| format!("{host} has no address").into())
}

/// Whether an address is globally routable: not loopback, link-local, private,
/// shared, unspecified, multicast, broadcast or documentation.
pub(crate) fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            let [a, b, ..] = v4.octets();
            !(v4.is_loopback()
                || v4.is_private()
                || v4.is_link_local()
                || v4.is_unspecified()
                || v4.is_multicast()
                || v4.is_broadcast()
                || v4.is_documentation()
                || a == 0
                || (a == 100 && (64..128).contains(&b)))
        }
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return is_public(IpAddr::V4(v4));
            }
            let first = v6.segments()[0];
            !(v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                || (first & 0xfe00) == 0xfc00
                || (first & 0xffc0) == 0xfe80)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_local_and_private_addresses() {
        for ip in [
            "127.0.0.1",
            "10.1.2.3",
            "192.168.0.1",
            "169.254.1.1",
            "100.64.0.1",
            "::1",
            "fe80::1",
            "fd00::1",
            "::ffff:127.0.0.1",
            "0.0.0.0",
        ] {
            let ip: IpAddr = ip.parse().unwrap_or(IpAddr::from([127, 0, 0, 1]));
            assert!(!is_public(ip), "{ip} must be refused");
        }
        assert!(is_public(IpAddr::from([93, 184, 216, 34])));
    }

    #[test]
    fn allows_only_listed_hosts_over_http() {
        let policy = NetworkPolicy::allow_hosts(["Schemas.Example.com"]);
        let allowed = referencing::uri::from_str("https://schemas.example.com/a.json");
        let other = referencing::uri::from_str("https://evil.example.com/a.json");
        let file = referencing::uri::from_str("file:///etc/passwd");
        assert!(allowed.is_ok_and(|u| policy.allows(&u)));
        assert!(other.is_ok_and(|u| !policy.allows(&u)));
        assert!(file.is_ok_and(|u| !policy.allows(&u)));
    }
}
