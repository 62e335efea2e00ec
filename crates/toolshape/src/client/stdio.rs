//! A server started as a child process, spoken to over its stdin and stdout
//! (or over any byte streams of the caller's, as over those pipes).

use std::collections::VecDeque;
use std::ffi::OsString;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex, PoisonError};

use tokio::io::{AsyncBufRead, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, BufWriter};
use tokio::process::Command;
use tokio::sync::mpsc;

use super::MessageObserver;
use super::error::{ClientError, TransportError};
use super::handlers::Handlers;
use super::outgoing::Outbound;
use super::peer::{Channel, Peer};
use super::process::ServerProcess;
use crate::transport::lines::{Line, LineReader, leading};

/// What happens to the child's stderr.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StderrMode {
    /// Passed through to this process's stderr (the default).
    #[default]
    Inherit,
    /// Captured; the last lines are kept (see [`Client::stderr_tail`](super::Client::stderr_tail)).
    Capture,
    /// Discarded.
    Discard,
}

/// How to start a server: program, arguments, environment, folder.
#[derive(Debug, Clone)]
pub struct ServerCommand {
    program: OsString,
    args: Vec<OsString>,
    env: Vec<(OsString, OsString)>,
    current_dir: Option<PathBuf>,
    stderr: StderrMode,
    own_process_group: bool,
}

impl ServerCommand {
    /// Runs `program`.
    pub fn new(program: impl Into<OsString>) -> Self {
        ServerCommand {
            program: program.into(),
            args: Vec::new(),
            env: Vec::new(),
            current_dir: None,
            stderr: StderrMode::Inherit,
            own_process_group: true,
        }
    }

    /// The first element is the program, the rest its arguments.
    pub fn from_argv<I, S>(argv: I) -> Option<Self>
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        let mut argv = argv.into_iter().map(Into::into);
        let program = argv.next()?;
        Some(ServerCommand::new(program).args(argv))
    }

    /// Adds an argument.
    #[must_use]
    pub fn arg(mut self, arg: impl Into<OsString>) -> Self {
        self.args.push(arg.into());
        self
    }

    /// Adds arguments.
    #[must_use]
    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// Sets an environment variable for the child.
    #[must_use]
    pub fn env(mut self, key: impl Into<OsString>, value: impl Into<OsString>) -> Self {
        self.env.push((key.into(), value.into()));
        self
    }

    /// Runs the child in `dir`.
    #[must_use]
    pub fn current_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.current_dir = Some(dir.into());
        self
    }

    /// Sets what happens to the child's stderr.
    #[must_use]
    pub fn stderr(mut self, mode: StderrMode) -> Self {
        self.stderr = mode;
        self
    }

    /// Whether the server runs in a process group of its own (Unix; the
    /// default), so that stopping it stops what it started too: a server
    /// behind a wrapper (`sh -c`, `npx`, `uvx`) is the wrapper's child, which
    /// killing the wrapper alone would leave running. Turn it off for a
    /// server that must read the terminal (a password prompt of `ssh`): a
    /// process outside the terminal's foreground group that reads it is
    /// stopped by the terminal (`toolshape`'s client commands turn it off at
    /// a terminal). Off, the server shares the client's group, and Ctrl-C at
    /// the terminal reaches it directly. On Windows the server runs in a
    /// job object whatever this says (closing the job kills what is in it;
    /// a job changes nothing of how the console reaches the process).
    #[must_use]
    pub fn own_process_group(mut self, own: bool) -> Self {
        self.own_process_group = own;
        self
    }
}

/// Lines of the child's stderr, the most recent ones.
pub(crate) type StderrTail = Arc<Mutex<VecDeque<String>>>;

const STDERR_TAIL_LINES: usize = 200;

/// The longest stderr line kept whole; a longer one is kept as its first
/// bytes (a server writing without newlines holds no more than this).
const STDERR_LINE_BYTES: usize = 4096;

/// A running child with its reader and writer tasks.
pub(crate) struct ChildTransport {
    pub(crate) peer: Arc<Peer>,
    pub(crate) child: ServerProcess,
    pub(crate) stderr: StderrTail,
    /// The task reading a captured stderr, ending at its end.
    pub(crate) stderr_reading: Option<tokio::task::JoinHandle<()>>,
}

