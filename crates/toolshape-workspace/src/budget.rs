//! One memory budget shared by every call on a workspace.
//!
//! Each tool call first reserves the most memory it can use (its worst case,
//! from the bounds in [`crate::limits`]), and gives it back when it returns.
//! A call whose reservation does not fit waits, in arrival order, for others
//! to finish, at most [`MemoryBudget::wait`]; then it is refused as busy.
//! So however many calls arrive at once, the tools' own work never holds
//! more than the budget.

use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use crate::error::WorkspaceError;
use crate::limits::{MEMORY_BUDGET_BYTES, MEMORY_BUDGET_WAIT};

/// How often a call waiting for room looks whether it has ended.
const CALL_END_CHECK: Duration = Duration::from_millis(100);

#[derive(Debug, Default)]
struct State {
    /// Bytes reserved by running calls.
    used: u64,
    /// Waiting calls by ticket, oldest first; only the first may take room.
    queue: VecDeque<u64>,
    next_ticket: u64,
}

#[derive(Debug)]
struct Shared {
    state: Mutex<State>,
    freed: Condvar,
}

/// A server-wide memory budget for the tools' work (cheap to clone: clones
/// share the budget).
#[derive(Debug, Clone)]
pub struct MemoryBudget {
    total: u64,
    wait: Duration,
    shared: Arc<Shared>,
}

impl Default for MemoryBudget {
    fn default() -> Self {
        Self::new(MEMORY_BUDGET_BYTES, MEMORY_BUDGET_WAIT)
    }
}

/// Memory held by one call; given back when dropped.
#[derive(Debug)]
#[must_use = "the reservation is given back as soon as it is dropped"]
pub(crate) struct Reservation {
    bytes: u64,
    shared: Arc<Shared>,
}

impl Drop for Reservation {
    fn drop(&mut self) {
        let mut state = lock(&self.shared.state);
        state.used = state.used.saturating_sub(self.bytes);
        drop(state);
        self.shared.freed.notify_all();
    }
}

fn lock(state: &Mutex<State>) -> MutexGuard<'_, State> {
    // The state stays consistent whatever a panicking holder did.
    state.lock().unwrap_or_else(PoisonError::into_inner)
}

impl MemoryBudget {
    /// A budget of `total_bytes`; a call waits at most `wait` for room (a
    /// year at most: a longer wait, `Duration::MAX` say, is a year).
    pub fn new(total_bytes: u64, wait: Duration) -> Self {
        Self {
            total: total_bytes,
            wait: wait.min(Duration::from_secs(365 * 24 * 60 * 60)),
            shared: Arc::new(Shared {
                state: Mutex::new(State::default()),
                freed: Condvar::new(),
            }),
        }
    }

    /// The whole budget, in bytes.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// How long a call waits for room before it is refused as busy.
    pub fn wait(&self) -> Duration {
        self.wait
    }

    /// Bytes reserved by calls running now.
    pub fn in_use(&self) -> u64 {
        lock(&self.shared.state).used
    }

