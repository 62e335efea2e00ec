#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The client against the repository's peers of `peers/` (rmcp, TypeScript SDK 1.x and 2.x,
//! Python SDK, FastMCP), each a child process over pipes, automatically
//! negotiated and pinned to 2025-11-25: both tools listed, typed `add` and
//! `get_weather_data` calls that decode into Rust types and match the values
//! the peers' README defines, and the TypeScript peer's draft-07 schemas
//! honoured.
//!
//! Needs the peers installed (`scripts/setup-peers.sh`) and `TOOLSHAPE_PEERS`
//! set to where they are (`target/peers`). Unset: every test prints a skip
//! notice and passes. Set: a missing peer fails the test.

mod client_common;

use serde::Deserialize;
use serde_json::{Value, json};
use toolshape::client::{Client, Negotiation};
use toolshape::protocol::ProtocolVersion;
use toolshape::schema::{Dialect, SchemaEngine};

use client_common::{PEERS_SKIPPED, PeerKind, connect, installed_peers, options, peer_command};

#[derive(Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
struct Sum {
    sum: i64,
}

#[derive(Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
struct Wind {
    speed: f64,
    direction: String,
}

#[derive(Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
struct Current {
    temperature: f64,
    humidity: f64,
    conditions: String,
    wind: Wind,
}

#[derive(Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
struct Day {
    date: String,
    high: f64,
    low: f64,
    conditions: String,
}

#[derive(Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
struct Coordinates {
    latitude: f64,
    longitude: f64,
}

#[derive(Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
struct Place {
    city: String,
    country: String,
    coordinates: Coordinates,
}

#[derive(Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
struct Weather {
    current: Current,
    forecast: Vec<Day>,
    location: Place,
}

const CONDITIONS: [&str; 4] = ["Sunny", "Partly cloudy", "Cloudy", "Rain"];
const DIRECTIONS: [&str; 8] = ["N", "NE", "E", "SE", "S", "SW", "W", "NW"];

/// The README's deterministic weather, computed independently of any peer.
fn expected_weather(location: &str, fahrenheit: bool) -> Weather {
    let h: u64 = location.bytes().map(u64::from).sum();
    let conv = |t: f64| if fahrenheit { t * 9.0 / 5.0 + 32.0 } else { t };
    let pick = |n: u64, list: &[&str]| list[(n % list.len() as u64) as usize].to_owned();
    Weather {
        current: Current {
            temperature: conv((h % 40) as f64 - 5.0 + 0.5),
            humidity: (h % 100) as f64,
            conditions: pick(h, &CONDITIONS),
            wind: Wind {
                speed: (h % 30) as f64,
                direction: pick(h, &DIRECTIONS),
            },
        },
        forecast: (0..7u64)
            .map(|i| {
                let c = ((h + i) % 35) as f64;
                Day {
                    date: format!("2026-01-0{}", i + 1),
                    high: conv(c),
                    low: conv(c - 8.0),
                    conditions: pick(h + i, &CONDITIONS),
                }
            })
            .collect(),
        location: Place {
            city: location.to_owned(),
            country: "US".into(),
            coordinates: Coordinates {
                latitude: (h % 180) as f64 - 90.0 + 0.25,
                longitude: (h % 360) as f64 - 180.0 + 0.5,
            },
        },
    }
}

#[test]
fn the_expected_weather_is_the_readmes() {
    let paris = expected_weather("Paris", false);
    assert_eq!(paris.current.temperature, 26.5);
    assert_eq!(paris.current.humidity, 11.0);
    assert_eq!(paris.current.conditions, "Rain");
    assert_eq!(paris.current.wind.direction, "NW");
    assert_eq!(paris.forecast.len(), 7);
    assert_eq!(paris.forecast[0].high, 21.0);
    assert_eq!(paris.forecast[6].high, 27.0);
    assert_eq!(paris.forecast[6].low, 19.0);
    assert_eq!(paris.forecast[6].conditions, "Partly cloudy");
    assert_eq!(paris.location.coordinates.latitude, 61.25);
    assert_eq!(paris.location.coordinates.longitude, -28.5);
    let fahrenheit = expected_weather("Paris", true);
    assert_eq!(fahrenheit.current.temperature, 79.7);
    assert_eq!(fahrenheit.forecast[0].high, 69.8);
    assert_eq!(fahrenheit.forecast[0].low, 55.4);
}

