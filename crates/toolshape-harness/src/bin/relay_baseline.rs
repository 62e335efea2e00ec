//! The physical limit of a proxy over stdio: a process that starts the
//! server given as its arguments and copies bytes between its own stdin
//! and stdout and the server's pipes, doing nothing else (no parsing, no
//! validation, no async runtime: one thread per direction, each a blocking
//! read and a write of whatever arrived). Whatever a gateway does, it cannot
//! add less to a call than this process in the same place.
//!
//! Run: `relay_baseline <server command...>`.

use std::io::{self, Read, Write};
use std::process::{Command, ExitCode, Stdio};
use std::thread;

/// Copies `from` to `to` a read at a time until `from` ends or `to` fails.
fn pump(mut from: impl Read, mut to: impl Write) {
    let mut buffer = vec![0u8; 64 * 1024];
    loop {
        let read = match from.read(&mut buffer) {
            Ok(0) | Err(_) => return,
            Ok(read) => read,
        };
        if to
            .write_all(&buffer[..read])
            .and_then(|()| to.flush())
            .is_err()
        {
            return;
        }
    }
}

fn main() -> ExitCode {
    let mut args = std::env::args_os().skip(1);
    let Some(program) = args.next() else {
        eprintln!("usage: relay_baseline <server command...>");
        return ExitCode::from(2);
    };
    let mut child = match Command::new(&program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
    {
        Ok(child) => child,
        Err(error) => {
            eprintln!(
                "relay_baseline: cannot start {}: {error}",
                program.to_string_lossy()
            );
            return ExitCode::FAILURE;
        }
    };
    let (Some(child_in), Some(child_out)) = (child.stdin.take(), child.stdout.take()) else {
        eprintln!("relay_baseline: the server's pipes are missing");
        return ExitCode::FAILURE;
    };
    // Closing the server's stdin when ours ends is what ends the server.
    let requests = thread::spawn(move || pump(io::stdin().lock(), child_in));
    pump(child_out, io::stdout().lock());
    let _ = requests.join();
    let _ = child.wait();
    ExitCode::SUCCESS
}