    /// Reserves `bytes` for a call of `tool`, waiting (first come, first
    /// served) at most [`Self::wait`] for room.
    pub(crate) fn reserve(
        &self,
        tool: &'static str,
        bytes: u64,
    ) -> Result<Reservation, WorkspaceError> {
        if bytes > self.total {
            return Err(WorkspaceError::OverBudget {
                tool,
                needed: bytes,
                budget: self.total,
            });
        }
        // Within the call's own wait, when it waited already for a place.
        let started = Instant::now();
        let own = started + self.wait;
        let deadline = crate::call_end::wait_until().map_or(own, |call| call.min(own));
        let mut state = lock(&self.shared.state);
        let ticket = state.next_ticket;
        state.next_ticket += 1;
        state.queue.push_back(ticket);
        loop {
            let first = state.queue.front() == Some(&ticket);
            if first && state.used + bytes <= self.total {
                state.queue.pop_front();
                state.used += bytes;
                drop(state);
                // The next in line may fit too.
                self.shared.freed.notify_all();
                return Ok(Reservation {
                    bytes,
                    shared: Arc::clone(&self.shared),
                });
            }
            let now = Instant::now();
            let given_up = if crate::call_end::call_ended() {
                Some(WorkspaceError::CallEnded)
            } else {
                (now >= deadline).then(|| WorkspaceError::Busy {
                    tool,
                    needed: bytes,
                    budget: self.total,
                    waited: deadline.saturating_duration_since(started),
                })
            };
            if let Some(error) = given_up {
                // Out of the line: the next in it may take the room.
                state.queue.retain(|&waiting| waiting != ticket);
                drop(state);
                self.shared.freed.notify_all();
                return Err(error);
            }
            // In steps, to see the call end while waiting.
            let step = (deadline - now).min(CALL_END_CHECK);
            state = self
                .shared
                .freed
                .wait_timeout(state, step)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1024 * 1024;

    /// A thread asking a full `budget` for 1 MiB for a call whose waits are
    /// over by `wait_until`; the call's end, to drop.
    fn waiting_for_a_mib(
        budget: &MemoryBudget,
        wait_until: Instant,
    ) -> (
        crate::call_end::CallEnd,
        std::thread::JoinHandle<Result<(), WorkspaceError>>,
    ) {
        let end = crate::call_end::CallEnd::default();
        let flag = end.flag();
        let waiting = budget.clone();
        let thread = std::thread::spawn(move || {
            let _working = flag.enter(wait_until);
            waiting.reserve("t", MIB).map(drop)
        });
        (end, thread)
    }

    #[test]
    fn a_call_that_ends_while_waiting_for_room_stops_waiting() {
        let budget = MemoryBudget::new(10 * MIB, Duration::from_secs(30));
        let _all = budget.reserve("t", 10 * MIB);
        let started = Instant::now();
        let (end, waited) = waiting_for_a_mib(&budget, started + Duration::from_secs(30));
        std::thread::sleep(Duration::from_millis(100));
        drop(end);
        let outcome = waited.join().ok();
        assert!(matches!(outcome, Some(Err(WorkspaceError::CallEnded))));
        assert!(started.elapsed() < Duration::from_secs(10));
        // It left the line: the next in it is not held up.
        assert_eq!(lock(&budget.shared.state).queue.len(), 0);
    }

    #[test]
    fn a_call_waits_for_room_only_as_long_as_it_has_left() {
        let budget = MemoryBudget::new(10 * MIB, Duration::from_secs(30));
        let _all = budget.reserve("t", 10 * MIB);
        let started = Instant::now();
        // The call waited for a place already: 200 ms are left of its wait.
        let (end, waited) = waiting_for_a_mib(&budget, started + Duration::from_millis(200));
        let outcome = waited.join().ok();
        assert!(matches!(outcome, Some(Err(WorkspaceError::Busy { .. }))));
        assert!(started.elapsed() < Duration::from_secs(10));
        drop(end);
    }

    #[test]
    fn reservations_are_given_back() {
        let budget = MemoryBudget::new(10 * MIB, Duration::from_millis(50));
        let a = budget.reserve("t", 6 * MIB);
        assert!(a.is_ok());
        assert_eq!(budget.in_use(), 6 * MIB);
        assert!(matches!(
            budget.reserve("t", 6 * MIB),
            Err(WorkspaceError::Busy { .. })
        ));
        drop(a);
        assert_eq!(budget.in_use(), 0);
        assert!(budget.reserve("t", 10 * MIB).is_ok());
        assert!(matches!(
            budget.reserve("t", 11 * MIB),
            Err(WorkspaceError::OverBudget { .. })
        ));
    }

    #[test]
    fn a_waiting_call_gets_room_when_another_finishes() {
        let budget = MemoryBudget::new(10 * MIB, Duration::from_secs(10));
        let held = budget.reserve("t", 8 * MIB);
        let other = budget.clone();
        let waiter = std::thread::spawn(move || other.reserve("t", 8 * MIB).map(|_| ()));
        std::thread::sleep(Duration::from_millis(100));
        drop(held);
        assert!(matches!(waiter.join(), Ok(Ok(()))));
    }

    #[test]
    fn calls_are_served_in_arrival_order() {
        // A large call first in line is not overtaken by small ones.
        let budget = MemoryBudget::new(10 * MIB, Duration::from_secs(10));
        let held = budget.reserve("t", 6 * MIB);
        let big = {
            let budget = budget.clone();
            std::thread::spawn(move || budget.reserve("t", 8 * MIB).map(|_| Instant::now()))
        };
        std::thread::sleep(Duration::from_millis(100));
        let small_budget = MemoryBudget {
            wait: Duration::from_millis(100),
            ..budget.clone()
        };
        assert!(
            matches!(
                small_budget.reserve("t", MIB),
                Err(WorkspaceError::Busy { .. })
            ),
            "a small call waits behind the big one"
        );
        drop(held);
        assert!(matches!(big.join(), Ok(Ok(_))));
        assert_eq!(budget.in_use(), 0);
    }
}
