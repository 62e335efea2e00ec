//! The OTC / OXP 1.0 wire format: tool ids, definitions, requests, responses.

mod definition;
mod id;
mod request;
mod response;

/// The largest `GET /tools` body: what this crate's client reads, and what
/// its server's inlining of schemas never takes a listing past.
pub(crate) const MAX_LISTING_BYTES: usize = 16 * 1024 * 1024;

pub use definition::{DeclaredOutput, ToolDefinition, output_schema_of};
pub(crate) use definition::{json_len, listing};
pub use id::{InvalidToolId, MAX_TOOL_ID_CHARS, ToolId};
pub use request::{
    CallContext, CallToolRequest, Envelope, MAX_CONTEXT_ITEMS, MAX_ID_CHARS, PROTOCOL_VERSIONS,
    ParsedCall, RequestError, parse_call,
};
pub use response::{
    CallOutput, CallToolResponse, InvalidResponse, MissingRequirementsBody, ServerErrorBody,
    ToolCallError, ValidationErrorBody,
};
