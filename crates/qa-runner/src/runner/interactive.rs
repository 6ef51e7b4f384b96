//! Interactive sessions: the same run as a flow, one step at a time.
//!
//! [`Interactive::start`] opens a target exactly as `ui-qa run` does (run
//! directory, driver selection, process ownership, secrets, evidence);
//! [`Interactive::observe`] returns a bounded [`Observation`] whose
//! actionable elements carry references (`@e1`, …), numbered across the
//! session so that a reference of one observation never names an element
//! of another;
//! [`Interactive::act`] runs one step on a reference or a locator and
//! records it like a flow step. An action (anything that may change the
//! surface) makes every earlier reference stale: a stale reference is
//! refused with an error naming the current observation, never guessed.
//! [`Interactive::finish`] writes the same result document and evidence as
//! a flow run and can export the successful steps as a flow file that
//! `ui-qa run` replays; [`Interactive::abort`] ends the session as
//! cancelled.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use qa_runner::runner::interactive::{Interactive, On, SessionConfig};
//! # let drivers: Vec<std::sync::Arc<dyn qa_core::SurfaceDriver>> = Vec::new();
//! let target = serde_json::json!({ "url": "http://127.0.0.1:8080/login" });
//! let mut s = Interactive::start(&drivers, target, SessionConfig::new(".ui-qa")).await?;
//! let seen = s.observe().await?;
//! let name = seen.elements.iter().find(|e| e.name == "Username").unwrap();
//! let r = name.reference.clone().unwrap();
//! s.act(On::Ref(r), serde_json::json!({ "action": "fill", "value": "staff" })).await?;
//! let (result, _flow) = s.finish(Some("explored.jsonc".as_ref())).await;
//! println!("{:?}", result.status);
//! # Ok(()) }
//! ```

use super::record::Acc;
use super::{finalize, Ending, DEFAULT_CLEANUP_TIMEOUT};
use crate::progress::{NoProgress, Progress};
use qa_core::deadline::Deadline;
use qa_core::driver::{Host, RunOptions, SessionContext, SurfaceDriver, SurfaceSession};
use qa_core::evidence::Evidence;
use qa_core::flow::{Flow, Locator, StepClass};
use qa_core::observe::Observation;
use qa_core::process::ProcessOwner;
use qa_core::result::{RunResult, StepStatus};
use qa_core::secrets::Secrets;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

/// The keys of an observation whose values are element text (names,
/// values, screen text): a secret split across consecutive ones is
/// redacted in each ([`qa_core::Secrets::redact_across`]).
const TEXT_KEYS: &[&str] = &[
    "name",
    "value",
    "text",
    "description",
    "context",
    "title",
    "url",
];

/// How long a session may stay open by default (30 minutes).
pub const DEFAULT_SESSION_MS: u64 = 30 * 60 * 1000;

static NO_PROGRESS: NoProgress = NoProgress;

/// How a session is opened.
#[derive(Clone)]
pub struct SessionConfig {
    /// Workspace for the run directory (default `.ui-qa`).
    pub workspace: PathBuf,
    /// Driver options (browser path, virtual display; video and trace).
    pub options: RunOptions,
    /// Secrets to keep out of everything that leaves the session.
    pub secrets: Arc<Secrets>,
    /// The session's deadline in milliseconds.
    pub timeout_ms: u64,
    /// Fired to stop the session's launch or step in progress (see
    /// [`Interactive::canceller`]).
    pub cancel: super::Cancel,
}

impl SessionConfig {
    /// Defaults, with secrets from `UI_QA_SECRET_*`.
    pub fn new(workspace: impl Into<PathBuf>) -> SessionConfig {
        SessionConfig {
            workspace: workspace.into(),
            options: RunOptions::default(),
            secrets: Arc::new(Secrets::from_env()),
            timeout_ms: DEFAULT_SESSION_MS,
            cancel: super::Cancel::new(),
        }
    }
}

/// What a step acts on.
#[derive(Debug, Clone)]
pub enum On {
    /// A reference from an observation made since the last action (`@e3`).
    Ref(String),
    /// A flow locator.
    Locator(Box<Locator>),
    /// Nothing (a step without an element: `goto`, `sendKeys`, …).
    Nothing,
}

