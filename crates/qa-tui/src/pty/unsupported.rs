//! Operating systems with neither a Unix PTY nor ConPTY: no terminal can
//! be opened, so the probe reports it missing and a launch is BLOCKED.
//! The types have no values; nothing past `spawn` can be reached.

use super::{Ended, Spawned};
use crate::codes::TuiCode;
use crate::launch::LaunchPlan;
use qa_core::process::ProcessOwner;
use qa_core::{Capability, DriverError, Host, MissingCapability};

fn missing(os: &str) -> MissingCapability {
    MissingCapability {
        id: "pty".into(),
        reason: format!("the PTY driver does not run on {os}"),
        remediation: "run terminal flows on Linux, macOS or Windows 10 1809 or later".into(),
    }
}

/// Never available here.
pub(crate) fn probe(host: &Host) -> Result<Capability, MissingCapability> {
    Err(missing(host.os))
}

/// Always BLOCKED here.
pub(crate) async fn spawn(
    _plan: &LaunchPlan,
    _owner: &ProcessOwner,
) -> Result<Spawned, DriverError> {
    Err(DriverError::blocked(
        TuiCode::PlatformUnsupported,
        missing(std::env::consts::OS),
    ))
}

/// No output exists here.
pub(crate) enum Output {}

impl Output {
    /// Unreachable.
    pub(crate) async fn read(&mut self, _buf: &mut [u8]) -> std::io::Result<usize> {
        match *self {}
    }
}

/// No input exists here.
pub(crate) enum Input {}

impl Input {
    /// Unreachable.
    pub(crate) async fn write(&mut self, _bytes: &[u8]) -> std::io::Result<()> {
        match *self {}
    }

    /// Unreachable.
    pub(crate) fn resize(&mut self, _cols: u16, _rows: u16) -> std::io::Result<()> {
        match *self {}
    }
}

/// No program exists here.
pub(crate) enum Child {}

impl Child {
    /// Unreachable.
    pub(crate) async fn wait(self) -> Ended {
        match self {}
    }
}

/// No line exists here.
pub(crate) enum Line {}

impl Line {
    /// Unreachable.
    pub(crate) fn hang_up(&self, _owner: &ProcessOwner) -> bool {
        match *self {}
    }
}
