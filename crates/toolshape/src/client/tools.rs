//! The server's tools: listed to the end of their pages, cached until the
//! server says they changed, each output schema compiled once.

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, OnceLock};
use std::time::Instant;

use serde_json::value::RawValue;
use serde_json::{Map, Value, json};
use toolshape_protocol::http::ParamHeaders;
use toolshape_protocol::meta::keys;
use toolshape_protocol::{ListToolsResult, ToolDefinition, methods};
use toolshape_schema::mcp;
use toolshape_schema::{CompiledSchema, SchemaEngine, SchemaError};

use super::Client;
use super::error::ClientError;
use super::pages::{MAX_LISTING_BYTES, MAX_TOOLS, Pages};

/// FastMCP marks wrapped outputs inside the schema itself.
const FASTMCP_WRAP_MARKER: &str = "x-fastmcp-wrap-result";

/// One listed tool.
pub(crate) struct ToolEntry {
    pub(crate) definition: ToolDefinition,
    /// Whether its structured output arrives wrapped as `{"result": value}`.
    pub(crate) wrapped: bool,
    /// The arguments a call mirrors in `Mcp-Param-*` headers (2026-07-28 HTTP).
    pub(crate) param_headers: ParamHeaders,
    output: OnceLock<Result<Arc<CompiledSchema>, SchemaError>>,
}

impl ToolEntry {
    fn new(definition: ToolDefinition, param_headers: ParamHeaders) -> Self {
        ToolEntry {
            wrapped: is_wrapped(&definition),
            param_headers,
            definition,
            output: OnceLock::new(),
        }
    }

    /// The `Mcp-Param-*` headers a call with `arguments` carries.
    pub(crate) fn headers_for(
        &self,
        arguments: Option<&Map<String, Value>>,
    ) -> Vec<(String, String)> {
        self.param_headers
            .headers_for(arguments)
            .into_iter()
            .map(|(header, value)| (header.to_owned(), value))
            .collect()
    }

    /// The compiled output schema, compiled on first use (off the async threads).
    pub(crate) async fn output_schema(
        &self,
        engine: &SchemaEngine,
    ) -> Option<Result<Arc<CompiledSchema>, SchemaError>> {
        let schema = self.definition.output_schema.as_ref()?;
        if let Some(compiled) = self.output.get() {
            return Some(compiled.clone());
        }
        let engine = engine.clone();
        let owned = schema.clone();
        let compiled = tokio::task::spawn_blocking(move || engine.compile(&owned))
            .await
            .unwrap_or_else(|_| {
                Err(
                    toolshape_schema::SchemaErrorKind::Compile("the compiler thread failed".into())
                        .into(),
                )
            });
        Some(self.output.get_or_init(|| compiled).clone())
    }
}

/// Whether a listed tool's structured output arrives wrapped as
/// `{"result": value}` (marked in its `_meta`, or by FastMCP in its schema).
fn is_wrapped(definition: &ToolDefinition) -> bool {
    let marked_by_meta = definition
        .meta
        .as_ref()
        .is_some_and(|meta| meta.contains_key(keys::WRAPPED_OUTPUT));
    let marked_by_schema = definition
        .output_schema
        .as_ref()
        .and_then(|schema| schema.get(FASTMCP_WRAP_MARKER))
        .is_some_and(|marker| marker == &Value::Bool(true));
    marked_by_meta || marked_by_schema
}

/// The schema of the value a [`Client`] call hands back for this listed
/// tool: its `outputSchema`, or, when the server wraps its output as
/// `{"result": value}` for an older revision, the schema of `value`
/// ([`toolshape_schema::mcp::unwrap_output_schema`]: the root's `$schema`,
/// `$defs` and `definitions` carried, references re-pointed, so they still
/// resolve). `None` when the tool declares no `outputSchema`.
pub fn unwrapped_output_schema(definition: &ToolDefinition) -> Option<Value> {
    let schema = definition.output_schema.as_ref()?;
    let unwrapped = is_wrapped(definition)
        .then(|| mcp::unwrap_output_schema(schema))
        .flatten();
    Some(unwrapped.unwrap_or_else(|| schema.clone()))
}

/// A complete listing.
pub(crate) struct Listing {
    pub(crate) order: Vec<Arc<ToolEntry>>,
    pub(crate) by_name: HashMap<String, Arc<ToolEntry>>,
    /// Until when its pages are all fresh by their `ttlMs` (2026-07-28:
    /// each page's clock starts when it arrives); `None` on the handshake
    /// revisions, whose listing stays until the server says it changed.
    fresh_until: Option<Instant>,
    /// When it was listed (its last page).
    fetched: Instant,
    /// Whether it was listed again for a call refused for its headers.
    relisted: bool,
}

/// The least time between two listings calls refused for their headers
/// (`-32020`) make: a server that refuses every call so costs at most one
/// listing a second, not one a call.
const RELIST_GAP: std::time::Duration = std::time::Duration::from_secs(1);

impl Listing {
    fn is_fresh(&self) -> bool {
        self.fresh_until.is_none_or(|until| Instant::now() < until)
    }
}

/// One listed tool's definition, or `None` (with a warning naming it, when
/// it has a name) when it cannot be read.
fn read_tool(listed: &RawValue) -> Option<ToolDefinition> {
    match serde_json::from_str::<ToolDefinition>(listed.get()) {
        Ok(tool) => Some(tool),
        Err(reason) => {
            /// Only the name: other members are skipped without nesting limit.
            #[derive(serde::Deserialize)]
            struct Named {
                name: String,
            }
            let name = serde_json::from_str::<Named>(listed.get())
                .map(|named| toolshape_protocol::text::excerpt(&named.name, 200))
                .unwrap_or_default();
            tracing::warn!(tool = %name, %reason, "left out a listed tool whose definition could not be read");
            None
        }
    }
}

