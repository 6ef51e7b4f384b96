//! Driver selection and static admission.
//!
//! Selection detects the target kind, probes every driver of that kind,
//! picks the first one that can run the flow here (drivers are given in
//! preference order) and records why. Admission (`ui-qa check`) rejects steps
//! and locator kinds the driver cannot do, before anything launches;
//! [`check_file`] is the one check the CLI and MCP both run on a flow file.

use qa_core::driver::{Backend, Host, Probe, RunOptions, SurfaceDriver};
use qa_core::flow::vars::Vars;
use qa_core::flow::{escape_token as escape_token_pub, Flow, FlowError, FlowErrorCode};
use qa_core::result::{Candidate, GuideRef, Selection};
use std::path::Path;
use std::sync::Arc;

/// Parses a flow file (with `--var` values) and admits it for the driver
/// that would run it: the flow and its text, or every problem — parse and
/// admission errors together, each placed in the text, in file order, at
/// most [`qa_core::flow::MAX_REPORTED_ERRORS`].
pub fn check_file(
    drivers: &[Arc<dyn SurfaceDriver>],
    path: &Path,
    vars: &Vars,
) -> Result<(Flow, String), Vec<FlowError>> {
    let checked = Flow::check_file(path, vars);
    let mut errors = checked.errors;
    // The driver's own checks run over every step that parsed, so one
    // `check` reports the parse errors and the admission errors together.
    if let (Some(flow), Some(text)) = (&checked.flow, &checked.text) {
        if let Some(d) = admission_driver(drivers, flow) {
            errors.extend(
                admit(d.as_ref(), flow)
                    .into_iter()
                    .map(|e| e.with_position(text)),
            );
        }
    }
    match (checked.flow, checked.text) {
        (Some(flow), Some(text)) if errors.is_empty() => Ok((flow, text)),
        _ => {
            errors.sort_by_key(|e| (e.line.unwrap_or(0), e.column.unwrap_or(0)));
            errors.truncate(qa_core::flow::MAX_REPORTED_ERRORS);
            Err(errors)
        }
    }
}

/// A valid flow's warnings (`flow::lint`), placed in its text. A warning
/// may quote a flow string, and `${secret.NAME}` was filled in before the
/// flow was checked: every `UI_QA_SECRET_*` value is redacted from them.
pub fn warnings(flow: &Flow, text: &str) -> Vec<FlowError> {
    let secrets = qa_core::Secrets::from_env();
    qa_core::flow::lint(flow)
        .into_iter()
        .map(|mut w| {
            w.message = secrets.redact(&w.message).into_owned();
            w.with_position(text)
        })
        .collect()
}

/// The outcome of selection.
pub struct Selected {
    /// The chosen driver (available, or the preferred one when none is).
    pub driver: Arc<dyn SurfaceDriver>,
    /// Its probe.
    pub probe: Probe,
    /// The selection record for the result.
    pub selection: Selection,
}

/// The driver used for static admission of a flow: the preferred driver of
/// the flow's kind (no probing).
pub fn admission_driver(
    drivers: &[Arc<dyn SurfaceDriver>],
    flow: &Flow,
) -> Option<Arc<dyn SurfaceDriver>> {
    drivers.iter().find(|d| d.kind() == flow.kind()).cloned()
}

