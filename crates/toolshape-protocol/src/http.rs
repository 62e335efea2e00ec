//! The headers of Streamable HTTP, and the rules 2026-07-28 puts on them.
//!
//! A 2026-07-28 request repeats parts of its body in headers, so that load
//! balancers and gateways can route it without reading the body:
//! `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name` (the tool, prompt or
//! resource it names) and, by SEP-2243, one `Mcp-Param-{Name}` header per
//! argument whose input-schema property carries `x-mcp-header: Name`. A
//! value that is not plain visible ASCII travels Base64-encoded between
//! `=?base64?` and `?=`. The server refuses a request whose headers do not
//! match its body (`-32020`, HTTP 400).
//!
//! The same code writes these headers in a client and checks them in a
//! server: [`ParamHeaders`] is computed once per tool from its input schema.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;

/// Header names, in the lower case HTTP/2 requires.
pub mod names {
    /// `MCP-Protocol-Version`.
    pub const PROTOCOL_VERSION: &str = "mcp-protocol-version";
    /// `Mcp-Session-Id` (2025-03-26 through 2025-11-25).
    pub const SESSION_ID: &str = "mcp-session-id";
    /// `Mcp-Method` (2026-07-28).
    pub const METHOD: &str = "mcp-method";
    /// `Mcp-Name` (2026-07-28): the tool, prompt or resource a request names.
    pub const NAME: &str = "mcp-name";
    /// The prefix of `Mcp-Param-{Name}` (2026-07-28, SEP-2243).
    pub const PARAM_PREFIX: &str = "mcp-param-";
    /// `Last-Event-ID`: where a resumed event stream picks up.
    pub const LAST_EVENT_ID: &str = "last-event-id";
}

/// The input-schema keyword that mirrors an argument in a header.
pub const HEADER_KEYWORD: &str = "x-mcp-header";

const SENTINEL_PREFIX: &str = "=?base64?";
const SENTINEL_SUFFIX: &str = "?=";

/// A value as a header carries it: as is when it is plain visible ASCII
/// without surrounding spaces, otherwise (or when it looks like the
/// sentinel) `=?base64?…?=`.
pub fn encode_value(value: &str) -> String {
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

/// The value a header carries, the Base64 sentinel decoded; `None` when the
/// sentinel holds no valid Base64 of UTF-8 text.
pub fn decode_value(header: &str) -> Option<String> {
    match header
        .strip_prefix(SENTINEL_PREFIX)
        .and_then(|rest| rest.strip_suffix(SENTINEL_SUFFIX))
    {
        Some(encoded) => String::from_utf8(STANDARD.decode(encoded).ok()?).ok(),
        None => Some(header.to_owned()),
    }
}

mod param_headers;

pub use param_headers::{MAX_PATH_BYTES, ParamHeaderError, ParamHeaderMismatch, ParamHeaders};

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
