//! Navigation steps: `goto` (within the allowlist) and `reload`.

use crate::codes::WebCode;
use crate::contain::Decision;
use crate::page::Page;
use qa_core::flow::Goto;
use qa_core::{Deadline, DriverError, StepOutcome};

/// Resolves `goto`'s `path`/`url` against the base URL.
pub(crate) fn resolve_url(
    base: &url::Url,
    path: Option<&str>,
    url: Option<&str>,
) -> Result<url::Url, DriverError> {
    let s = url.or(path).unwrap_or("/");
    base.join(s).map_err(|e| {
        DriverError::new(
            WebCode::NavigationBadUrl,
            format!("cannot resolve {s:?}: {e}"),
        )
    })
}

/// `goto`: a URL outside the allowlist fails before anything is sent.
pub(super) async fn goto(
    page: &Page,
    base: &url::Url,
    g: &Goto,
    deadline: Deadline,
) -> Result<StepOutcome, DriverError> {
    let u = resolve_url(base, g.path.as_deref(), g.url.as_deref())?;
    if let Decision::Block(_) = page.sh.allow.decide(u.as_str()) {
        return Err(DriverError::new(
            WebCode::NavigationBlocked,
            "goto: the URL's origin is not the target origin or in allowedOrigins",
        )
        .with_remediation("add the origin to target.allowedOrigins"));
    }
    page.navigate(u.as_str(), deadline).await?;
    Ok(StepOutcome::default())
}

/// `reload`.
pub(super) async fn reload(
    page: &Page,
    seq0: u64,
    deadline: Deadline,
) -> Result<StepOutcome, DriverError> {
    page.reload(seq0, deadline).await?;
    Ok(StepOutcome::default())
}
