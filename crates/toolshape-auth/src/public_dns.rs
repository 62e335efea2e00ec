//! A DNS resolver that keeps only public addresses, for the requests made
//! for an MCP server that is not on a private network itself: a name its
//! metadata gives (`https://metadata.attacker.example/…`) cannot point this
//! machine at its own network (a cloud metadata service, an internal host)
//! by resolving to such an address.

use std::net::{IpAddr, SocketAddr};

use reqwest::dns::{Addrs, Name, Resolve, Resolving};

use crate::fetch::is_private_ip;

/// Resolves with the system's resolver and leaves out every address that
/// is not public; a name with none left fails with [`PrivateName`].
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct PublicOnly;

/// A name that resolved to private, link-local or loopback addresses only.
#[derive(Debug, thiserror::Error)]
#[error("{name} resolves to private, link-local or loopback addresses only ({address})")]
pub(crate) struct PrivateName {
    name: String,
    address: IpAddr,
}

impl Resolve for PublicOnly {
    fn resolve(&self, name: Name) -> Resolving {
        let name = name.as_str().to_owned();
        Box::pin(async move {
            let found: Vec<SocketAddr> =
                tokio::net::lookup_host((name.as_str(), 0)).await?.collect();
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

    #[tokio::test]
    async fn a_name_of_this_machine_resolves_to_nothing() {
        let name = Name::from_str("localhost").unwrap_or_else(|_| panic!("a name"));
        let error = match PublicOnly.resolve(name).await {
            Ok(addresses) => panic!("resolved: {:?}", addresses.collect::<Vec<_>>()),
            Err(error) => error,
        };
        assert!(error.downcast_ref::<PrivateName>().is_some(), "{error}");
    }
}
