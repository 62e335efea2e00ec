//! The header rules of 2026-07-28 Streamable HTTP: `MCP-Protocol-Version`,
//! `Mcp-Method`, `Mcp-Name` and `Mcp-Param-*` must match the body; a request
//! that breaks one gets `400` and `-32020` (HeaderMismatch). The
//! `Mcp-Param-*` rules of each tool were worked out at its registration.

use axum::http::HeaderMap;
use toolshape_protocol::http::{decode_value, names};
use toolshape_protocol::text::excerpt;
use toolshape_protocol::{ErrorObject, KnownRequest};

use super::super::request::ParsedRequest;
use super::app::header;

/// The checks 2026-07-28 puts on a request's headers.
pub(crate) fn check_modern_headers(
    headers: &HeaderMap,
    request: &ParsedRequest,
    version: &str,
) -> Result<(), ErrorObject> {
    let mismatch = |what: String| Err(ErrorObject::header_mismatch(what));
    // A header given twice may be read as either value, or as both: one
    // the body must match is refused when repeated (an intermediary may
    // route on the value this check did not see).
    if let Some(name) = repeated(headers) {
        return mismatch(format!("the {name} header is given more than once"));
    }
    // Values beyond visible ASCII travel Base64-encoded: one that is not
    // text is malformed (it read as missing).
    if let Some(name) = not_text(headers) {
        return mismatch(format!(
            "the {name} header is not ASCII text (encode it as Base64)"
        ));
    }
    match header(headers, names::PROTOCOL_VERSION) {
        None => return mismatch("the MCP-Protocol-Version header is missing".into()),
        Some(value) if value != version => {
            return mismatch(format!(
                "MCP-Protocol-Version {:?} does not match the body's {:?}",
                excerpt(value, 40),
                excerpt(version, 40)
            ));
        }
        Some(_) => {}
    }
    let method = request.body.method();
    match header(headers, names::METHOD) {
        None => return mismatch("the Mcp-Method header is missing".into()),
        Some(value) if value != method => {
            return mismatch(format!(
                "Mcp-Method {:?} does not match the body",
                excerpt(value, 100)
            ));
        }
        Some(_) => {}
    }
    // The name a request acts on: a tool, a resource's URI, a prompt.
    let named = match &request.body {
        KnownRequest::CallTool(call) => Some((call.name.as_str(), "tool name")),
        KnownRequest::ReadResource(read) => Some((read.uri.as_str(), "resource URI")),
        KnownRequest::GetPrompt(get) => Some((get.name.as_str(), "prompt name")),
        _ => None,
    };
    if let Some((name, what)) = named {
        match header(headers, names::NAME).map(decode_value) {
            None => return mismatch("the Mcp-Name header is missing".into()),
            Some(None) => return mismatch("the Mcp-Name header is malformed".into()),
            Some(Some(value)) if value != name => {
                return mismatch(format!("Mcp-Name does not match the body's {what}"));
            }
            Some(Some(_)) => {}
        }
    }
    if let KnownRequest::CallTool(call) = &request.body
        && let Some(tool) = &request.tool
    {
        tool.param_headers
            .check(call.arguments.as_ref(), |name| header(headers, name))
            .map_err(ErrorObject::header_mismatch)?;
    }
    Ok(())
}

/// The first header the body must match (`MCP-Protocol-Version`, any
/// `Mcp-*`) that the request gives more than once.
fn repeated(headers: &HeaderMap) -> Option<&str> {
    headers
        .keys()
        .filter(|name| name.as_str().starts_with("mcp-"))
        .find(|name| headers.get_all(*name).iter().nth(1).is_some())
        .map(|name| name.as_str())
}

/// The first `Mcp-*` header whose value is not visible ASCII text.
fn not_text(headers: &HeaderMap) -> Option<&str> {
    headers
        .iter()
        .find(|(name, value)| name.as_str().starts_with("mcp-") && value.to_str().is_err())
        .map(|(name, _)| name.as_str())
}