/// Checks every step against what `driver` supports. Returns every problem
/// found (empty when the flow is admitted).
pub fn admit(driver: &dyn SurfaceDriver, flow: &Flow) -> Vec<FlowError> {
    let support = driver.supports();
    let mut errors = Vec::new();
    for step in &flow.steps {
        let at = format!("/steps/{}", step.index);
        if !support.supports_action(step.action_name()) {
            errors.push(FlowError::new(
                FlowErrorCode::UnsupportedStep,
                format!("{at}/action"),
                format!(
                    "the {} driver does not support {:?} yet",
                    driver.id(),
                    step.action_name()
                ),
            ));
            continue;
        }
        if step.target.is_some() && !support.step_targets {
            errors.push(FlowError::new(
                FlowErrorCode::UnsupportedStep,
                format!("{at}/target"),
                format!(
                    "the {} driver cannot run steps in a popup or frame yet",
                    driver.id()
                ),
            ));
            continue;
        }
        for (li, loc) in step.locators().into_iter().enumerate() {
            let kind = loc.kind();
            // Point at the locator field itself.
            let n_action = step.action.locators().len();
            let field = match step.action_name() {
                _ if li >= n_action => "target/locator",
                "dragTo" if li == 1 => "dropTarget",
                _ => "locator",
            };
            if let Some(r) = &loc.role {
                if let Err(why) = driver.check_role(r) {
                    errors.push(FlowError::new(
                        FlowErrorCode::UnknownRole,
                        format!("{at}/{field}/role"),
                        why,
                    ));
                }
            }
            for (si, seg) in loc.path.iter().flatten().enumerate() {
                if let Some(Err(why)) = seg.role.as_deref().map(|r| driver.check_role(r)) {
                    errors.push(FlowError::new(
                        FlowErrorCode::UnknownRole,
                        format!("{at}/{field}/path/{si}/role"),
                        why,
                    ));
                }
            }
            if !support.locators.contains(&kind) {
                let supported: Vec<&str> = support.locators.iter().map(|k| k.field()).collect();
                errors.push(FlowError::new(
                    FlowErrorCode::UnsupportedLocator,
                    format!("{at}/{field}/{}", escape_token_pub(kind.field())),
                    format!(
                        "{} locators are not supported by the {} driver; use one of: {}",
                        kind.field(),
                        driver.id(),
                        supported.join(", ")
                    ),
                ));
            }
        }
        errors.extend(driver.admit_step(step));
    }
    errors
}

/// Probes the candidates for the flow and picks one.
pub async fn select(
    drivers: &[Arc<dyn SurfaceDriver>],
    flow: &Flow,
    host: &Host,
    options: &RunOptions,
) -> Option<Selected> {
    let kind = flow.kind();
    let candidates: Vec<Arc<dyn SurfaceDriver>> = drivers
        .iter()
        .filter(|d| d.kind() == kind)
        .cloned()
        .collect();
    if candidates.is_empty() {
        return None;
    }
    let mut probes = Vec::new();
    for d in &candidates {
        probes.push(d.probe(flow, host, options).await);
    }
    let chosen = probes.iter().position(|p| p.available()).unwrap_or(0);
    let probe = probes[chosen].clone();
    let driver = candidates[chosen].clone();
    let why = if probe.available() {
        if chosen == 0 {
            format!(
                "target.{} makes this a {} flow; {} is the preferred driver on {} and every capability it needs is present",
                target_field(flow),
                kind.as_str(),
                driver.id(),
                host.os
            )
        } else {
            format!(
                "target.{} makes this a {} flow; {} is the first available driver (preferred drivers are missing capabilities)",
                target_field(flow),
                kind.as_str(),
                driver.id()
            )
        }
    } else {
        format!(
            "target.{} makes this a {} flow; no driver can run it here, {} is the preferred driver and is missing: {}",
            target_field(flow),
            kind.as_str(),
            driver.id(),
            probe
                .missing
                .iter()
                .map(|m| m.id.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    let selection = Selection {
        detected_target_kind: kind,
        selected_backend: Backend::for_kind(kind),
        platform_driver: driver.id().to_string(),
        presentation: probe.presentation.clone(),
        platform: driver.info().platform,
        candidate_backends: candidates
            .iter()
            .zip(&probes)
            .map(|(d, p)| Candidate {
                driver: d.id().to_string(),
                available: p.available(),
                supported_capabilities: p.present.clone(),
                missing_capabilities: p.missing.clone(),
            })
            .collect(),
        supported_capabilities: probe.present.clone(),
        missing_capabilities: probe.missing.clone(),
        why_selected: why,
        guide: GuideRef {
            backend: Backend::for_kind(kind),
            // A terminal's native-terminal presentation has a topic of its
            // own; every other selection reads the driver's.
            topic: match probe.presentation.as_deref() {
                Some(p @ "native-terminal") => p.to_string(),
                _ => driver.info().guide_topic.to_string(),
            },
        },
    };
    Some(Selected {
        driver,
        probe,
        selection,
    })
}

fn target_field(flow: &Flow) -> &'static str {
    match &flow.target {
        qa_core::flow::Target::Browser(b) => {
            if b.app.is_some() {
                "app"
            } else if b.browser.is_some() {
                "browser.connect"
            } else if b.serve.is_some() {
                "serve"
            } else if b.server.is_some() {
                "server"
            } else {
                "url"
            }
        }
        qa_core::flow::Target::Terminal(_) => "command",
        qa_core::flow::Target::Desktop(_) => "application",
    }
}
