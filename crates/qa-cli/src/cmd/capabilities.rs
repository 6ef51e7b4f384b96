//! `ui-qa capabilities`: what this host can drive, per backend.

use crate::cli::HostArgs;
use crate::{drivers, exit, output};

/// `ui-qa capabilities`.
pub(crate) async fn run(json: bool, host: &HostArgs) -> u8 {
    let report = drivers::capabilities(&host.options()).await;
    if json {
        println!("{}", serde_json::to_string_pretty(&report).expect("json"));
    } else {
        output::print_capabilities(&report);
    }
    exit::PASSED
}
