//! MCP tools whose outputs have a shape you can trust.
//!
//! - [`Tool`]: a typed tool is an async function from a `Deserialize + JsonSchema`
//!   input to a `Serialize + JsonSchema` output; both schemas are derived once,
//!   at registration. Unstructured and dynamic tools are supported too.
//! - [`ToolRegistry`]: the tools, shared by every protocol binding; every call
//!   validates its arguments, runs the handler under a time limit with panics
//!   contained, and validates the output before anything is sent.
//! - [`client::Client`]: connects to any MCP server, negotiates a revision,
//!   validates every structured result against the tool's `outputSchema`
//!   (compiled once, untrusted: nothing fetched, bounded, budgeted), and
//!   decodes typed results.
//! - [`Server`]: serves a registry over stdio (newline-delimited JSON), to
//!   peers on every MCP revision from 2024-11-05 to 2026-07-28, shaping each
//!   response for the revision that peer speaks.
//!
//! Schemas are handled by [`toolshape_schema`]; wire types live in
//! [`toolshape_protocol`]; both are re-exported.

pub use toolshape_protocol as protocol;
pub use toolshape_schema as schema;

pub mod client;
mod server;
mod text;
mod tool;
mod transport;

pub use server::{HttpOptions, Server, ServerBuilder, ServerOptions};
pub use tool::{
    BoxFuture, CallOptions, CallOutcome, ErasedHandler, InvalidCursor, LogMessage, Progress,
    RegistrationError, Tool, ToolContext, ToolError, ToolFailure, ToolOutput, ToolRegistry,
    UnknownTool, WRAPPED_OUTPUT_META_KEY,
};
