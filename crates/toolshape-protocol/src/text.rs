//! Text that echoes caller input, kept short.

/// `text` cut to at most `max_chars` characters, ending in `…` when cut.
/// Error messages quote caller input (a method, a tool name, a path) only
/// through this, so that a huge input is never echoed back in full.
pub fn excerpt(text: &str, max_chars: usize) -> String {
    match text.char_indices().nth(max_chars) {
        None => text.to_owned(),
        Some((cut, _)) => format!("{}…", &text[..cut]),
    }
}

#[cfg(test)]
mod tests {
    use super::excerpt;

    #[test]
    fn cuts_on_characters() {
        assert_eq!(excerpt("abc", 3), "abc");
        assert_eq!(excerpt("abcd", 3), "abc…");
        assert_eq!(excerpt("ééé", 2), "éé…");
        assert_eq!(excerpt("", 0), "");
    }
}
