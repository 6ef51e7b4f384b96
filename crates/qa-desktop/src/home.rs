//! The launched application's home: a fresh one in the run's scratch
//! unless the flow says `"home": "inherit"`. The same on every OS (off
//! Unix a fresh home sets nothing; see [`qa_core::evidence::HOME_VARS`]).

use qa_core::flow::{Home, LaunchSpec};
use qa_core::{DriverError, SessionContext};
use std::path::PathBuf;

/// The variables to set on the launched application's command before the
/// flow's `env` (which so keeps its values): `HOME` and the XDG base
/// directories in a fresh home in the run's scratch, or nothing when the
/// launch says `"home": "inherit"`.
pub fn vars(
    spec: &LaunchSpec,
    ctx: &SessionContext,
) -> Result<Vec<(&'static str, PathBuf)>, DriverError> {
    match spec.home.unwrap_or_default() {
        Home::Inherit => Ok(Vec::new()),
        Home::Fresh => Ok(ctx.evidence.fresh_home()?),
    }
}
