//! Handshake sessions (`Mcp-Session-Id`): bounded in number, expiring when idle.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use tokio::sync::Notify;

use super::super::dispatch::InFlight;
use super::super::session::Session;

/// One peer's handshake state over HTTP.
#[derive(Default)]
pub(crate) struct HttpSession {
    pub(crate) session: Session,
    pub(crate) in_flight: InFlight,
    last_used: Mutex<Option<Instant>>,
    ended: AtomicBool,
    ending: Notify,
}

impl HttpSession {
    /// Marks the session ended (deleted or expired), waking [`HttpSession::ended`].
    fn end(&self) {
        self.ended.store(true, Ordering::Release);
        self.ending.notify_waiters();
    }

    /// Resolves once the session has ended: its streams then end too.
    pub(crate) async fn ended(&self) {
        loop {
            // Registered before the check, so an `end` in between is not missed.
            let ending = self.ending.notified();
            if self.ended.load(Ordering::Acquire) {
                return;
            }
            ending.await;
        }
    }

    fn touch(&self) {
        *self
            .last_used
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(Instant::now());
    }

    fn idle_for(&self) -> Duration {
        self.last_used
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .map_or(Duration::ZERO, |at| at.elapsed())
    }
}

/// Why a session could not be had.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SessionError {
    /// No such session, or it expired.
    Unknown,
    /// Too many sessions are open.
    Full,
    /// No random session id could be made.
    NoRandomness,
}

/// The open sessions.
pub(crate) struct Sessions {
    open: Mutex<HashMap<String, Arc<HttpSession>>>,
    max: usize,
    idle: Duration,
}

impl Sessions {
    pub(crate) fn new(max: usize, idle: Duration) -> Self {
        Sessions {
            open: Mutex::default(),
            max,
            idle,
        }
    }

    fn open(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<HttpSession>>> {
        self.open.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Opens a session under a fresh, unguessable id.
    pub(crate) fn create(&self) -> Result<(String, Arc<HttpSession>), SessionError> {
        let mut bytes = [0u8; 16];
        getrandom::fill(&mut bytes).map_err(|_| SessionError::NoRandomness)?;
        let id: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        let mut open = self.open();
        if open.len() >= self.max {
            retain_live(&mut open, self.idle);
            if open.len() >= self.max {
                return Err(SessionError::Full);
            }
        }
        let session = Arc::new(HttpSession::default());
        session.touch();
        open.insert(id.clone(), Arc::clone(&session));
        Ok((id, session))
    }

    /// The live session named `id`.
    pub(crate) fn get(&self, id: &str) -> Result<Arc<HttpSession>, SessionError> {
        let mut open = self.open();
        let session = open.get(id).cloned().ok_or(SessionError::Unknown)?;
        if session.idle_for() >= self.idle {
            open.remove(id);
            session.end();
            return Err(SessionError::Unknown);
        }
        session.touch();
        Ok(session)
    }

    /// Ends a session; says whether it existed.
    pub(crate) fn remove(&self, id: &str) -> bool {
        let removed = self.open().remove(id);
        removed.inspect(|session| session.end()).is_some()
    }

    /// Drops the sessions idle for too long.
    pub(crate) fn expire(&self) {
        retain_live(&mut self.open(), self.idle);
    }

    pub(crate) fn idle_timeout(&self) -> Duration {
        self.idle
    }
}

/// Drops (and ends) the sessions idle for `idle` or longer.
fn retain_live(open: &mut HashMap<String, Arc<HttpSession>>, idle: Duration) {
    open.retain(|_, session| {
        let live = session.idle_for() < idle;
        if !live {
            session.end();
        }
        live
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sessions_are_bounded_and_expire() {
        let sessions = Sessions::new(2, Duration::from_millis(50));
        let (a, _) = sessions.create().unwrap();
        let (b, _) = sessions.create().unwrap();
        assert_ne!(a, b);
        assert_eq!(a.len(), 32);
        assert!(matches!(sessions.create(), Err(SessionError::Full)));
        assert!(sessions.get(&a).is_ok());
        std::thread::sleep(Duration::from_millis(60));
        assert!(matches!(sessions.get(&a), Err(SessionError::Unknown)));
        assert!(sessions.create().is_ok(), "expired sessions make room");
        assert!(!sessions.remove("nope"));
    }
}
