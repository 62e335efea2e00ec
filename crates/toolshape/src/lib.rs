//! MCP tools whose outputs have a shape you can trust.
//!
//! - [`Tool`]: a typed tool is an async function from a `Deserialize + JsonSchema`
//!   input to a `Serialize + JsonSchema` output; both schemas are derived once,
//!   at registration. Unstructured and dynamic tools are supported too.
//! - [`ToolRegistry`]: the tools, shared by every protocol binding; every call
//!   validates its arguments, runs the handler with panics contained (under
//!   the time limit a call's `CallOptions::timeout` sets; a server sets it
//!   from `ServerOptions::call_timeout`), and validates the output before
//!   anything is sent.
//! - [`Server`]: serves a registry over stdio (newline-delimited JSON) and
//!   Streamable HTTP (feature `server-http`), to peers on every MCP revision
//!   from 2024-11-05 to 2026-07-28, shaping each response for the revision
//!   that peer speaks.
//! - [`client::Client`]: connects to any MCP server (stdio, or HTTP with
//!   feature `client-http`), negotiates a revision, validates every
//!   structured result against the tool's `outputSchema` (compiled once,
//!   untrusted: nothing fetched, bounded, budgeted), and decodes typed
//!   results.
//!
//! ```no_run
//! use schemars::JsonSchema;
//! use serde::{Deserialize, Serialize};
//! use toolshape::{Server, Tool, ToolError};
//!
//! #[derive(Deserialize, JsonSchema)]
//! struct AddInput { a: i64, b: i64 }
//!
//! #[derive(Serialize, JsonSchema)]
//! struct Sum { sum: i64 }
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let server = Server::builder("example", "1.0.0")
//!     .tool(Tool::typed("add", |input: AddInput| async move {
//!         Ok::<_, ToolError>(Sum { sum: input.a + input.b })
//!     }))
//!     .build()?;
//! server.serve_stdio().await?;
//! # Ok(()) }
//! ```
//!
//! Schemas are handled by [`toolshape_schema`]; wire types live in
//! [`toolshape_protocol`]; both are re-exported.

pub use toolshape_protocol as protocol;
pub use toolshape_schema as schema;

pub mod client;
mod completion;
pub mod prompt;
pub mod resource;
mod server;
pub mod tool;
mod transport;

/// The router type [`Server::router`] builds and [`serve_router`] serves
/// (axum's, re-exported so that a caller needs no axum of its own).
#[cfg(feature = "server-http")]
pub use axum::Router;
pub use prompt::{Prompt, PromptRegistry};
pub use resource::{Resource, ResourceTemplate};
pub use server::{BuildError, ConnectedClient, Server, ServerBuilder, ServerOptions};
#[cfg(feature = "server-http")]
pub use server::{
    HttpOptions, RefusedOrigin, allow_cross_origin, check_host_and_origin, is_body_timeout,
    serve_router,
};
pub use tool::{
    CallOptions, Credentials, RegistrationError, Requirements, Tool, ToolContext, ToolError,
    ToolOutput, ToolRegistry,
};
