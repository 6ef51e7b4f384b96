//! Drive a terminal program in ten lines: start a shell in a real PTY, type,
//! wait for the answer, read the screen, end everything that was started.
//!
//! `cargo run -p qa-cli --example terminal`

use qa_core::flow::build::StepSpec;
use qa_runner::runner::interactive::{Interactive, On, SessionConfig};
use std::sync::Arc;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let drivers: Vec<Arc<dyn qa_core::SurfaceDriver>> = vec![Arc::new(qa_tui::TuiDriver::new())];
    let target = serde_json::json!({ "command": { "argv": ["sh"], "env": { "PS1": "$ " } } });
    let config = SessionConfig::new(std::env::temp_dir().join("ui-qa-examples"));
    let mut s = Interactive::start(&drivers, target, config).await?;
    // Type once the shell shows its prompt (typed earlier, the text would
    // be echoed before the prompt).
    s.act(On::Nothing, StepSpec::wait_for_text("$")).await?;
    s.act(On::Nothing, StepSpec::send_text("echo $((6 * 7))"))
        .await?;
    s.act(On::Nothing, StepSpec::send_keys(["Enter"])).await?;
    s.act(On::Nothing, StepSpec::wait_for_text("42")).await?;
    let screen = s
        .observe()
        .await?
        .screen
        .map(|s| s.lines)
        .unwrap_or_default();
    let (result, _) = s.finish(None).await;
    println!("{}\n{:?}", screen.join("\n").trim_end(), result.status);
    Ok(())
}