/// Why a session call was refused.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// No driver here can open the target, or the target is not valid.
    #[error("{0}")]
    Start(String),
    /// The target could not be opened: the run ended (its result says why).
    #[error("the session could not open its target: {}", .0.reason.as_deref().unwrap_or("see the result"))]
    NotOpened(Box<RunResult>),
    /// The reference belongs to an earlier observation.
    #[error("{reference} belongs to observation {of}, which an action made stale; observe again (current: {})", current.as_deref().unwrap_or("none yet"))]
    StaleRef {
        /// The reference.
        reference: String,
        /// The observation it came from.
        of: String,
        /// The current observation, if any.
        current: Option<String>,
    },
    /// The reference is not in the current observation.
    #[error("{reference} is not a reference of observation {}; observe to get references", current.as_deref().unwrap_or("(none yet)"))]
    UnknownRef {
        /// The reference.
        reference: String,
        /// The current observation, if any.
        current: Option<String>,
    },
    /// The element has a reference but no locator finds only it.
    #[error("{0} has no locator that finds only it; act on a locator instead")]
    NoLocator(String),
    /// The step is not a valid flow step for this target.
    #[error("not a valid step: {0}")]
    InvalidStep(String),
    /// The surface could not be observed.
    #[error("{0}")]
    Observe(String),
}

/// How one step went.
#[derive(Debug, Clone)]
pub struct ActOutcome {
    /// Passed, failed or timed out.
    pub status: StepStatus,
    /// Why it did not pass (redacted).
    pub reason: Option<String>,
    /// Whether earlier references are now stale (the step was an action).
    pub invalidated: bool,
}

/// One interactive session.
pub struct Interactive {
    session: Box<dyn SurfaceSession>,
    flow: Flow,
    target: serde_json::Value,
    acc: Acc,
    evidence: Arc<Evidence>,
    processes: Arc<ProcessOwner>,
    secrets: Arc<Secrets>,
    progress: Progress<'static>,
    deadline: Deadline,
    timeout_ms: u64,
    run_id: String,
    started_at: String,
    started: Instant,
    /// Observations so far (the id of the next one).
    observed: u64,
    /// The current observation's id (`None` after an action, until the
    /// next observation).
    current: Option<String>,
    /// References valid now: the observation each came from and its
    /// locator. Numbers are unique in the session, so a reference of an
    /// earlier observation never names an element of a later one.
    live: HashMap<String, (String, Option<Locator>)>,
    /// References handed out so far (the next one is `@e{handed_out + 1}`).
    handed_out: u64,
    /// References handed out by observations that are now stale: the
    /// observation each came from and the locator it stood for.
    stale: HashMap<String, (String, Option<Locator>)>,
    /// Fired to stop the step in progress (the session then ends).
    cancel: super::Cancel,
    /// The steps that passed, as flow JSON (for the export).
    recorded: Vec<serde_json::Value>,
}

/// A placeholder step per target kind (a flow needs one to parse).
fn placeholder(target: &serde_json::Value) -> serde_json::Value {
    if target.get("command").is_some() {
        serde_json::json!({ "action": "waitForStable" })
    } else if target.get("application").is_some() {
        serde_json::json!({ "action": "waitForWindow" })
    } else {
        serde_json::json!({ "action": "reload" })
    }
}

