//! The state a session shares with its event pump: the connection, the
//! allowlist and blocked counts, the [`PageState`] behind a lock, a change
//! counter waiters watch instead of polling, and taps that hand raw events
//! of chosen kinds to a step (a drag, a download, a trace).

use crate::cdp::{Cdp, CdpEvent, Event};
use crate::contain::{Allowlist, BlockedRequests, BlockedSink};
use crate::state::PageState;
use qa_core::{Deadline, Note};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;
use tokio::sync::{mpsc, watch};

/// A subscription to raw events by kind (see [`Shared::tap`]).
struct Tap {
    id: u64,
    events: &'static [Event],
    tx: mpsc::UnboundedSender<CdpEvent>,
}

/// Receives the tapped events; unsubscribes when dropped.
pub(crate) struct TapGuard {
    sh: Arc<Shared>,
    id: u64,
    /// The events, in wire order.
    pub rx: mpsc::UnboundedReceiver<CdpEvent>,
}

impl Drop for TapGuard {
    fn drop(&mut self) {
        self.sh
            .taps
            .lock()
            .expect("taps lock")
            .retain(|t| t.id != self.id);
    }
}

/// State shared by the session and the pump.
pub(crate) struct Shared {
    /// The connection.
    pub cdp: Arc<Cdp>,
    /// The allowlist.
    pub allow: Allowlist,
    /// Blocked requests per origin, from every layer (Fetch interception,
    /// the WebSocket guard and the network proxy).
    pub blocked: BlockedSink,
    /// The state.
    state: Mutex<PageState>,
    /// Change counter for waiters.
    pub changed: watch::Sender<u64>,
    /// Session start.
    t0: Instant,
    taps: Mutex<Vec<Tap>>,
    next_tap: AtomicU64,
    /// Events the pump has handled so far.
    handled: watch::Sender<u64>,
    /// The run's video recordings (set once, before the first page
    /// attaches, when the run records video).
    pub video: std::sync::OnceLock<Arc<crate::recorders::Recorders>>,
    /// The run's auth profile (set once, before the first page loads): its
    /// header goes on requests to its origins, and only to them.
    pub auth: std::sync::OnceLock<Arc<qa_core::auth::AuthProfile>>,
    /// While storage is seeded: the one URL the interception answers itself
    /// with a blank document (the application never sees it).
    pub seed_url: Mutex<Option<String>>,
    /// The user the browser runs as when it is not ui-qa's own (root):
    /// scratch the browser reads or writes is made for it.
    pub browser_user: Option<qa_core::evidence::HelperUser>,
    /// The run's own browser context in a browser it did not start (set
    /// once, before any page is made): only that context's pages are
    /// attached, and browser-wide settings are never changed.
    pub context: std::sync::OnceLock<String>,
    /// The page (target id) the run drives in a browser it did not start,
    /// with `"page": "existing"` (set once, before it is attached).
    pub existing: std::sync::OnceLock<String>,
    /// Set once when the browser's renderer rejects DevTools key events
    /// (Qt WebEngine 5): which browser, for the refusal of a key press.
    pub no_key_events: std::sync::OnceLock<String>,
}

impl Shared {
    /// Creates the shared state.
    pub fn new(
        cdp: Arc<Cdp>,
        allow: Allowlist,
        blocked: BlockedSink,
        browser_user: Option<qa_core::evidence::HelperUser>,
    ) -> Arc<Shared> {
        let (changed, _) = watch::channel(0);
        Arc::new(Shared {
            cdp,
            allow,
            blocked,
            state: Mutex::new(PageState::default()),
            changed,
            t0: Instant::now(),
            taps: Mutex::new(Vec::new()),
            next_tap: AtomicU64::new(1),
            handled: watch::channel(0).0,
            video: std::sync::OnceLock::new(),
            auth: std::sync::OnceLock::new(),
            seed_url: Mutex::new(None),
            browser_user,
            context: std::sync::OnceLock::new(),
            existing: std::sync::OnceLock::new(),
            no_key_events: std::sync::OnceLock::new(),
        })
    }

    /// Subscribes to every event whose kind is in `events` (any session)
    /// from now on, until the guard is dropped.
    pub fn tap(self: &Arc<Self>, events: &'static [Event]) -> TapGuard {
        let (tx, rx) = mpsc::unbounded_channel();
        let id = self.next_tap.fetch_add(1, Ordering::SeqCst);
        self.taps
            .lock()
            .expect("taps lock")
            .push(Tap { id, events, tx });
        TapGuard {
            sh: self.clone(),
            id,
            rx,
        }
    }

    /// Hands `ev` to every tap that asked for its kind.
    pub fn forward(&self, ev: &CdpEvent) {
        let Some(kind) = ev.event else { return };
        let taps = self.taps.lock().expect("taps lock");
        for t in taps.iter() {
            if t.events.contains(&kind) {
                let _ = t.tx.send(ev.clone());
            }
        }
    }

    /// Counts one more event as handled (by the pump).
    pub fn handled_one(&self) {
        self.handled.send_modify(|v| *v += 1);
    }

    /// Waits until the pump has handled (and forwarded to taps) every event
    /// the connection received before this call. After a call returns, this
    /// makes every event sent before its answer visible. `false` on deadline.
    pub async fn caught_up(&self, deadline: Deadline) -> bool {
        let target = self.cdp.events_received();
        let mut rx = self.handled.subscribe();
        loop {
            if *rx.borrow_and_update() >= target {
                return true;
            }
            if deadline.run(rx.changed()).await.is_none() {
                return false;
            }
        }
    }

    /// Every blocked request so far (a snapshot).
    pub fn blocked(&self) -> BlockedRequests {
        self.blocked.lock().expect("blocked lock").clone()
    }

    /// Counts one blocked request to `origin`.
    pub fn record_blocked(&self, origin: &str) {
        self.blocked.lock().expect("blocked lock").record(origin);
        self.bump();
    }

    /// Whether the run drives a browser it did not start.
    pub fn attached(&self) -> bool {
        self.context.get().is_some() || self.existing.get().is_some()
    }

    /// Locks the state.
    pub fn st(&self) -> MutexGuard<'_, PageState> {
        self.state.lock().expect("page state lock")
    }

    /// Adds a note for the result.
    pub fn note(&self, note: Note) {
        self.st().notes.push(note);
    }

    /// Wakes every waiter (something changed).
    pub fn bump(&self) {
        self.changed.send_modify(|v| *v = v.wrapping_add(1));
    }

    /// ms since the session started.
    pub fn now_ms(&self) -> u64 {
        self.t0.elapsed().as_millis() as u64
    }
}
