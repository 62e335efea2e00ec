//! Whether the call a workspace operation works for has ended (cancelled,
//! or past its time limit). The MCP layer runs each operation on a blocking
//! thread, which goes on when the call's future is dropped; so it marks the
//! thread with the call's end while the operation runs, and the long loops
//! (walks, text scans, CSV rows, the wait for memory) stop at their next
//! step once it has come.

use std::cell::RefCell;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// What a thread working for a call knows of it: whether it ended, and by
/// when its waits (for memory) must be over.
#[derive(Debug, Clone)]
struct Call {
    ended: Arc<AtomicBool>,
    wait_until: Instant,
}

thread_local! {
    /// The call this thread works for, while it does.
    static CALL: RefCell<Option<Call>> = const { RefCell::new(None) };
}

/// Set when the call ends: dropped with the call's future (or once its
/// work is done).
#[derive(Debug, Default)]
pub(crate) struct CallEnd(Arc<AtomicBool>);

impl CallEnd {
    /// What a thread working for the call reads.
    pub(crate) fn flag(&self) -> EndFlag {
        EndFlag(Arc::clone(&self.0))
    }
}

impl Drop for CallEnd {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// A call's end, as a thread working for it reads it.
#[derive(Debug)]
pub(crate) struct EndFlag(Arc<AtomicBool>);

impl EndFlag {
    /// Marks this thread as working for the call, its waits over by
    /// `wait_until`, until the guard is dropped.
    pub(crate) fn enter(self, wait_until: Instant) -> WorkingFor {
        let call = Call {
            ended: self.0,
            wait_until,
        };
        let before = CALL.with(|current| current.borrow_mut().replace(call));
        WorkingFor { before }
    }
}

/// This thread works for a call until dropped (then for the one it worked
/// for before, if any).
#[derive(Debug)]
pub(crate) struct WorkingFor {
    before: Option<Call>,
}

impl Drop for WorkingFor {
    fn drop(&mut self) {
        let before = self.before.take();
        CALL.with(|current| *current.borrow_mut() = before);
    }
}

/// Whether the call this thread works for has ended (never, outside one:
/// the library used directly runs each operation to its end).
pub(crate) fn call_ended() -> bool {
    CALL.with(|call| {
        call.borrow()
            .as_ref()
            .is_some_and(|call| call.ended.load(Ordering::Relaxed))
    })
}

/// The error a read stops with once its call has ended.
pub(crate) fn ended_reading() -> std::io::Error {
    std::io::Error::other("the call ended before the file was read")
}

/// By when the waits of the call this thread works for must be over (the
/// wait for a place to run counted), if it works for one.
pub(crate) fn wait_until() -> Option<Instant> {
    CALL.with(|call| call.borrow().as_ref().map(|call| call.wait_until))
}

#[cfg(test)]
mod tests {
    use super::{CallEnd, call_ended};

    #[test]
    fn a_thread_working_for_a_call_sees_its_end() {
        assert!(!call_ended());
        let end = CallEnd::default();
        let flag = end.flag();
        let (entered, told) = std::sync::mpsc::channel();
        let working = std::thread::spawn(move || {
            let working = flag.enter(std::time::Instant::now());
            let _ = entered.send(call_ended());
            while !call_ended() {
                std::thread::yield_now();
            }
            drop(working);
            call_ended()
        });
        assert_eq!(told.recv().ok(), Some(false));
        drop(end);
        // It saw the end, and no longer once it stopped working for the call.
        assert_eq!(working.join().ok(), Some(false));
        assert!(!call_ended());
    }

    /// This thread working for a call that has ended.
    fn an_ended_call() -> super::WorkingFor {
        let end = CallEnd::default();
        let flag = end.flag();
        drop(end);
        flag.enter(std::time::Instant::now())
    }

    #[test]
    fn the_operations_stop_for_a_call_that_ended() {
        use crate::{AnalysisType, AnalyzeDatasetInput, CountLinesInput, FindInput, Workspace};
        let root = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        for n in 0..5 {
            let written = std::fs::write(root.path().join(format!("{n}.csv")), "a,b\n1,2\n");
            assert!(written.is_ok());
        }
        let workspace = Workspace::open(root.path()).unwrap_or_else(|e| panic!("{e}"));
        let found = |w: &Workspace| w.find(FindInput::Glob("**/*.csv".into()));
        let count = |w: &Workspace| {
            w.count_lines(CountLinesInput {
                path: "0.csv".into(),
            })
        };
        let analyse = |w: &Workspace| {
            w.analyze_dataset(AnalyzeDatasetInput {
                path: "0.csv".into(),
                analysis_type: AnalysisType::Descriptive,
            })
        };
        // Outside a call, or for one going on, they run to their end.
        assert_eq!(found(&workspace).map(|f| f.matches.len()).ok(), Some(5));
        assert_eq!(count(&workspace).ok(), Some(2));
        assert!(analyse(&workspace).is_ok());
        // For one that ended: the walk stops at its first entry, the reads
        // at their first.
        let _ended = an_ended_call();
        let cut = found(&workspace).ok();
        assert_eq!(cut.map(|f| (f.matches.len(), f.truncated)), Some((0, true)));
        assert!(count(&workspace).is_err());
        assert!(analyse(&workspace).is_err());
    }
}