impl Client {
    /// Every tool the server offers, following pagination to the end. Cached
    /// until the server sends `notifications/tools/list_changed`, and on
    /// 2026-07-28 for as long as the pages' `ttlMs` says (absent or `0`:
    /// listed again each time). Calls use the listing as cached, stale or
    /// not, to validate their results.
    pub async fn list_tools(&self) -> Result<Vec<ToolDefinition>, ClientError> {
        let listing = self.listing_fresh(true).await?;
        Ok(listing
            .order
            .iter()
            .map(|entry| entry.definition.clone())
            .collect())
    }

    pub(crate) async fn listing(&self) -> Result<Arc<Listing>, ClientError> {
        self.listing_fresh(false).await
    }

    /// The tool `name` as listed again after a call made with `used` was
    /// refused for its headers (`-32020`: the tool may have changed which
    /// arguments travel in headers since it was listed). A listing made
    /// since `used`, or made so within [`RELIST_GAP`], is taken as it is
    /// (unless the server said its tools changed since); `None` when the
    /// listing fails or no longer has the tool.
    pub(crate) async fn relisted(&self, name: &str, used: &Arc<Listing>) -> Option<Arc<ToolEntry>> {
        let mut cache = self.inner.tools.lock().await;
        // A change the server announced is listed whatever the gap (it is
        // the likeliest reason for the refusal).
        let changed = self.inner.peer.tools_changed.swap(false, Ordering::AcqRel);
        let listing = match cache.as_ref() {
            Some(current)
                if !changed
                    && (!Arc::ptr_eq(current, used)
                        || (current.relisted && current.fetched.elapsed() < RELIST_GAP)) =>
            {
                Arc::clone(current)
            }
            _ => {
                let mut listing = self.fetch_listing().await.ok()?;
                listing.relisted = true;
                let listing = Arc::new(listing);
                *cache = Some(Arc::clone(&listing));
                listing
            }
        };
        listing.by_name.get(name).cloned()
    }

    /// The cached listing, listed again when the server said it changed,
    /// or, for `fresh`, when its `ttlMs` has run out.
    async fn listing_fresh(&self, fresh: bool) -> Result<Arc<Listing>, ClientError> {
        let asked = Instant::now();
        let mut cache = self.inner.tools.lock().await;
        let changed = self.inner.peer.tools_changed.swap(false, Ordering::AcqRel);
        // A listing made while this caller waited for the lock is fresh to
        // it, whatever its `ttlMs` (callers at once share one listing).
        if let (Some(listing), false) = (cache.as_ref(), changed)
            && (!fresh || listing.is_fresh() || listing.fetched >= asked)
        {
            return Ok(Arc::clone(listing));
        }
        let listing = Arc::new(self.fetch_listing().await?);
        *cache = Some(Arc::clone(&listing));
        Ok(listing)
    }

    async fn fetch_listing(&self) -> Result<Listing, ClientError> {
        let mut order = Vec::new();
        let mut by_name = HashMap::new();
        let mut cursor: Option<String> = None;
        let mut fresh_until: Option<Instant> = None;
        let mut pages = Pages::new(
            methods::TOOLS_LIST,
            MAX_TOOLS,
            MAX_LISTING_BYTES.max(self.inner.options.max_message_bytes),
        );
        loop {
            let mut params = json!({});
            if let Some(cursor) = &cursor {
                params["cursor"] = json!(cursor);
            }
            if let Some(meta) = self.request_meta() {
                params["_meta"] = Value::Object(meta);
            }
            let peer = &self.inner.peer;
            let raw = peer
                .request(
                    peer.next_id(),
                    methods::TOOLS_LIST,
                    &params,
                    self.route(),
                    self.inner.options.request_timeout,
                    true,
                )
                .await?;
            pages.received(raw.text().len())?;
            // Each tool read on its own: one the client cannot read (nested
            // past the parser's depth, or not a tool definition) is left out,
            // not the listing with it.
            let page: ListToolsResult<Box<RawValue>> = raw.parse(methods::TOOLS_LIST)?;
            pages.listed(page.tools.len())?;
            // A `ttlMs` past what a clock can count is no limit at all.
            if self.protocol_version().is_stateless()
                && let Some(until) = Instant::now().checked_add(page.ttl())
            {
                fresh_until = Some(fresh_until.map_or(until, |earlier| earlier.min(until)));
            }
            for listed in page.tools {
                let Some(tool) = read_tool(&listed) else {
                    continue;
                };
                // A name listed twice: the first definition wins, for the
                // listing, validation and headers alike (they must agree).
                if by_name.contains_key(&tool.name) {
                    tracing::warn!(tool = %tool.name, "ignored a second definition of a listed tool");
                    continue;
                }
                // SEP-2243 (2026-07-28): a tool whose `x-mcp-header`
                // annotations are invalid is left out; the others' annotated
                // arguments are mirrored in headers.
                let param_headers = if self.protocol_version().is_stateless() {
                    match ParamHeaders::from_input_schema(&tool.input_schema) {
                        Ok(rules) => rules,
                        Err(reason) => {
                            tracing::warn!(tool = %tool.name, %reason, "left out a tool with an invalid x-mcp-header");
                            continue;
                        }
                    }
                } else {
                    ParamHeaders::default()
                };
                let entry = Arc::new(ToolEntry::new(tool, param_headers));
                by_name.insert(entry.definition.name.clone(), Arc::clone(&entry));
                order.push(entry);
            }
            cursor = pages.next(page.next_cursor)?;
            if cursor.is_none() {
                return Ok(Listing {
                    order,
                    by_name,
                    fresh_until,
                    fetched: Instant::now(),
                    relisted: false,
                });
            }
        }
    }
}
