#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The client commands stopped by SIGTERM or SIGINT while their server
//! child runs (a real process that never answers): they exit with the
//! signal's status, and the child goes with them instead of living on.

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
