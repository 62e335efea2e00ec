//! The answers to each MCP method a tools server handles.

use std::time::Duration;

use serde::Serialize;
use serde_json::value::RawValue;
use toolshape_protocol::lifecycle::InitializeParams;
use toolshape_protocol::meta::keys;
use toolshape_protocol::version::negotiate_initialize_version;
use toolshape_protocol::{
    CacheScope, DiscoverResult, ErrorObject, InitializeResult, ListToolsParams, Meta,
    RequestParams, ResultType, ServerCapabilities,
};

use super::Shared;
use super::session::{SUPPORTED, Session};

/// Parses a request's params, absent meaning `{}`.
pub(crate) fn params<T: serde::de::DeserializeOwned + Default>(
    raw: Option<&RawValue>,
) -> Result<T, ErrorObject> {
    match raw {
        None => Ok(T::default()),
        Some(raw) => serde_json::from_str(raw.get()).map_err(|e| {
            ErrorObject::invalid_params(format!(
                "Invalid params: {}",
                crate::text::excerpt(&e.to_string(), 200)
            ))
        }),
    }
}

fn capabilities() -> ServerCapabilities {
    let mut capabilities = ServerCapabilities::with_tools(Some(true));
    // Tools may send log messages (`ToolContext::log`).
    capabilities.logging = Some(Default::default());
    capabilities
}

/// `initialize`: the highest common handshake revision.
pub(crate) fn initialize(
    shared: &Shared,
    session: &Session,
    raw: Option<&RawValue>,
) -> Result<InitializeResult, ErrorObject> {
    let Some(raw) = raw else {
        return Err(ErrorObject::invalid_params(
            "Invalid params: initialize needs params",
        ));
    };
    let request: InitializeParams = serde_json::from_str(raw.get()).map_err(|e| {
        ErrorObject::invalid_params(format!(
            "Invalid params: {}",
            crate::text::excerpt(&e.to_string(), 200)
        ))
    })?;
    let version = negotiate_initialize_version(&request.protocol_version, &SUPPORTED)
        .map_err(|e| e.to_error_object())?;
    session.set_handshake(version);
    tracing::debug!(client = %request.client_info.name, requested = %request.protocol_version, negotiated = %version, "initialize");
    let mut info = shared.info.clone();
    if !version.has_icons() {
        info.icons = None;
    }
    let mut result = InitializeResult::new(version, capabilities(), info);
    result.instructions = shared.options.instructions.clone();
    Ok(result)
}

/// `server/discover`: every supported revision, for stateless 2026-07-28 clients.
pub(crate) fn discover(
    shared: &Shared,
    session: &Session,
    raw: Option<&RawValue>,
) -> Result<DiscoverResult, ErrorObject> {
    let request: RequestParams = params(raw)?;
    if request
        .meta
        .as_ref()
        .is_some_and(|meta| meta.contains_key(keys::PROTOCOL_VERSION))
    {
        session.revision(request.meta.as_ref())?;
    }
    let ttl = Duration::from_millis(u64::try_from(shared.options.list_ttl_ms).unwrap_or(0));
    let mut result =
        DiscoverResult::new(&SUPPORTED, capabilities(), ttl, shared.options.cache_scope);
    result.instructions = shared.options.instructions.clone();
    let mut meta = Meta::new();
    if let Ok(info) = serde_json::to_value(&shared.info) {
        meta.insert(keys::SERVER_INFO.into(), info);
    }
    result.meta = Some(meta);
    Ok(result)
}

/// A `tools/list` page, written from the definitions serialized at registration.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ToolsPage<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    result_type: Option<ResultType>,
    tools: Vec<&'a RawValue>,
    #[serde(skip_serializing_if = "Option::is_none")]
    next_cursor: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    ttl_ms: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    cache_scope: Option<CacheScope>,
}

/// `tools/list`: one page in name order, shaped for the revision.
pub(crate) fn list_tools(
    shared: &Shared,
    session: &Session,
    raw: Option<&RawValue>,
    out: &mut Vec<u8>,
    id: &toolshape_protocol::RequestId,
) -> Result<(), ErrorObject> {
    let request: ListToolsParams = params(raw)?;
    let version = session.revision(request.meta.as_ref())?;
    let (page, next_cursor) = shared
        .registry
        .page(request.cursor.as_deref(), shared.options.page_size)
        .map_err(|_| ErrorObject::invalid_params("Invalid cursor"))?;
    let modern = version.is_stateless();
    let result = ToolsPage {
        result_type: modern.then_some(ResultType::Complete),
        tools: page.iter().map(|tool| tool.wire(version)).collect(),
        next_cursor,
        ttl_ms: modern.then_some(shared.options.list_ttl_ms.max(0)),
        cache_scope: modern.then_some(shared.options.cache_scope),
    };
    toolshape_protocol::write_result(out, id, &result)
        .map_err(|e| ErrorObject::internal_error(e.to_string()))
}
