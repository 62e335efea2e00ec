//! MCP's discovery: from the server's `401` to the authorization server's
//! endpoints. Protected-resource metadata from the challenge's
//! `resource_metadata`, else the well-known URLs (path-based, then root);
//! its `resource` must cover the server; then the first authorization
//! server's metadata (RFC 8414 and OpenID, path-insertion order), whose
//! `issuer` must equal the identifier it was looked up by, character for
//! character. A server without protected-resource metadata is a 2025-03-26
//! server: its origin is the authorization server, and without metadata
//! there its default endpoints (`/authorize`, `/token`, `/register`) are used.

use url::Url;

use super::AuthError;
use crate::fetch::{Fetcher, origin};
use crate::metadata::{
    AuthorizationServerMetadata, ProtectedResourceMetadata, authorization_server_candidates,
    protected_resource_candidates,
};

/// What discovery found.
#[derive(Debug, Clone)]
pub(crate) struct Discovered {
    /// The `resource` to request tokens for.
    pub(crate) resource: String,
    /// The protected-resource metadata (absent for 2025-03-26 servers).
    pub(crate) resource_metadata: Option<ProtectedResourceMetadata>,
    /// The authorization server's issuer identifier, as named.
    pub(crate) issuer: String,
    /// Its metadata (for a 2025-03-26 server without any: the defaults).
    pub(crate) metadata: AuthorizationServerMetadata,
}

impl Discovered {
    /// An endpoint of the metadata, checked.
    pub(crate) fn endpoint(
        &self,
        fetch: &Fetcher,
        value: &Option<String>,
        what: &'static str,
    ) -> Result<Url, AuthError> {
        let text = value.as_deref().ok_or_else(|| AuthError::MissingEndpoint {
            issuer: self.issuer.clone(),
            what,
        })?;
        let url = parse_url(text)?;
        fetch.check(&url)?;
        Ok(url)
    }
}

/// Runs discovery for the MCP server at `server`; `named` is the
/// `resource_metadata` of its challenge, if it sent one.
pub(crate) async fn discover(
    fetch: &Fetcher,
    server: &Url,
    named: Option<&str>,
) -> Result<Discovered, AuthError> {
    let resource_metadata = resource_metadata(fetch, server, named).await?;
    let Some(prm) = resource_metadata else {
        return legacy(fetch, server).await;
    };
    let resource = parse_url(&prm.resource)?;
    if !covers(&resource, server) {
        return Err(AuthError::ResourceMismatch {
            resource: prm.resource.clone(),
            server: server.to_string(),
        });
    }
    let issuer = prm
        .authorization_servers
        .first()
        .cloned()
        .ok_or(AuthError::NoAuthorizationServer)?;
    let metadata = server_metadata(fetch, &issuer).await?;
    Ok(Discovered {
        resource: prm.resource.clone(),
        resource_metadata: Some(prm),
        issuer,
        metadata,
    })
}

/// Discovery for a server that publishes no protected-resource metadata.
async fn legacy(fetch: &Fetcher, server: &Url) -> Result<Discovered, AuthError> {
    let origin_text = origin(server);
    let base = parse_url(&origin_text)?;
    // The 2025-03-26 client had no issuer identifier to compare with: it
    // looked at the server's own origin. A document there naming an issuer
    // on that same origin (`https://host/oauth`) is the server's own
    // authorization server; one naming another origin is still refused.
    let same_origin = |named: &str| {
        named == origin_text || Url::parse(named).is_ok_and(|url| origin(&url) == origin_text)
    };
    let found = find_server_metadata(fetch, &origin_text, &base, same_origin).await?;
    let mut issuer = origin_text.clone();
    let metadata = match found {
        Ok(metadata) => {
            issuer.clone_from(&metadata.issuer);
            metadata
        }
        Err(detail) if detail.is_empty() => {
            let at = |path: &str| Some(format!("{origin_text}{path}"));
            let metadata = AuthorizationServerMetadata {
                issuer: issuer.clone(),
                authorization_endpoint: at("/authorize"),
                token_endpoint: at("/token"),
                registration_endpoint: at("/register"),
                code_challenge_methods_supported: Some(vec!["S256".into()]),
                ..AuthorizationServerMetadata::default()
            };
            tracing::debug!(%issuer, "no authorization server metadata: using the 2025-03-26 default endpoints");
            metadata
        }
        Err(detail) => return Err(AuthError::NoServerMetadata { issuer, detail }),
    };
    Ok(Discovered {
        resource: canonical(server),
        resource_metadata: None,
        issuer,
        metadata,
    })
}