fn server_name(peer: PeerKind) -> &'static str {
    match peer {
        PeerKind::Rmcp => "peer-rmcp",
        PeerKind::Ts => "peer-ts",
        PeerKind::Ts2 => "peer-ts2",
        PeerKind::PyMcp => "peer-py-mcp",
        PeerKind::PyFastmcp => "peer-fastmcp",
    }
}

/// Connects to `peer`, or `None` (after the skip notice) when the peers are not configured.
async fn connect_peer(peer: PeerKind, negotiation: Negotiation) -> Option<Client> {
    let Some(installed) = installed_peers() else {
        eprintln!("{PEERS_SKIPPED}");
        return None;
    };
    let command = peer_command(peer, &installed);
    Some(connect(command, negotiation, options()).await)
}

async fn exercise(peer: PeerKind, negotiation: Negotiation) {
    let Some(client) = connect_peer(peer, negotiation).await else {
        return;
    };
    let expected_version = match negotiation {
        Negotiation::Auto if peer.is_modern() => ProtocolVersion::V2026_07_28,
        // The TypeScript peer answers server/discover with -32601: legacy fallback.
        Negotiation::Auto => ProtocolVersion::V2025_11_25,
        Negotiation::Pinned(version) => version,
    };
    assert_eq!(client.protocol_version(), expected_version, "{peer:?}");
    assert_eq!(
        client.server_info().map(|i| i.name.as_str()),
        Some(server_name(peer)),
        "{peer:?}"
    );

    let tools = client.list_tools().await.unwrap();
    let mut names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    names.sort_unstable();
    assert_eq!(names, ["add", "get_weather_data"], "{peer:?}");
    for tool in &tools {
        assert!(tool.output_schema.is_some(), "{peer:?}: {}", tool.name);
    }

    let sum: Sum = client.call("add", json!({"a": 2, "b": 40})).await.unwrap();
    assert_eq!(sum, Sum { sum: 42 }, "{peer:?}");

    let weather: Weather = client
        .call("get_weather_data", json!({"location": "Paris"}))
        .await
        .unwrap();
    assert_eq!(weather, expected_weather("Paris", false), "{peer:?}");
    assert_eq!(weather.current.temperature, 26.5);
    assert_eq!(weather.current.humidity, 11.0);
    assert_eq!(weather.forecast.len(), 7);

    let fahrenheit: Weather = client
        .call(
            "get_weather_data",
            json!({"location": "Paris", "units": "fahrenheit"}),
        )
        .await
        .unwrap();
    assert_eq!(fahrenheit, expected_weather("Paris", true), "{peer:?}");
    assert_eq!(fahrenheit.current.temperature, 79.7);

    // The raw result validated against the listed schema and is an object.
    let raw = client
        .call_tool("add", json!({"a": -5, "b": 3}).as_object().cloned())
        .await
        .unwrap();
    assert!(!raw.is_error);
    assert_eq!(raw.structured, Some(json!({"sum": -2})), "{peer:?}");

    if peer == PeerKind::Ts {
        draft_07_is_honoured(&client, &tools).await;
    }
    client.close(std::time::Duration::from_secs(5)).await;
}

