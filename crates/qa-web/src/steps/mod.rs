//! Step execution: every browser action is dispatched by ONE exhaustive
//! `match` in [`perform`] (actions, dispatched once) and one in [`verify`]
//! (assertions, one fresh verdict per call); a new `BrowserAction` does not
//! compile until both say what to do with it. Each job has its module:
//! navigation, pointer and keyboard input, response and dialog
//! expectations, assertions, evidence, popups, downloads, diagnostics.

mod assert;
mod diagnostics;
mod download;
mod evaluate;
mod evidence;
mod expect;
mod input;
mod navigate;
mod pointer;
mod popup;

pub(crate) use diagnostics::lighthouse_missing;
pub(crate) use navigate::resolve_url;

use crate::codes::WebCode;
use crate::page::Page;
use assert::ElementCheck;
use pointer::PointerAction;
use qa_core::flow::{Action, BrowserAction};
use qa_core::{Deadline, DriverError, Evidence, Step, StepOutcome, Verdict};
use std::path::PathBuf;
use std::time::Duration;

/// Actions left out of the supported list. None: every browser action is
/// handled (`lighthouse` is supported and BLOCKED at run time, since this
/// driver does not run the Lighthouse CLI).
const EXCLUDED: &[&str] = &[];

/// Action names this driver performs or verifies: every name of
/// [`BrowserAction::NAMES`] but [`EXCLUDED`].
pub(crate) fn supported_actions() -> Vec<&'static str> {
    BrowserAction::NAMES
        .iter()
        .copied()
        .filter(|n| !EXCLUDED.contains(n))
        .collect()
}

fn unsupported(step: &Step) -> DriverError {
    DriverError::new(
        WebCode::StepUnsupported,
        format!(
            "the browser/cdp driver does not implement {}",
            step.action_name()
        ),
    )
}

/// A fresh scratch directory of the run named `base` (or `base-2`, …).
fn scratch(evidence: &Evidence, base: &str) -> Result<PathBuf, DriverError> {
    scratch_for(evidence, None, base)
}

/// Who a browser scratch directory is for: the browser's own user (and what
/// it does there), or ui-qa's when the browser runs as ui-qa's user.
type ForBrowser = Option<(
    qa_core::evidence::HelperUser,
    qa_core::evidence::HelperAccess,
)>;

/// [`scratch`] that the browser reads or writes itself: made for the
/// browser's own user when it has one.
fn scratch_for(evidence: &Evidence, user: ForBrowser, base: &str) -> Result<PathBuf, DriverError> {
    let mut last = None;
    for i in 1..100 {
        let name = if i == 1 {
            base.to_string()
        } else {
            format!("{base}-{i}")
        };
        let made = match user {
            #[cfg(unix)]
            Some((u, access)) => evidence.scratch_dir_for(&name, u, access),
            _ => evidence.scratch_dir(&name),
        };
        match made {
            Ok(d) => return Ok(d),
            Err(e) => last = Some(e),
        }
    }
    Err(match last {
        Some(e) => e.into(),
        None => DriverError::new(WebCode::EvidenceWrite, "no scratch directory available"),
    })
}

