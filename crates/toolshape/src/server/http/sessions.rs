//! Handshake sessions (`Mcp-Session-Id`): bounded in number, expiring when
//! idle (no request for the idle time, no call running and no GET stream
//! open: a client listening for the server's messages is still there; the
//! stream's keep-alives end it when its client is gone). When the table
//! is full, the least recently used idle session (no call in flight, no open
//! stream) makes room for a new one, so abandoned sessions never lock new
//! clients out. A session has at most one GET
//! stream: a new one replaces the old.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use tokio::sync::{Notify, watch};

use super::super::in_flight::InFlight;
use super::super::session::Session;

/// One peer's handshake state over HTTP.
#[derive(Debug)]
pub(crate) struct HttpSession {
    pub(crate) session: Session,
    pub(crate) in_flight: InFlight,
    last_used: Mutex<Instant>,
    ended: AtomicBool,
    ending: Notify,
    /// Open GET streams (at most one for long: a new one replaces the old).
    streams: AtomicUsize,
    /// Bumped by each new GET stream; an older stream ends when it changes.
    stream_generation: watch::Sender<u64>,
}

impl HttpSession {
    fn new(caller: Option<Arc<str>>) -> Self {
        HttpSession {
            session: Session::of_caller(caller),
            in_flight: InFlight::default(),
            last_used: Mutex::new(Instant::now()),
            ended: AtomicBool::new(false),
            ending: Notify::new(),
            streams: AtomicUsize::new(0),
            stream_generation: watch::channel(0).0,
        }
    }

    /// Marks the session ended (deleted, expired or evicted), waking [`HttpSession::ended`].
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
            .unwrap_or_else(PoisonError::into_inner) = Instant::now();
    }

    fn last_used(&self) -> Instant {
        *self
            .last_used
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    fn idle_for(&self) -> Duration {
        self.last_used().elapsed()
    }

    /// Whether the session may be evicted to make room: nothing in flight,
    /// no stream open.
    fn is_idle(&self) -> bool {
        self.in_flight.len() == 0 && self.streams.load(Ordering::Acquire) == 0
    }

    /// Whether the session has expired: no request for `idle`, no call
    /// running and no stream open.
    fn has_expired(&self, idle: Duration) -> bool {
        self.idle_for() >= idle && self.is_idle()
    }

    /// Opens the session's GET stream, replacing any older one. The stream
    /// ends when the returned guard's [`StreamSlot::replaced`] resolves.
    pub(crate) fn open_stream(self: &Arc<Self>) -> StreamSlot {
        self.streams.fetch_add(1, Ordering::AcqRel);
        let mut generation = 0;
        self.stream_generation.send_modify(|g| {
            *g += 1;
            generation = *g;
        });
        StreamSlot {
            session: Arc::clone(self),
            generation,
            changes: self.stream_generation.subscribe(),
        }
    }
}

/// One open GET stream of a session.
pub(crate) struct StreamSlot {
    session: Arc<HttpSession>,
    generation: u64,
    changes: watch::Receiver<u64>,
}

impl StreamSlot {
    /// Resolves when a newer stream replaced this one.
    pub(crate) async fn replaced(mut self) {
        let generation = self.generation;
        let _ = self.changes.wait_for(|g| *g != generation).await;
    }
}

impl Drop for StreamSlot {
    fn drop(&mut self) {
        self.session.streams.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Why a session could not be had.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SessionError {
    /// No such session, or it expired.
    Unknown,
    /// Every session is busy (a call in flight or a stream open).
    Full,
    /// No random session id could be made.
    NoRandomness,
}

/// The open sessions.
#[derive(Debug)]
pub(crate) struct Sessions {
    open: Mutex<HashMap<String, Arc<HttpSession>>>,
    max: usize,
    idle: Duration,
}

impl Sessions {
    pub(crate) fn new(max: usize, idle: Duration) -> Self {
        Sessions {
            open: Mutex::default(),
            max: max.max(1),
            idle,
        }
    }

    fn open(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<HttpSession>>> {
        self.open.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Opens a session under a fresh, unguessable id, making room when full.
    pub(crate) fn create(
        &self,
        caller: Option<Arc<str>>,
    ) -> Result<(String, Arc<HttpSession>), SessionError> {
        let mut bytes = [0u8; 16];
        getrandom::fill(&mut bytes).map_err(|_| SessionError::NoRandomness)?;
        let id: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        let mut open = self.open();
        if open.len() >= self.max {
            retain_live(&mut open, self.idle);
        }
        if open.len() >= self.max {
            let victim = open
                .iter()
                .filter(|(_, session)| session.is_idle())
                .min_by_key(|(_, session)| session.last_used())
                .map(|(id, _)| id.clone());
            let Some(victim) = victim else {
                return Err(SessionError::Full);
            };
            if let Some(session) = open.remove(&victim) {
                tracing::debug!("evicted the least recently used idle session to make room");
                session.end();
            }
        }
        let session = Arc::new(HttpSession::new(caller));
        open.insert(id.clone(), Arc::clone(&session));
        Ok((id, session))
    }

    /// The live session named `id`.
    pub(crate) fn get(&self, id: &str) -> Result<Arc<HttpSession>, SessionError> {
        let mut open = self.open();
        let session = open.get(id).cloned().ok_or(SessionError::Unknown)?;
        if session.has_expired(self.idle) {
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

/// Drops (and ends) the sessions unused for `idle` or longer with nothing running.
fn retain_live(open: &mut HashMap<String, Arc<HttpSession>>, idle: Duration) {
    open.retain(|_, session| {
        let live = !session.has_expired(idle);
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
    fn sessions_expire_and_the_least_recently_used_idle_one_makes_room() {
        let sessions = Sessions::new(2, Duration::from_millis(50));
        let (a, _) = sessions.create(None).unwrap();
        std::thread::sleep(Duration::from_millis(2));
        let (b, _) = sessions.create(None).unwrap();
        assert_ne!(a, b);
        assert_eq!(a.len(), 32);
        // Full: `a` is the least recently used idle session.
        let (c, _) = sessions.create(None).unwrap();
        assert!(matches!(sessions.get(&a), Err(SessionError::Unknown)));
        assert!(sessions.get(&b).is_ok() && sessions.get(&c).is_ok());
        std::thread::sleep(Duration::from_millis(60));
        assert!(matches!(sessions.get(&b), Err(SessionError::Unknown)));
        assert!(!sessions.remove("nope"));
    }

    #[test]
    fn busy_sessions_are_never_evicted() {
        let sessions = Sessions::new(1, Duration::from_secs(60));
        let (_, busy) = sessions.create(None).unwrap();
        let _stream = busy.open_stream();
        assert!(matches!(sessions.create(None), Err(SessionError::Full)));
    }

    #[test]
    fn an_open_stream_keeps_its_session_alive_and_its_end_lets_it_expire() {
        let sessions = Sessions::new(4, Duration::from_millis(30));
        let (listening, session) = sessions.create(None).unwrap();
        let (quiet, _) = sessions.create(None).unwrap();
        let stream = session.open_stream();
        std::thread::sleep(Duration::from_millis(40));
        sessions.expire();
        assert!(matches!(sessions.get(&quiet), Err(SessionError::Unknown)));
        assert!(
            sessions.get(&listening).is_ok(),
            "a listening session expired"
        );
        drop(stream);
        std::thread::sleep(Duration::from_millis(40));
        sessions.expire();
        assert!(matches!(
            sessions.get(&listening),
            Err(SessionError::Unknown)
        ));
    }
}
