//! The drivers this binary wires in, in preference order per target kind.

use qa_core::driver::{Backend, Host, Platform, RunOptions, SurfaceDriver};
use qa_core::flow::Flow;
use serde::Serialize;
use std::path::Path;
use std::sync::Arc;

/// Every driver, preferred first within each target kind.
pub fn all() -> Vec<Arc<dyn SurfaceDriver>> {
    let mut v: Vec<Arc<dyn SurfaceDriver>> = vec![Arc::new(web()), Arc::new(tui())];
    // Desktop: the host's own platform driver first.
    let desktop: Vec<Arc<dyn SurfaceDriver>> = vec![
        Arc::new(qa_linux::LinuxDesktopDriver::new()),
        Arc::new(qa_macos::driver()),
        Arc::new(qa_windows::driver()),
    ];
    let here = Platform::current();
    let (mut native, mut other): (Vec<_>, Vec<_>) =
        desktop.into_iter().partition(|d| d.info().platform == here);
    v.append(&mut native);
    v.append(&mut other);
    v
}

/// The browser driver; where this OS has a window host, with apps that
/// embed Chromium (`target.app`), whose windows it shows.
fn web() -> qa_web::WebDriver {
    let d = qa_web::WebDriver::new();
    match qa_linux::window_host() {
        Some(host) => d.with_window_host(host),
        None => d,
    }
}

/// The terminal driver; where this OS has a window host, with the
/// `native-terminal` presentation, whose window runs this binary as its
/// bridge.
fn tui() -> qa_tui::TuiDriver {
    let d = qa_tui::TuiDriver::new();
    match (qa_linux::window_host(), std::env::current_exe()) {
        (Some(host), Ok(bridge)) => {
            d.with_native_terminal(qa_tui::native::NativeSupport { host, bridge })
        }
        _ => d,
    }
}

/// One driver's line in `ui-qa capabilities`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DriverCapabilities {
    /// Driver id.
    pub driver: String,
    /// Whether it can run a typical flow here.
    pub available: bool,
    /// What it found.
    pub supported_capabilities: Vec<qa_core::driver::Capability>,
    /// What is missing.
    pub missing_capabilities: Vec<qa_core::driver::MissingCapability>,
    /// Actions it performs.
    pub actions: Vec<&'static str>,
    /// When not available as asked: whether `--virtual-display` would make it available.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub available_with_virtual_display: Option<bool>,
}

/// One backend's section in `ui-qa capabilities`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BackendCapabilities {
    /// `browser`, `tui` or `desktop`.
    pub backend: &'static str,
    /// Whether any driver is available.
    pub available: bool,
    /// Drivers, preferred first.
    pub drivers: Vec<DriverCapabilities>,
}

/// The `ui-qa capabilities` report.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CapabilityReport {
    /// Host platform.
    pub platform: Platform,
    /// Per backend.
    pub backends: Vec<BackendCapabilities>,
}

fn representative(backend: Backend) -> Flow {
    let text = match backend {
        Backend::Browser => r#"{"target":{"url":"about:blank"},"steps":[{"action":"reload"}]}"#,
        Backend::Tui => r#"{"target":{"command":{"argv":["sh"]}},"steps":[{"action":"capture"}]}"#,
        Backend::Desktop => {
            r#"{"target":{"application":{"launch":{"argv":["true"]}}},"steps":[{"action":"activateWindow"}]}"#
        }
    };
    Flow::parse(text, Path::new(".")).expect("representative flow parses")
}

/// Probes every driver with a representative flow of its kind.
pub async fn capabilities(options: &RunOptions) -> CapabilityReport {
    let host = Host::current();
    let drivers = all();
    let mut backends = Vec::new();
    for b in [Backend::Browser, Backend::Tui, Backend::Desktop] {
        let flow = representative(b);
        let mut list = Vec::new();
        for d in drivers.iter().filter(|d| d.id().backend == b) {
            let p = d.probe(&flow, &host, options).await;
            let with_vd = if b == Backend::Desktop && !p.available() && !options.virtual_display {
                let vd = RunOptions {
                    virtual_display: true,
                    ..options.clone()
                };
                Some(d.probe(&flow, &host, &vd).await.available())
            } else {
                None
            };
            list.push(DriverCapabilities {
                driver: d.id().to_string(),
                available: p.available(),
                supported_capabilities: p.present,
                missing_capabilities: p.missing,
                actions: d.supports().actions.clone(),
                available_with_virtual_display: with_vd,
            });
        }
        backends.push(BackendCapabilities {
            backend: b.as_str(),
            available: list.iter().any(|d| d.available),
            drivers: list,
        });
    }
    CapabilityReport {
        platform: Platform::current(),
        backends,
    }
}
