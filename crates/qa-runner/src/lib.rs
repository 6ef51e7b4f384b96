//! # qa-runner — runs ui-qa flows over the drivers
//!
//! [`qa_core`] is the contract a driver implements; this crate is the tool
//! built on it. It chooses a driver for a flow ([`select`], the one
//! admission `check` that the CLI and MCP both call), runs the flow under its
//! deadlines with evidence and cleanup ([`runner::run`]) or one step at a
//! time ([`runner::interactive`]), reports progress ([`progress`]), renders
//! what people open ([`report`]: report.html, the run index, JUnit), writes
//! the JSON Schemas ([`schema`]), reads auth profiles from the workspace
//! ([`auth`]), and holds the conformance kit every driver proves itself with
//! (feature `conformance`).
//!
//! Drivers never depend on this crate, except as a dev-dependency for the
//! conformance kit.
//!
//! To run a built flow, pass `RunRequest::from_builder(&builder, workspace)`
//! and the drivers (`qa-tui`, `qa-web`, `qa-linux`) to [`runner::run`]. To
//! explore one step at a time, use [`runner::interactive::Interactive`]:
//! drive a terminal program in ten lines:
//!
//! ```no_run
//! # async fn demo(drivers: Vec<std::sync::Arc<dyn qa_core::SurfaceDriver>>) -> Result<(), Box<dyn std::error::Error>> {
//! use qa_core::flow::build::StepSpec;
//! use qa_runner::runner::interactive::{Interactive, On, SessionConfig};
//! let target = serde_json::json!({ "command": { "argv": ["sh"] } });
//! let mut s = Interactive::start(&drivers, target, SessionConfig::new(".ui-qa")).await?;
//! s.act(On::Nothing, StepSpec::wait_for_text("$")).await?;
//! s.act(On::Nothing, StepSpec::send_text("echo $((6 * 7))")).await?;
//! s.act(On::Nothing, StepSpec::send_keys(["Enter"])).await?;
//! s.act(On::Nothing, StepSpec::wait_for_text("42")).await?;
//! let screen = s.observe().await?.screen.expect("a terminal has a screen");
//! let (result, _) = s.finish(None).await;
//! println!("{}\n{:?}", screen.lines.join("\n"), result.status);
//! # Ok(()) }
//! ```
//!
//! The runnable versions (a terminal program, a web page, a desktop
//! application's tree, a built flow) are `crates/qa-cli/examples/`, run by
//! the test suite.

#![warn(missing_docs)]

pub mod auth;
#[cfg(feature = "conformance")]
pub mod conformance;
#[cfg(feature = "conformance")]
pub mod ocr;
pub mod progress;
pub mod report;
pub mod runner;
pub mod schema;
pub mod select;
