//! `evaluate`: the safe in-page operations (scroll to, scroll by, read the
//! document metrics); never raw JavaScript.

use crate::page::{DomOp, Metrics, Nothing, Page};
use qa_core::flow::{Evaluate, EvaluateOperation};
use qa_core::{Deadline, DriverError, StepOutcome};

/// Runs the operation, then settles.
pub(super) async fn evaluate(
    page: &Page,
    e: &Evaluate,
    seq0: u64,
    deadline: Deadline,
) -> Result<StepOutcome, DriverError> {
    let mut out = StepOutcome::default();
    match e.operation {
        EvaluateOperation::ScrollTo | EvaluateOperation::ScrollBy => {
            let by = e.operation == EvaluateOperation::ScrollBy;
            let op = DomOp::Scroll { by, x: e.x, y: e.y };
            page.read::<Nothing>(&op, deadline).await?;
        }
        EvaluateOperation::Metrics => {
            let m: Metrics = page.read(&DomOp::Metrics, deadline).await?;
            out.detail = Some(format!(
                "elements {}, scroll {}x{}",
                m.element_count, m.scroll_width, m.scroll_height
            ));
        }
    }
    page.settle(seq0, deadline).await?;
    Ok(out)
}
