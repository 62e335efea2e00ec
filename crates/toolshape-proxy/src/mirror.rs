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

/// What one listing of the upstream's tools made of them.
#[derive(Debug, Default)]
pub(crate) struct Synced {
    /// The tools left out as unusable, by name, with the problem.
    pub(crate) broken: Vec<(String, String)>,
    /// How many of them only because the compile budget was spent.
    cut: usize,
    /// How long registering them took.
    took: Duration,
}

/// Lists the upstream's tools through `client` and makes the registry
/// exactly the admitted ones.
pub(crate) async fn sync(
    forwarder: &Arc<Forwarder>,
    registry: &ToolRegistry,
    client: &Client,
) -> Result<Synced, ClientError> {
    let definitions = client.list_tools().await?;
    let admitted: Vec<ToolDefinition> = definitions
        .into_iter()
        .filter(|definition| forwarder.options.filter.admits(definition))
        .collect();
    // Registering compiles every schema the upstream sent, which a hostile
    // one can make costly: on a blocking thread, the runtime serving the
    // proxy's clients goes on meanwhile.
    let (forwarder, registry) = (Arc::clone(forwarder), registry.clone());
    let started = Instant::now();
    let mut synced =
        tokio::task::spawn_blocking(move || register(&forwarder, &registry, &admitted))
            .await
            .unwrap_or_else(|join| {
                // The registry is as it was: the proxy goes on with its tools.
                tracing::warn!(error = %join, "registering the upstream's tools failed");
                Synced::default()
            });
    synced.took = started.elapsed();
    Ok(synced)
}

/// Makes the registry exactly `admitted`, and lists the unusable ones as
/// the options say.
fn register(
    forwarder: &Arc<Forwarder>,
    registry: &ToolRegistry,
    admitted: &[ToolDefinition],
) -> Synced {
    let failures = registry.replace_all(admitted.iter().map(|d| forwarder.tool(d)));
    let mut over_budget = 0;
    for (name, error) in &failures {
        if over_the_compile_budget(error) {
            over_budget += 1;
        } else {
            tracing::warn!(tool = %name, problem = %error, "an upstream tool cannot be offered");
        }
    }
    if over_budget > 0 {
        // One line for them all: a hostile listing may hold 10,000.
        tracing::warn!(
            tools = over_budget,
            budget_s = forwarder.options.compile_budget.as_secs_f64(),
            "the upstream's schemas took longer to compile than the listing's budget: these tools are unusable until a later listing compiles them"
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
    Synced {
        broken,
        cut: over_budget,
        took: Duration::ZERO,
    }
}

/// When to list again for the tools the compile budget left out of the
/// listing `synced`, if ever: after a pause as long as registering took
/// (at least [`RELISTING_GAP`]), so that compiling takes at most about half
/// of one thread's time; and only while each such listing leaves out fewer
/// than the one before it (`cut_before`, when the listing was one of them).
fn listing_for_the_cut(synced: &Synced, cut_before: Option<usize>) -> Option<Instant> {
    if synced.cut == 0 {
        return None;
    }
    if cut_before.is_some_and(|before| synced.cut >= before) {
        tracing::warn!(
            tools = synced.cut,
            "listing again compiled no more of the tools the compile budget left out: they stay unusable until the upstream's list changes (a larger --compile-budget would take them)"
        );
        return None;
    }
    let pause = synced.took.max(RELISTING_GAP);
    tracing::info!(
        tools = synced.cut,
        pause_s = pause.as_secs_f64(),
        "listing the upstream's tools again for those the compile budget left out"
    );
    Some(Instant::now() + pause)
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
/// first connection closes and is made again, lists its tools anew; and
/// while the compile budget leaves tools out (`first`, the listing the proxy
/// started with), lists them again later (see [`listing_for_the_cut`]).
/// `changes` was subscribed before the listing the proxy started with, so a
/// change announced while a listing runs leads to another. Listings are at
/// least [`RELISTING_GAP`] apart: an upstream that announces changes without
/// pause costs one listing per gap, the changes in between coalesced.
pub(crate) async fn follow(
    forwarder: Arc<Forwarder>,
    registry: ToolRegistry,
    mut client: Client,
    mut changes: tokio::sync::watch::Receiver<u64>,
    first: Synced,
) {
    let mut listed = Instant::now();
    let mut for_the_cut = listing_for_the_cut(&first, None);
    let mut cut = first.cut;
    loop {
        let cut_waits = async {
            match for_the_cut {
                Some(at) => tokio::time::sleep_until(at.into()).await,
                None => std::future::pending().await,
            }
        };
        // What the next listing is compared with: the last one's cut, when
        // it is listed again for that cut only.
        let mut cut_before = None;
        tokio::select! {
            changed = changes.changed() => {
                if changed.is_err() {
                    client.closed().await;
                }
            }
            () = client.closed() => {}
            () = cut_waits => cut_before = Some(cut),
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
                        Ok(synced) => {
                            for_the_cut = listing_for_the_cut(&synced, cut_before);
                            cut = synced.cut;
                            break;
                        }
                        Err(error) => tracing::warn!(%error, "cannot list the upstream's tools"),
                    }
                }
                Err(error) => tracing::warn!(%error, "the upstream server is unavailable"),
            }
            tokio::time::sleep(RETRY_LISTING).await;
        }
    }
}
