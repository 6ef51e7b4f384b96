//! The MCP tools: `start`, `observe`, `act`, `finish`, `abort` over
//! interactive sessions, `run` for a flow file, `guide` and `schema`.
//! Calls on one session are serialized; sessions are independent.

use super::policy::Policy;
use super::reply::{self, Next};
use super::McpCode;
use qa_core::driver::RunOptions;
use qa_core::flow::Locator;
use qa_core::Secrets;
use qa_runner::runner::interactive::{Interactive, On, SessionConfig, SessionError};
use qa_runner::runner::Cancel;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock, Implementation, ServerCapabilities, ServerConfig};
use rmcp::{tool, tool_handler, tool_router, ErrorData, ServerHandler};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use tokio::sync::{OwnedMappedMutexGuard, OwnedMutexGuard};

/// One open session: its cancel signal and the session itself (`None`
/// while it starts).
#[derive(Clone)]
struct Slot {
    cancel: Cancel,
    session: Arc<tokio::sync::Mutex<Option<Interactive>>>,
}

/// Open sessions and flow runs.
#[derive(Default)]
struct Registry {
    next: u64,
    sessions: BTreeMap<String, Slot>,
    runs: BTreeMap<u64, Cancel>,
    closing: bool,
}

impl Registry {
    fn open(&self) -> usize {
        self.sessions.len() + self.runs.len()
    }
}

/// The `ui-qa mcp` server.
#[derive(Clone)]
pub struct UiQa {
    policy: Arc<Policy>,
    options: RunOptions,
    max: usize,
    registry: Arc<Mutex<Registry>>,
    secrets: Arc<Secrets>,
    tool_router: ToolRouter<UiQa>,
}

/// `start`'s arguments: exactly one of `url`, `command`, `app`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct StartArgs {
    /// A page to open in a real browser (its origin must be allowed by the server's --allow-origin).
    pub url: Option<String>,
    /// A terminal program and its arguments, run in a real PTY (argv[0] must resolve to a program of --allow-command).
    pub command: Option<Vec<String>>,
    /// A desktop application and its arguments, driven through accessibility (argv[0] must resolve to a program of --allow-app).
    pub app: Option<Vec<String>>,
    /// Desktop: run the application in an owned virtual display and session bus.
    pub virtual_display: Option<bool>,
    /// With url: open the page in a running Chromium ui-qa did not start, through its DevTools endpoint (`http://127.0.0.1:9222`; must be one of the server's --allow-connect), in a browser context of its own.
    pub connect: Option<String>,
}

/// A session id.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SessionArgs {
    /// The id `start` returned (`s1`, …).
    pub session: String,
}

/// `observe`'s arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ObserveArgs {
    /// The id `start` returned.
    pub session: String,
    /// Also return a screenshot (PNG image content; masked where it shows a secret).
    pub screenshot: Option<bool>,
}

/// `act`'s arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ActArgs {
    /// The id `start` returned.
    pub session: String,
    /// A reference from the current observation (`@e3`) to act on.
    #[serde(rename = "ref")]
    pub reference: Option<String>,
    /// Or a flow locator (`{"role":"button","name":"Save"}`, `{"testId":"x"}`, …).
    pub locator: Option<Value>,
    /// The flow step without its locator, e.g. `{"action":"click"}`,
    /// `{"action":"fill","value":"x"}`, `{"action":"assertVisible"}`,
    /// `{"action":"sendKeys","keys":["Enter"]}` (see the `schema` tool, name `flow`).
    pub step: Value,
    /// Observe again after an action (default true): the reply carries the new observation.
    pub observe: Option<bool>,
}

/// `finish`'s arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FinishArgs {
    /// The id `start` returned.
    pub session: String,
    /// Also write the passed steps as a flow file in the run directory (`exported.flow.jsonc`), replayable with `ui-qa run`; the reply's `exportedFlow` is its path.
    pub export: Option<bool>,
}

/// `run`'s arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunArgs {
    /// A flow file, relative to the server's workspace.
    pub flow: String,
    /// Run a flow that checks nothing (no assert* or waitFor* step) anyway; by default such a flow is refused, because its PASSED would prove nothing.
    #[serde(rename = "allowUnchecked")]
    pub allow_unchecked: Option<bool>,
}

