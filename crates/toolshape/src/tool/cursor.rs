//! The opaque `tools/list` cursor: the name of the last tool of a page.

/// A cursor that could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct InvalidCursor;

const PREFIX: &str = "after:";

/// The cursor of the page after the tool `name`.
pub(crate) fn encode(name: &str) -> String {
    let mut cursor = String::with_capacity(PREFIX.len() + 2 * name.len());
    cursor.push_str(PREFIX);
    for byte in name.bytes() {
        cursor.push_str(&format!("{byte:02x}"));
    }
    cursor
}

/// The tool name a cursor holds.
pub(crate) fn decode(cursor: &str) -> Result<String, InvalidCursor> {
    let hex = cursor.strip_prefix(PREFIX).ok_or(InvalidCursor)?;
    if hex.len() % 2 != 0 || hex.is_empty() {
        return Err(InvalidCursor);
    }
    let bytes = (0..hex.len())
        .step_by(2)
        .map(|i| {
            hex.get(i..i + 2)
                .and_then(|pair| u8::from_str_radix(pair, 16).ok())
        })
        .collect::<Option<Vec<u8>>>()
        .ok_or(InvalidCursor)?;
    String::from_utf8(bytes).map_err(|_| InvalidCursor)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_round_trip_and_reject_garbage() {
        assert_eq!(
            decode(&encode("get_weather")).ok().as_deref(),
            Some("get_weather")
        );
        for bad in ["", "after:", "after:zz", "after:6", "garbage", "after:ff"] {
            assert_eq!(decode(bad), Err(InvalidCursor), "{bad}");
        }
    }
}
