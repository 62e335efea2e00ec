//! The deterministic weather value of the contract (`../README.md`) and the
//! types whose derived schema is the structured-output spec example's.
//! Their comments are `//`, not `///`: schemars would publish doc comments
//! as `description`s, which the contract's schemas do not have.

use rmcp::schemars::{self, JsonSchema};
use serde::{Deserialize, Serialize};

use crate::js_number::JsNumber;

const CONDITIONS: [&str; 4] = ["Sunny", "Partly cloudy", "Cloudy", "Rain"];
const DIRECTIONS: [&str; 8] = ["N", "NE", "E", "SE", "S", "SW", "W", "NW"];

// The temperature unit a caller asks for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[schemars(inline)]
pub enum Units {
    // Degrees Celsius (the default).
    #[default]
    Celsius,
    // Degrees Fahrenheit.
    Fahrenheit,
}

// Wind speed and direction.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(inline)]
pub struct Wind {
    speed: JsNumber,
    direction: String,
}

// The conditions now.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(inline)]
pub struct Current {
    temperature: JsNumber,
    humidity: JsNumber,
    conditions: String,
    wind: Wind,
}

// One day of the forecast.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(inline)]
pub struct ForecastDay {
    #[schemars(extend("format" = "date"))]
    date: String,
    high: JsNumber,
    low: JsNumber,
    conditions: String,
}

// Latitude and longitude.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(inline)]
pub struct Coordinates {
    latitude: JsNumber,
    longitude: JsNumber,
}

// Where the weather is.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(inline)]
pub struct Place {
    city: String,
    country: String,
    coordinates: Coordinates,
}

// The tool's output: current conditions, a 7-day forecast and the place.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Weather {
    current: Current,
    forecast: Vec<ForecastDay>,
    location: Place,
}

fn pick(list: &[&str], n: u64) -> String {
    // `n % len` is below `len`, a small array length: the cast cannot truncate.
    #[allow(clippy::cast_possible_truncation)]
    let index = (n % list.len() as u64) as usize;
    list[index].to_owned()
}

/// A small integer (a remainder below 360) as an exact `f64`.
#[allow(clippy::cast_precision_loss)]
fn small(n: u64) -> f64 {
    n as f64
}

/// The contract's weather for `location` in `units`.
pub fn weather(location: &str, units: Units) -> Weather {
    let h: u64 = location.bytes().map(u64::from).sum();
    let convert = |celsius: f64| match units {
        Units::Celsius => JsNumber(celsius),
        Units::Fahrenheit => JsNumber(celsius * 9.0 / 5.0 + 32.0),
    };
    let forecast = (0..7u64)
        .map(|i| {
            let high = small((h + i) % 35);
            ForecastDay {
                date: format!("2026-01-0{}", i + 1),
                high: convert(high),
                low: convert(high - 8.0),
                conditions: pick(&CONDITIONS, h + i),
            }
        })
        .collect();
    Weather {
        current: Current {
            temperature: convert(small(h % 40) - 5.0 + 0.5),
            humidity: JsNumber(small(h % 100)),
            conditions: pick(&CONDITIONS, h),
            wind: Wind {
                speed: JsNumber(small(h % 30)),
                direction: pick(&DIRECTIONS, h),
            },
        },
        forecast,
        location: Place {
            city: location.to_owned(),
            country: "US".to_owned(),
            coordinates: Coordinates {
                latitude: JsNumber(small(h % 180) - 90.0 + 0.25),
                longitude: JsNumber(small(h % 360) - 180.0 + 0.5),
            },
        },
    }
}
