//! Bearer-token protection for axum routers (the MCP endpoint, or any).
//!
//! ```no_run
//! # async fn run(server: toolshape::Server) -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! use toolshape_auth::server::{BearerAuth, JwksVerifier};
//!
//! let resource = "https://mcp.example.com/mcp";
//! let issuer = "https://auth.example.com";
//! let auth = BearerAuth::builder(resource)?
//!     .authorization_server(issuer)
//!     .verifier(Arc::new(JwksVerifier::new(issuer, resource)?))
//!     .required_scopes(["mcp:tools"])
//!     .tool_scopes("delete_file", ["files:write"])
//!     .build()?;
//! let app = auth.protect(server.into_router());
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
//! axum::serve(listener, app).await?;
//! # Ok(()) }
//! ```

mod jwks;
mod layer;
mod tool_call;
mod verifier;

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use axum::Router;
use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::get;
use url::Url;

pub use jwks::{
    DEFAULT_ALGORITHMS, DEFAULT_LEEWAY, DEFAULT_MAX_KEY_AGE, JwksError, JwksVerifier, MAX_KEYS,
    MAX_TOKEN_BYTES, MIN_REFETCH,
};
pub use layer::{BearerAuthLayer, BearerAuthService};
pub use verifier::{AccessGrant, TokenVerifier, VerifyError, VerifyFuture};

use crate::metadata::{ProtectedResourceMetadata, protected_resource_metadata_url};

/// Largest body read to find the tools a request calls (when scopes are
/// set per tool), like the endpoint's own default limit.
pub const DEFAULT_MAX_BODY_BYTES: usize = 4 * 1024 * 1024;

/// Protection for one resource (an MCP endpoint): its metadata document and
/// a layer that admits only requests with a valid token and the scopes
/// they need. Cheap to clone.
#[derive(Debug, Clone)]
pub struct BearerAuth {
    shared: Arc<Shared>,
}

#[derive(Debug)]
struct Shared {
    metadata: ProtectedResourceMetadata,
    metadata_url: Url,
    verifier: Arc<dyn TokenVerifier>,
    required: BTreeSet<String>,
    tool_scopes: HashMap<String, BTreeSet<String>>,
    max_body_bytes: usize,
}

/// Why a [`BearerAuth`] cannot be built.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The resource is not an absolute http(s) URI without a fragment.
    #[error("the resource {0:?} is not an absolute http(s) URI without a fragment")]
    Resource(String),
    /// A segment of the resource's path starts with `:` or `*`, which the
    /// router reads as a parameter: its metadata could not be served.
    #[error(
        "the resource {0:?} has a path segment starting with ':' or '*', which cannot be routed"
    )]
    ResourcePath(String),
    /// No authorization server was named.
    #[error("name at least one authorization server (its issuer URL)")]
    NoAuthorizationServer,
    /// No verifier was given.
    #[error("give a token verifier (JwksVerifier or your own)")]
    NoVerifier,
    /// A scope is empty or has characters a scope cannot have (RFC 6749 §3.3).
    #[error("{0:?} is not a valid scope")]
    Scope(String),
}

/// Builds a [`BearerAuth`].
#[derive(Debug)]
pub struct BearerAuthBuilder {
    resource: String,
    resource_url: Url,
    authorization_servers: Vec<String>,
    verifier: Option<Arc<dyn TokenVerifier>>,
    required: Vec<String>,
    tool_scopes: Vec<(String, Vec<String>)>,
    scopes_supported: Option<Vec<String>>,
    resource_name: Option<String>,
    max_body_bytes: usize,
}

impl BearerAuth {
    /// Starts protection for the resource `resource`: the MCP endpoint's
    /// public URI, exactly as clients reach it (`https://mcp.example.com/mcp`);
    /// tokens must name it as their audience.
    pub fn builder(resource: &str) -> Result<BearerAuthBuilder, ConfigError> {
        let resource_url = match Url::parse(resource) {
            Ok(url)
                if matches!(url.scheme(), "http" | "https")
                    && url.has_host()
                    && url.fragment().is_none() =>
            {
                url
            }
            _ => return Err(ConfigError::Resource(resource.to_owned())),
        };
        // axum refuses (panics on) a route with such a segment; the
        // metadata's well-known path holds the resource's path.
        if resource_url
            .path_segments()
            .into_iter()
            .flatten()
            .any(|segment| segment.starts_with([':', '*']))
        {
            return Err(ConfigError::ResourcePath(resource.to_owned()));
        }
        Ok(BearerAuthBuilder {
            resource: resource.to_owned(),
            resource_url,
            authorization_servers: Vec::new(),
            verifier: None,
            required: Vec::new(),
            tool_scopes: Vec::new(),
            scopes_supported: None,
            resource_name: None,
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
        })
    }

    /// The layer: `router.layer(auth.layer())` protects every route of
    /// `router` added before it.
    pub fn layer(&self) -> BearerAuthLayer {
        BearerAuthLayer { auth: self.clone() }
    }

