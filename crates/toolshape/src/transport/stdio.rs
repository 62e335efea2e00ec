//! This process's stdin and stdout as async streams.
//!
//! Each is looked at on its own. A pipe (as when a client starts the server)
//! is driven by the runtime's I/O reactor directly. Anything else (a
//! terminal, a file, a socket) goes through tokio's blocking stdio, which
//! hands every read and write to a thread: correct for all of them, but
//! several thread hand-offs per message.
//!
//! A pipe put in non-blocking mode is put back in blocking mode when its
//! stream is dropped: the mode belongs to the pipe, which the process that
//! started this one may share.

use tokio::io::{AsyncRead, AsyncWrite};

/// This process's stdin, as a pipe on the reactor when it is a pipe.
pub(crate) fn input() -> Box<dyn AsyncRead + Unpin + Send> {
    #[cfg(unix)]
    if let Some(pipe) = pipes::input() {
        return Box::new(pipe);
    }
    Box::new(tokio::io::stdin())
}

/// This process's stdout, as a pipe on the reactor when it is a pipe.
pub(crate) fn output() -> Box<dyn AsyncWrite + Unpin + Send> {
    #[cfg(unix)]
    if let Some(pipe) = pipes::output() {
        return Box::new(pipe);
    }
    Box::new(tokio::io::stdout())
}

#[cfg(unix)]
mod pipes {
    use std::os::fd::{AsFd, OwnedFd};
    use std::os::unix::fs::FileTypeExt;

    use tokio::net::unix::pipe::{Receiver, Sender};

    use super::restoring::{RestoreBlocking, Restoring};

    /// Whether `fd` is a pipe (FIFO), found without changing it.
    fn is_pipe(fd: &OwnedFd) -> bool {
        fd.try_clone()
            .map(std::fs::File::from)
            .and_then(|file| file.metadata())
            .is_ok_and(|metadata| metadata.file_type().is_fifo())
    }

    pub(super) fn input() -> Option<Restoring<Receiver>> {
        let fd = std::io::stdin().as_fd().try_clone_to_owned().ok()?;
        if !is_pipe(&fd) {
            return None;
        }
        Receiver::from_owned_fd(fd).ok().map(Restoring::new)
    }

    pub(super) fn output() -> Option<Restoring<Sender>> {
        let fd = std::io::stdout().as_fd().try_clone_to_owned().ok()?;
        if !is_pipe(&fd) {
            return None;
        }
        Sender::from_owned_fd(fd).ok().map(Restoring::new)
    }

    impl RestoreBlocking for Receiver {
        fn restore_blocking(self) {
            let _ = self.into_blocking_fd();
        }
    }

    impl RestoreBlocking for Sender {
        fn restore_blocking(self) {
            let _ = self.into_blocking_fd();
        }
    }
}

/// A pipe end given back in blocking mode (Unix: only there is a pipe put
/// on the reactor).
#[cfg(unix)]
mod restoring {
    use std::pin::Pin;
    use std::task::{Context, Poll};

    use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

    /// A pipe end that goes back to blocking mode when dropped.
    pub(super) trait RestoreBlocking {
        fn restore_blocking(self);
    }

    /// Wraps a pipe end so that dropping it restores blocking mode.
    pub(super) struct Restoring<P: RestoreBlocking>(Option<P>);

    impl<P: RestoreBlocking> Restoring<P> {
        pub(super) fn new(pipe: P) -> Self {
            Restoring(Some(pipe))
        }

        fn pipe(&mut self) -> Option<&mut P> {
            self.0.as_mut()
        }
    }

    impl<P: RestoreBlocking> Drop for Restoring<P> {
        fn drop(&mut self) {
            if let Some(pipe) = self.0.take() {
                pipe.restore_blocking();
            }
        }
    }

    fn gone() -> std::io::Error {
        std::io::Error::new(std::io::ErrorKind::BrokenPipe, "the pipe was released")
    }

    impl<P: RestoreBlocking + AsyncRead + Unpin> AsyncRead for Restoring<P> {
        fn poll_read(
            mut self: Pin<&mut Self>,
            cx: &mut Context<'_>,
            buf: &mut ReadBuf<'_>,
        ) -> Poll<std::io::Result<()>> {
            match self.pipe() {
                Some(pipe) => Pin::new(pipe).poll_read(cx, buf),
                None => Poll::Ready(Err(gone())),
            }
        }
    }

    impl<P: RestoreBlocking + AsyncWrite + Unpin> AsyncWrite for Restoring<P> {
        fn poll_write(
            mut self: Pin<&mut Self>,
            cx: &mut Context<'_>,
            buf: &[u8],
        ) -> Poll<std::io::Result<usize>> {
            match self.pipe() {
                Some(pipe) => Pin::new(pipe).poll_write(cx, buf),
                None => Poll::Ready(Err(gone())),
            }
        }

        fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
            match self.pipe() {
                Some(pipe) => Pin::new(pipe).poll_flush(cx),
                None => Poll::Ready(Err(gone())),
            }
        }

        fn poll_shutdown(
            mut self: Pin<&mut Self>,
            cx: &mut Context<'_>,
        ) -> Poll<std::io::Result<()>> {
            match self.pipe() {
                Some(pipe) => Pin::new(pipe).poll_shutdown(cx),
                None => Poll::Ready(Err(gone())),
            }
        }
    }
}
