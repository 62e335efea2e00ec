//! The answers to each MCP method a tools server handles.

use serde_json::value::RawValue;
use toolshape_protocol::capabilities::{PromptsCapability, ResourcesCapability};
use toolshape_protocol::lifecycle::InitializeParams;
use toolshape_protocol::lists::{ListPromptsResult, ListResourceTemplatesResult};
use toolshape_protocol::meta::keys;
use toolshape_protocol::version::negotiate_initialize_version;
use toolshape_protocol::{
    DiscoverResult, ErrorObject, InitializeResult, ListToolsParams, ListToolsResult, Meta,
    ProtocolVersion, RequestId, ServerCapabilities,
};

use super::Shared;
use super::session::{SUPPORTED, Session};

/// What this server offers: tools always; resources, prompts and
/// completions when it has some.
fn capabilities(shared: &Shared) -> ServerCapabilities {
    let mut capabilities = ServerCapabilities::with_tools(Some(true));
    // Tools may send log messages (`ToolContext::log`).
    capabilities.logging = Some(Default::default());
    if !shared.resources.is_empty() {
        let mut resources = ResourcesCapability::default();
        resources.subscribe = Some(true);
        // Declared when the builder was given a place to announce them.
        resources.list_changed = shared.announces_resource_changes.then_some(true);
        capabilities.resources = Some(resources);
    }
    if shared.offers_prompts() {
        let mut prompts = PromptsCapability::default();
        prompts.list_changed = shared.announces_prompt_changes.then_some(true);
        capabilities.prompts = Some(prompts);
    }
    if shared.offers_prompts() || !shared.resources.is_empty() {
        capabilities.completions = Some(Default::default());
    }
    capabilities
}

/// `initialize`: the highest common handshake revision.
pub(crate) fn initialize(
    shared: &Shared,
    session: &Session,
    request: &InitializeParams,
) -> Result<InitializeResult, ErrorObject> {
    let version = negotiate_initialize_version(&request.protocol_version, &SUPPORTED)
        .map_err(|e| e.to_error_object())?;
    session.set_handshake(version);
    session.set_client_capabilities(request.capabilities.clone().for_revision(version));
    tracing::debug!(client = %request.client_info.name, requested = %request.protocol_version, negotiated = %version, "initialize");
    let mut info = shared.info.clone();
    if !version.has_icons() {
        info.icons = None;
    }
    let mut result = InitializeResult::new(version, capabilities(shared), info);
    result.instructions = shared.options.instructions.clone();
    Ok(result)
}

/// `server/discover`: every supported revision, for stateless 2026-07-28 clients.
pub(crate) fn discover(shared: &Shared) -> DiscoverResult {
    discover_of(shared, &SUPPORTED)
}

/// `server/discover` naming `versions`: those an endpoint serves (a
/// stateless-only HTTP endpoint, the stateless ones alone).
pub(crate) fn discover_of(shared: &Shared, versions: &[ProtocolVersion]) -> DiscoverResult {
    let mut result = DiscoverResult::new(
        versions,
        capabilities(shared),
        shared.options.list_ttl,
        shared.options.cache_scope,
    );
    result.instructions = shared.options.instructions.clone();
    let mut meta = Meta::new();
    if let Ok(info) = serde_json::to_value(&shared.info) {
        meta.insert(keys::SERVER_INFO.into(), info);
    }
    result.meta = Some(meta);
    result
}

/// `tools/list`: one page in name order, written from the definitions
/// serialized at registration, shaped for the revision.
pub(crate) fn list_tools(
    shared: &Shared,
    version: ProtocolVersion,
    request: &ListToolsParams,
    id: &RequestId,
) -> Result<Vec<u8>, ErrorObject> {
    let (page, next_cursor) = shared
        .registry
        .page(request.cursor.as_deref(), shared.options.page_size)
        .map_err(|_| ErrorObject::invalid_params("the cursor is not one this server gave"))?;
    let tools: Vec<&RawValue> = page.iter().map(|tool| tool.wire(version)).collect();
    let mut result = ListToolsResult::new(tools).with_next_cursor(next_cursor);
    if version.is_stateless() {
        result = result.with_cache_hints(shared.options.list_ttl, shared.options.cache_scope);
    }
    let mut out = Vec::with_capacity(4096);
    toolshape_protocol::write_result(&mut out, id, &result)
        .map_err(|e| ErrorObject::internal_error(e.to_string()))?;
    Ok(out)
}

fn serialized<R: serde::Serialize>(id: &RequestId, result: &R) -> Result<Vec<u8>, ErrorObject> {
    let mut out = Vec::with_capacity(1024);
    toolshape_protocol::write_result(&mut out, id, result)
        .map_err(|e| ErrorObject::internal_error(e.to_string()))?;
    Ok(out)
}

/// `resources/templates/list`: one page of the templates.
pub(crate) fn list_templates(
    shared: &Shared,
    version: ProtocolVersion,
    request: &ListToolsParams,
    id: &RequestId,
) -> Result<Vec<u8>, ErrorObject> {
    let (page, next) = shared
        .resources
        .template_page(request.cursor.as_deref(), shared.options.page_size)?;
    let mut result = ListResourceTemplatesResult::new(page).with_next_cursor(next);
    if version.is_stateless() {
        result = result.with_cache_hints(shared.options.list_ttl, shared.options.cache_scope);
    }
    serialized(id, &result)
}

/// `prompts/list`: one page of the prompts, in name order.
pub(crate) fn list_prompts(
    shared: &Shared,
    version: ProtocolVersion,
    request: &ListToolsParams,
    id: &RequestId,
) -> Result<Vec<u8>, ErrorObject> {
    let (page, next) = shared
        .prompts
        .page(request.cursor.as_deref(), shared.options.page_size)?;
    let mut result = ListPromptsResult::new(page).with_next_cursor(next);
    if version.is_stateless() {
        result = result.with_cache_hints(shared.options.list_ttl, shared.options.cache_scope);
    }
    serialized(id, &result)
}