/// `guide`'s arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GuideArgs {
    /// `browser`, `tui` or `desktop`.
    pub backend: String,
    /// A topic of that backend's guide (omit for the base guide and its topic list).
    pub topic: Option<String>,
}

/// `schema`'s arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SchemaArgs {
    /// `flow`, `result` or `auth`.
    pub name: SchemaKind,
}

/// Which schema.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SchemaKind {
    /// The flow format.
    Flow,
    /// The result document.
    Result,
    /// The auth file.
    Auth,
}

type Reply = Result<CallToolResult, ErrorData>;

/// A refusal on its way back to the client (boxed: it is large).
type Refusal = Box<CallToolResult>;

fn invalid(message: impl Into<String>) -> Reply {
    Ok(reply::refusal(McpCode::InvalidArguments, message, vec![]))
}

/// The refusal for a session that finished or aborted while the call waited.
fn ended(id: &str) -> CallToolResult {
    reply::refusal(
        McpCode::UnknownSession,
        format!("session {id} has ended"),
        vec![],
    )
}

/// `@e3` for `e3` or `@e3`.
fn normal_ref(r: &str) -> String {
    if r.starts_with('@') {
        r.to_string()
    } else {
        format!("@{r}")
    }
}

impl UiQa {
    /// A server with these limits.
    pub fn new(policy: Policy, options: RunOptions, max_sessions: usize) -> UiQa {
        UiQa {
            policy: Arc::new(policy),
            options,
            max: max_sessions,
            registry: Arc::new(Mutex::new(Registry::default())),
            secrets: Arc::new(Secrets::from_env()),
            tool_router: Self::tool_router(),
        }
    }

    fn reg(&self) -> std::sync::MutexGuard<'_, Registry> {
        self.registry.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn redact(&self, s: &str) -> String {
        self.secrets.redact(s).into_owned()
    }

    /// Takes a place under `--max-sessions` for what `hold` registers (a
    /// session slot or a run's cancel signal), in the same critical
    /// section as the count, or says which sessions to end.
    fn reserve(&self, hold: impl FnOnce(&mut Registry, u64)) -> Result<u64, Refusal> {
        let mut r = self.reg();
        if r.closing {
            return Err(Box::new(reply::refusal(
                McpCode::Closing,
                "the server is ending its sessions",
                vec![],
            )));
        }
        if r.open() >= self.max {
            let next = r
                .sessions
                .keys()
                .map(|s| Next {
                    tool: "finish",
                    arguments: json!({ "session": s }),
                    why: format!("finishing {s} frees a place"),
                })
                .collect();
            return Err(Box::new(reply::refusal(
                McpCode::MaxSessions,
                format!(
                    "{} session(s) and flow run(s) are open and this server allows {} (--max-sessions)",
                    r.open(),
                    self.max
                ),
                next,
            )));
        }
        r.next += 1;
        let n = r.next;
        hold(&mut r, n);
        Ok(n)
    }

    fn slot(&self, id: &str) -> Result<Slot, Refusal> {
        let r = self.reg();
        r.sessions.get(id).cloned().ok_or_else(|| {
            let open: Vec<&String> = r.sessions.keys().collect();
            Box::new(reply::refusal(
                McpCode::UnknownSession,
                format!("no open session {id:?} (open: {open:?})"),
                vec![Next {
                    tool: "start",
                    arguments: json!({}),
                    why: "start a session".into(),
                }],
            ))
        })
    }