impl Interactive {
    /// Opens `target` (a flow's `target` object) with the first driver of
    /// `drivers` that can run it here.
    pub async fn start(
        drivers: &[Arc<dyn SurfaceDriver>],
        target: serde_json::Value,
        mut config: SessionConfig,
    ) -> Result<Interactive, SessionError> {
        // The session's own set: what its auth profile registers redacts
        // this session's output only.
        config.secrets = Arc::new(config.secrets.fork());
        let text = serde_json::json!({
            "name": "interactive session",
            "target": target,
            "steps": [placeholder(&target)],
        })
        .to_string();
        let mut flow = Flow::parse(&text, Path::new("."))
            .map_err(|e| SessionError::Start(format!("{} ({})", e.message, e.pointer)))?;
        flow.steps.clear();
        let started = Instant::now();
        let started_at = time::OffsetDateTime::now_utc()
            .format(&time::format_description::well_known::Rfc3339)
            .unwrap_or_default();
        let run_id = super::new_run_id();
        let evidence = Arc::new(
            Evidence::create(&config.workspace, &run_id, config.secrets.clone())
                .map_err(|e| SessionError::Start(e.to_string()))?,
        );
        let progress = Progress::open(&evidence, config.secrets.clone(), &NO_PROGRESS);
        if let Ok((_, mut f)) = evidence.root_file("flow.jsonc") {
            use std::io::Write;
            let _ = f.write_all(config.secrets.redact(&text).as_bytes());
        }
        let Some(selected) =
            crate::select::select(drivers, &flow, &Host::current(), &config.options).await
        else {
            return Err(SessionError::Start(format!(
                "no driver handles {} targets",
                flow.kind().as_str()
            )));
        };
        let mut acc = Acc::new(selected.selection.clone());
        acc.run_started = evidence.started();
        if config.options.redact_matchers {
            acc.matcher_view = Some(config.secrets.clone());
        }
        let processes = Arc::new(ProcessOwner::new());
        let deadline = Deadline::after_ms(config.timeout_ms);
        let ending = |acc: Acc, evidence: Arc<Evidence>, processes: Arc<ProcessOwner>| {
            let flow = flow.clone();
            let secrets = config.secrets.clone();
            let run_id = run_id.clone();
            let started_at = started_at.clone();
            async move {
                finalize(
                    Ending {
                        evidence: &evidence,
                        processes: &processes,
                        secrets: &secrets,
                        cleanup_timeout: DEFAULT_CLEANUP_TIMEOUT,
                        flow: &flow,
                        flow_text: None,
                        run_id,
                        started_at,
                        started,
                    },
                    acc,
                    Default::default(),
                )
                .await
            }
        };
        if !selected.probe.available() {
            acc.block_on_probe(
                &selected.driver.id().to_string(),
                selected.probe.missing.clone(),
            );
            let r = ending(acc, evidence.clone(), processes.clone()).await;
            return Err(SessionError::NotOpened(Box::new(r)));
        }
        let auth = match super::prepare_auth(&flow, &config.workspace, &config.secrets, &mut acc) {
            Some(a) => a,
            None => {
                let r = ending(acc, evidence.clone(), processes.clone()).await;
                return Err(SessionError::NotOpened(Box::new(r)));
            }
        };
        let ctx = SessionContext::new(
            evidence.clone(),
            processes.clone(),
            deadline,
            config.options.clone(),
            None,
        )
        .with_auth(auth);
        let cancel = config.cancel.clone();
        let opened = super::launch(
            selected.driver.as_ref(),
            &flow,
            ctx,
            config.timeout_ms,
            deadline,
            &cancel,
            &progress,
            &mut acc,
        )
        .await;
        let Some(session) = opened else {
            let r = ending(acc, evidence.clone(), processes.clone()).await;
            return Err(SessionError::NotOpened(Box::new(r)));
        };
        Ok(Interactive {
            session,
            flow,
            target,
            acc,
            evidence,
            processes,
            secrets: config.secrets.clone(),
            progress,
            deadline,
            timeout_ms: config.timeout_ms,
            run_id,
            started_at,
            started,
            observed: 0,
            current: None,
            live: HashMap::new(),
            handed_out: 0,
            stale: HashMap::new(),
            cancel,
            recorded: Vec::new(),
        })
    }

    /// The run directory (evidence, and at the end `result.json`).
    pub fn run_dir(&self) -> &Path {
        self.evidence.run_dir()
    }

