//! The lines typed at the terminal, read on one thread of their own and
//! handed out in order to whoever asks next: the answers to a server's
//! questions (`ask.rs`) and the Enter that ends a wait (`visits.rs`). A
//! wait given up (its future dropped) takes no line, so the next question
//! gets the next line typed.

use std::io::{BufRead, Read};
use std::sync::OnceLock;

use tokio::sync::{Mutex, mpsc};

/// Longest line read, in bytes (the rest of a longer one is the next line).
const MAX_LINE_BYTES: u64 = 64 * 1024;

/// The lines read so far and not yet handed out (one at most: the reader
/// waits for it to be taken before reading the next).
static LINES: OnceLock<Mutex<mpsc::Receiver<String>>> = OnceLock::new();

/// The lines, the reading thread started on first use.
fn lines() -> &'static Mutex<mpsc::Receiver<String>> {
    LINES.get_or_init(|| {
        let (sender, receiver) = mpsc::channel(1);
        let reading = std::thread::Builder::new()
            .name("terminal-lines".into())
            .spawn(move || read_lines(&sender));
        if let Err(error) = reading {
            tracing::warn!(%error, "cannot read the terminal");
        }
        Mutex::new(receiver)
    })
}

/// Reads stdin a line at a time into `sender` until it ends or nobody
/// listens.
fn read_lines(sender: &mpsc::Sender<String>) {
    let stdin = std::io::stdin();
    loop {
        let mut line = String::new();
        match stdin.lock().take(MAX_LINE_BYTES).read_line(&mut line) {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        let line = line.trim_end_matches(['\n', '\r']).to_owned();
        if sender.blocking_send(line).is_err() {
            return;
        }
    }
}

/// The next line typed, without its line end; `None` once stdin ended.
/// Cancel-safe: dropped before it resolves, it takes no line.
pub(crate) async fn next_line() -> Option<String> {
    lines().lock().await.recv().await
}

/// [`next_line`] from a blocking thread (`spawn_blocking`) of the runtime.
pub(crate) fn next_line_blocking() -> Option<String> {
    tokio::runtime::Handle::current().block_on(next_line())
}
