//! The request-metadata headers of Streamable HTTP, and their value encoding.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;

/// `MCP-Protocol-Version`.
pub(crate) const PROTOCOL_VERSION: &str = "mcp-protocol-version";
/// `Mcp-Session-Id` (2025-03-26 through 2025-11-25).
pub(crate) const SESSION_ID: &str = "mcp-session-id";
/// `Mcp-Method` (2026-07-28).
pub(crate) const METHOD: &str = "mcp-method";
/// `Mcp-Name` (2026-07-28): the tool, prompt or resource a request names.
pub(crate) const NAME: &str = "mcp-name";

const SENTINEL_PREFIX: &str = "=?base64?";
const SENTINEL_SUFFIX: &str = "?=";

/// A value as a header carries it: as is when it is plain visible ASCII,
/// otherwise (or when it looks like the sentinel) `=?base64?…?=`.
pub(crate) fn encode_value(value: &str) -> String {
    let plain = !value.is_empty()
        && value.bytes().all(|b| (0x20..=0x7e).contains(&b))
        && value.trim() == value
        && !(value.starts_with(SENTINEL_PREFIX) && value.ends_with(SENTINEL_SUFFIX));
    if plain {
        value.to_owned()
    } else {
        format!(
            "{SENTINEL_PREFIX}{}{SENTINEL_SUFFIX}",
            STANDARD.encode(value.as_bytes())
        )
    }
}

/// The value a header carries, decoding the Base64 sentinel; `None` when it is malformed.
pub(crate) fn decode_value(header: &str) -> Option<String> {
    match header
        .strip_prefix(SENTINEL_PREFIX)
        .and_then(|rest| rest.strip_suffix(SENTINEL_SUFFIX))
    {
        Some(encoded) => String::from_utf8(STANDARD.decode(encoded).ok()?).ok(),
        None => Some(header.to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_plain_and_encoded_values() {
        for value in [
            "get_weather",
            "café",
            " padded ",
            "=?base64?abc?=",
            "line\nbreak",
        ] {
            assert_eq!(
                decode_value(&encode_value(value)).as_deref(),
                Some(value),
                "{value}"
            );
        }
        assert_eq!(encode_value("get_weather"), "get_weather");
        assert_eq!(encode_value("café"), "=?base64?Y2Fmw6k=?=");
        assert_eq!(decode_value("=?base64?!!?="), None);
    }
}
