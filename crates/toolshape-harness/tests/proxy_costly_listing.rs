#![allow(clippy::unwrap_used, clippy::expect_used)]
//! An upstream whose listing is costly to compile (each tool's output schema
//! refers to the 2020-12 meta-schema, which the validator compiles into it:
//! tens of milliseconds per distinct schema) does not hold up the proxy's
//! runtime: the proxy registers the listed tools on a blocking thread, so the
//! other tasks of its (here single-threaded) runtime go on meanwhile.

mod client_common;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use toolshape::client::{Client, Negotiation};
use toolshape::protocol::ProtocolVersion;
use toolshape::{Tool, ToolContext, ToolError, ToolOutput};
use toolshape_proxy::{Proxy, ProxyOptions, UpstreamSpec};

/// Tools in the upstream's listing, each with a distinct costly schema.
const COSTLY_TOOLS: usize = 6;

fn costly_tool(index: usize) -> Tool {
    let output = json!({
        "type": "object",
        "properties": {"schema": {"$ref": "https://json-schema.org/draft/2020-12/schema"}},
        // Distinct per tool, so that no compiled schema is reused.
        "x-index": index
    });
    Tool::dynamic(
        format!("costly_{index}"),
        json!({"type": "object"}),
        Some(output),
        |_context: ToolContext, _arguments: Value| async move {
            Ok::<_, ToolError>(ToolOutput::structured(json!({"schema": {}})))
        },
    )
}

#[tokio::test]
async fn a_costly_listing_is_registered_off_the_runtime_thread() {
    let server = toolshape::Server::builder("costly", "1")
        .tools((0..COSTLY_TOOLS).map(costly_tool))
        .build()
        .unwrap();
    let url = client_common::serve_over_http(server).await;

    // A task on the same thread, counting its turns every millisecond.
    let turns = Arc::new(AtomicU64::new(0));
    let counter = Arc::clone(&turns);
    let ticker = tokio::spawn(async move {
        loop {
            tokio::time::sleep(Duration::from_millis(1)).await;
            counter.fetch_add(1, Ordering::Relaxed);
        }
    });

    let started = Instant::now();
    let before = turns.load(Ordering::Relaxed);
    let proxy = Proxy::start(
        UpstreamSpec::Url(url),
        Client::builder(),
        ProxyOptions::default(),
    )
    .await
    .expect("the proxy starts");
    let took = started.elapsed();
    let ticked = turns.load(Ordering::Relaxed) - before;
    ticker.abort();

    assert!(
        proxy.broken_tools().is_empty(),
        "{:?}",
        proxy.broken_tools()
    );
    assert_eq!(proxy.registry().names().len(), COSTLY_TOOLS);
    // Compiling the listing takes most of the start (about a second in a
    // debug build); had it run on this thread, the ticker would have had no
    // turn meanwhile (1 in a second, measured so). A turn per 20 ms on
    // average leaves room for a loaded machine.
    let millis = u64::try_from(took.as_millis()).unwrap_or(u64::MAX);
    assert!(
        ticked * 20 >= millis,
        "the runtime was held up: {ticked} turns of 1 ms in {millis} ms"
    );
}

/// Tools whose schemas each stay within the bounds on one schema, but whose
/// patterns take a while to compile (see [`pattern_length`]; each distinct,
/// so none is cached), listed after a few cheap ones.
const PATTERNED_TOOLS: usize = 16;
const CHEAP_TOOLS: usize = 3;

/// How many letters or digits the pattern of tool `index` asks for (each
/// distinct): about 1 ms of compiling per unit in a debug build on this
/// 2-core machine, so 8 of them take twice the 300 ms budget, and one stays
/// under the 500 ms pattern budget on a machine three times slower. (At 10
/// to 17 units 8 of them took 170 ms on a faster day, within the budget.)
fn pattern_length(index: usize) -> usize {
    60 + 5 * index
}

fn patterned_tool(index: usize) -> Tool {
    let output = json!({
        "type": "object",
        "properties": {
            "code": {"type": "string", "pattern": format!("^(\\p{{L}}|\\p{{N}}){{{}}}$", pattern_length(index))}
        }
    });
    Tool::dynamic(
        format!("patterned_{index}"),
        json!({"type": "object"}),
        Some(output),
        move |_context: ToolContext, _arguments: Value| async move {
            // What the pattern asks for.
            let code = "a".repeat(pattern_length(index));
            Ok::<_, ToolError>(ToolOutput::structured(json!({"code": code})))
        },
    )
}

