//! SIGINT and SIGTERM (Ctrl-C elsewhere): what stops `serve` and `proxy`
//! (see `fronts.rs`), and the client commands, whose server child must not
//! outlive them.

use std::future::Future;
use std::process::ExitCode;

/// The stop signals, watched from the moment they are made.
pub(crate) struct StopSignals {
    #[cfg(unix)]
    interrupt: Option<tokio::signal::unix::Signal>,
    #[cfg(unix)]
    terminate: Option<tokio::signal::unix::Signal>,
}

impl StopSignals {
    /// Watches SIGINT and SIGTERM (on Unix; elsewhere Ctrl-C, watched from
    /// the first wait on). One that cannot be watched never comes.
    pub(crate) fn watch() -> StopSignals {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            let watched = |kind: SignalKind, name: &str| match signal(kind) {
                Ok(signal) => Some(signal),
                Err(error) => {
                    tracing::warn!(%error, signal = name, "cannot watch for the signal");
                    None
                }
            };
            StopSignals {
                interrupt: watched(SignalKind::interrupt(), "SIGINT"),
                terminate: watched(SignalKind::terminate(), "SIGTERM"),
            }
        }
        #[cfg(not(unix))]
        StopSignals {}
    }

    /// The next signal to come, by name.
    pub(crate) async fn next(&mut self) -> &'static str {
        #[cfg(unix)]
        {
            async fn next_of(signal: &mut Option<tokio::signal::unix::Signal>) {
                let came = match signal {
                    Some(signal) => signal.recv().await.is_some(),
                    None => false,
                };
                if !came {
                    std::future::pending::<()>().await;
                }
            }
            tokio::select! {
                () = next_of(&mut self.interrupt) => "SIGINT",
                () = next_of(&mut self.terminate) => "SIGTERM",
            }
        }
        #[cfg(not(unix))]
        {
            if tokio::signal::ctrl_c().await.is_err() {
                std::future::pending::<()>().await;
            }
            "Ctrl-C"
        }
    }
}

/// The exit status a shell reports for death by `signal`: 128 and its number.
pub(crate) fn exit_status(signal: &str) -> i32 {
    if signal == "SIGTERM" { 143 } else { 130 }
}

/// [`exit_status`] as a command's exit code.
pub(crate) fn exit_code(signal: &str) -> ExitCode {
    ExitCode::from(u8::try_from(exit_status(signal)).unwrap_or(1))
}

/// Runs a client command to its end, or until SIGINT or SIGTERM: then the
/// command is dropped, and with the runtime's tasks the server child it
/// started (killed as its handle goes), and the exit status is the
/// signal's. Without this a SIGTERM ended the process and left the child
/// running.
pub(crate) async fn until_signal(command: impl Future<Output = ExitCode>) -> ExitCode {
    let mut signals = StopSignals::watch();
    tokio::select! {
        code = command => code,
        signal = signals.next() => {
            tracing::info!(signal, "stopping");
            exit_code(signal)
        }
    }
}
