//! This process's stdin and stdout as async streams.
//!
//! When both are pipes (as when a client starts the server), they are driven
//! by the runtime's I/O reactor directly. Otherwise they go through tokio's
//! blocking stdio, which hands every read and write to a thread: correct for
//! terminals and files, but several thread hand-offs per message.

use tokio::io::{AsyncRead, AsyncWrite};

/// Stdin and stdout, as pipes on the reactor when they are pipes.
pub(crate) fn streams() -> (
    Box<dyn AsyncRead + Unpin + Send>,
    Box<dyn AsyncWrite + Unpin + Send>,
) {
    #[cfg(unix)]
    if let Some((input, output)) = pipes() {
        return (Box::new(input), Box::new(output));
    }
    (Box::new(tokio::io::stdin()), Box::new(tokio::io::stdout()))
}

#[cfg(unix)]
fn pipes() -> Option<(
    tokio::net::unix::pipe::Receiver,
    tokio::net::unix::pipe::Sender,
)> {
    use std::os::fd::AsFd;
    let input = std::io::stdin().as_fd().try_clone_to_owned().ok()?;
    let output = std::io::stdout().as_fd().try_clone_to_owned().ok()?;
    let input = tokio::net::unix::pipe::Receiver::from_owned_fd(input).ok()?;
    let output = tokio::net::unix::pipe::Sender::from_owned_fd(output).ok()?;
    Some((input, output))
}