/// The TypeScript peer's schemas are draft-07 with `additionalProperties:
/// false`: they compile with the client's (default, untrusted) engine, the
/// peer's output validates, and the same output with one more property does
/// not — the keyword is enforced, not ignored.
async fn draft_07_is_honoured(client: &Client, tools: &[toolshape::protocol::ToolDefinition]) {
    let weather_tool = tools.iter().find(|t| t.name == "get_weather_data").unwrap();
    let schema = weather_tool.output_schema.as_ref().unwrap();
    assert_eq!(
        schema["$schema"],
        json!("http://json-schema.org/draft-07/schema#")
    );
    assert_eq!(schema["additionalProperties"], json!(false));
    let engine = SchemaEngine::default();
    let compiled = engine.compile(schema).unwrap();
    assert_eq!(compiled.dialect(), Dialect::Draft7);

    let raw = client
        .call_tool(
            "get_weather_data",
            json!({"location": "Tokyo"}).as_object().cloned(),
        )
        .await
        .unwrap();
    let structured = raw.structured.unwrap();
    compiled.validate(&structured).unwrap();

    let mut extra = structured.clone();
    extra["unexpected"] = json!(true);
    let error = compiled.validate(&extra).unwrap_err();
    assert!(
        error
            .violations()
            .iter()
            .any(|v| v.keyword == "additionalProperties"),
        "{error}"
    );
    let mut nested_extra = structured;
    nested_extra["current"]["wind"]["gust"] = Value::from(3);
    let error = compiled.validate(&nested_extra).unwrap_err();
    assert!(
        error
            .violations()
            .iter()
            .any(|v| v.instance_path.starts_with("/current/wind")),
        "{error}"
    );

    // The add schema bounds integers to ±(2^53-1): that is enforced too.
    let add_tool = tools.iter().find(|t| t.name == "add").unwrap();
    let add_schema = engine
        .compile(add_tool.output_schema.as_ref().unwrap())
        .unwrap();
    assert!(add_schema.validate(&json!({"sum": 42})).is_ok());
    assert!(
        add_schema
            .validate(&json!({"sum": 9_007_199_254_740_992_u64}))
            .is_err()
    );
    assert!(
        add_schema
            .validate(&json!({"sum": 42, "extra": 1}))
            .is_err()
    );
}

#[tokio::test]
async fn rmcp_auto() {
    exercise(PeerKind::Rmcp, Negotiation::Auto).await;
}

#[tokio::test]
async fn rmcp_pinned_2025_11_25() {
    exercise(
        PeerKind::Rmcp,
        Negotiation::Pinned(ProtocolVersion::V2025_11_25),
    )
    .await;
}

#[tokio::test]
async fn ts_auto_falls_back_to_2025_11_25() {
    exercise(PeerKind::Ts, Negotiation::Auto).await;
}

#[tokio::test]
async fn ts_pinned_2025_11_25() {
    exercise(
        PeerKind::Ts,
        Negotiation::Pinned(ProtocolVersion::V2025_11_25),
    )
    .await;
}

#[tokio::test]
async fn ts2_auto() {
    exercise(PeerKind::Ts2, Negotiation::Auto).await;
}

#[tokio::test]
async fn ts2_pinned_2025_11_25() {
    exercise(
        PeerKind::Ts2,
        Negotiation::Pinned(ProtocolVersion::V2025_11_25),
    )
    .await;
}

#[tokio::test]
async fn py_mcp_auto() {
    exercise(PeerKind::PyMcp, Negotiation::Auto).await;
}

#[tokio::test]
async fn py_mcp_pinned_2025_11_25() {
    exercise(
        PeerKind::PyMcp,
        Negotiation::Pinned(ProtocolVersion::V2025_11_25),
    )
    .await;
}

#[tokio::test]
async fn py_fastmcp_auto() {
    exercise(PeerKind::PyFastmcp, Negotiation::Auto).await;
}

#[tokio::test]
async fn py_fastmcp_pinned_2025_11_25() {
    exercise(
        PeerKind::PyFastmcp,
        Negotiation::Pinned(ProtocolVersion::V2025_11_25),
    )
    .await;
}