    /// Observes the surface: a new observation id, with references for the
    /// elements one can act on (a terminal gives its screen instead).
    pub async fn observe(&mut self) -> Result<Observation, SessionError> {
        let mut o = self
            .session
            .elements(Deadline::after_ms(30_000).min(self.deadline))
            .await
            .map_err(|e| SessionError::Observe(self.secrets.redact(&e.to_string()).into_owned()))?;
        self.observed += 1;
        o.id = format!("o{}", self.observed);
        // The driver numbers from @e1; the session continues its own count.
        let base = self.handed_out;
        for e in &mut o.elements {
            if let Some(r) = &mut e.reference {
                if let Some(n) = r.strip_prefix("@e").and_then(|n| n.parse::<u64>().ok()) {
                    *r = format!("@e{}", base + n);
                    self.handed_out = self.handed_out.max(base + n);
                }
            }
        }
        // References of earlier observations stay valid until an action.
        for e in &o.elements {
            if let Some(r) = &e.reference {
                self.live
                    .insert(r.clone(), (o.id.clone(), e.locator.clone()));
            }
        }
        self.current = Some(o.id.clone());
        // Fail-closed: an observation that cannot be redacted is withheld,
        // never handed out raw.
        let withheld = || {
            SessionError::Observe(
                "the observation could not be redacted for the run's secrets; it was withheld"
                    .into(),
            )
        };
        let mut v = serde_json::to_value(&o).map_err(|_| withheld())?;
        self.secrets.redact_json_across(&mut v, TEXT_KEYS);
        self.secrets.redact_json(&mut v);
        serde_json::from_value(v).map_err(|_| withheld())
    }

    /// Runs one step (`step` is a flow step without its `locator`; `on`
    /// supplies it), records it like a flow step and returns how it went.
    pub async fn act(
        &mut self,
        on: On,
        step: impl Into<serde_json::Value>,
    ) -> Result<ActOutcome, SessionError> {
        let mut step: serde_json::Value = step.into();
        let Some(obj) = step.as_object_mut() else {
            return Err(SessionError::InvalidStep("a step is a JSON object".into()));
        };
        let locator = match &on {
            On::Ref(r) => Some(self.resolve_ref(r)?),
            On::Locator(l) => Some((**l).clone()),
            On::Nothing => None,
        };
        if let Some(l) = &locator {
            obj.insert(
                "locator".into(),
                serde_json::to_value(l).unwrap_or_default(),
            );
        }
        let (s, status) = self.run_step(&step).await?;
        let invalidated = s.class() == StepClass::Action;
        if invalidated {
            self.current = None;
            self.stale.extend(self.live.drain());
        }
        let reason = self.acc.steps.last().and_then(|r| r.reason.clone());
        if status == StepStatus::Passed {
            self.recorded.push(step);
        }
        Ok(ActOutcome {
            status,
            reason: reason.map(|r| self.secrets.redact(&r).into_owned()),
            invalidated,
        })
    }

    /// Parses `step` as a step of this target, appends it to the run's
    /// flow and runs it, recorded like a flow step.
    async fn run_step(
        &mut self,
        step: &serde_json::Value,
    ) -> Result<(qa_core::flow::Step, StepStatus), SessionError> {
        let mut s = qa_core::flow::Step::parse(self.flow.kind(), step.clone())
            .map_err(|e| SessionError::InvalidStep(format!("{} ({})", e.message, e.pointer)))?;
        s.index = self.flow.steps.len();
        self.flow.steps.push(s.clone());
        let status = super::steps::run_recorded(
            self.session.as_mut(),
            &s,
            self.deadline,
            self.timeout_ms,
            &self.cancel,
            &self.progress,
            &mut self.acc,
        )
        .await;
        Ok((s, status))
    }

    fn resolve_ref(&self, r: &str) -> Result<Locator, SessionError> {
        match self.live.get(r) {
            Some((_, Some(l))) => Ok(l.clone()),
            Some((_, None)) => Err(SessionError::NoLocator(r.to_string())),
            None => Err(match self.stale.get(r) {
                Some((of, _)) => SessionError::StaleRef {
                    reference: r.to_string(),
                    of: of.clone(),
                    current: self.current.clone(),
                },
                None => SessionError::UnknownRef {
                    reference: r.to_string(),
                    current: self.current.clone(),
                },
            }),
        }
    }

    /// The kind of target this session drives.
    pub fn kind(&self) -> qa_core::flow::TargetKind {
        self.flow.kind()
    }

    /// The current observation's id (`None` before the first observation
    /// and after an action, until the next one).
    pub fn current_observation(&self) -> Option<&str> {
        self.current.as_deref()
    }

    /// For a stale reference: the reference of the current observation
    /// whose locator is the one the stale reference stood for — a
    /// candidate to act on instead (never acted on without being asked).
    pub fn candidate_for(&self, stale: &str) -> Option<String> {
        let (_, Some(locator)) = self.stale.get(stale)? else {
            return None;
        };
        let current = self.current.as_ref()?;
        let mut found = self
            .live
            .iter()
            .filter(|(_, (of, l))| of == current && l.as_ref() == Some(locator))
            .map(|(r, _)| r.clone());
        let first = found.next()?;
        found.next().is_none().then_some(first)
    }

