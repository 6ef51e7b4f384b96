//! What to launch: the program path, working directory, environment and
//! size, resolved from a flow without starting anything.
//!
//! How the environment is built and the program found follows the host:
//! [`environment`], [`resolve_program`] and [`FALLBACK_PATH`] are the Unix
//! rules (`launch/unix.rs`) or the Windows rules (`launch/windows.rs`).

use crate::codes::TuiCode;
use qa_core::flow::{CommandTarget, Flow, Home, Presentation, Target};
use qa_core::{DriverError, Evidence};
use std::collections::BTreeMap;
use std::path::PathBuf;

#[cfg(not(windows))]
mod unix;
#[cfg(not(windows))]
pub use unix::{environment, resolve_program, FALLBACK_PATH};

// The Windows rules are pure; they compile into every test build so
// their unit tests run on Linux too. Off Windows, only those tests use them.
#[cfg(any(windows, test))]
#[cfg_attr(not(windows), allow(dead_code))]
mod windows;
#[cfg(windows)]
pub use windows::{environment, resolve_program, FALLBACK_PATH};

/// Default terminal size when the flow names none.
pub const DEFAULT_COLS: u16 = 80;
/// Default terminal rows.
pub const DEFAULT_ROWS: u16 = 24;

/// A resolved launch: everything needed to spawn, nothing spawned.
#[derive(Debug, Clone, PartialEq)]
pub struct LaunchPlan {
    /// Absolute path of the program.
    pub program: PathBuf,
    /// The argv as written (`argv[0]` included).
    pub argv: Vec<String>,
    /// Absolute working directory.
    pub cwd: PathBuf,
    /// The complete environment (nothing else is inherited).
    pub env: BTreeMap<String, String>,
    /// Columns.
    pub cols: u16,
    /// Rows.
    pub rows: u16,
    /// Requested presentation.
    pub presentation: Presentation,
}

/// The terminal target of a flow.
pub fn command_target(flow: &Flow) -> Result<&CommandTarget, DriverError> {
    match &flow.target {
        Target::Terminal(c) => Ok(c),
        Target::Browser(_) | Target::Desktop(_) => Err(DriverError::new(
            TuiCode::TargetNotTerminal,
            "the terminal driver needs a flow whose target is `command`",
        )),
    }
}

/// Resolves a flow's terminal launch without starting anything.
pub fn plan(flow: &Flow) -> Result<LaunchPlan, DriverError> {
    let target = command_target(flow)?;
    let cwd = match &target.cwd {
        Some(c) => flow.base_dir.join(c),
        None => flow.base_dir.clone(),
    };
    let cwd = if cwd.is_absolute() {
        cwd
    } else {
        std::env::current_dir().map(|d| d.join(&cwd)).unwrap_or(cwd)
    };
    if !cwd.is_dir() {
        return Err(DriverError::new(
            TuiCode::LaunchCwdMissing,
            format!("working directory {} does not exist", cwd.display()),
        )
        .with_remediation(
            "create the directory or fix target.command.cwd (relative to the flow file)",
        ));
    }
    let env = environment(&target.env, |k| std::env::var(k).ok());
    let argv0 = target.argv.first().cloned().unwrap_or_default();
    let program = resolve_program(
        &argv0,
        &cwd,
        env.get("PATH").map(String::as_str).unwrap_or(""),
    )?;
    let vp = flow.viewport.unwrap_or_default();
    Ok(LaunchPlan {
        program,
        argv: target.argv.clone(),
        cwd,
        env,
        cols: vp.cols.unwrap_or(DEFAULT_COLS).max(2),
        rows: vp.rows.unwrap_or(DEFAULT_ROWS).max(2),
        presentation: target.presentation.unwrap_or_default(),
    })
}

/// Gives the planned program a fresh home in the run's scratch (`HOME` and
/// the XDG base directories, [`qa_core::evidence::HOME_VARS`]) unless the
/// target says `"home": "inherit"`; a variable the flow's `env` sets keeps
/// the flow's value.
pub fn give_home(
    plan: &mut LaunchPlan,
    target: &CommandTarget,
    evidence: &Evidence,
) -> Result<(), DriverError> {
    if target.home.unwrap_or_default() == Home::Inherit {
        return Ok(());
    }
    for (k, dir) in evidence.fresh_home()? {
        if !target.env.contains_key(k) {
            plan.env
                .insert(k.to_string(), dir.to_string_lossy().into_owned());
        }
    }
    Ok(())
}
