//! A driver that cannot run anywhere yet, or not on this platform: its
//! probe answers BLOCKED with a handoff, and `open` refuses — never a fake
//! pass. Platform crates whose real driver is not written yet use it.

use crate::driver::{
    DriverError, DriverId, Host, MissingCapability, Probe, RunOptions, SessionContext, StepSupport,
    SurfaceDriver, SurfaceSession,
};
use crate::flow::{Flow, TargetKind};
use async_trait::async_trait;

/// An honest stand-in for a driver that is not implemented.
pub struct PlaceholderDriver {
    id: DriverId,
    kind: TargetKind,
    platform: &'static str,
    presentation: &'static str,
    support: StepSupport,
}

impl PlaceholderDriver {
    /// A placeholder for driver `id` that would run on `platform` (`macos`,
    /// `windows`, `linux`); `support` is what the real driver will accept,
    /// so flows written for it pass `check` today.
    pub fn new(
        id: DriverId,
        kind: TargetKind,
        platform: &'static str,
        presentation: &'static str,
        support: StepSupport,
    ) -> Self {
        PlaceholderDriver {
            id,
            kind,
            platform,
            presentation,
            support,
        }
    }

    /// What is missing on a host running `host_os`.
    pub fn missing(&self, host_os: &str) -> MissingCapability {
        if host_os != self.platform {
            MissingCapability {
                id: "platform".into(),
                reason: format!(
                    "{} drives {} targets on {}; this host is {host_os}",
                    self.id,
                    self.kind.as_str(),
                    self.platform
                ),
                remediation: format!("run this flow on a {} host (or CI runner)", self.platform),
            }
        } else {
            MissingCapability {
                id: "driver".into(),
                reason: format!("the {} driver is not implemented yet", self.id),
                remediation: format!(
                    "run this flow where another {} driver is available (see `ui-qa capabilities` and docs/platforms.md)",
                    self.kind.as_str()
                ),
            }
        }
    }
}

#[async_trait]
impl SurfaceDriver for PlaceholderDriver {
    fn id(&self) -> DriverId {
        self.id
    }

    fn kind(&self) -> TargetKind {
        self.kind
    }

    fn supports(&self) -> &StepSupport {
        &self.support
    }

    async fn probe(&self, _flow: &Flow, host: &Host, _options: &RunOptions) -> Probe {
        Probe {
            driver: self.id,
            present: Vec::new(),
            missing: vec![self.missing(host.os)],
            presentation: Some(self.presentation.into()),
            platform: self.platform,
            guide_topic: self.id.name,
        }
    }

    async fn open(
        &self,
        _flow: &Flow,
        _ctx: SessionContext,
    ) -> Result<Box<dyn SurfaceSession>, DriverError> {
        Err(DriverError::blocked(
            "driver.unavailable",
            self.missing(std::env::consts::OS),
        ))
    }
}
