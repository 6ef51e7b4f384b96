//! Check a web page: open it in a real Chromium (contained to its origin),
//! list what one can act on with the locator for each element, assert on a
//! heading, and keep the evidence of a normal run.
//!
//! `cargo run -p qa-cli --example web_page -- http://127.0.0.1:8080/ "Welcome"`

use qa_core::flow::build::StepSpec;
use qa_core::flow::Locator;
use qa_runner::runner::interactive::{Interactive, On, SessionConfig};
use serde_json::json;
use std::sync::Arc;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let url = args.next().ok_or("usage: web_page URL HEADING")?;
    let heading = args.next().ok_or("usage: web_page URL HEADING")?;
    let drivers: Vec<Arc<dyn qa_core::SurfaceDriver>> = vec![Arc::new(qa_web::WebDriver::new())];
    let config = SessionConfig::new(std::env::temp_dir().join("ui-qa-examples"));
    let mut s = Interactive::start(&drivers, json!({ "url": url }), config).await?;
    for e in s.observe().await?.elements {
        let locator = e.locator.map(|l| qa_core::observe::locator_text(&l));
        println!(
            "{:<5} {} {:?}  {}",
            e.reference.unwrap_or_default(),
            e.role,
            e.name,
            locator.unwrap_or_default()
        );
    }
    let check = Locator::role("heading", heading);
    let out = s.act(On::Nothing, StepSpec::assert_visible(check)).await?;
    let (result, _) = s.finish(None).await;
    println!(
        "{:?} ({:?}); evidence in {}",
        result.status, out.reason, result.evidence_dir
    );
    std::process::exit(i32::from(
        result.status != qa_core::result::RunStatus::Passed,
    ));
}
