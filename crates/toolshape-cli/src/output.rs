//! Writing to stdout without `println!`'s panic.
//!
//! `println!` panics when stdout is closed, as when a reader such as
//! `head` has taken what it wanted. A command's output is written through
//! [`write`] instead: a closed stdout ends the output quietly (the reader
//! chose to stop), any other failure is said once on stderr, and the
//! command goes on to finish and clean up (close its server, reap
//! children) either way.

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
            eprintln!("toolshape: cannot write the output: {error}");
        }
    }
}

/// `print!` through [`write`].
macro_rules! out {
    ($($arg:tt)*) => { $crate::output::write(format_args!($($arg)*)) };
}

/// `println!` through [`write`].
macro_rules! outln {
    ($($arg:tt)*) => { $crate::output::write(format_args!("{}\n", format_args!($($arg)*))) };
}
