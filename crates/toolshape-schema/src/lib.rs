//! Safe, bounded JSON Schema for MCP tool schemas.
//!
//! A [`SchemaEngine`] compiles a schema, whether a server's own or one a remote
//! peer sent, into a reusable [`CompiledSchema`]:
//!
//! - the dialect comes from `$schema` (2020-12 when absent; 2019-09, draft-07,
//!   draft-06 and draft-04 too), or from a custom meta-schema registered with
//!   the engine ahead of time, whose own `$schema` and `$vocabulary` say which
//!   dialect and vocabularies apply; any other `$schema` is an error;
//! - `$ref` resolves within the document, its anchors and embedded resources, and
//!   documents registered ahead of time; any other reference is refused, naming
//!   its URI, and nothing is fetched unless a `NetworkPolicy` (Cargo feature
//!   `network`) allows it;
//! - `format` is asserted by default, or annotated, or treated as each dialect
//!   specifies ([`FormatMode`]);
//! - size, depth, subschema count, worst-case expansion and patterns are checked
//!   against [`Limits`] before anything is compiled, and the schema against its
//!   meta-schema;
//! - validation takes the fast path first and builds a capped, short report only
//!   for a failing instance; untrusted schemas run under a time budget on a
//!   worker thread when their work or recursion is large, and are
//!   quarantined for a minute when they overrun it;
//! - compiled schemas are cached by content.
//!
//! [`mcp`] holds MCP's rules on tool schemas and the wrapping of non-object
//! outputs for older revisions; [`lint`] warns about what other validators
//! mishandle; [`inline`] replaces local references by their targets, for
//! readers that take no `$ref`.
//!
//! # Cargo features
//!
//! - `network` (default): compiles in `NetworkPolicy` and
//!   `SchemaEngineBuilder::network`, which let remote `$ref`s be fetched over
//!   HTTP(S) from an explicit host allowlist (blocking `reqwest`). Even with
//!   it, an engine fetches nothing unless given a policy. Without it, the
//!   engine has no way to reach the network: every remote reference is refused.

mod budget;
mod cache;
mod compiled;
mod cost;
mod dialect;
mod engine;
mod error;
mod format;
pub mod inline;
mod limits;
pub mod lint;
mod listing;
pub mod mcp;
mod meta;
mod metaschema;
#[cfg(feature = "network")]
mod network;
mod precheck;
mod report;
mod resolve;
mod text;
mod walk;

pub use compiled::CompiledSchema;
pub use dialect::Dialect;
pub use engine::{SchemaEngine, SchemaEngineBuilder, Trust};
pub use error::{SchemaError, SchemaErrorKind, ValidationError, ValidationErrorKind, Violation};
pub use format::FormatMode;
pub use limits::Limits;
pub use listing::CompileBudget;
pub use meta::meta_schema_violations;
#[cfg(feature = "network")]
pub use network::NetworkPolicy;
pub use text::InstanceText;
