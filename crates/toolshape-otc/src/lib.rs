//! Open Tool Calling (OTC), renamed Open eXecution Protocol (OXP), 1.0 for
//! toolshape tools.
//!
//! - [`OtcServer`] / [`router`] / [`serve`] / [`OtcExt::otc_router`]: every
//!   tool of a [`toolshape::ToolRegistry`] over OTC HTTP (`GET /health`,
//!   `GET /tools`, `POST /tools/call`, `GET /openapi.json`), beside or
//!   instead of MCP, with no change to the tool: input validated before the
//!   tool runs (422), output validated before it is sent, `call_id` as an
//!   idempotency key, API keys or HS256 JWTs ([`auth`]).
//! - [`OtcClient`]: lists and calls any OTC server's tools, validating every
//!   `value` against the tool's `output_schema` (untrusted: bounded, nothing
//!   fetched), with typed calls and opt-in retries.
//! - [`bridge`]: any MCP server as OTC tools, any OTC server as MCP tools.
//!
//! How MCP names map to OTC ids (`Toolkit.Tool@x.y.z`) is told in
//! [`toolshape::tool::identity`].

pub mod auth;
pub mod bridge;
pub mod client;
pub mod openapi;
mod server;
pub mod wire;

pub use auth::OtcAuth;
pub use client::{
    AuthorizationChallenge, ListedTool, OtcCallOptions, OtcClient, OtcClientBuilder, OtcError,
    OtcErrorKind, RetryPolicy,
};
pub use server::{
    OtcExt, OtcOptions, OtcServer, Readiness, new_call_id, router, serve, serve_with,
};