    /// A handle that stops the step in progress (for a server ending its
    /// sessions while one is mid-step).
    pub fn canceller(&self) -> super::Cancel {
        self.cancel.clone()
    }

    /// Writes `bytes` as an observation artifact of the run (scanned for
    /// secrets like all evidence); its path, or `None` if it was withheld.
    pub fn keep_observation(&self, name: &str, bytes: &[u8]) -> Option<PathBuf> {
        self.evidence
            .write(
                qa_core::evidence::ArtifactGroup::Observations,
                name,
                bytes,
                None,
            )
            .ok()
            .flatten()
            .map(|a| PathBuf::from(a.path))
    }

    /// Takes a screenshot as evidence (the surface's own, masked where it
    /// shows a secret) without recording it as a step of the exported flow
    /// or making references stale. Returns the PNG's path, or `None` when
    /// none was published (withheld, or the surface has none).
    pub async fn screenshot(&mut self) -> Result<Option<PathBuf>, SessionError> {
        let name = format!("observe-{}", self.observed + 1);
        // A terminal's picture comes with its text capture.
        let action = match self.kind() {
            qa_core::flow::TargetKind::Terminal => "capture",
            qa_core::flow::TargetKind::Browser | qa_core::flow::TargetKind::Desktop => "screenshot",
        };
        let step = serde_json::json!({ "action": action, "name": name });
        let (s, status) = self.run_step(&step).await?;
        if status != StepStatus::Passed {
            let reason = self.acc.steps.last().and_then(|r| r.reason.clone());
            return Err(SessionError::Observe(
                self.secrets
                    .redact(reason.as_deref().unwrap_or("the screenshot failed"))
                    .into_owned(),
            ));
        }
        Ok(self
            .evidence
            .artifacts()
            .into_iter()
            .rev()
            .find(|a| a.path.ends_with(".png") && a.step == Some(s.index + 1))
            .map(|a| PathBuf::from(a.path)))
    }

    /// The steps that passed, as a flow that `ui-qa run` replays.
    pub fn exported_flow(&self) -> serde_json::Value {
        serde_json::json!({
            "name": "exported interactive session",
            "target": self.target,
            "steps": self.recorded,
        })
    }

    /// Ends the session: closes the surface (ending what it started),
    /// writes `result.json` and `report.html`, and, with `export`, the
    /// passed steps as a flow file there: private (0600), never through a
    /// symlink, refused if the file exists.
    pub async fn finish(self, export: Option<&Path>) -> (RunResult, Option<PathBuf>) {
        let flow_json = self.exported_flow();
        let exported = export.and_then(|p| {
            let text = serde_json::to_string_pretty(&flow_json).ok()?;
            let text = self.secrets.redact(&text).into_owned();
            let mut f = qa_core::evidence::create_private_file(p).ok()?;
            use std::io::Write;
            f.write_all(text.as_bytes())
                .and_then(|()| f.write_all(b"\n"))
                .ok()
                .map(|()| p.to_path_buf())
        });
        (self.end(false).await, exported)
    }

    /// Ends the session as cancelled (the result says so).
    pub async fn abort(self) -> RunResult {
        self.end(true).await
    }

    async fn end(mut self, cancelled: bool) -> RunResult {
        if cancelled {
            self.acc.cancelled = true;
            self.acc.fail(
                qa_core::codes::CoreCode::RunCancelled.as_str(),
                "the interactive session was aborted".into(),
            );
        }
        let cleanup = super::close(
            self.session,
            DEFAULT_CLEANUP_TIMEOUT,
            &self.progress,
            &mut self.acc,
        )
        .await;
        finalize(
            Ending {
                evidence: &self.evidence,
                processes: &self.processes,
                secrets: &self.secrets,
                cleanup_timeout: DEFAULT_CLEANUP_TIMEOUT,
                flow: &self.flow,
                flow_text: None,
                run_id: self.run_id,
                started_at: self.started_at,
                started: self.started,
            },
            self.acc,
            cleanup,
        )
        .await
    }
}