/// The protected-resource metadata: from the named URL, or the first
/// well-known one that has it. `None`: the server publishes none.
async fn resource_metadata(
    fetch: &Fetcher,
    server: &Url,
    named: Option<&str>,
) -> Result<Option<ProtectedResourceMetadata>, AuthError> {
    if let Some(named) = named {
        let url = parse_url(named)?;
        return match fetch.get_json::<ProtectedResourceMetadata>(&url).await? {
            Some(found) => Ok(Some(found)),
            None => Err(AuthError::NoResourceMetadata(url.to_string())),
        };
    }
    for url in protected_resource_candidates(server) {
        if let Some(found) = fetch.get_json::<ProtectedResourceMetadata>(&url).await? {
            return Ok(Some(found));
        }
    }
    Ok(None)
}

/// The authorization server's metadata, or why there is none usable.
pub(crate) async fn server_metadata(
    fetch: &Fetcher,
    issuer: &str,
) -> Result<AuthorizationServerMetadata, AuthError> {
    let base = parse_url(issuer)?;
    match find_server_metadata(fetch, issuer, &base, |named| named == issuer).await? {
        Ok(metadata) => Ok(metadata),
        Err(detail) => Err(AuthError::NoServerMetadata {
            issuer: issuer.to_owned(),
            detail,
        }),
    }
}

/// The first document at the well-known URLs of `issuer` whose `issuer`
/// is accepted (RFC 8414 §3.3: identical to `issuer`); `Err(detail)` when
/// none is (empty detail: nothing was published at all).
async fn find_server_metadata(
    fetch: &Fetcher,
    issuer: &str,
    base: &Url,
    accept: impl Fn(&str) -> bool,
) -> Result<Result<AuthorizationServerMetadata, String>, AuthError> {
    let mut refused = Vec::new();
    for url in authorization_server_candidates(base) {
        let Some(metadata) = fetch.get_json::<AuthorizationServerMetadata>(&url).await? else {
            continue;
        };
        if accept(&metadata.issuer) {
            return Ok(Ok(metadata));
        }
        refused.push(format!(
            "{url} names the issuer {:?}, not {issuer:?}",
            metadata.issuer
        ));
    }
    Ok(Err(refused.join("; ")))
}

/// Whether the resource identifier `resource` covers the endpoint `server`:
/// same origin, and the endpoint's path at or under the resource's.
fn covers(resource: &Url, server: &Url) -> bool {
    if origin(resource) != origin(server) {
        return false;
    }
    let base = resource.path().trim_end_matches('/');
    let path = server.path();
    path == base || path.starts_with(&format!("{base}/")) || base.is_empty()
}

/// The server's URL as a resource identifier: no query or fragment, no
/// trailing slash (RFC 8707 §2, MCP's canonical server URI).
pub(crate) fn canonical(server: &Url) -> String {
    let path = server.path().trim_end_matches('/');
    format!("{}{path}", origin(server))
}

pub(crate) fn parse_url(text: &str) -> Result<Url, AuthError> {
    match Url::parse(text) {
        Ok(url)
            if matches!(url.scheme(), "http" | "https")
                && url.has_host()
                && url.fragment().is_none() =>
        {
            Ok(url)
        }
        _ => Err(AuthError::Url(text.to_owned())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(text: &str) -> Url {
        match Url::parse(text) {
            Ok(url) => url,
            Err(error) => panic!("{text}: {error}"),
        }
    }

    #[test]
    fn resource_coverage() {
        let server = url("https://mcp.example.com/api/mcp");
        for resource in [
            "https://mcp.example.com/api/mcp",
            "https://mcp.example.com/api",
            "https://mcp.example.com/",
            "https://MCP.example.com",
            "https://mcp.example.com:443/api/",
        ] {
            assert!(covers(&url(resource), &server), "{resource}");
        }
        for resource in [
            "https://evil.example.com/api/mcp",
            "http://mcp.example.com/api/mcp",
            "https://mcp.example.com:8443/api/mcp",
            "https://mcp.example.com/ap",
            "https://mcp.example.com/api/mcp/more",
        ] {
            assert!(!covers(&url(resource), &server), "{resource}");
        }
    }

    #[test]
    fn canonical_uri() {
        assert_eq!(
            canonical(&url("https://MCP.example.com:443/mcp/?q=1#x")),
            "https://mcp.example.com/mcp"
        );
        assert_eq!(
            canonical(&url("http://localhost:8080")),
            "http://localhost:8080"
        );
    }
}
