//! Bridges, each a thin adapter over the registry: any MCP server's tools
//! as a [`ToolRegistry`] (then served over OTC with [`crate::router`]), and
//! any OTC server's tools as a [`ToolRegistry`] (then served over MCP with
//! [`toolshape::Server`]). Each bridged tool forwards its calls; both ends
//! validate (input before the call, output before it is handed on).

mod mcp_to_otc;
mod otc_to_mcp;

use toolshape::{RegistrationError, ToolRegistry};

pub use mcp_to_otc::{McpBridgeOptions, otc_identity, registry_from_mcp};
pub use otc_to_mcp::{OtcBridgeOptions, registry_from_otc};

/// A bridged registry, and the tools that could not be bridged (each with
/// its reason: a schema that does not compile, a name that cannot map).
#[derive(Debug)]
pub struct Bridged {
    /// The tools, each forwarding to the server.
    pub registry: ToolRegistry,
    /// The tools left out.
    pub skipped: Vec<RegistrationError>,
}

fn register_listing(
    registry: &ToolRegistry,
    tools: Vec<toolshape::Tool>,
) -> Vec<RegistrationError> {
    // Together: a peer's schemas draw on one compile budget for the listing.
    let failures = registry.replace_all(tools);
    failures
        .into_iter()
        .map(|(name, error)| {
            tracing::warn!(tool = %name, %error, "left out a tool that cannot be bridged");
            error
        })
        .collect()
}
