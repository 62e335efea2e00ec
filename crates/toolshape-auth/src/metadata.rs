//! The discovery documents: protected-resource metadata (RFC 9728) and
//! authorization-server metadata (RFC 8414, OpenID Connect Discovery), and
//! the well-known URLs each is looked for at, in the order MCP requires.

use serde::{Deserialize, Serialize};
use url::Url;

/// The well-known suffix of protected-resource metadata (RFC 9728 §3).
pub const PROTECTED_RESOURCE_SUFFIX: &str = "oauth-protected-resource";
/// The well-known suffix of authorization-server metadata (RFC 8414 §3).
pub const AUTHORIZATION_SERVER_SUFFIX: &str = "oauth-authorization-server";
/// The well-known suffix of OpenID Connect discovery.
pub const OPENID_SUFFIX: &str = "openid-configuration";

/// Protected-resource metadata (RFC 9728 §2): what an MCP server says about
/// itself and which authorization servers issue its tokens.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProtectedResourceMetadata {
    /// The resource identifier (the MCP server's canonical URI).
    pub resource: String,
    /// Issuer identifiers of the authorization servers it trusts.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub authorization_servers: Vec<String>,
    /// Scopes it uses (the minimal set for basic use).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scopes_supported: Option<Vec<String>>,
    /// How tokens may be presented (`header`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bearer_methods_supported: Option<Vec<String>>,
    /// A human-readable name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_name: Option<String>,
    /// Where its documentation is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_documentation: Option<String>,
}

/// Authorization-server metadata (RFC 8414 §2, the members MCP uses).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct AuthorizationServerMetadata {
    /// The issuer identifier; must equal the one the document was looked up by.
    pub issuer: String,
    /// The authorization endpoint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authorization_endpoint: Option<String>,
    /// The token endpoint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_endpoint: Option<String>,
    /// The dynamic client registration endpoint (RFC 7591).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registration_endpoint: Option<String>,
    /// The key set its tokens are signed with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jwks_uri: Option<String>,
    /// Scopes it knows (`offline_access` among them means refresh tokens).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scopes_supported: Option<Vec<String>>,
    /// `code`, ...
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_types_supported: Option<Vec<String>>,
    /// `authorization_code`, `refresh_token`, `client_credentials`, ...
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grant_types_supported: Option<Vec<String>>,
    /// `none`, `client_secret_basic`, `client_secret_post`, `private_key_jwt`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_endpoint_auth_methods_supported: Option<Vec<String>>,
    /// Algorithms accepted for `private_key_jwt` assertions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_endpoint_auth_signing_alg_values_supported: Option<Vec<String>>,
    /// PKCE methods; absent means no PKCE, which MCP clients must refuse.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code_challenge_methods_supported: Option<Vec<String>>,
    /// Client ID Metadata Documents accepted as client ids.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_id_metadata_document_supported: Option<bool>,
    /// Authorization responses carry `iss` (RFC 9207).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authorization_response_iss_parameter_supported: Option<bool>,
    /// DPoP proof algorithms accepted (RFC 9449 §5.1); present means DPoP.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dpop_signing_alg_values_supported: Option<Vec<String>>,
}

impl AuthorizationServerMetadata {
    /// Whether `list` (a `*_supported` member) contains `value`.
    pub fn lists(list: &Option<Vec<String>>, value: &str) -> bool {
        list.as_ref().is_some_and(|l| l.iter().any(|v| v == value))
    }
}

/// Where the metadata of the resource `resource` is (RFC 9728 §3.1): the
/// well-known prefix inserted between its origin and its path.
pub fn protected_resource_metadata_url(resource: &Url) -> Url {
    well_known(resource, PROTECTED_RESOURCE_SUFFIX)
}

/// The protected-resource metadata URLs an MCP client tries when the server
/// named none: path-based first (when the endpoint has a path), then the root.
pub fn protected_resource_candidates(server: &Url) -> Vec<Url> {
    let mut urls = Vec::with_capacity(2);
    if !path_of(server).is_empty() {
        urls.push(well_known(server, PROTECTED_RESOURCE_SUFFIX));
    }
    let mut root = server.clone();
    root.set_path(&format!("/.well-known/{PROTECTED_RESOURCE_SUFFIX}"));
    root.set_query(None);
    root.set_fragment(None);
    urls.push(root);
    urls
}

/// The authorization-server metadata URLs for `issuer`, in MCP's order:
/// with a path, OAuth then OpenID with the well-known part inserted, then
/// OpenID appended; without one, OAuth then OpenID at the root.
pub fn authorization_server_candidates(issuer: &Url) -> Vec<Url> {
    let mut urls = vec![
        well_known(issuer, AUTHORIZATION_SERVER_SUFFIX),
        well_known(issuer, OPENID_SUFFIX),
    ];
    let path = path_of(issuer);
    if !path.is_empty() {
        let mut appended = issuer.clone();
        appended.set_path(&format!("{path}/.well-known/{OPENID_SUFFIX}"));
        appended.set_query(None);
        appended.set_fragment(None);
        urls.push(appended);
    }
    urls
}

/// `https://host/.well-known/<suffix><path>` for `https://host<path>`.
fn well_known(base: &Url, suffix: &str) -> Url {
    let mut url = base.clone();
    url.set_path(&format!("/.well-known/{suffix}{}", path_of(base)));
    url.set_query(None);
    url.set_fragment(None);
    url
}

/// The path without its trailing slash (`""` for the root).
fn path_of(url: &Url) -> &str {
    url.path().trim_end_matches('/')
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

    fn strings(urls: Vec<Url>) -> Vec<String> {
        urls.into_iter().map(String::from).collect()
    }

    #[test]
    fn resource_metadata_locations() {
        assert_eq!(
            protected_resource_metadata_url(&url("https://example.com/public/mcp")).as_str(),
            "https://example.com/.well-known/oauth-protected-resource/public/mcp"
        );
        assert_eq!(
            strings(protected_resource_candidates(&url(
                "https://example.com/mcp?x=1"
            ))),
            [
                "https://example.com/.well-known/oauth-protected-resource/mcp",
                "https://example.com/.well-known/oauth-protected-resource",
            ]
        );
        assert_eq!(
            strings(protected_resource_candidates(&url("https://example.com/"))),
            ["https://example.com/.well-known/oauth-protected-resource"]
        );
    }

    #[test]
    fn authorization_server_locations() {
        assert_eq!(
            strings(authorization_server_candidates(&url(
                "https://auth.example.com/tenant1"
            ))),
            [
                "https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
                "https://auth.example.com/.well-known/openid-configuration/tenant1",
                "https://auth.example.com/tenant1/.well-known/openid-configuration",
            ]
        );
        assert_eq!(
            strings(authorization_server_candidates(&url(
                "https://auth.example.com"
            ))),
            [
                "https://auth.example.com/.well-known/oauth-authorization-server",
                "https://auth.example.com/.well-known/openid-configuration",
            ]
        );
    }
}
