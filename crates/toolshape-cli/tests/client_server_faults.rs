#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The client commands against servers that misbehave (real child
//! processes): stopped by SIGTERM or SIGINT while their server never
//! answers, they exit with the signal's status and the child goes with them
//! instead of living on; a server that writes only garbage costs a few
//! warnings, not one per line.

mod http_serve;

use std::process::{Command, Stdio};

use http_serve::{TOOLSHAPE, children, ended, signal, wait_exit, wait_until};

#[cfg(target_os = "linux")]
#[test]
fn a_signalled_client_command_takes_its_server_with_it() {
    for (command, sent, status) in [
        (&["tools"][..], "TERM", 143),
        (&["call", "anything"][..], "TERM", 143),
        (&["check"][..], "INT", 130),
        (&["bench", "--tool", "anything"][..], "TERM", 143),
    ] {
        let mut client = Command::new(TOOLSHAPE)
            .args(command)
            .args(["--timeout", "300", "--", "sleep", "1000"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut server = None;
        wait_until("the server child to start", || {
            server = children(client.id()).first().copied();
            server.map(|_| ()).ok_or_else(|| "no child yet".to_owned())
        });
        let server = server.unwrap();
        signal(&client, sent);
        let exited = wait_exit(&mut client);
        assert_eq!(exited.code(), Some(status), "{command:?}");
        wait_until("the server child to end", || {
            ended(server)
                .then_some(())
                .ok_or_else(|| format!("{server} still runs"))
        });
    }
}

#[test]
fn a_server_writing_garbage_is_warned_of_a_few_times_not_per_line() {
    let output = http_serve::toolshape(&[
        "tools",
        "--timeout",
        "5",
        "--",
        "sh",
        "-c",
        "i=0; while [ $i -lt 2500 ]; do echo 'not json'; i=$((i+1)); done",
    ]);
    assert_eq!(output.status.code(), Some(4));
    let stderr = String::from_utf8_lossy(&output.stderr);
    let warnings = stderr.matches("invalid message").count();
    assert!((1..=3).contains(&warnings), "{warnings}: {stderr}");
}
