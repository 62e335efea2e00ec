//! The server's tools: listed to the end of their pages, cached until the
//! server says they changed, each output schema compiled once.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::Ordering;
use std::sync::{Arc, OnceLock};

use serde_json::{Value, json};
use toolshape_protocol::{ListToolsResult, Tool as WireTool, methods};
use toolshape_schema::{CompiledSchema, SchemaEngine, SchemaError};

use super::Client;
use super::error::ClientError;
use crate::tool::WRAPPED_OUTPUT_META_KEY;

/// FastMCP marks wrapped outputs inside the schema itself.
const FASTMCP_WRAP_MARKER: &str = "x-fastmcp-wrap-result";

/// Most pages one listing follows; a server that never stops paging is refused.
const MAX_PAGES: usize = 10_000;

/// One listed tool.
pub(crate) struct ToolEntry {
    pub(crate) definition: WireTool,
    /// Whether its structured output arrives wrapped as `{"result": value}`.
    pub(crate) wrapped: bool,
    output: OnceLock<Result<Arc<CompiledSchema>, SchemaError>>,
}

impl ToolEntry {
    fn new(definition: WireTool) -> Self {
        let marked_by_meta = definition
            .meta
            .as_ref()
            .is_some_and(|meta| meta.contains_key(WRAPPED_OUTPUT_META_KEY));
        let marked_by_schema = definition
            .output_schema
            .as_ref()
            .and_then(|schema| schema.get(FASTMCP_WRAP_MARKER))
            .is_some_and(|marker| marker == &Value::Bool(true));
        ToolEntry {
            wrapped: marked_by_meta || marked_by_schema,
            definition,
            output: OnceLock::new(),
        }
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

/// The `x-mcp-header` annotations of an input schema's properties as
/// `(property, header suffix)`, or why they are invalid (SEP-2243): a suffix
/// must be a non-empty HTTP token, unique regardless of case, on a property
/// of type string, integer or boolean.
fn param_headers(input_schema: &Value) -> Result<Vec<(String, String)>, String> {
    let Some(properties) = input_schema.get("properties").and_then(Value::as_object) else {
        return Ok(Vec::new());
    };
    let mut mirrored: Vec<(String, String)> = Vec::new();
    for (property, schema) in properties {
        let Some(annotation) = schema.get("x-mcp-header") else {
            continue;
        };
        let suffix = annotation
            .as_str()
            .ok_or_else(|| format!("{property}: x-mcp-header is not a string"))?;
        let token = |b: u8| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b);
        if suffix.is_empty() || !suffix.bytes().all(token) {
            return Err(format!(
                "{property}: x-mcp-header {suffix:?} is not a header name"
            ));
        }
        if !matches!(
            schema.get("type").and_then(Value::as_str),
            Some("string" | "integer" | "boolean")
        ) {
            return Err(format!(
                "{property}: x-mcp-header on a property that is not a string, integer or boolean"
            ));
        }
        if mirrored
            .iter()
            .any(|(_, other)| other.eq_ignore_ascii_case(suffix))
        {
            return Err(format!("{property}: x-mcp-header {suffix:?} is used twice"));
        }
        mirrored.push((property.clone(), suffix.to_owned()));
    }
    Ok(mirrored)
}

/// A complete listing.
pub(crate) struct Listing {
    pub(crate) order: Vec<Arc<ToolEntry>>,
    pub(crate) by_name: HashMap<String, Arc<ToolEntry>>,
}

impl Client {
    /// Every tool the server offers, following pagination to the end. Cached
    /// until the server sends `notifications/tools/list_changed`.
    pub async fn list_tools(&self) -> Result<Vec<WireTool>, ClientError> {
        let listing = self.listing().await?;
        Ok(listing
            .order
            .iter()
            .map(|entry| entry.definition.clone())
            .collect())
    }

    pub(crate) async fn listing(&self) -> Result<Arc<Listing>, ClientError> {
        let mut cache = self.inner.tools.lock().await;
        let changed = self.inner.peer.tools_changed.swap(false, Ordering::AcqRel);
        if let (Some(listing), false) = (cache.as_ref(), changed) {
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
        let mut seen_cursors = HashSet::new();
        let mut headers = HashMap::new();
        for _ in 0..MAX_PAGES {
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
                    self.inner.options.request_timeout,
                    true,
                )
                .await?;
            let page: ListToolsResult = serde_json::from_str(raw.get())
                .map_err(|e| ClientError::invalid(format!("bad tools/list result: {e}")))?;
            for tool in page.tools {
                // A name listed twice: the first definition wins, for the
                // listing, validation and headers alike (they must agree).
                if by_name.contains_key(&tool.name) {
                    tracing::warn!(tool = %tool.name, "ignored a second definition of a listed tool");
                    continue;
                }
                // SEP-2243 (2026-07-28): a tool whose `x-mcp-header`
                // annotations are invalid is left out; the others' annotated
                // arguments are mirrored in headers.
                if self.protocol_version().is_stateless() {
                    match param_headers(&tool.input_schema) {
                        Ok(mirrored) => {
                            headers.insert(tool.name.clone(), mirrored);
                        }
                        Err(reason) => {
                            tracing::warn!(tool = %tool.name, %reason, "left out a tool with an invalid x-mcp-header");
                            continue;
                        }
                    }
                }
                let entry = Arc::new(ToolEntry::new(tool));
                by_name.insert(entry.definition.name.clone(), Arc::clone(&entry));
                order.push(entry);
            }
            match page.next_cursor {
                Some(next) if !seen_cursors.insert(next.clone()) => {
                    return Err(ClientError::invalid("tools/list repeated a cursor"));
                }
                Some(next) => cursor = Some(next),
                None => {
                    *self
                        .inner
                        .peer
                        .param_headers
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner) = headers;
                    return Ok(Listing { order, by_name });
                }
            }
        }
        Err(ClientError::invalid(format!(
            "tools/list did not end within {MAX_PAGES} pages"
        )))
    }
}
