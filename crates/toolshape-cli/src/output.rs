//! Writing to stdout and stderr without `println!`'s and `eprintln!`'s panic.
//!
//! `println!` panics when stdout is closed, as when a reader such as
//! `head` has taken what it wanted; `eprintln!` does the same when whoever
//! read stderr went away. A command's output is written through [`write`]
//! instead: a closed stdout ends the output quietly (the reader chose to
//! stop), any other failure is said once on stderr, and the command goes on
//! to finish and clean up (close its server, reap children) either way.
//! Messages for the user go through [`say`]: if stderr cannot take them,
//! they are dropped (there is nowhere left to say anything).

use std::fmt;
use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, Ordering};

/// Set once a write failed: later output is dropped without another word.
static FAILED: AtomicBool = AtomicBool::new(false);

/// Writes `text` to stdout; a failure is reported (once), never a panic.
pub(crate) fn write(text: fmt::Arguments<'_>) {
    if FAILED.load(Ordering::Relaxed) {
        return;
    }
    let mut stdout = io::stdout().lock();
    if let Err(error) = stdout.write_fmt(text).and_then(|()| stdout.flush()) {
        FAILED.store(true, Ordering::Relaxed);
        if error.kind() != io::ErrorKind::BrokenPipe {
            say(format_args!(
                "toolshape: cannot write the output: {error}\n"
            ));
        }
    }
}

/// Writes `text` to stderr; a failure drops it.
pub(crate) fn say(text: fmt::Arguments<'_>) {
    let _ = io::stderr().lock().write_fmt(text);
}

/// `text` (from a server) as it may be shown at a terminal: control
/// characters other than line ends and tabs become U+FFFD
/// ([`toolshape::protocol::text::printable`]).
pub(crate) fn shown(text: &str) -> String {
    toolshape::protocol::text::printable(text).into_owned()
}

/// A server's words quoted in a message to the user (a question, a page
/// to visit, a field's label): [`shown`] safely, at most 2,000 characters.
pub(crate) fn quoted(text: &str) -> String {
    shown(&toolshape::protocol::text::excerpt(text, 2_000))
}

/// `eprintln!` through [`say`].
macro_rules! errln {
    ($($arg:tt)*) => { $crate::output::say(format_args!("{}\n", format_args!($($arg)*))) };
}

/// `print!` through [`write`].
macro_rules! out {
    ($($arg:tt)*) => { $crate::output::write(format_args!($($arg)*)) };
}

/// `println!` through [`write`].
macro_rules! outln {
    ($($arg:tt)*) => { $crate::output::write(format_args!("{}\n", format_args!($($arg)*))) };
}

/// `error`'s message with the causes it does not already say (reqwest's
/// "error sending request" says nothing of a refused connection, a name
/// that does not resolve, a failed TLS handshake).
pub(crate) fn described(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut cause = error.source();
    while let Some(next) = cause {
        let said = next.to_string();
        if !said.is_empty() && !text.contains(&said) {
            text.push_str(": ");
            text.push_str(&said);
        }
        cause = next.source();
    }
    text
}

/// `value` as pretty JSON that is safe at a terminal and means the same:
/// serde_json escapes C0 controls in strings, not DEL or the C1 controls
/// (U+009B opens an escape sequence on some terminals), so those are
/// written `\u00XX` here. They can only occur inside strings, where the
/// escape is the same character.
pub(crate) fn json(value: &impl serde::Serialize) -> String {
    let text = serde_json::to_string_pretty(value).unwrap_or_default();
    escape_controls(text)
}

/// `value` as one line of JSON, escaped as [`json`] is.
pub(crate) fn json_line(value: &impl serde::Serialize) -> String {
    escape_controls(serde_json::to_string(value).unwrap_or_default())
}

fn escape_controls(text: String) -> String {
    if !text.chars().any(control_beyond_ascii) {
        return text;
    }
    let mut escaped = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if control_beyond_ascii(c) {
            escaped.push_str(&format!("\\u{:04x}", u32::from(c)));
        } else {
            escaped.push(c);
        }
    }
    escaped
}

/// DEL and the C1 controls: what serde_json leaves unescaped.
fn control_beyond_ascii(c: char) -> bool {
    c.is_control() && u32::from(c) >= 0x7f
}

#[cfg(test)]
mod tests {
    #[test]
    fn json_shown_escapes_what_serde_json_leaves_raw() {
        let value = serde_json::json!({"k\u{9b}": "a\u{1b}b\u{7f}c\u{9b}2J é"});
        let text = super::json(&value);
        assert!(
            !text.chars().any(|c| c.is_control() && c != '\n'),
            "{text:?}"
        );
        assert!(
            text.contains("\\u009b") && text.contains("\\u007f"),
            "{text}"
        );
        // The same JSON value.
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&text).ok(),
            Some(value.clone())
        );
        let line = super::json_line(&value);
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&line).ok(),
            Some(value)
        );
    }

    #[test]
    fn control_characters_are_not_shown() {
        assert_eq!(
            super::shown("a\u{1b}]0;title\u{7}b\nc\td\u{9b}2J"),
            "a\u{FFFD}]0;title\u{FFFD}b\nc\td\u{FFFD}2J"
        );
    }
}
