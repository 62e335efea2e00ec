//! The two tools on an rmcp `ServerHandler`, with output schemas that
//! schemars derives from the `Json<T>` return types.

use std::sync::Arc;

use rmcp::{
    Json, ServerHandler,
    handler::server::{router::tool::ToolRouter, wrapper::Parameters},
    schemars::{self, JsonSchema},
    tool, tool_handler, tool_router,
};
use serde::{Deserialize, Serialize};

use crate::weather::{Units, Weather, weather};

// `add`'s arguments (`//`: schemars publishes doc comments as descriptions).
#[derive(Debug, Deserialize, JsonSchema)]
pub struct AddArgs {
    a: i64,
    b: i64,
}

// `add`'s output.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Sum {
    sum: i64,
}

// `get_weather_data`'s arguments; the field docs are the contract's descriptions.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct WeatherArgs {
    /// City name or zip code
    location: String,
    /// Temperature unit
    #[serde(default)]
    units: Units,
}

/// The peer: its tool router is built once and shared by every clone (the
/// HTTP service clones one server per request).
#[derive(Clone)]
pub struct PeerServer {
    tool_router: Arc<ToolRouter<Self>>,
}

impl Default for PeerServer {
    fn default() -> Self {
        Self::new()
    }
}

#[tool_router]
impl PeerServer {
    /// A server with both tools.
    #[must_use]
    pub fn new() -> Self {
        Self {
            tool_router: Arc::new(Self::tool_router()),
        }
    }

    /// Add two integers
    #[tool(annotations(read_only_hint = true, idempotent_hint = true, open_world_hint = false))]
    async fn add(&self, Parameters(args): Parameters<AddArgs>) -> Result<Json<Sum>, String> {
        // A sum beyond i64 is a tool error (isError), never a wrapped value or a panic.
        match args.a.checked_add(args.b) {
            Some(sum) => Ok(Json(Sum { sum })),
            None => Err(format!(
                "{} + {} does not fit in a 64-bit integer",
                args.a, args.b
            )),
        }
    }

    /// Get current weather conditions and forecast data for a location
    #[tool]
    async fn get_weather_data(&self, Parameters(args): Parameters<WeatherArgs>) -> Json<Weather> {
        Json(weather(&args.location, args.units))
    }
}

#[tool_handler(router = self.tool_router, name = "peer-rmcp", version = "1.0.0")]
impl ServerHandler for PeerServer {}