    /// The route serving the protected-resource metadata at its well-known
    /// path (unprotected: clients read it before they have a token).
    pub fn metadata_router(&self) -> Router {
        let shared = Arc::clone(&self.shared);
        let path = self.shared.metadata_url.path().to_owned();
        Router::new().route(
            &path,
            get(move || {
                let shared = Arc::clone(&shared);
                async move {
                    (
                        [(header::CACHE_CONTROL, "max-age=300")],
                        axum::Json(shared.metadata.clone()),
                    )
                        .into_response()
                }
            }),
        )
    }

    /// `router` with every route protected, plus the metadata route.
    pub fn protect(&self, router: Router) -> Router {
        router.layer(self.layer()).merge(self.metadata_router())
    }

    /// The metadata document served.
    pub fn metadata(&self) -> &ProtectedResourceMetadata {
        &self.shared.metadata
    }

    /// Where the metadata document is (`resource_metadata` of the challenges).
    pub fn metadata_url(&self) -> &Url {
        &self.shared.metadata_url
    }
}

impl BearerAuthBuilder {
    /// An authorization server clients should get tokens from (its issuer
    /// identifier); the first is the one clients pick.
    #[must_use]
    pub fn authorization_server(mut self, issuer: &str) -> Self {
        self.authorization_servers.push(issuer.to_owned());
        self
    }

    /// How tokens are checked.
    #[must_use]
    pub fn verifier(mut self, verifier: Arc<dyn TokenVerifier>) -> Self {
        self.verifier = Some(verifier);
        self
    }

    /// Scopes every request needs (also listed as `scopes_supported` unless
    /// [`BearerAuthBuilder::scopes_supported`] says otherwise).
    #[must_use]
    pub fn required_scopes<I, S>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.required.extend(scopes.into_iter().map(Into::into));
        self
    }

    /// Scopes a `tools/call` of `tool` needs besides the required ones. The
    /// tool is read from the request body (at most
    /// [`BearerAuthBuilder::max_body_bytes`] of it).
    #[must_use]
    pub fn tool_scopes<I, S>(mut self, tool: &str, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.tool_scopes.push((
            tool.to_owned(),
            scopes.into_iter().map(Into::into).collect(),
        ));
        self
    }

    /// The `scopes_supported` of the metadata (default: the required scopes,
    /// or none listed when there are none).
    #[must_use]
    pub fn scopes_supported<I, S>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.scopes_supported = Some(scopes.into_iter().map(Into::into).collect());
        self
    }

    /// The `resource_name` of the metadata.
    #[must_use]
    pub fn resource_name(mut self, name: &str) -> Self {
        self.resource_name = Some(name.to_owned());
        self
    }

    /// Largest body read to find the tools called (default
    /// [`DEFAULT_MAX_BODY_BYTES`]); a larger one is refused with `413`.
    #[must_use]
    pub fn max_body_bytes(mut self, limit: usize) -> Self {
        self.max_body_bytes = limit;
        self
    }

    /// The protection.
    pub fn build(self) -> Result<BearerAuth, ConfigError> {
        let verifier = self.verifier.ok_or(ConfigError::NoVerifier)?;
        if self.authorization_servers.is_empty() {
            return Err(ConfigError::NoAuthorizationServer);
        }
        let check = |scope: &String| {
            let valid = !scope.is_empty()
                && scope
                    .bytes()
                    .all(|b| b == 0x21 || (0x23..=0x5B).contains(&b) || (0x5D..=0x7E).contains(&b));
            if valid {
                Ok(())
            } else {
                Err(ConfigError::Scope(scope.clone()))
            }
        };
        let mut tool_scopes: HashMap<String, BTreeSet<String>> = HashMap::new();
        for (tool, scopes) in self.tool_scopes {
            scopes.iter().try_for_each(check)?;
            tool_scopes.entry(tool).or_default().extend(scopes);
        }
        self.required.iter().try_for_each(check)?;
        let required: BTreeSet<String> = self.required.into_iter().collect();
        let scopes_supported = match self.scopes_supported {
            Some(scopes) => {
                scopes.iter().try_for_each(check)?;
                Some(scopes)
            }
            None if required.is_empty() => None,
            None => Some(required.iter().cloned().collect()),
        };
        let metadata = ProtectedResourceMetadata {
            resource: self.resource,
            authorization_servers: self.authorization_servers,
            scopes_supported,
            bearer_methods_supported: Some(vec!["header".to_owned()]),
            resource_name: self.resource_name,
            resource_documentation: None,
        };
        Ok(BearerAuth {
            shared: Arc::new(Shared {
                metadata_url: protected_resource_metadata_url(&self.resource_url),
                metadata,
                verifier,
                required,
                tool_scopes,
                max_body_bytes: self.max_body_bytes,
            }),
        })
    }
}
