//! Runs a terminal flow written in Rust through ui-qa's runner and prints
//! the status: what a tool embedding ui-qa as a library writes.

use qa_core::flow::build::{FlowBuilder, StepSpec};
use qa_runner::progress::NoProgress;
use qa_runner::runner::{run, RunRequest};
use std::sync::Arc;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let flow = FlowBuilder::terminal(["sh"])
        .env("PS1", "$ ")
        .step(StepSpec::send_text("echo $((6 * 7))"))
        .step(StepSpec::send_keys(["Enter"]))
        .step(StepSpec::wait_for_text("42"));
    let workspace = std::env::temp_dir().join("embed-ui-qa");
    let request = RunRequest::from_builder(&flow, workspace)?;
    let drivers: Vec<Arc<dyn qa_core::SurfaceDriver>> = vec![Arc::new(qa_tui::TuiDriver::new())];
    let result = run(&drivers, request, &NoProgress).await?;
    println!("{}", result.status.as_str());
    Ok(())
}
