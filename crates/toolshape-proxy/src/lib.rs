//! `toolshape-proxy`: a validating gateway in front of any MCP server.
//!
//! A [`Proxy`] connects to an upstream server (a command over stdio, or a
//! Streamable HTTP URL, on whatever revision it speaks), mirrors its tools
//! into a [`ToolRegistry`], and forwards their calls (and serves its
//! resources and prompts through it: [`Proxy::add_to`]). Served by a
//! [`toolshape::Server`] (stdio, Streamable HTTP with sessions or
//! stateless) or over OTC, the tools then carry toolshape's guarantees:
//!
//! - arguments are checked against the upstream tool's `inputSchema` before
//!   the upstream sees them;
//! - `structuredContent` is checked against its `outputSchema` by an
//!   untrusted-schema engine (nothing fetched, bounded); an invalid output
//!   becomes an `isError` result naming the violations ([`OnInvalid`]);
//! - each client gets the shape its own revision allows;
//! - tools are filtered ([`ToolFilter`]), calls time-limited, counted
//!   ([`Proxy::metrics_text`]) and audited;
//! - a child that exits is started again, with backoff.
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use toolshape::client::{Client, ServerCommand};
//! use toolshape_proxy::{Proxy, ProxyOptions, UpstreamSpec};
//!
//! let upstream = UpstreamSpec::Command(ServerCommand::new("python3").arg("server.py"));
//! let proxy = Proxy::start(upstream, Client::builder(), ProxyOptions::default()).await?;
//! // The tools, and the upstream's resources and prompts.
//! let server = proxy
//!     .add_to(toolshape::Server::builder("gateway", "1.0.0"))
//!     .build()?;
//! server.serve_stdio().await?;
//! # Ok(()) }
//! ```
//!
//! The whole design, with what each front and flag does: `docs/proxy.md`.

mod asks;
mod audit;
mod filter;
mod forward;
mod metrics;
mod mirror;
mod notices;
mod options;
mod output;
mod rate;
mod reach;
mod same_json;
mod surface;
mod upstream;

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Semaphore;
use toolshape::client::{ClientBuilder, ClientError};
use toolshape::resource::{ResourceEvents, ResourceLister, ResourceTemplateRegistry};
use toolshape::schema::{Limits, SchemaEngine};
use toolshape::tool::UrlElicitations;
use toolshape::{PromptRegistry, ServerBuilder, ToolRegistry};

pub use filter::{ToolFilter, glob_matches};
pub use metrics::Outcome;
pub use options::{AuditTarget, BrokenTools, OnInvalid, ProxyOptions};
pub use rate::RateLimit;
pub use upstream::UpstreamSpec;

use forward::Forwarder;

