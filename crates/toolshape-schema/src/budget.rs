//! Running one validation on a worker thread with a large stack and a deadline.

use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, mpsc};
use std::time::Duration;

use jsonschema::Validator;
use serde_json::Value;

use crate::error::{ValidationError, ValidationErrorKind};
use crate::report;

/// Stack of a validation worker: deep schemas and instances cannot overflow it.
const WORKER_STACK: usize = 256 * 1024 * 1024;

const RUNNING: u8 = 0;
const DONE: u8 = 1;
const ABANDONED: u8 = 2;

/// Counts the validations that overran their budget and are still running.
#[derive(Debug, Default)]
pub(crate) struct Runaways {
    running: AtomicUsize,
}

impl Runaways {
    pub(crate) fn count(&self) -> usize {
        self.running.load(Ordering::Acquire)
    }
}

/// What a worker needs to validate and report.
pub(crate) struct Job {
    pub(crate) validator: Arc<Validator>,
    pub(crate) instance: Value,
    pub(crate) max_violations: usize,
    pub(crate) max_message_chars: usize,
}

/// How a budgeted validation ended.
pub(crate) enum Outcome {
    /// It finished in time, with this result.
    Finished(Result<(), ValidationError>),
    /// It did not; the worker goes on alone and is counted as a runaway.
    OverBudget,
}

/// Marks a worker done when it ends: one abandoned as over budget (and
/// counted as a runaway) is counted out.
struct Ending {
    state: Arc<AtomicU8>,
    runaways: Arc<Runaways>,
}

impl Drop for Ending {
    fn drop(&mut self) {
        if self
            .state
            .compare_exchange(RUNNING, DONE, Ordering::AcqRel, Ordering::Acquire)
            .is_err()
        {
            self.runaways.running.fetch_sub(1, Ordering::AcqRel);
        }
    }
}

/// Runs `job` on a fresh worker thread and waits at most `budget` for it.
pub(crate) fn run(job: Job, budget: Duration, runaways: &Arc<Runaways>) -> Outcome {
    let (sender, receiver) = mpsc::sync_channel(1);
    let state = Arc::new(AtomicU8::new(RUNNING));
    let worker_state = Arc::clone(&state);
    let worker_runaways = Arc::clone(runaways);
    let spawned = std::thread::Builder::new()
        .name("toolshape-validate".into())
        .stack_size(WORKER_STACK)
        .spawn(move || {
            // However the worker ends, a panic included, it is no longer a runaway.
            let _ended = Ending {
                state: worker_state,
                runaways: worker_runaways,
            };
            let result = validate(&job);
            // Dropping a deep instance recurses too: do it here, on the large stack.
            drop(job);
            let _ = sender.send(result);
        });
    if spawned.is_err() {
        return Outcome::Finished(Err(ValidationErrorKind::Overloaded.into()));
    }
    match receiver.recv_timeout(budget) {
        Ok(result) => Outcome::Finished(result),
        // The worker ended without a result (the library panicked): no
        // runaway, and nothing to quarantine for.
        Err(mpsc::RecvTimeoutError::Disconnected) => {
            Outcome::Finished(Err(ValidationErrorKind::Failed.into()))
        }
        Err(mpsc::RecvTimeoutError::Timeout) => {
            runaways.running.fetch_add(1, Ordering::AcqRel);
            match state.compare_exchange(RUNNING, ABANDONED, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => Outcome::OverBudget,
                Err(_) => {
                    // It finished just now: its result is waiting.
                    runaways.running.fetch_sub(1, Ordering::AcqRel);
                    match receiver.try_recv() {
                        Ok(result) => Outcome::Finished(result),
                        Err(_) => Outcome::OverBudget,
                    }
                }
            }
        }
    }
}

/// Validates on the current thread: the fast path first, a report only on failure.
pub(crate) fn validate(job: &Job) -> Result<(), ValidationError> {
    validate_with(
        &job.validator,
        &job.instance,
        job.max_violations,
        job.max_message_chars,
    )
}

/// As [`validate`], borrowing its parts.
pub(crate) fn validate_with(
    validator: &Validator,
    instance: &Value,
    max_violations: usize,
    max_message_chars: usize,
) -> Result<(), ValidationError> {
    if validator.is_valid(instance) {
        return Ok(());
    }
    let (violations, truncated) = report::collect(
        validator.iter_errors(instance),
        max_violations,
        max_message_chars,
    );
    Err(ValidationErrorKind::Mismatch {
        violations,
        truncated,
    }
    .into())
}
