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
/// the MCP server's own name resolves to a private address (a server named
/// on a company network), the server is on a private network: nothing is
/// left out.
#[derive(Debug, Clone)]
pub(crate) struct PublicOnly {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    /// The MCP server's host, when it is a name.
    server: Option<String>,
    /// Whether that name resolves to a private address, found out once.
    server_is_private: OnceCell<bool>,
}

/// A name that resolved to private, link-local or loopback addresses only.
#[derive(Debug, thiserror::Error)]
#[error("{name} resolves to private, link-local or loopback addresses only ({address})")]
pub(crate) struct PrivateName {
    name: String,
    address: IpAddr,
}

impl PublicOnly {
    /// For the requests made for the MCP server at `server`.
    pub(crate) fn for_server(server: &Url) -> Self {
        let server = match server.host() {
            Some(url::Host::Domain(name)) => Some(name.to_owned()),
            _ => None,
        };
        PublicOnly {
            inner: Arc::new(Inner {
                server,
                server_is_private: OnceCell::new(),
            }),
        }
    }
}

impl Inner {
    async fn server_is_private(&self) -> bool {
        *self
            .server_is_private
            .get_or_init(|| async {
                let Some(server) = &self.server else {
                    return false;
                };
                match tokio::net::lookup_host((server.as_str(), 0)).await {
                    Ok(mut found) => found.any(|address| is_private_ip(address.ip())),
                    Err(_) => false,
                }
            })
            .await
    }
}

impl Resolve for PublicOnly {
    fn resolve(&self, name: Name) -> Resolving {
        let name = name.as_str().to_owned();
        let inner = Arc::clone(&self.inner);
        Box::pin(async move {
            let found: Vec<SocketAddr> =
                tokio::net::lookup_host((name.as_str(), 0)).await?.collect();
            if inner.server_is_private().await {
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
        let public = PublicOnly::for_server(&url("https://mcp.example.com/mcp"));
        let refused = resolve(&public, "localhost").await;
        assert!(refused.is_err(), "{refused:?}");
        // A server whose own name resolves to this machine is on a private
        // network: its names are followed.
        let private = PublicOnly::for_server(&url("https://localhost:8443/mcp"));
        let followed = resolve(&private, "localhost").await;
        assert!(followed.is_ok_and(|found| !found.is_empty()));
    }
}