/// Why a proxy could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProxyError {
    /// The upstream server could not be reached.
    #[error("cannot reach the upstream server: {0}")]
    Upstream(#[source] ClientError),
    /// The upstream server's tools could not be listed (it failed, or its
    /// listing went past the client's bounds).
    #[error("cannot list the upstream server's tools: {0}")]
    Listing(#[source] ClientError),
    /// The audit log cannot be opened.
    #[error("cannot open the audit log: {0}")]
    Audit(#[source] std::io::Error),
}

/// The longest part of an upstream's error text passed on to a client.
const MAX_ERROR_TEXT: usize = 300;

/// A running proxy: the upstream's tools, mirrored and forwarded.
#[derive(Debug)]
pub struct Proxy {
    registry: ToolRegistry,
    forwarder: Arc<Forwarder>,
    broken: Vec<(String, String)>,
    surface: surface::Surface,
    /// Where the upstream's resource changes are passed on.
    events: ResourceEvents,
    /// Where the completions of the upstream's URL-mode elicitations are
    /// passed on.
    elicitations: UrlElicitations,
    follower: tokio::task::JoinHandle<()>,
    /// Passes the upstream's change notifications on (`notices.rs`).
    notices: tokio::task::JoinHandle<()>,
}

impl Proxy {
    /// Connects to the upstream (the first connection now: a wrong command
    /// or URL fails here), lists its tools and starts following it.
    /// `builder` configures the upstream client (its schema engine, timeouts,
    /// authorization); `toolkit`/`version` of [`ProxyOptions`] name the tools
    /// over OTC (default: `Tools`, `1.0.0`).
    pub async fn start(
        upstream: UpstreamSpec,
        builder: ClientBuilder,
        options: ProxyOptions,
    ) -> Result<Proxy, ProxyError> {
        let builder = asks::declared(builder.request_timeout(options.longest_call()), &options);
        // Opened first: a path that cannot be written starts no upstream.
        let audit = match &options.audit {
            Some(target) => Some(
                audit::Audit::start(target, options.audit_arguments).map_err(ProxyError::Audit)?,
            ),
            None => None,
        };
        let elicitations = UrlElicitations::new();
        let upstream = upstream::Upstream::connect(
            upstream,
            builder,
            options.upstreams,
            options.upstream_log_level,
            elicitations.clone(),
            options
                .sole_client
                .as_ref()
                .filter(|_| options.relay_asks && options.roots.is_none())
                .map(toolshape::ConnectedClient::roots_changes),
        )
        .await
        .map_err(ProxyError::Upstream)?;
        let identity = (
            options
                .toolkit
                .clone()
                .unwrap_or_else(|| "Tools".to_owned()),
            options
                .version
                .clone()
                .unwrap_or_else(|| "1.0.0".to_owned()),
        );
        let forwarder = Arc::new(Forwarder {
            upstream,
            limit: options.max_concurrent.map(Semaphore::new),
            rates: options.rate_limit.map(rate::CallerLimits::new),
            options,
            metrics: metrics::Metrics::default(),
            audit,
            identity,
        });
        // The upstream's schemas are not ours: compiled as untrusted, each
        // listing's within the compile budget.
        let mut limits = Limits::default();
        limits.listing_budget = forwarder.options.compile_budget;
        let registry = ToolRegistry::with_engine(SchemaEngine::builder().limits(limits).build());
        let client = forwarder
            .upstream
            .primary()
            .await
            .map_err(ProxyError::Upstream)?;
        // Subscribed before the first listing: a change announced while it
        // runs leads to another.
        let changes = client.tool_list_changes();
        let mut synced = mirror::sync(&forwarder, &registry, &client)
            .await
            .map_err(ProxyError::Listing)?;
        let broken = std::mem::take(&mut synced.broken);
        // A per-tool timeout for a tool the upstream does not list is
        // likely a typo: said once, at start (the tool may come later).
        for tool in forwarder.options.tool_timeouts.keys() {
            if registry.latest(tool).is_none() && !broken.iter().any(|(name, _)| name == tool) {
                tracing::warn!(tool = %tool, "--tool-timeout names a tool the proxy does not offer (the upstream does not list it, yet, or a filter leaves it out)");
            }
        }
        let surface = surface::mirror(&forwarder, &client).await;
        let follower = tokio::spawn(mirror::follow(
            Arc::clone(&forwarder),
            registry.clone(),
            client,
            changes,
            synced,
        ));
        let wanted = Arc::new(notices::Wanted::default());
        let (subscribed, unsubscribed) = (Arc::clone(&wanted), Arc::clone(&wanted));
        let events = ResourceEvents::new()
            .on_subscribe(move |uri| subscribed.add(uri))
            .on_unsubscribe(move |uri| unsubscribed.remove(uri));
        let notices = tokio::spawn(notices::follow(
            Arc::clone(&forwarder),
            notices::Followers {
                events: events.clone(),
                wanted,
                listing: Arc::clone(&surface.last_listing),
                prompts: surface.prompts.clone(),
                templates: surface.templates.clone(),
            },
        ));
        Ok(Proxy {
            registry,
            forwarder,
            broken,
            surface,
            events,
            elicitations,
            follower,
            notices,
        })
    }

    /// The mirrored tools: serve them with a [`toolshape::Server`] or over OTC.
    pub fn registry(&self) -> &ToolRegistry {
        &self.registry
    }

    /// `builder` with everything the upstream offers: the mirrored tools
    /// (the builder's registry is this proxy's: one upstream per server),
    /// and its resources (listed from it, read through it, their updates
    /// and list changes passed on), resource templates (at most 256) and
    /// prompts (at most 1,000), listed again as they change, read and
    /// rendered through it.
    pub fn add_to(&self, builder: ServerBuilder) -> ServerBuilder {
        let mut builder = builder
            .registry(self.registry.clone())
            .url_elicitations(self.elicitations.clone());
        if let Some(templates) = &self.surface.templates {
            builder = builder.resource_template_registry(templates.clone());
        }
        if let Some(prompts) = &self.surface.prompts {
            builder = builder.prompt_registry(prompts.clone());
        }
        if let Some(resources) = &self.surface.resources {
            builder = builder
                .resources_from(resources.clone())
                .resource_events(self.events.clone());
        }
        builder
    }

    /// Where the upstream's resource changes are passed on (updates to the
    /// clients subscribed, list changes to all), and whose subscribe hook
    /// subscribes upstream: given to the servers [`Proxy::add_to`] builds.
    pub fn resource_events(&self) -> &ResourceEvents {
        &self.events
    }

    /// Where the completions of the upstream's URL-mode elicitations
    /// (`notifications/elicitation/complete`) are passed on, to the client
    /// session each elicitation was relayed to: given to the servers
    /// [`Proxy::add_to`] builds.
    pub fn url_elicitations(&self) -> &UrlElicitations {
        &self.elicitations
    }

    /// The upstream's resources, listed and read through it, when it has
    /// the capability (see [`Proxy::add_to`]).
    pub fn resources(&self) -> Option<&ResourceLister> {
        self.surface.resources.as_ref()
    }

    /// The upstream's resource templates, read through it, when it has
    /// resources: as it lists them (listed again when it says its
    /// resources changed).
    pub fn resource_templates(&self) -> Option<&ResourceTemplateRegistry> {
        self.surface.templates.as_ref()
    }

    /// The upstream's prompts, rendered by it, when it has the capability:
    /// as it lists them (listed again when it says they changed).
    pub fn prompts(&self) -> Option<&PromptRegistry> {
        self.surface.prompts.as_ref()
    }

    /// The upstream tools left out at start because their schemas cannot
    /// be used (name, problem). Those left out only for the compile budget
    /// may be registered later (see `ProxyOptions::compile_budget`):
    /// [`Proxy::registry`] has the tools served now.
    pub fn broken_tools(&self) -> &[(String, String)] {
        &self.broken
    }

    /// Whether the upstream is connected: its first connection (a child
    /// process, or an HTTP client), the one whose tools the proxy mirrors,
    /// is open, and an HTTP upstream was reached by the last call (or the
    /// probe that follows one that could not reach it). While it is not,
    /// the proxy connects again with backoff and the calls that reach it
    /// meanwhile fail (retryably): what a front's health check should say.
    pub fn is_upstream_connected(&self) -> bool {
        self.forwarder.upstream.is_connected()
    }

    /// The counters of forwarded calls, in the Prometheus text format.
    pub fn metrics_text(&self) -> String {
        self.forwarder
            .metrics
            .render(self.forwarder.upstream.restarts())
    }

    /// Stops following the upstream and closes its connections (children
    /// get `grace` to exit).
    pub async fn shutdown(&self, grace: Duration) {
        self.follower.abort();
        self.notices.abort();
        self.forwarder.upstream.close(grace).await;
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.follower.abort();
        self.notices.abort();
    }
}
