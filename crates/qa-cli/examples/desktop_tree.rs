//! Read a desktop application's accessibility tree: launch it (inside an
//! owned Xvfb display and session bus), print its elements with the
//! locator for each one, end it.
//!
//! `cargo run -p qa-cli --example desktop_tree -- gnome-calculator`

use qa_runner::runner::interactive::{Interactive, SessionConfig};
use serde_json::json;
use std::sync::Arc;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    if argv.is_empty() {
        return Err("usage: desktop_tree PROGRAM [ARGS…]".into());
    }
    let drivers: Vec<Arc<dyn qa_core::SurfaceDriver>> =
        vec![Arc::new(qa_linux::LinuxDesktopDriver::new())];
    let mut config = SessionConfig::new(std::env::temp_dir().join("ui-qa-examples"));
    config.options.virtual_display = true;
    let target = json!({ "application": { "launch": { "argv": argv } } });
    let mut s = Interactive::start(&drivers, target, config).await?;
    for e in s.observe().await?.elements {
        let locator = e.locator.map(|l| qa_core::observe::locator_text(&l));
        println!(
            "{}{} {:?}  {}",
            "  ".repeat(e.depth),
            e.role,
            e.name,
            locator.unwrap_or_default()
        );
    }
    let (result, _) = s.finish(None).await;
    println!("{:?}", result.status);
    Ok(())
}
