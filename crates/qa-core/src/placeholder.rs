//! A driver that cannot run anywhere yet, or not on this platform: its
//! probe answers BLOCKED with a handoff, and `open` refuses — never a fake
//! pass. Platform crates whose real driver is not written yet use it.

use crate::codes::CoreCode;
use crate::driver::{
    DriverError, DriverInfo, Host, MissingCapability, Probe, RunOptions, SessionContext,
    SurfaceDriver, SurfaceSession,
};
use crate::flow::Flow;
use async_trait::async_trait;

/// An honest stand-in for a driver that is not implemented.
pub struct PlaceholderDriver {
    info: DriverInfo,
    presentation: &'static str,
}

impl PlaceholderDriver {
    /// A placeholder for the driver `info` describes (its `support` is what
    /// the real driver will accept, so flows written for it pass `check`
    /// today).
    pub fn new(info: DriverInfo, presentation: &'static str) -> Self {
        PlaceholderDriver { info, presentation }
    }

    /// What is missing on a host running `host_os`.
    pub fn missing(&self, host_os: &str) -> MissingCapability {
        let (id, kind, platform) = (self.info.id, self.info.kind, self.info.platform);
        if host_os != platform.as_str() {
            MissingCapability {
                id: "platform".into(),
                reason: format!(
                    "{id} drives {} targets on {platform}; this host is {host_os}",
                    kind.as_str(),
                ),
                remediation: format!("run this flow on a {platform} host (or CI runner)"),
            }
        } else {
            MissingCapability {
                id: "driver".into(),
                reason: format!("the {id} driver is not implemented yet"),
                remediation: format!(
                    "run this flow where another {} driver is available (see `ui-qa capabilities` and docs/platforms.md)",
                    kind.as_str()
                ),
            }
        }
    }
}

#[async_trait]
impl SurfaceDriver for PlaceholderDriver {
    fn info(&self) -> &DriverInfo {
        &self.info
    }

    async fn probe(&self, _flow: &Flow, host: &Host, _options: &RunOptions) -> Probe {
        Probe {
            driver: self.info.id,
            present: Vec::new(),
            missing: vec![self.missing(host.os)],
            presentation: Some(self.presentation.into()),
        }
    }

    async fn open(
        &self,
        _flow: &Flow,
        _ctx: SessionContext,
    ) -> Result<Box<dyn SurfaceSession>, DriverError> {
        Err(DriverError::blocked(
            CoreCode::DriverUnavailable,
            self.missing(std::env::consts::OS),
        ))
    }
}
