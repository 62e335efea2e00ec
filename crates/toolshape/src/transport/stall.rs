//! A stream that gives up on a peer that stopped reading.
//!
//! A peer that never reads its answers fills the pipe or socket; every write
//! then waits forever, and so would the connection, holding its calls, its
//! buffers and (over HTTP) a connection slot. [`StallGuard`] fails a write
//! or flush that has made no progress for the limit with
//! [`io::ErrorKind::TimedOut`]: the connection ends, not the process.
//! Reads pass through untouched.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::Sleep;

/// Wraps a stream; its writes fail once they have waited `limit` without progress.
#[derive(Debug)]
pub(crate) struct StallGuard<S> {
    inner: S,
    limit: Option<Duration>,
    /// Armed when a write first waits; disarmed by any progress.
    timer: Option<Pin<Box<Sleep>>>,
}

impl<S> StallGuard<S> {
    /// `limit` `None` never gives up.
    pub(crate) fn new(inner: S, limit: Option<Duration>) -> Self {
        StallGuard {
            inner,
            limit,
            timer: None,
        }
    }

    /// Passes on a write's outcome; a wait that has lasted the limit becomes an error.
    fn watch<T>(
        &mut self,
        cx: &mut Context<'_>,
        polled: Poll<io::Result<T>>,
    ) -> Poll<io::Result<T>> {
        if polled.is_ready() {
            self.timer = None;
            return polled;
        }
        let Some(limit) = self.limit else {
            return Poll::Pending;
        };
        let timer = self
            .timer
            .get_or_insert_with(|| Box::pin(tokio::time::sleep(limit)));
        if timer.as_mut().poll(cx).is_pending() {
            return Poll::Pending;
        }
        self.timer = None;
        Poll::Ready(Err(io::Error::new(
            io::ErrorKind::TimedOut,
            format!(
                "the peer read nothing for {} ms: it stopped reading",
                limit.as_millis()
            ),
        )))
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for StallGuard<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let polled = Pin::new(&mut self.inner).poll_write(cx, buf);
        self.watch(cx, polled)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let polled = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        self.watch(cx, polled)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let polled = Pin::new(&mut self.inner).poll_flush(cx);
        self.watch(cx, polled)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let polled = Pin::new(&mut self.inner).poll_shutdown(cx);
        self.watch(cx, polled)
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for StallGuard<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use super::*;

    #[tokio::test]
    async fn a_write_nobody_reads_times_out_and_progress_resets_the_clock() {
        let (near, mut far) = tokio::io::duplex(16);
        let mut guarded = StallGuard::new(near, Some(Duration::from_millis(200)));
        // Slow but steady reading: every write makes progress in time.
        let reader = tokio::spawn(async move {
            let mut got = Vec::new();
            let mut chunk = [0u8; 8];
            while got.len() < 64 {
                tokio::time::sleep(Duration::from_millis(50)).await;
                match far.read(&mut chunk).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => got.extend_from_slice(&chunk[..n]),
                }
            }
            (got, far)
        });
        let written = guarded.write_all(&[7u8; 64]).await;
        assert!(written.is_ok(), "{written:?}");
        let Ok((got, _far)) = reader.await else {
            panic!("the reader failed");
        };
        assert_eq!(got.len(), 64);
        // Nobody reads any more: the next write fills the pipe and gives up.
        let started = tokio::time::Instant::now();
        let stalled = guarded.write_all(&[7u8; 64]).await;
        assert_eq!(stalled.map_err(|e| e.kind()), Err(io::ErrorKind::TimedOut));
        assert!(started.elapsed() >= Duration::from_millis(200));
    }
}