    /// The observation reply of `s`, bounded, with a screenshot if asked.
    async fn observation(
        &self,
        session: &str,
        s: &mut Interactive,
        screenshot: bool,
    ) -> Result<(Value, Option<ContentBlock>), Refusal> {
        let o = s.observe().await.map_err(|e| {
            Box::new(reply::refusal(
                McpCode::ObserveFailed,
                self.redact(&e.to_string()),
                vec![Next::observe(session, "try again once the surface settles")],
            ))
        })?;
        let name = format!("{}.json", o.id);
        let v = reply::bounded(&o, |bytes| s.keep_observation(&name, bytes));
        let mut v = v;
        let mut image = None;
        let unmasked = s.kind() == qa_core::flow::TargetKind::Desktop && !self.secrets.is_empty();
        if screenshot && unmasked {
            // Desktop pictures are not masked pixel by pixel yet: with a
            // secret registered, none leaves the server.
            v["screenshotWithheld"] = json!("desktop screenshots are not masked for secrets; with a secret registered none is returned");
        } else if screenshot {
            match s.screenshot().await {
                Ok(Some(p)) => {
                    image = reply::png(&p);
                    v["screenshot"] = json!(p);
                }
                Ok(None) => {
                    v["screenshotWithheld"] =
                        json!("no picture was published (withheld because it showed a secret, or none was taken)")
                }
                Err(e) => v["screenshotWithheld"] = json!(self.redact(&e.to_string())),
            }
        }
        Ok((v, image))
    }

