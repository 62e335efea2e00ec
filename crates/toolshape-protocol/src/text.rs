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

/// `text` (a peer's words) as it may be shown at a terminal: control
/// characters other than line ends and tabs (an escape sequence could move
/// the cursor, rewrite what is shown or set the window title; C1 controls
/// such as U+009B too) become U+FFFD. Borrowed when there are none.
pub fn printable(text: &str) -> std::borrow::Cow<'_, str> {
    replaced(text, |c| c.is_control() && c != '\n' && c != '\t')
}

/// `text` (a peer's words) on one line of a report: as [`printable`], and
/// line ends, tabs and the line and paragraph separators (which could forge
/// report lines) and the bidirectional marks, overrides and isolates (which
/// could reorder what is shown) become U+FFFD too.
pub fn one_line(text: &str) -> std::borrow::Cow<'_, str> {
    replaced(text, |c| {
        c.is_control()
            || matches!(
                c,
                '\u{202A}'..='\u{202E}'
                    | '\u{2066}'..='\u{2069}'
                    | '\u{200E}'
                    | '\u{200F}'
                    | '\u{061C}'
                    | '\u{2028}'
                    | '\u{2029}'
            )
    })
}

/// `text` with every character `unsafe_char` picks as U+FFFD; borrowed
/// when there is none.
fn replaced(text: &str, unsafe_char: impl Fn(char) -> bool) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(&unsafe_char) {
        return std::borrow::Cow::Borrowed(text);
    }
    text.chars()
        .map(|c| if unsafe_char(c) { '\u{FFFD}' } else { c })
        .collect::<String>()
        .into()
}

#[cfg(test)]
mod tests {
    use super::{excerpt, printable};

    #[test]
    fn control_characters_are_not_printed() {
        assert_eq!(
            printable("a\u{1b}]0;title\u{7}b\nc\td\u{9b}2J\r"),
            "a\u{FFFD}]0;title\u{FFFD}b\nc\td\u{FFFD}2J\u{FFFD}"
        );
        assert!(matches!(
            printable("plain é"),
            std::borrow::Cow::Borrowed(_)
        ));
    }

    #[test]
    fn cuts_on_characters() {
        assert_eq!(excerpt("abc", 3), "abc");
        assert_eq!(excerpt("abcd", 3), "abc…");
        assert_eq!(excerpt("ééé", 2), "éé…");
        assert_eq!(excerpt("", 0), "");
    }
}
