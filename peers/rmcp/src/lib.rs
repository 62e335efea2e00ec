//! The peers' tool contract (`../README.md`) on rmcp 3.11.0: `add` and
//! `get_weather_data`, shared by the stdio binary (`mcp-peer-rmcp`) and the
//! Streamable HTTP one (`mcp-peer-rmcp-http`, feature `http`).
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod js_number;
mod tools;
mod weather;

pub use tools::PeerServer;
