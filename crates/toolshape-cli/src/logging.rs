//! Logs go to stderr (stdout is the stdio transport), coloured only on a terminal.
//!
//! A log line may quote a peer (a tool's name, an upstream's log message):
//! every control character in it but the line end, tabs and the logger's own
//! colours (`ESC [ digits m`) is written U+FFFD, so nothing a server names can
//! rewrite the operator's terminal.

use std::io::{self, IsTerminal, Write};

use tracing_subscriber::EnvFilter;
use tracing_subscriber::fmt::MakeWriter;

/// Installs the stderr logger. `RUST_LOG` overrides the default level;
/// `quiet` lowers it to errors.
pub(crate) fn init(verbose: u8, quiet: bool) {
    let default = match verbose {
        0 if quiet => "error",
        0 => "warn",
        1 => "info,toolshape=debug",
        _ => "debug",
    };
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default));
    let colours = io::stderr().is_terminal();
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(PrintableStderr { colours })
        .with_ansi(colours)
        .with_target(false)
        .init();
}

/// Stderr, through [`printable`]; colour sequences kept only when the
/// logger writes its own.
#[derive(Clone, Copy)]
struct PrintableStderr {
    colours: bool,
}

impl<'a> MakeWriter<'a> for PrintableStderr {
    type Writer = PrintableStderr;

    fn make_writer(&'a self) -> Self::Writer {
        *self
    }
}

impl Write for PrintableStderr {
    /// One formatted event at a time (the formatter writes each whole).
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let text = String::from_utf8_lossy(buf);
        io::stderr()
            .lock()
            .write_all(printable(&text, self.colours).as_bytes())?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        io::stderr().flush()
    }
}

/// `text` with its control characters written U+FFFD, but line ends, tabs
/// and, with `colours`, colour sequences (`ESC [` digits and `;` `m`): the
/// rule of [`toolshape::protocol::text::printable`], between them.
fn printable(text: &str, colours: bool) -> String {
    use toolshape::protocol::text::printable as plain;
    if !colours {
        return plain(text).into_owned();
    }
    let mut shown = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('\u{1b}') {
        shown.push_str(&plain(&rest[..at]));
        let escape = &rest[at..];
        let length = colour_sequence(escape);
        match length {
            Some(length) => shown.push_str(&escape[..length]),
            None => shown.push('\u{FFFD}'),
        }
        rest = &escape[length.unwrap_or(1)..];
    }
    shown.push_str(&plain(rest));
    shown
}

/// The length of the colour sequence `text` starts with, if it starts with
/// one: `ESC [`, digits and `;`, then `m`.
fn colour_sequence(text: &str) -> Option<usize> {
    let rest = text.strip_prefix("\u{1b}[")?;
    let digits = rest
        .bytes()
        .take_while(|b| b.is_ascii_digit() || *b == b';')
        .count();
    (rest.as_bytes().get(digits) == Some(&b'm')).then_some(2 + digits + 1)
}

#[cfg(test)]
mod tests {
    use super::printable;

    #[test]
    fn a_peers_control_characters_are_not_logged_but_colours_are() {
        let line = "\u{1b}[33m WARN\u{1b}[0m tool=evil\u{1b}[2J\u{7}\u{9b}x\tok\n";
        assert_eq!(
            printable(line, true),
            "\u{1b}[33m WARN\u{1b}[0m tool=evil\u{FFFD}[2J\u{FFFD}\u{FFFD}x\tok\n"
        );
        // Off a terminal the logger writes no colours: none is kept.
        assert_eq!(
            printable(line, false),
            "\u{FFFD}[33m WARN\u{FFFD}[0m tool=evil\u{FFFD}[2J\u{FFFD}\u{FFFD}x\tok\n"
        );
        assert_eq!(printable("a\u{1b}", true), "a\u{FFFD}");
        assert_eq!(printable("\u{1b}[1;31", true), "\u{FFFD}[1;31");
    }
}
