//! MCP peer on rmcp 3.9.0: tools `add` and `get_weather_data` (see
//! ../../shared/peers/README.md) over rmcp's Streamable HTTP server on axum,
//! stateless with JSON responses, at `http://ADDR/mcp`.
//!
//!     mcp-peer-rmcp-http 127.0.0.1:PORT
//!
//! The tool code is `../shared/peers/rmcp/src/main.rs`'s, unchanged; only the
//! transport (and the router being shared across requests) differs.
use std::borrow::Cow;
use std::sync::Arc;

use rmcp::{
    Json, ServerHandler,
    handler::server::{router::tool::ToolRouter, wrapper::Parameters},
    schemars::{self, JsonSchema, Schema, SchemaGenerator, json_schema},
    tool, tool_handler, tool_router,
    transport::streamable_http_server::{
        StreamableHttpServerConfig, StreamableHttpService, session::never::NeverSessionManager,
    },
};
use serde::{Deserialize, Serialize, Serializer};

#[derive(Deserialize, JsonSchema)]
pub struct AddArgs {
    pub a: i64,
    pub b: i64,
}

#[derive(Serialize, JsonSchema)]
pub struct Sum {
    pub sum: i64,
}

#[derive(Clone, Copy, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[schemars(inline)]
pub enum Units {
    #[default]
    Celsius,
    Fahrenheit,
}

#[derive(Deserialize, JsonSchema)]
pub struct WeatherArgs {
    /// City name or zip code
    pub location: String,
    /// Temperature unit
    #[serde(default)]
    pub units: Units,
}

/// A JSON number written like JavaScript writes it: integral values without a fraction (68, not 68.0).
#[derive(Clone, Copy)]
pub struct Num(pub f64);

impl Serialize for Num {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if self.0.fract() == 0.0 && self.0.abs() < 9.0e15 {
            s.serialize_i64(self.0 as i64)
        } else {
            s.serialize_f64(self.0)
        }
    }
}

impl JsonSchema for Num {
    fn inline_schema() -> bool {
        true
    }
    fn schema_name() -> Cow<'static, str> {
        "Num".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({ "type": "number" })
    }
}

#[derive(Serialize, JsonSchema)]
#[schemars(inline)]
pub struct Wind {
    pub speed: Num,
    pub direction: String,
}

#[derive(Serialize, JsonSchema)]
#[schemars(inline)]
pub struct Current {
    pub temperature: Num,
    pub humidity: Num,
    pub conditions: String,
    pub wind: Wind,
}

#[derive(Serialize, JsonSchema)]
#[schemars(inline)]
pub struct Day {
    #[schemars(extend("format" = "date"))]
    pub date: String,
    pub high: Num,
    pub low: Num,
    pub conditions: String,
}

#[derive(Serialize, JsonSchema)]
#[schemars(inline)]
pub struct Coordinates {
    pub latitude: Num,
    pub longitude: Num,
}

#[derive(Serialize, JsonSchema)]
#[schemars(inline)]
pub struct Location {
    pub city: String,
    pub country: String,
    pub coordinates: Coordinates,
}

#[derive(Serialize, JsonSchema)]
pub struct Weather {
    pub current: Current,
    pub forecast: Vec<Day>,
    pub location: Location,
}

const CONDITIONS: [&str; 4] = ["Sunny", "Partly cloudy", "Cloudy", "Rain"];
const DIRECTIONS: [&str; 8] = ["N", "NE", "E", "SE", "S", "SW", "W", "NW"];

/// The deterministic weather rule of ../README.md.
pub fn weather(location: &str, units: Units) -> Weather {
    let h: u64 = location.bytes().map(u64::from).sum();
    let conv = |c: f64| if units == Units::Fahrenheit { c * 9.0 / 5.0 + 32.0 } else { c };
    let forecast = (0..7u64)
        .map(|i| {
            let high = ((h + i) % 35) as f64;
            Day {
                date: format!("2026-01-0{}", i + 1),
                high: Num(conv(high)),
                low: Num(conv(high - 8.0)),
                conditions: CONDITIONS[((h + i) % 4) as usize].into(),
            }
        })
        .collect();
    Weather {
        current: Current {
            temperature: Num(conv((h % 40) as f64 - 5.0 + 0.5)),
            humidity: Num((h % 100) as f64),
            conditions: CONDITIONS[(h % 4) as usize].into(),
            wind: Wind { speed: Num((h % 30) as f64), direction: DIRECTIONS[(h % 8) as usize].into() },
        },
        forecast,
        location: Location {
            city: location.into(),
            country: "US".into(),
            coordinates: Coordinates {
                latitude: Num((h % 180) as f64 - 90.0 + 0.25),
                longitude: Num((h % 360) as f64 - 180.0 + 0.5),
            },
        },
    }
}

#[derive(Clone)]
pub struct Server {
    // Shared: the HTTP service makes one `Server` per request (by cloning this one).
    tool_router: Arc<ToolRouter<Self>>,
}

#[tool_router]
impl Server {
    pub fn new() -> Self {
        Self { tool_router: Arc::new(Self::tool_router()) }
    }

    /// Add two integers
    #[tool(annotations(read_only_hint = true, idempotent_hint = true, open_world_hint = false))]
    async fn add(&self, Parameters(AddArgs { a, b }): Parameters<AddArgs>) -> Json<Sum> {
        Json(Sum { sum: a + b })
    }

    /// Get current weather conditions and forecast data for a location
    #[tool]
    async fn get_weather_data(&self, Parameters(args): Parameters<WeatherArgs>) -> Json<Weather> {
        Json(weather(&args.location, args.units))
    }
}

// The router is built once and stored; the default macro form would rebuild it per request.
#[tool_handler(router = self.tool_router, name = "peer-rmcp", version = "1.0.0")]
impl ServerHandler for Server {}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let addr = std::env::args().nth(1).ok_or("usage: mcp-peer-rmcp-http HOST:PORT")?;
    let listener = tokio::net::TcpListener::bind(&addr).await?;
    // Stateless (no Mcp-Session-Id, no handshake state kept: 2026-07-28 requests
    // are always stateless, and legacy ones are too with legacy_session_mode off),
    // a plain application/json body for request-response calls instead of an SSE
    // stream, no SSE keep-alive pings. Host checking stays on (loopback defaults).
    let config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(false)
        .with_json_response(true)
        .with_sse_keep_alive(None);
    let server = Server::new();
    let service = StreamableHttpService::new(
        move || Ok(server.clone()),
        Arc::new(NeverSessionManager::default()),
        config,
    );
    let router = axum::Router::new().nest_service("/mcp", service);
    eprintln!("mcp-peer-rmcp-http listening on http://{}/mcp", listener.local_addr()?);
    axum::serve(listener, router)
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await?;
    Ok(())
}
