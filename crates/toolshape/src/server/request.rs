//! A request, parsed once: its method and params typed, its `_meta`'s
//! protocol fields read. Every later step works on this.

use std::sync::Arc;

use toolshape_protocol::meta::RequestMeta;
use toolshape_protocol::{DispatchError, ErrorObject, KnownRequest, Request, RequestId};

use crate::tool::{RegisteredTool, ToolRegistry};

/// A request with a method this server knows, its params parsed.
#[derive(Debug)]
pub(crate) struct ParsedRequest {
    pub(crate) id: RequestId,
    pub(crate) body: KnownRequest,
    /// The protocol fields of `_meta` (version, client capabilities, ...).
    pub(crate) meta: RequestMeta,
    /// For `tools/call`, the tool it names, looked up once: the header
    /// checks and the call itself use this one.
    pub(crate) tool: Option<Arc<RegisteredTool>>,
}

/// Why a request could not be parsed: the error to answer it with.
#[derive(Debug)]
#[cfg_attr(not(feature = "server-http"), allow(dead_code))]
pub(crate) struct Unparsable {
    pub(crate) id: RequestId,
    pub(crate) error: ErrorObject,
    /// The method is unknown (HTTP answers it with 404).
    pub(crate) unknown_method: bool,
    /// The method, as sent.
    pub(crate) method: String,
    /// The protocol version `_meta` names, when it can be read (only this
    /// error path reads `_meta` on its own).
    pub(crate) meta_version: Option<String>,
}

impl ParsedRequest {
    /// Parses `request`'s params for its method and the protocol fields of
    /// its `_meta`, and looks up the tool a `tools/call` names.
    pub(crate) fn parse(
        request: Request,
        registry: &ToolRegistry,
    ) -> Result<ParsedRequest, Box<Unparsable>> {
        let refuse = |request: Request, error: ErrorObject, unknown_method: bool| {
            let meta_version = request
                .request_meta()
                .ok()
                .and_then(|meta| meta.protocol_version);
            Box::new(Unparsable {
                id: request.id,
                error,
                unknown_method,
                method: request.method,
                meta_version,
            })
        };
        let body = match KnownRequest::from_request(&request) {
            Ok(body) => body,
            Err(error) => {
                let unknown_method = matches!(error, DispatchError::UnknownMethod(_));
                return Err(refuse(request, error.to_error_object(), unknown_method));
            }
        };
        let meta = match body.meta().map(RequestMeta::from_meta).transpose() {
            Ok(meta) => meta.unwrap_or_default(),
            Err(error) => return Err(refuse(request, error.to_error_object(), false)),
        };
        let id = request.id;
        let tool = match &body {
            KnownRequest::CallTool(call) => registry.get(&call.name),
            _ => None,
        };
        Ok(ParsedRequest {
            id,
            body,
            meta,
            tool,
        })
    }
}
