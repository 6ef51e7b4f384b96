//! The one thread every UI Automation call runs on.
//!
//! UI Automation is COM: its objects belong to the apartment that created
//! them, and `uiautomation`'s `UIAutomation::new` joins the calling thread
//! to the multithreaded apartment. So one dedicated thread creates the
//! client, owns every element the session has seen ([`Registry`]), and runs
//! the session's calls in order; async code sends it a closure and awaits
//! the answer. A call that outlives the step's deadline leaves the step (the
//! session stops waiting for it), and the thread finishes it before the
//! next one.

use qa_core::DriverError;
use qa_desktop::DesktopCode;
use std::collections::HashMap;
use std::sync::mpsc;
use std::sync::Arc;
use std::time::Duration;
use uiautomation::{UIAutomation, UIElement};

/// Which element: the application (a synthetic root whose children are its
/// top-level windows) or one element by its runtime id.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum Key {
    /// The application.
    App,
    /// An element, by `GetRuntimeId`.
    Runtime(Arc<[i32]>),
}

/// Longest any call is waited for even when the caller sets no deadline: a
/// provider that never answers must not hang the run.
const CALL_BOUND: Duration = Duration::from_secs(60);

/// Elements kept past this many are dropped unless the last walk saw them.
const KEEP: usize = 20_000;

/// The elements the session has seen, by runtime id: a step's node names
/// one by its key, and the action finds the live element here.
#[derive(Default)]
pub(crate) struct Registry {
    map: HashMap<Arc<[i32]>, (UIElement, u64)>,
    generation: u64,
}

impl Registry {
    /// Records `element` under `id` for the current walk.
    pub fn put(&mut self, id: Arc<[i32]>, element: UIElement) {
        self.map.insert(id, (element, self.generation));
    }

    /// The live element a key names (`None`: never seen, or forgotten).
    pub fn get(&self, key: &Key) -> Option<UIElement> {
        match key {
            Key::App => None,
            Key::Runtime(id) => self.map.get(id).map(|(e, _)| e.clone()),
        }
    }

    /// Ends a walk: elements earlier walks saw and this one did not are
    /// forgotten once there are many.
    pub fn end_walk(&mut self) {
        if self.map.len() > KEEP {
            let g = self.generation;
            self.map.retain(|_, (_, seen)| *seen == g);
        }
        self.generation += 1;
    }
}

/// What the COM thread owns.
pub(crate) struct Uia {
    /// The UI Automation client.
    pub auto: UIAutomation,
    /// Every element seen.
    pub elements: Registry,
}

type Job = Box<dyn FnOnce(&mut Uia) + Send>;

/// A handle on the COM thread; the thread ends when the last handle drops.
#[derive(Clone)]
pub(crate) struct Com {
    tx: mpsc::Sender<Job>,
}

impl Com {
    /// Starts the thread and creates the UI Automation client on it.
    pub fn start() -> Result<Com, String> {
        let (tx, rx) = mpsc::channel::<Job>();
        let (ready_tx, ready_rx) = mpsc::channel::<Result<(), String>>();
        std::thread::Builder::new()
            .name("ui-qa-uia".into())
            .spawn(move || {
                let auto = match UIAutomation::new() {
                    Ok(a) => {
                        let _ = ready_tx.send(Ok(()));
                        a
                    }
                    Err(e) => {
                        let _ = ready_tx.send(Err(e.to_string()));
                        return;
                    }
                };
                let mut uia = Uia {
                    auto,
                    elements: Registry::default(),
                };
                while let Ok(job) = rx.recv() {
                    job(&mut uia);
                }
            })
            .map_err(|e| format!("cannot start the UI Automation thread: {e}"))?;
        match ready_rx.recv() {
            Ok(Ok(())) => Ok(Com { tx }),
            Ok(Err(e)) => Err(e),
            Err(_) => Err("the UI Automation thread ended while starting".into()),
        }
    }

    /// Runs `f` on the COM thread and returns its answer.
    pub async fn call<R: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Uia) -> R + Send + 'static,
    ) -> Result<R, DriverError> {
        let (tx, rx) = tokio::sync::oneshot::channel();
        self.tx
            .send(Box::new(move |u: &mut Uia| {
                let _ = tx.send(f(u));
            }))
            .map_err(|_| gone())?;
        match tokio::time::timeout(CALL_BOUND, rx).await {
            Ok(Ok(r)) => Ok(r),
            Ok(Err(_)) => Err(gone()),
            Err(_) => Err(DriverError::new(
                DesktopCode::AppNotAccessible,
                format!(
                    "the application's UI Automation provider did not answer within {} s",
                    CALL_BOUND.as_secs()
                ),
            )
            .with_remediation("the application is hung or busy; check that it responds to input")),
        }
    }
}

fn gone() -> DriverError {
    DriverError::new(
        DesktopCode::AppNotAccessible,
        "the UI Automation thread has ended",
    )
}