    /// Aborts every session and cancels every flow run, within `within`.
    pub async fn end_all(&self, within: std::time::Duration) {
        let (slots, runs) = {
            let mut r = self.reg();
            r.closing = true;
            (
                std::mem::take(&mut r.sessions),
                r.runs.values().cloned().collect::<Vec<_>>(),
            )
        };
        for c in &runs {
            c.cancel();
        }
        let aborts = slots.into_values().map(|slot| async move {
            slot.cancel.cancel();
            let taken = slot.session.lock().await.take();
            if let Some(s) = taken {
                let _ = s.abort().await;
            }
        });
        let _ = tokio::time::timeout(within, futures_util::future::join_all(aborts)).await;
        // Flow runs end themselves once cancelled; wait for them too.
        let t = std::time::Instant::now();
        while !self.reg().runs.is_empty() && t.elapsed() < within {
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
    }
}

#[tool_router]
impl UiQa {
    /// Opens a session on a page, a terminal program or a desktop application.
    #[tool(
        description = "Open an interactive session: a page (url), a terminal program (command: argv) or a desktop application (app: argv). Only what the server's --allow-origin/--allow-command/--allow-app flags name can be opened. Returns the session id and its run directory; then call observe."
    )]
    async fn start(&self, Parameters(a): Parameters<StartArgs>) -> Reply {
        let target = match (&a.url, &a.command, &a.app) {
            (Some(u), None, None) => self.policy.browser_target(u).and_then(|mut t| {
                if let Some(c) = &a.connect {
                    self.policy.check_connect(c)?;
                    t["browser"] = json!({ "connect": c });
                }
                Ok(t)
            }),
            (None, Some(c), None) => self
                .policy
                .check_command(c)
                .map(|()| json!({ "command": { "argv": c } })),
            (None, None, Some(argv)) => self.policy.check_app(argv).map(|()| {
                let mut t = json!({ "application": { "launch": { "argv": argv } } });
                if a.virtual_display == Some(true) {
                    t["application"]["virtualDisplay"] = json!(true);
                }
                t
            }),
            _ => return invalid("give exactly one of url, command, app"),
        };
        if a.connect.is_some() && a.url.is_none() {
            return invalid("connect goes with url: the page to open in that browser");
        }
        let target = match target {
            Ok(t) => t,
            Err(e) => return Ok(reply::refusal(McpCode::NotAllowed, e, vec![])),
        };
        let slot = Slot {
            cancel: Cancel::new(),
            session: Arc::new(tokio::sync::Mutex::new(None)),
        };
        // Held until the session is open: calls on it wait for it.
        let mut guard = slot
            .session
            .clone()
            .try_lock_owned()
            .expect("a new slot is unlocked");
        let held = slot.clone();
        let n = match self.reserve(|r, n| {
            r.sessions.insert(format!("s{n}"), held);
        }) {
            Ok(n) => n,
            Err(r) => return Ok(*r),
        };
        let id = format!("s{n}");
        let mut config = SessionConfig::new(&self.policy.workspace);
        config.options = self.options.clone();
        config.secrets = self.secrets.clone();
        config.cancel = slot.cancel.clone();
        let drivers = crate::drivers::all();
        match Interactive::start(&drivers, target, config).await {
            Ok(s) => {
                let v = json!({
                    "session": id,
                    "kind": s.kind().as_str(),
                    "runDir": s.run_dir(),
                    "nextActions": [{ "tool": "observe", "arguments": { "session": id }, "why": "see what the target shows and get references" }],
                });
                *guard = Some(s);
                Ok(reply::ok(v))
            }
            Err(e) => {
                self.reg().sessions.remove(&id);
                Ok(match e {
                    SessionError::NotOpened(r) => reply::refusal_with(
                        McpCode::NotOpened,
                        self.redact(
                            r.reason
                                .as_deref()
                                .unwrap_or("the target could not be opened"),
                        ),
                        vec![],
                        json!({ "run": reply::run_summary(&r) }),
                    ),
                    other => reply::refusal(
                        McpCode::InvalidArguments,
                        self.redact(&other.to_string()),
                        vec![],
                    ),
                })
            }
        }
    }

    /// Observes a session.
    #[tool(
        description = "Observe a session: a new observation id with references (@e1, @e2, …) for the elements one can act on, each with the flow locator that finds it; a terminal gives its screen, cursor and modes. Large observations are cut and the whole one is written to the path in `spilled`. screenshot: true adds a PNG."
    )]
    async fn observe(&self, Parameters(a): Parameters<ObserveArgs>) -> Reply {
        let mut s = match self.session(&a.session).await {
            Ok(s) => s,
            Err(r) => return Ok(*r),
        };
        match self
            .observation(&a.session, &mut s, a.screenshot == Some(true))
            .await
        {
            Ok((v, image)) => {
                let mut r = reply::ok(json!({ "observation": v }));
                if let Some(i) = image {
                    r.content.push(i);
                }
                Ok(r)
            }
            Err(r) => Ok(*r),
        }
    }

    /// Runs one step in a session.
    #[tool(
        description = "Run one flow step in a session, on a reference from the current observation (ref: \"@e3\"), on a flow locator (locator), or on nothing (goto, sendKeys, waitForText, …). The step is the flow step without its locator, e.g. {\"action\":\"fill\",\"value\":\"x\"}. An action makes earlier references stale (refused, never guessed); by default the reply carries a new observation. A failed call returns nextActions."
    )]
    async fn act(&self, Parameters(a): Parameters<ActArgs>) -> Reply {
        if !a.step.is_object() || a.step.get("action").and_then(|x| x.as_str()).is_none() {
            return invalid("step must be a flow step object with an \"action\" (see the schema tool, name flow)");
        }
        if let Err(e) = self.policy.check_step(&a.step) {
            return Ok(reply::refusal(McpCode::NotAllowed, e, vec![]));
        }
        let on = match (&a.reference, &a.locator) {
            (Some(r), None) => On::Ref(normal_ref(r)),
            (None, Some(l)) => match serde_json::from_value::<Locator>(l.clone()) {
                Ok(l) => On::Locator(Box::new(l)),
                Err(e) => return invalid(format!("locator: {e}")),
            },
            (None, None) => On::Nothing,
            (Some(_), Some(_)) => return invalid("give ref or locator, not both"),
        };
        let mut s = match self.session(&a.session).await {
            Ok(s) => s,
            Err(r) => return Ok(*r),
        };
        let s = &mut *s;
        let id = a.session.as_str();
        let outcome = match s.act(on, a.step.clone()).await {
            Ok(o) => o,
            Err(e) => return Ok(self.act_refusal(id, s, e, &a.step)),
        };
        let passed = outcome.status == qa_core::result::StepStatus::Passed;
        let mut v = json!({
            "status": outcome.status,
            "invalidated": outcome.invalidated,
        });
        if let Some(r) = &outcome.reason {
            v["reason"] = json!(r);
        }
        if outcome.invalidated && a.observe != Some(false) {
            match self.observation(id, s, false).await {
                Ok((o, _)) => v["observation"] = o,
                Err(r) => return Ok(*r),
            }
        }
        if passed {
            return Ok(reply::ok(v));
        }
        Ok(reply::refusal_with(
            McpCode::StepFailed,
            outcome
                .reason
                .unwrap_or_else(|| "the step did not pass".into()),
            vec![
                Next {
                    tool: "observe",
                    arguments: json!({ "session": id, "screenshot": true }),
                    why: "see what the surface shows now".into(),
                },
                Next {
                    tool: "finish",
                    arguments: json!({ "session": id }),
                    why: "end the session; its result and evidence say why the step failed".into(),
                },
            ],
            json!({ "outcome": v }),
        ))
    }

    /// Ends a session and returns its result.
    #[tool(
        description = "End a session: the same result document and evidence as `ui-qa run` (result.json, report.html in runDir), with every process it started ended. export: true also writes the passed steps as a replayable flow file."
    )]
    async fn finish(&self, Parameters(a): Parameters<FinishArgs>) -> Reply {
        let taken = match self.take(&a.session).await {
            Ok(s) => s,
            Err(r) => return Ok(*r),
        };
        let export = taken.run_dir().join("exported.flow.jsonc");
        let (r, exported) = taken
            .finish(a.export.unwrap_or(false).then_some(export.as_path()))
            .await;
        let mut v = reply::run_summary(&r);
        if let Some(p) = exported {
            v["exportedFlow"] = json!(p);
        }
        Ok(reply::ok(v))
    }

    /// Aborts a session.
    #[tool(
        description = "Abort a session: end what it started; its result is written as cancelled."
    )]
    async fn abort(&self, Parameters(a): Parameters<SessionArgs>) -> Reply {
        let taken = match self.take(&a.session).await {
            Ok(s) => s,
            Err(r) => return Ok(*r),
        };
        let r = taken.abort().await;
        Ok(reply::ok(reply::run_summary(&r)))
    }

    /// Runs a flow file.
    #[tool(
        description = "Run a flow file (JSONC, relative to the server's workspace) like `ui-qa run`; its target must be allowed by the server's flags. Returns the status (PASSED, FAILED, BLOCKED), the reason and where the result and evidence are."
    )]
    async fn run(&self, Parameters(a): Parameters<RunArgs>) -> Reply {
        let path = match self.policy.workspace_file(&a.flow) {
            Ok(p) => p,
            Err(e) => return Ok(reply::refusal(McpCode::NotAllowed, e, vec![])),
        };
        let drivers = crate::drivers::all();
        let (flow, text) = match qa_runner::select::check_file(&drivers, &path, &Default::default())
        {
            Ok(f) => f,
            Err(errors) => {
                let list: Vec<Value> = errors
                    .iter()
                    .map(|e| json!({ "pointer": e.pointer, "message": e.message }))
                    .collect();
                return Ok(reply::refusal_with(
                    McpCode::InvalidArguments,
                    format!("{} is not a valid flow", a.flow),
                    vec![Next {
                        tool: "schema",
                        arguments: json!({ "name": "flow" }),
                        why: "the flow format".into(),
                    }],
                    json!({ "errors": list }),
                ));
            }
        };
        if let Err(e) = self.policy.check_flow(&flow) {
            return Ok(reply::refusal(McpCode::NotAllowed, e, vec![]));
        }
        if !a.allow_unchecked.unwrap_or(false) {
            if let Some(w) = qa_core::flow::no_assertion(&flow) {
                return Ok(reply::refusal(
                    McpCode::NothingChecked,
                    format!(
                        "{} is refused: {} (or pass allowUnchecked: true to run it anyway)",
                        a.flow, w.message
                    ),
                    vec![],
                ));
            }
        }
        let mut req = qa_runner::runner::RunRequest::new(flow, text, self.policy.workspace.clone());
        req.options = self.options.clone();
        req.secrets = self.secrets.clone();
        let cancel = req.cancel.clone();
        let n = match self.reserve(|r, n| {
            r.runs.insert(n, cancel);
        }) {
            Ok(n) => n,
            Err(r) => return Ok(*r),
        };
        let out = qa_runner::runner::run(&drivers, req, &qa_runner::progress::NoProgress).await;
        self.reg().runs.remove(&n);
        match out {
            Ok(r) => Ok(reply::ok(reply::run_summary(&r))),
            Err(e) => Ok(reply::refusal(
                McpCode::NotOpened,
                self.redact(&e.to_string()),
                vec![],
            )),
        }
    }

    /// A guide.
    #[tool(
        description = "Read ui-qa's guide for a backend (browser, tui, desktop) or one of its topics: how to write flows and what each status means."
    )]
    async fn guide(&self, Parameters(a): Parameters<GuideArgs>) -> Reply {
        match crate::guides::find(&a.backend, a.topic.as_deref()) {
            Ok(g) => Ok(CallToolResult::success(vec![ContentBlock::text(g.text)])),
            Err(e) => invalid(e.to_string()),
        }
    }

    /// A JSON Schema.
    #[tool(
        description = "The JSON Schema of the flow format, the result document or the auth file."
    )]
    async fn schema(&self, Parameters(a): Parameters<SchemaArgs>) -> Reply {
        let text = match a.name {
            SchemaKind::Flow => qa_runner::schema::flow_schema_json(),
            SchemaKind::Result => qa_runner::schema::result_schema_json(),
            SchemaKind::Auth => qa_runner::schema::auth_schema_json(),
        };
        Ok(CallToolResult::success(vec![ContentBlock::text(text)]))
    }
}