/// Starts the child and wires its pipes to a new [`Peer`].
pub(crate) fn spawn(
    command: &ServerCommand,
    max_message_bytes: usize,
    handlers: Handlers,
    observer: Option<MessageObserver>,
) -> Result<ChildTransport, ClientError> {
    let mut process = Command::new(&command.program);
    process
        .args(&command.args)
        .envs(command.env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(match command.stderr {
            StderrMode::Inherit => Stdio::inherit(),
            StderrMode::Capture => Stdio::piped(),
            StderrMode::Discard => Stdio::null(),
        });
    if let Some(dir) = &command.current_dir {
        process.current_dir(dir);
    }
    let mut child =
        ServerProcess::spawn(&mut process, command.own_process_group).map_err(|source| {
            TransportError::Spawn {
                program: command.program.to_string_lossy().into_owned(),
                source,
            }
        })?;
    let pipes = child.child_mut();
    let (Some(stdin), Some(stdout)) = (pipes.stdin.take(), pipes.stdout.take()) else {
        return Err(TransportError::Pipes.into());
    };
    let stderr = StderrTail::default();
    let mut stderr_reading = None;
    if let Some(pipe) = child.child_mut().stderr.take() {
        let tail = Arc::clone(&stderr);
        // Read to its end whatever it holds (bytes that are no UTF-8, lines
        // without end), so that the server never blocks on a full pipe.
        stderr_reading = Some(tokio::spawn(async move {
            let mut lines = LineReader::new(BufReader::new(pipe), STDERR_LINE_BYTES);
            loop {
                let line = match lines.next().await {
                    Ok(Line::Message(line)) => String::from_utf8_lossy(line).into_owned(),
                    Ok(Line::TooLong(start)) => {
                        format!("{} [line cut]", String::from_utf8_lossy(start))
                    }
                    Ok(Line::Eof) | Err(_) => break,
                };
                let mut tail = tail.lock().unwrap_or_else(PoisonError::into_inner);
                if tail.len() == STDERR_TAIL_LINES {
                    tail.pop_front();
                }
                tail.push_back(line);
            }
        }));
    }
    let peer = over_streams(stdout, stdin, max_message_bytes, handlers, observer);
    Ok(ChildTransport {
        peer,
        child,
        stderr,
        stderr_reading,
    })
}

/// A peer speaking newline-delimited JSON-RPC over `reader` and `writer`: a
/// child's pipes, or any byte streams of the caller's.
pub(crate) fn over_streams<R, W>(
    reader: R,
    writer: W,
    max_message_bytes: usize,
    handlers: Handlers,
    observer: Option<MessageObserver>,
) -> Arc<Peer>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (outgoing, receiver) = mpsc::channel(1024);
    let peer = Peer::new(outgoing, handlers, observer);
    tokio::spawn(write_loop(writer, receiver));
    tokio::spawn(read_loop(
        Arc::clone(&peer),
        BufReader::with_capacity(64 * 1024, reader),
        max_message_bytes,
    ));
    peer
}

/// Writes queued messages, one per line, flushing whenever the queue runs
/// dry. Ends, closing the child's stdin, on [`Outbound::Close`] or when every
/// sender is gone.
pub(crate) async fn write_loop<W: AsyncWrite + Unpin>(
    writer: W,
    mut receiver: mpsc::Receiver<Outbound>,
) {
    let mut writer = BufWriter::with_capacity(64 * 1024, writer);
    'writing: while let Some(first) = receiver.recv().await {
        let mut next = Some(first);
        while let Some(outbound) = next.take().or_else(|| receiver.try_recv().ok()) {
            let Outbound::Message(message) = outbound else {
                break 'writing;
            };
            let written = async {
                writer.write_all(&message.body).await?;
                writer.write_all(b"\n").await
            };
            if written.await.is_err() {
                return;
            }
        }
        if writer.flush().await.is_err() {
            return;
        }
    }
    let _ = writer.flush().await;
    let _ = writer.shutdown().await;
}

/// Reads the server's messages until its output ends.
async fn read_loop<R: AsyncBufRead + Unpin>(peer: Arc<Peer>, reader: R, max_message_bytes: usize) {
    let mut lines = LineReader::new(reader, max_message_bytes);
    loop {
        match lines.next().await {
            Ok(Line::Message(bytes)) => {
                peer.receive(bytes, Channel::Shared);
            }
            Ok(Line::TooLong(prefix)) => peer.too_long(leading(prefix), max_message_bytes),
            Ok(Line::Eof) => break,
            Err(error) => {
                tracing::warn!(%error, "reading from the server failed");
                break;
            }
        }
    }
    peer.close();
}
