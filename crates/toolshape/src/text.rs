//! Small text helpers.

/// `text` cut to at most `max_chars` characters, with `…` when cut.
pub(crate) fn excerpt(text: &str, max_chars: usize) -> String {
    match text.char_indices().nth(max_chars) {
        None => text.to_owned(),
        Some((cut, _)) => format!("{}…", &text[..cut]),
    }
}
