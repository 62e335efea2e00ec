//! Keeping the proxy's tools those of the upstream: listed at start, listed
//! again when the upstream says its list changed or its connection is made
//! anew; the registry then tells the proxy's clients (`listChanged`).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use toolshape::ToolRegistry;
use toolshape::client::{Client, ClientError};
use toolshape::protocol::ToolDefinition;
use toolshape::schema::SchemaErrorKind;
use toolshape::tool::RegistrationError;

use crate::forward::Forwarder;
use crate::options::BrokenTools;

/// The pause before listing again after a failed listing.
const RETRY_LISTING: Duration = Duration::from_secs(1);

/// The least time between the starts of two listings of the upstream's tools.
pub(crate) const RELISTING_GAP: Duration = Duration::from_secs(1);

/// Lists the upstream's tools through `client` and makes the registry
/// exactly the admitted ones. Returns the tools left out as unusable, by name.
pub(crate) async fn sync(
    forwarder: &Arc<Forwarder>,
    registry: &ToolRegistry,
    client: &Client,
) -> Result<Vec<(String, String)>, ClientError> {
    let definitions = client.list_tools().await?;
    let admitted: Vec<ToolDefinition> = definitions
        .into_iter()
        .filter(|definition| forwarder.options.filter.admits(definition))
        .collect();
    // Registering compiles every schema the upstream sent, which a hostile
    // one can make costly: on a blocking thread, the runtime serving the
    // proxy's clients goes on meanwhile.
    let (forwarder, registry) = (Arc::clone(forwarder), registry.clone());
    let broken = tokio::task::spawn_blocking(move || register(&forwarder, &registry, &admitted))
        .await
        .unwrap_or_else(|join| {
            // The registry is as it was: the proxy goes on with its tools.
            tracing::warn!(error = %join, "registering the upstream's tools failed");
            Vec::new()
        });
    Ok(broken)
}

/// Makes the registry exactly `admitted`, and lists the unusable ones as
/// the options say. Returns them, by name, with the problem.
fn register(
    forwarder: &Arc<Forwarder>,
    registry: &ToolRegistry,
    admitted: &[ToolDefinition],
) -> Vec<(String, String)> {
    let failures = registry.replace_all(admitted.iter().map(|d| forwarder.tool(d)));
    let mut over_budget = 0;
    for (name, error) in &failures {
        if over_the_compile_budget(error) {
            over_budget += 1;
        } else {
            tracing::warn!(tool = %name, problem = %error, "an upstream tool's schema cannot be used");
        }
    }
    if over_budget > 0 {
        // One line for them all: a hostile listing may hold 10,000.
        tracing::warn!(
            tools = over_budget,
            budget_s = forwarder.options.compile_budget.as_secs_f64(),
            "the upstream's schemas took longer to compile than the listing's budget: these tools are unusable until the next listing"
        );
    }
    let broken: Vec<(String, String)> = failures
        .into_iter()
        .map(|(name, error)| (name, error.to_string()))
        .collect();
    // By name once, not searched for each broken tool (10,000 of each);
    // the first of a name, as a search would find.
    let mut by_name: HashMap<&str, &ToolDefinition> = HashMap::new();
    if !broken.is_empty() {
        for definition in admitted {
            by_name
                .entry(definition.name.as_str())
                .or_insert(definition);
        }
    }
    if forwarder.options.broken_tools == BrokenTools::List {
        // In one change: one copy of the catalog, not one per tool.
        let listed = broken.iter().filter_map(|(name, problem)| {
            let definition = by_name.get(name.as_str())?;
            Some(forwarder.broken_tool(definition, problem))
        });
        for (name, error) in registry.register_each(listed) {
            tracing::warn!(tool = %name, %error, "cannot list the unusable tool either");
        }
    }
    broken
}

/// Whether a tool was left out only because its listing's schemas had
/// spent their compile budget.
fn over_the_compile_budget(error: &RegistrationError) -> bool {
    matches!(
        error,
        RegistrationError::Schema { source, .. }
            if matches!(source.kind(), SchemaErrorKind::ListingTooCostly { .. })
    )
}

/// Follows the upstream for good: each time its tool list changes, or its
/// first connection closes and is made again, lists its tools anew.
/// `changes` was subscribed before the listing the proxy started with, so a
/// change announced while a listing runs leads to another. Listings are at
/// least [`RELISTING_GAP`] apart: an upstream that announces changes without
/// pause costs one listing per gap, the changes in between coalesced.
pub(crate) async fn follow(
    forwarder: Arc<Forwarder>,
    registry: ToolRegistry,
    mut client: Client,
    mut changes: tokio::sync::watch::Receiver<u64>,
) {
    let mut listed = Instant::now();
    loop {
        tokio::select! {
            changed = changes.changed() => {
                if changed.is_err() {
                    client.closed().await;
                }
            }
            () = client.closed() => {}
        }
        tokio::time::sleep_until((listed + RELISTING_GAP).into()).await;
        loop {
            match forwarder.upstream.primary().await {
                Ok(fresh) => {
                    client = fresh;
                    // Subscribed before listing: what changes from here on
                    // is noticed, and what changed before is in this listing.
                    changes = client.tool_list_changes();
                    listed = Instant::now();
                    match sync(&forwarder, &registry, &client).await {
                        Ok(_) => break,
                        Err(error) => tracing::warn!(%error, "cannot list the upstream's tools"),
                    }
                }
                Err(error) => tracing::warn!(%error, "the upstream server is unavailable"),
            }
            tokio::time::sleep(RETRY_LISTING).await;
        }
    }
}
