#![allow(clippy::unwrap_used, clippy::expect_used)]
//! What a stdio server writes to its stderr, captured by the client: quoted
//! when the server exits at the handshake, and read to its end whatever it
//! holds (bytes that are no UTF-8, a line without end, more than a pipe
//! holds), so that the server never blocks on it and the client keeps a
//! bounded tail.

mod client_common;

use std::time::Duration;

use toolshape::client::{Client, ClientOptions, ServerCommand, StderrMode};

use client_common::hostile_server_bin;

fn test_options() -> ClientOptions {
    let mut options = ClientOptions::default();
    options.request_timeout = Duration::from_secs(20);
    options.probe_timeout = Duration::from_secs(5);
    options
}

/// A server that exits during the handshake: the error says what it wrote
/// to its (captured) stderr, the likeliest reason.
#[tokio::test]
async fn a_server_exiting_at_the_handshake_is_quoted_from_its_stderr() {
    let command = ServerCommand::new("sh")
        .args(["-c", "echo 'fatal: missing API_KEY' >&2; exit 7"])
        .stderr(StderrMode::Capture);
    let error = Client::builder()
        .options(test_options())
        .connect_stdio(command)
        .await
        .unwrap_err();
    assert_eq!(error.stderr_tail(), ["fatal: missing API_KEY"], "{error}");
    assert_eq!(error.server_exit_status().and_then(|s| s.code()), Some(7));
    let said = error.to_string();
    assert!(
        said.contains("the server exited (exit status: 7)"),
        "{said}"
    );
    assert!(
        said.ends_with("stderr ends: fatal: missing API_KEY"),
        "{said}"
    );

    // Its stderr not captured, the exit status still says something.
    let quiet = ServerCommand::new("sh")
        .args(["-c", "exit 3"])
        .stderr(StderrMode::Discard);
    let error = Client::builder()
        .options(test_options())
        .connect_stdio(quiet)
        .await
        .unwrap_err();
    assert!(error.to_string().contains("exit status: 3"), "{error}");
}

/// A server writing bytes that are no UTF-8, then a line of 300,000 bytes
/// (more than a pipe holds) to its stderr before it serves: it is served,
/// and the tail holds the first line as read, the long one's first bytes
/// marked as cut, and what came after.
#[tokio::test]
async fn a_servers_stderr_is_read_whatever_it_holds() {
    let script = format!(
        "printf 'bad \\377\\376 bytes\\n' >&2; head -c 300000 /dev/zero | tr '\\0' x >&2; \
         printf '\\nlast words\\n' >&2; exec '{}'",
        hostile_server_bin().display()
    );
    let command = ServerCommand::new("sh")
        .args(["-c", &script])
        .stderr(StderrMode::Capture);
    let client = tokio::time::timeout(
        Duration::from_secs(20),
        Client::builder()
            .options(test_options())
            .connect_stdio(command),
    )
    .await
    .expect("the server was blocked on its stderr")
    .unwrap();
    let tools = client.list_tools().await.unwrap();
    assert!(tools.iter().any(|tool| tool.name == "ok"));
    let tail = client.stderr_tail();
    assert!(tail.len() >= 3, "{tail:?}");
    assert_eq!(tail[0], "bad \u{fffd}\u{fffd} bytes", "{tail:?}");
    assert!(tail[1].starts_with("xxxx"), "{tail:?}");
    assert!(tail[1].ends_with("[line cut]"), "{tail:?}");
    assert!(tail[1].len() < 1000, "{}", tail[1].len());
    assert_eq!(tail[2], "last words", "{tail:?}");
}