fn cheap_tool(index: usize) -> Tool {
    Tool::dynamic(
        format!("cheap_{index}"),
        json!({"type": "object", "x-index": index}),
        Some(json!({"type": "object", "x-index": index})),
        |_context: ToolContext, _arguments: Value| async move {
            Ok::<_, ToolError>(ToolOutput::structured(json!({})))
        },
    )
}

/// A proxy in front of a server of `tools`, with a compile budget far less
/// than the patterns take to compile together (seconds in a debug build),
/// far more than the cheap schemas take (milliseconds).
async fn proxy_with_300_ms_budget(tools: impl IntoIterator<Item = Tool>) -> Proxy {
    let server = toolshape::Server::builder("patterned", "1")
        .tools(tools)
        .build()
        .unwrap();
    let url = client_common::serve_over_http(server).await;
    let mut options = ProxyOptions::default();
    options.compile_budget = Duration::from_millis(300);
    Proxy::start(UpstreamSpec::Url(url), Client::builder(), options)
        .await
        .expect("the proxy starts")
}

#[tokio::test]
async fn a_listing_costlier_than_its_compile_budget_leaves_the_rest_out_and_the_proxy_serves() {
    let tools = (0..CHEAP_TOOLS).map(cheap_tool);
    let proxy =
        proxy_with_300_ms_budget(tools.chain((0..PATTERNED_TOOLS).map(patterned_tool))).await;

    let broken = proxy.broken_tools();
    let registered = proxy.registry().names();
    assert_eq!(
        broken.len() + registered.len(),
        CHEAP_TOOLS + PATTERNED_TOOLS
    );
    for index in 0..CHEAP_TOOLS {
        let name = format!("cheap_{index}");
        assert!(registered.contains(&name), "{name} left out: {broken:?}");
    }
    assert!(!broken.is_empty(), "the budget left no tool out");
    for (name, problem) in broken {
        assert!(
            problem.contains("the listing's schemas took more than 300 ms to compile together"),
            "{name}: {problem}"
        );
    }
    // Served: the client lists what was registered, and calls it.
    let server = proxy
        .add_to(toolshape::Server::builder("proxy", "1"))
        .build()
        .unwrap();
    let url = client_common::serve_over_http(server).await;
    let client = Client::builder().connect_http(&url).await.unwrap();
    let listed = client.list_tools().await.unwrap();
    // As many as at start, or more if a later listing compiled some since.
    assert!(listed.len() >= registered.len(), "{}", listed.len());
    let value: Value = client.call("cheap_0", json!({})).await.unwrap();
    assert_eq!(value, json!({}));
}

#[tokio::test]
async fn the_tools_a_compile_budget_left_out_are_compiled_by_later_listings() {
    const TOOLS: usize = 8;
    // Each listing compiles what 300 ms allow (a few of the patterns in a
    // debug build); the next, a pause later, the next few.
    let proxy = proxy_with_300_ms_budget((0..TOOLS).map(patterned_tool)).await;
    let at_start = proxy.registry().names().len();
    assert!(
        !proxy.broken_tools().is_empty(),
        "the budget left no tool out"
    );

    // A client of the proxy is told as the others become usable.
    let server = proxy
        .add_to(toolshape::Server::builder("proxy", "1"))
        .build()
        .unwrap();
    let url = client_common::serve_over_http(server).await;
    let client = Client::builder()
        .negotiation(Negotiation::Pinned(ProtocolVersion::V2025_11_25))
        .connect_http(&url)
        .await
        .unwrap();
    let mut changes = client.tool_list_changes();
    changes.borrow_and_update();
    let deadline = Instant::now() + Duration::from_secs(120);
    while proxy.registry().names().len() < TOOLS {
        assert!(
            Instant::now() < deadline,
            "still {} of {TOOLS} tools registered ({at_start} at start)",
            proxy.registry().names().len()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let told = tokio::time::timeout(Duration::from_secs(10), changes.changed()).await;
    assert!(
        told.is_ok_and(|told| told.is_ok()),
        "the client was never told"
    );
    let listed = client.list_tools().await.unwrap();
    assert_eq!(listed.len(), TOOLS);
    let last = format!("patterned_{}", TOOLS - 1);
    let value: Value = client.call(&last, json!({})).await.unwrap();
    assert_eq!(
        value,
        json!({"code": "a".repeat(pattern_length(TOOLS - 1))})
    );
}
