//! Build a flow in Rust (no JSON strings), validate it exactly like a flow
//! file, run it like `ui-qa run` and read the result document.
//!
//! `cargo run -p qa-cli --example built_flow`

use qa_core::flow::build::{FlowBuilder, StepSpec};
use qa_runner::progress::NoProgress;
use std::sync::Arc;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let flow = FlowBuilder::terminal(["sh"])
        .name("arithmetic in a shell")
        .env("PS1", "$ ")
        .size(60, 10)
        .step(StepSpec::send_text("echo $((6 * 7))"))
        .step(StepSpec::send_keys(["Enter"]))
        .step(StepSpec::wait_for_text("42").timeout_ms(10_000))
        .step(StepSpec::assert_no_screen_text("error"));
    println!("{}", flow.text());
    let workspace = std::env::temp_dir().join("ui-qa-examples");
    let request = qa_runner::runner::RunRequest::from_builder(&flow, workspace)?;
    let drivers: Vec<Arc<dyn qa_core::SurfaceDriver>> = vec![Arc::new(qa_tui::TuiDriver::new())];
    let result = qa_runner::runner::run(&drivers, request, &NoProgress).await?;
    println!(
        "{:?}: {} steps; result in {}",
        result.status,
        result.steps.len(),
        result.evidence_dir
    );
    std::process::exit(i32::from(
        result.status != qa_core::result::RunStatus::Passed,
    ));
}
