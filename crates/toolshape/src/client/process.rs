//! The server's child process. On Unix it runs in a process group of its
//! own, on Windows in a job object, so that stopping it stops what it
//! started too: a server started through a wrapper (`sh -c`, `npx`, `uvx`,
//! `cmd /c`) is often a grandchild, which killing the wrapper alone would
//! leave running.

use std::io;
use std::process::ExitStatus;

use tokio::process::{Child, Command};

/// A server process this client started.
#[derive(Debug)]
pub(crate) struct ServerProcess {
    child: Child,
    /// Its process group, while what is in it may still need stopping.
    #[cfg(unix)]
    group: Option<rustix::process::Pid>,
    /// Its job object, killing what is in it when closed (dropped): the
    /// server's own children join it as they start.
    #[cfg(windows)]
    job: Option<win32job::Job>,
}

impl ServerProcess {
    /// Starts `command` (its pipes set by the caller), in a new process
    /// group on Unix when `own_group`; on Windows in a job object always
    /// (a job changes nothing of how the console reaches the process).
    #[cfg_attr(not(unix), allow(unused_variables))]
    pub(crate) fn spawn(command: &mut Command, own_group: bool) -> io::Result<ServerProcess> {
        #[cfg(unix)]
        if own_group {
            command.process_group(0);
        }
        let child = command.kill_on_drop(true).spawn()?;
        Ok(ServerProcess {
            #[cfg(unix)]
            group: child
                .id()
                .filter(|_| own_group)
                .and_then(|id| i32::try_from(id).ok())
                .and_then(rustix::process::Pid::from_raw),
            #[cfg(windows)]
            job: kill_on_close_job(&child),
            child,
        })
    }

    /// The child's own pipes, to take.
    pub(crate) fn child_mut(&mut self) -> &mut Child {
        &mut self.child
    }

    /// Its process id, while it runs.
    pub(crate) fn id(&self) -> Option<u32> {
        self.child.id()
    }

    /// Waits for it to exit; what it started is then asked to stop (see
    /// [`ServerProcess::end_group`]).
    pub(crate) async fn wait(&mut self) -> io::Result<ExitStatus> {
        let status = self.child.wait().await;
        self.end_group();
        status
    }

    /// Kills it and everything in its group, and waits for it. The group is
    /// not signalled again: once its leader is reaped and the rest gone, its
    /// id may be taken by another group.
    pub(crate) async fn kill(&mut self) -> io::Result<()> {
        self.signal_group(true);
        #[cfg(unix)]
        {
            self.group = None;
        }
        self.child.kill().await
    }

    /// Asks what the server left running in its group (a wrapper's other
    /// children) to stop, with SIGTERM, just after the server was reaped;
    /// after that the group is not signalled again. (Between the reaping and
    /// the signal, a group left empty could in principle see its id reused:
    /// the window is one system call.)
    /// On Windows, what is left in its job is killed: Windows has no
    /// signal to ask with.
    fn end_group(&mut self) {
        self.signal_group(false);
        #[cfg(unix)]
        {
            self.group = None;
        }
    }

    #[cfg_attr(not(any(unix, windows)), allow(unused_variables, clippy::unused_self))]
    #[cfg_attr(windows, allow(unused_variables))]
    fn signal_group(&mut self, kill: bool) {
        #[cfg(unix)]
        if let Some(group) = self.group {
            use rustix::process::{Signal, kill_process_group};
            let signal = if kill { Signal::KILL } else { Signal::TERM };
            // Nothing left in it (ESRCH) is what is hoped for.
            let _ = kill_process_group(group, signal);
        }
        // Closing the job's handle kills every process in it.
        #[cfg(windows)]
        drop(self.job.take());
    }
}

/// A job object that kills its processes when its handle is closed, with
/// `child` in it; none (the child then stopped alone) if Windows refuses,
/// as it may for a process already in a job that allows no other.
#[cfg(windows)]
fn kill_on_close_job(child: &Child) -> Option<win32job::Job> {
    let handle = child.raw_handle()?;
    let handle = isize::try_from(handle.addr()).ok()?;
    let mut limits = win32job::ExtendedLimitInfo::new();
    limits.limit_kill_on_job_close();
    let job = win32job::Job::create_with_limit_info(&limits)
        .and_then(|job| job.assign_process(handle).map(|()| job));
    match job {
        Ok(job) => Some(job),
        Err(error) => {
            tracing::debug!(%error, "the server's child is in no job object of ours");
            None
        }
    }
}

impl Drop for ServerProcess {
    /// A client dropped without closing kills the server (tokio's
    /// `kill_on_drop`) and the rest of its group (on Windows, its job).
    fn drop(&mut self) {
        self.signal_group(true);
    }
}
