//! The peers' two tools, `add` and `get_weather_data`, as `peers/README.md`
//! defines them, served by toolshape over stdio: the server side of the
//! side-by-side benchmark (`scripts/bench.sh`) and of the interop tests.
//!
//! One stdio peer is served on a single-threaded runtime (no hand-offs
//! between workers). Run: `cargo run --release -p toolshape --example peer_server` (stdio), or
//! with `-- --http 127.0.0.1:PORT` for stateless Streamable HTTP on `/mcp`.

use std::borrow::Cow;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Serialize, Serializer};
use toolshape::{Server, Tool, ToolError};

#[derive(Deserialize, JsonSchema)]
struct AddArgs {
    a: i64,
    b: i64,
}

#[derive(Serialize, JsonSchema)]
struct Sum {
    sum: i64,
}

#[derive(Clone, Copy, Default, PartialEq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[schemars(inline)]
enum Units {
    #[default]
    Celsius,
    Fahrenheit,
}

#[derive(Deserialize, JsonSchema)]
struct WeatherArgs {
    /// City name or zip code
    location: String,
    /// Temperature unit
    #[serde(default)]
    units: Units,
}

/// A JSON number written the way JavaScript writes it (68, not 68.0).
#[derive(Clone, Copy)]
struct Num(f64);

impl Serialize for Num {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if self.0.fract() == 0.0 && self.0.abs() < 9.0e15 {
            serializer.serialize_i64(self.0 as i64)
        } else {
            serializer.serialize_f64(self.0)
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

/// A calendar date, `format: date`.
struct Date(String);

impl Serialize for Date {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0)
    }
}

impl JsonSchema for Date {
    fn inline_schema() -> bool {
        true
    }
    fn schema_name() -> Cow<'static, str> {
        "Date".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({ "type": "string", "format": "date" })
    }
}

#[derive(Serialize, JsonSchema)]
#[schemars(inline)]
struct Wind {
    speed: Num,
    direction: &'static str,
}

#[derive(Serialize, JsonSchema)]
#[schemars(inline)]
struct Current {
    temperature: Num,
    humidity: Num,
    conditions: &'static str,
    wind: Wind,
}

#[derive(Serialize, JsonSchema)]
#[schemars(inline)]
struct Day {
    date: Date,
    high: Num,
    low: Num,
    conditions: &'static str,
}

#[derive(Serialize, JsonSchema)]
#[schemars(inline)]
struct Coordinates {
    latitude: Num,
    longitude: Num,
}

#[derive(Serialize, JsonSchema)]
#[schemars(inline)]
struct Place {
    city: String,
    country: &'static str,
    coordinates: Coordinates,
}

#[derive(Serialize, JsonSchema)]
struct Weather {
    current: Current,
    forecast: Vec<Day>,
    location: Place,
}

const CONDITIONS: [&str; 4] = ["Sunny", "Partly cloudy", "Cloudy", "Rain"];
const DIRECTIONS: [&str; 8] = ["N", "NE", "E", "SE", "S", "SW", "W", "NW"];

/// The deterministic weather every peer computes.
fn weather(args: WeatherArgs) -> Weather {
    let h: u64 = args.location.bytes().map(u64::from).sum();
    let conv = |t: f64| {
        if args.units == Units::Fahrenheit {
            t * 9.0 / 5.0 + 32.0
        } else {
            t
        }
    };
    let at = |n: u64, len: usize| (n % len as u64) as usize;
    Weather {
        current: Current {
            temperature: Num(conv((h % 40) as f64 - 5.0 + 0.5)),
            humidity: Num((h % 100) as f64),
            conditions: CONDITIONS[at(h, 4)],
            wind: Wind {
                speed: Num((h % 30) as f64),
                direction: DIRECTIONS[at(h, 8)],
            },
        },
        forecast: (0..7u64)
            .map(|i| {
                let c = ((h + i) % 35) as f64;
                Day {
                    date: Date(format!("2026-01-0{}", i + 1)),
                    high: Num(conv(c)),
                    low: Num(conv(c - 8.0)),
                    conditions: CONDITIONS[at(h + i, 4)],
                }
            })
            .collect(),
        location: Place {
            city: args.location,
            country: "US",
            coordinates: Coordinates {
                latitude: Num((h % 180) as f64 - 90.0 + 0.25),
                longitude: Num((h % 360) as f64 - 180.0 + 0.5),
            },
        },
    }
}

fn tools() -> Result<Server, toolshape::BuildError> {
    let add = Tool::typed("add", |args: AddArgs| async move {
        let sum = args
            .a
            .checked_add(args.b)
            .ok_or_else(|| ToolError::new("the sum does not fit in a 64-bit integer"))?;
        Ok(Sum { sum })
    })
    .description("Add two integers")
    .read_only();
    let weather = Tool::typed("get_weather_data", |args: WeatherArgs| async move {
        Ok::<_, ToolError>(weather(args))
    })
    .description("Get current weather conditions and forecast data for a location");
    Server::builder("peer-toolshape", "1.0.0")
        .tool(add)
        .tool(weather)
        .build()
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> std::process::ExitCode {
    let server = match tools() {
        Ok(server) => server,
        Err(error) => {
            eprintln!("peer_server: {error}");
            return std::process::ExitCode::FAILURE;
        }
    };
    let args: Vec<String> = std::env::args().collect();
    if let Some(address) = args
        .iter()
        .position(|a| a == "--http")
        .and_then(|i| args.get(i + 1))
    {
        let listener = match tokio::net::TcpListener::bind(address.as_str()).await {
            Ok(listener) => listener,
            Err(error) => {
                eprintln!("peer_server: cannot listen on {address}: {error}");
                return std::process::ExitCode::FAILURE;
            }
        };
        let mut options = toolshape::HttpOptions::default();
        options.sessions = false;
        options.max_concurrent_requests = 1024;
        let shutdown = async {
            let _ = tokio::signal::ctrl_c().await;
        };
        return match server.serve_http(listener, options, shutdown).await {
            Ok(()) => std::process::ExitCode::SUCCESS,
            Err(error) => {
                eprintln!("peer_server: {error}");
                std::process::ExitCode::FAILURE
            }
        };
    }
    match server.serve_stdio().await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("peer_server: {error}");
            std::process::ExitCode::FAILURE
        }
    }
}
