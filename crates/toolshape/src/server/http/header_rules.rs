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
    if let KnownRequest::CallTool(call) = &request.body {
        match header(headers, names::NAME).map(decode_value) {
            None => return mismatch("the Mcp-Name header is missing".into()),
            Some(None) => return mismatch("the Mcp-Name header is malformed".into()),
            Some(Some(value)) if value != call.name => {
                return mismatch("Mcp-Name does not match the body's tool name".into());
            }
            Some(Some(_)) => {}
        }
        if let Some(tool) = &request.tool {
            tool.param_headers
                .check(call.arguments.as_ref(), |name| header(headers, name))
                .map_err(ErrorObject::header_mismatch)?;
        }
    }
    Ok(())
}