/// Performs one action step.
pub(crate) async fn perform(
    page: &Page,
    base: &url::Url,
    evidence: &Evidence,
    step: &Step,
    deadline: Deadline,
) -> Result<StepOutcome, DriverError> {
    let Action::Browser(action) = &step.action else {
        return Err(unsupported(step));
    };
    let seq0 = page.sh.st().net_seq;
    use BrowserAction as B;
    match action {
        B::Goto(g) => navigate::goto(page, base, g, deadline).await,
        B::Reload(_) => navigate::reload(page, seq0, deadline).await,
        B::WaitForTimeout(w) => {
            Deadline::after_ms(w.ms).min(deadline).sleep().await;
            Ok(StepOutcome::default())
        }
        B::Click(p) => pointer::pointer(page, step, p, PointerAction::Click, seq0, deadline).await,
        B::DoubleClick(p) => {
            pointer::pointer(page, step, p, PointerAction::DoubleClick, seq0, deadline).await
        }
        B::Check(p) => pointer::pointer(page, step, p, PointerAction::Check, seq0, deadline).await,
        B::Uncheck(p) => {
            pointer::pointer(page, step, p, PointerAction::Uncheck, seq0, deadline).await
        }
        B::Hover(h) => pointer::hover(page, h, seq0, deadline).await,
        B::Wheel(w) => pointer::wheel(page, w, seq0, deadline).await,
        B::DragTo(d) => pointer::drag_to(page, d, seq0, deadline).await,
        B::Fill(f) => input::fill(page, f, seq0, deadline).await,
        B::Press(p) => input::press(page, p, seq0, deadline).await,
        B::SelectOption(s) => input::select_option(page, s, seq0, deadline).await,
        B::UploadFiles(u) => input::upload_files(page, evidence, step, u, seq0, deadline).await,
        B::OpenPopup(o) => popup::open_popup(page, step, o, seq0, deadline).await,
        B::Download(d) => download::download(page, evidence, step, d, seq0, deadline).await,
        B::Evaluate(e) => evaluate::evaluate(page, e, seq0, deadline).await,
        B::Screenshot(s) => evidence::screenshot(page, evidence, step, s, deadline).await,
        B::SnapshotAccessibility(s) => {
            evidence::accessibility(page, evidence, step, s, deadline).await
        }
        B::PerformanceTrace(_) => {
            diagnostics::performance_trace(page, evidence, step, deadline).await
        }
        B::HeapSummary(_) => diagnostics::heap_summary(page, evidence, step, deadline).await,
        B::Lighthouse(_) => Err(diagnostics::lighthouse_blocked()),
        // Assertions are verified, never performed.
        B::WaitFor(_)
        | B::AssertVisible(_)
        | B::AssertHidden(_)
        | B::AssertEnabled(_)
        | B::AssertDisabled(_)
        | B::AssertChecked(_)
        | B::AssertUnchecked(_)
        | B::AssertText(_)
        | B::AssertTextContent(_)
        | B::AssertValue(_)
        | B::AssertAttribute(_)
        | B::AssertCount(_)
        | B::AssertUrl(_)
        | B::AssertDomMetric(_)
        | B::AssertNoConsoleErrors(_)
        | B::AssertConsole(_)
        | B::AssertNetworkRequest(_)
        | B::AuthRejectedIf(_) => Err(unsupported(step)),
    }
}

/// One fresh verdict for an assertion step (bounded by 10 s per call).
pub(crate) async fn verify(
    page: &Page,
    step: &Step,
    deadline: Deadline,
) -> Result<Verdict, DriverError> {
    let Action::Browser(action) = &step.action else {
        return Err(unsupported(step));
    };
    let deadline = deadline.min(Deadline::after(Duration::from_secs(10)));
    use crate::page::Read;
    use BrowserAction as B;
    match action {
        B::WaitFor(w) => assert::wait_for(page, w, deadline).await,
        B::AssertVisible(a) => assert::element(page, a, ElementCheck::Visible, deadline).await,
        B::AssertHidden(a) => assert::element(page, a, ElementCheck::Hidden, deadline).await,
        B::AssertEnabled(a) => assert::element(page, a, ElementCheck::Enabled, deadline).await,
        B::AssertDisabled(a) => assert::element(page, a, ElementCheck::Disabled, deadline).await,
        B::AssertChecked(a) => assert::element(page, a, ElementCheck::Checked, deadline).await,
        B::AssertUnchecked(a) => assert::element(page, a, ElementCheck::Unchecked, deadline).await,
        B::AssertText(t) => assert::text(page, t, Read::Text, "text", deadline).await,
        B::AssertTextContent(t) => {
            assert::text(page, t, Read::TextContent, "textContent", deadline).await
        }
        B::AssertValue(t) => assert::text(page, t, Read::Value, "value", deadline).await,
        B::AssertAttribute(a) => assert::attribute(page, a, deadline).await,
        B::AssertCount(c) => assert::count(page, c, deadline).await,
        B::AssertUrl(m) => assert::url(page, m, deadline).await,
        B::AssertDomMetric(d) => assert::dom_metric(page, d, deadline).await,
        B::AssertNoConsoleErrors(_) => Ok(assert::no_console_errors(page)),
        B::AssertConsole(c) => Ok(assert::console(page, c)),
        B::AssertNetworkRequest(n) => Ok(assert::network_request(page, n)),
        B::AuthRejectedIf(a) => assert::auth_rejected_if(page, a, deadline).await,
        // Actions are performed once, never verified.
        B::Goto(_)
        | B::Reload(_)
        | B::WaitForTimeout(_)
        | B::Click(_)
        | B::DoubleClick(_)
        | B::Hover(_)
        | B::Fill(_)
        | B::Press(_)
        | B::Check(_)
        | B::Uncheck(_)
        | B::SelectOption(_)
        | B::Wheel(_)
        | B::DragTo(_)
        | B::UploadFiles(_)
        | B::OpenPopup(_)
        | B::Download(_)
        | B::Evaluate(_)
        | B::SnapshotAccessibility(_)
        | B::PerformanceTrace(_)
        | B::HeapSummary(_)
        | B::Lighthouse(_)
        | B::Screenshot(_) => Err(unsupported(step)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_browser_action_is_supported() {
        assert_eq!(supported_actions(), BrowserAction::NAMES);
        assert!(supported_actions().contains(&"lighthouse"));
    }
}
