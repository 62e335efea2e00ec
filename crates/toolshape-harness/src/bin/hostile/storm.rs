//! `--list-changed-every MS` and `--count-lists FILE`: an upstream that
//! announces a changed tool list without pause, and a count of the
//! listings it is asked for, for tests of what such a storm costs a peer.

use std::io::Write;
use std::time::Duration;

/// Announces `notifications/tools/list_changed` every `every`, for good,
/// on a thread of its own. Each line is written whole under stdout's lock,
/// so it never splits a line the server is writing.
pub(crate) fn announce_changes_every(every: Duration) {
    std::thread::spawn(move || {
        loop {
            std::thread::sleep(every);
            let mut out = std::io::stdout().lock();
            let line = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\n";
            if out
                .write_all(line.as_bytes())
                .and_then(|()| out.flush())
                .is_err()
            {
                return;
            }
        }
    });
}

/// Adds one to the count kept in `path`.
pub(crate) fn count_listing(path: &str) {
    let count: u64 = std::fs::read_to_string(path)
        .ok()
        .and_then(|text| text.trim().parse().ok())
        .unwrap_or(0);
    if let Err(error) = std::fs::write(path, (count + 1).to_string()) {
        eprintln!("hostile_server: --count-lists {path}: {error}");
    }
}
