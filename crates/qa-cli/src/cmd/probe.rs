//! `ui-qa probe`: which driver would run a flow here, and what is missing.

use super::check::{check_flow, print_flow_errors};
use crate::cli::HostArgs;
use crate::{drivers, exit, output};
use qa_core::driver::Host;
use qa_core::result::{ProbeResult, ProbeStatus};
use qa_runner::select;
use std::path::Path;

/// `ui-qa probe`.
pub(crate) async fn run(path: &Path, json: bool, host: &HostArgs) -> u8 {
    let flow = match check_flow(path, &Default::default()) {
        Ok((f, _)) => f,
        Err(errors) => {
            print_flow_errors(path, &errors);
            return exit::INVALID;
        }
    };
    let drivers = drivers::all();
    let Some(sel) = select::select(&drivers, &flow, &Host::current(), &host.options()).await else {
        eprintln!("error: no driver handles {} flows", flow.kind().as_str());
        return exit::INVALID;
    };
    let available = sel.probe.available();
    let handoff = (!available).then(|| qa_core::result::BlockedHandoff {
        backend: sel.selection.selected_backend,
        platform_driver: sel.selection.platform_driver.clone(),
        platform: sel.selection.platform,
        reason_code: qa_core::result::BlockedReasonCode::MissingCapability,
        missing_capabilities: sel.probe.missing.clone(),
        reason: sel.selection.why_selected.clone(),
        remediation: sel
            .probe
            .missing
            .iter()
            .map(|m| format!("{}: {}", m.id, m.remediation))
            .collect::<Vec<_>>()
            .join("\n"),
        manual_action_required: true,
        automatic_remediation_attempted: false,
    });
    let result = ProbeResult {
        status: if available {
            ProbeStatus::Available
        } else {
            ProbeStatus::Blocked
        },
        selection: sel.selection,
        blocked_handoff: handoff,
    };
    if json {
        println!("{}", serde_json::to_string_pretty(&result).expect("json"));
    } else {
        output::print_probe(&result);
    }
    if available {
        exit::PASSED
    } else {
        exit::BLOCKED
    }
}
