//! Evidence steps: `screenshot` and `snapshotAccessibility` (written to the
//! run's evidence store; a withheld picture leaves a note).

use crate::artifacts;
use crate::page::Page;
use qa_core::flow::{Screenshot, Snapshot};
use qa_core::{Deadline, DriverError, Evidence, Step, StepOutcome};

/// `screenshot`.
pub(super) async fn screenshot(
    page: &Page,
    evidence: &Evidence,
    step: &Step,
    s: &Screenshot,
    deadline: Deadline,
) -> Result<StepOutcome, DriverError> {
    let full_page = s.full_page.unwrap_or(false);
    artifacts::screenshot(
        page,
        evidence,
        step,
        s.locator.as_ref(),
        full_page,
        deadline,
    )
    .await?;
    Ok(StepOutcome::default())
}

/// `snapshotAccessibility`.
pub(super) async fn accessibility(
    page: &Page,
    evidence: &Evidence,
    step: &Step,
    s: &Snapshot,
    deadline: Deadline,
) -> Result<StepOutcome, DriverError> {
    artifacts::ax_snapshot(page, evidence, step, s.locator.as_ref(), deadline).await?;
    Ok(StepOutcome::default())
}
