//! A DNS resolver that keeps only public addresses, for the requests made
//! for an MCP server that is not on a private network itself: a name its
//! metadata gives (`https://metadata.attacker.example/…`) cannot point this
//! machine at its own network (a cloud metadata service, an internal host)
//! by resolving to such an address.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use tokio::sync::OnceCell;
use url::Url;

use crate::fetch::is_private_ip;

/// Resolves with the system's resolver and leaves out every address that
/// is not public; a name with none left fails with [`PrivateName`]. When
/// the MCP server's own name resolves to private addresses only (a server
/// named on a company network), the server is on a private network: nothing
/// is left out (one public address among them keeps the filter: a hostile
/// server cannot turn it off by adding a private record). The names of the
/// HTTP proxies configured are resolved as they are.
#[derive(Debug, Clone)]
pub(crate) struct PublicOnly {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    /// The MCP server's host, when it is a name (lowercase).
    server: Option<String>,
    /// Whether that name resolves to private addresses only, found out
    /// once it could be.
    server_is_private: OnceCell<bool>,
    /// The HTTP proxies' host names (lowercase), followed wherever they are.
    proxies: Vec<String>,
}

/// A name that resolved to private, link-local or loopback addresses only.
#[derive(Debug, thiserror::Error)]
#[error("{name} resolves to private, link-local or loopback addresses only ({address})")]
pub(crate) struct PrivateName {
    name: String,
    address: IpAddr,
}

/// A URL's host when it is a name, lowercase and without a final dot.
fn host_name(url: &Url) -> Option<String> {
    match url.host() {
        Some(url::Host::Domain(name)) => Some(name.trim_end_matches('.').to_ascii_lowercase()),
        _ => None,
    }
}

/// Whether `found` holds addresses, all of them private.
fn all_private(found: &[SocketAddr]) -> bool {
    !found.is_empty() && found.iter().all(|address| is_private_ip(address.ip()))
}

impl PublicOnly {
    /// For the requests made for the MCP server at `server`, through the
    /// HTTP proxies at `proxies` (when any is configured).
    pub(crate) fn for_server(server: &Url, proxies: &[Url]) -> Self {
        PublicOnly {
            inner: Arc::new(Inner {
                server: host_name(server),
                server_is_private: OnceCell::new(),
                proxies: proxies.iter().filter_map(host_name).collect(),
            }),
        }
    }
}

impl Inner {
    /// Whether the server's own name resolves to private addresses only
    /// (`just_found`, when `name` is it). A failed lookup is not kept: the
    /// next name asks again, filtered meanwhile.
    async fn server_is_private(&self, name: &str, just_found: &[SocketAddr]) -> bool {
        let Some(server) = &self.server else {
            return false;
        };
        if let Some(known) = self.server_is_private.get() {
            return *known;
        }
        let found: Vec<SocketAddr> = if name == server {
            just_found.to_vec()
        } else {
            match tokio::net::lookup_host((server.as_str(), 0)).await {
                Ok(found) => found.collect(),
                Err(_) => return false,
            }
        };
        if found.is_empty() {
            return false;
        }
        *self
            .server_is_private
            .get_or_init(|| async { all_private(&found) })
            .await
    }
}

impl Resolve for PublicOnly {
    fn resolve(&self, name: Name) -> Resolving {
        let name = name.as_str().trim_end_matches('.').to_ascii_lowercase();
        let inner = Arc::clone(&self.inner);
        Box::pin(async move {
            let found: Vec<SocketAddr> =
                tokio::net::lookup_host((name.as_str(), 0)).await?.collect();
            if inner.proxies.contains(&name) || inner.server_is_private(&name, &found).await {
                return Ok(Box::new(found.into_iter()) as Addrs);
            }
            let public: Vec<SocketAddr> = found
                .iter()
                .copied()
                .filter(|address| !is_private_ip(address.ip()))
                .collect();
            match (public.is_empty(), found.first()) {
                (true, Some(first)) => Err(PrivateName {
                    name,
                    address: first.ip(),
                }
                .into()),
                _ => Ok(Box::new(public.into_iter()) as Addrs),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use std::str::FromStr;

    use super::*;

    fn url(text: &str) -> Url {
        Url::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"))
    }

    async fn resolve(resolver: &PublicOnly, name: &str) -> Result<Vec<SocketAddr>, String> {
        let name = Name::from_str(name).unwrap_or_else(|_| panic!("a name"));
        match resolver.resolve(name).await {
            Ok(addresses) => Ok(addresses.collect()),
            Err(error) if error.downcast_ref::<PrivateName>().is_some() => Err(error.to_string()),
            Err(error) => panic!("not a PrivateName: {error}"),
        }
    }

    #[tokio::test]
    async fn a_name_of_this_machine_resolves_to_nothing_for_a_public_server() {
        // A public name, or one that does not resolve here: either way not private.
        let public = PublicOnly::for_server(&url("https://mcp.example.com/mcp"), &[]);
        let refused = resolve(&public, "localhost").await;
        assert!(refused.is_err(), "{refused:?}");
        // A server whose own name resolves to this machine is on a private
        // network: its names are followed.
        let private = PublicOnly::for_server(&url("https://localhost:8443/mcp"), &[]);
        let followed = resolve(&private, "localhost").await;
        assert!(followed.is_ok_and(|found| !found.is_empty()));
        // A proxy's name is followed wherever it is.
        let proxy = [url("http://LocalHost.:3128")];
        let proxied = PublicOnly::for_server(&url("https://mcp.example.com/mcp"), &proxy);
        assert!(resolve(&proxied, "localhost").await.is_ok());
    }

    #[test]
    fn a_server_with_one_public_address_is_not_private() {
        let address =
            |text: &str| SocketAddr::new(text.parse().unwrap_or_else(|_| panic!("{text}")), 0);
        assert!(all_private(&[address("10.0.0.1"), address("127.0.0.1")]));
        assert!(!all_private(&[address("10.0.0.1"), address("8.8.8.8")]));
        assert!(!all_private(&[]));
    }
}