impl UiQa {
    /// Removes a session from the registry and takes it (waiting for a
    /// call in progress on it).
    async fn take(&self, id: &str) -> Result<Interactive, Refusal> {
        let slot = self.slot(id)?;
        let taken = slot.session.lock().await.take();
        self.reg().sessions.remove(id);
        taken.ok_or_else(|| Box::new(ended(id)))
    }

    /// An open session, locked for this call (waiting for a call in
    /// progress on it).
    async fn session(
        &self,
        id: &str,
    ) -> Result<OwnedMappedMutexGuard<Option<Interactive>, Interactive>, Refusal> {
        let guard = self.slot(id)?.session.lock_owned().await;
        OwnedMutexGuard::try_map(guard, Option::as_mut).map_err(|_| Box::new(ended(id)))
    }

    /// A refused `act`, with the calls that move on.
    fn act_refusal(
        &self,
        id: &str,
        s: &Interactive,
        e: SessionError,
        step: &Value,
    ) -> CallToolResult {
        let message = self.redact(&e.to_string());
        match e {
            SessionError::StaleRef { reference, .. } => {
                let mut next = vec![Next::observe(
                    id,
                    "references changed; a new observation gives current ones",
                )];
                let candidate = s.candidate_for(&reference);
                if let (Some(c), Some(cur)) = (&candidate, s.current_observation()) {
                    next.insert(
                        0,
                        Next {
                            tool: "act",
                            arguments: json!({ "session": id, "ref": c, "step": step }),
                            why: format!(
                                "{c} of {cur} is found by the locator {reference} stood for"
                            ),
                        },
                    );
                }
                reply::refusal_with(
                    McpCode::StaleRef,
                    message,
                    next,
                    json!({ "current": s.current_observation(), "candidate": candidate }),
                )
            }
            SessionError::UnknownRef { .. } => reply::refusal(
                McpCode::UnknownRef,
                message,
                vec![Next::observe(id, "get the current references")],
            ),
            SessionError::NoLocator(_) => reply::refusal(
                McpCode::NoLocator,
                message,
                vec![Next::observe(id, "pick another element or write a locator")],
            ),
            SessionError::InvalidStep(_) => reply::refusal(
                McpCode::InvalidArguments,
                message,
                vec![Next {
                    tool: "schema",
                    arguments: json!({ "name": "flow" }),
                    why: "the steps of the flow format".into(),
                }],
            ),
            SessionError::Observe(_) | SessionError::Start(_) | SessionError::NotOpened(_) => {
                reply::refusal(McpCode::ObserveFailed, message, vec![])
            }
        }
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for UiQa {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("ui-qa", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "ui-qa drives real user interfaces: start a session (a page, a terminal program or a desktop app), observe it to get references (@e1…), act on them with flow steps, and finish to get a result with evidence (PASSED/FAILED/BLOCKED). What a session may open is fixed by the server's flags. Read the guide tool for the flow vocabulary.".to_string(),
            )
    }
}
