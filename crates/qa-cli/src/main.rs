//! `ui-qa` — reproduce user-visible bugs and prove fixes on real UIs.
//!
//! This binary only parses arguments, wires the drivers into the runner and
//! prints: `cli` declares the commands, `cmd/` and the command modules run
//! them, and the work lives in `qa-runner`, `qa-core` and the driver crates.

// Every print of this binary goes through these (they shadow the standard
// macros in every module below): a closed or failing stdout is remembered,
// later output is skipped and the command ends with exit 141 after its
// normal cleanup, instead of panicking with `failed printing to stdout`; a
// closed stderr is ignored (diagnostics must never stop a run).
macro_rules! print {
    ($($arg:tt)*) => { $crate::console::write(format_args!($($arg)*)) };
}
macro_rules! println {
    () => { $crate::console::write(format_args!("\n")) };
    ($($arg:tt)*) => { $crate::console::write(format_args!("{}\n", format_args!($($arg)*))) };
}
macro_rules! eprint {
    ($($arg:tt)*) => { $crate::console::write_stderr(format_args!($($arg)*)) };
}
macro_rules! eprintln {
    () => { $crate::console::write_stderr(format_args!("\n")) };
    ($($arg:tt)*) => { $crate::console::write_stderr(format_args!("{}\n", format_args!($($arg)*))) };
}

mod auth;
mod cli;
mod cmd;
mod codes;
mod console;
#[cfg(test)]
mod docs_check;
mod drivers;
mod exit;
mod guides;
mod inspect;
mod mcp;
mod output;
mod private;
mod reports;
mod runs;

use clap::Parser;
use cli::{Cli, Command};
use std::process::ExitCode;

fn main() -> ExitCode {
    // Started as a native terminal's bridge (by the terminal window a run
    // owns): only that, no command line.
    if let Some(code) = qa_tui::native::bridge::main_if_requested() {
        return ExitCode::from(u8::try_from(code).unwrap_or(1));
    }
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // Help and version go to stdout (exit 0), usage errors to stderr
            // (exit 2); a closed stdout ends quietly like any other output.
            let printed = e.print().and_then(|()| {
                use std::io::Write;
                std::io::stdout().flush()
            });
            if printed.is_err() && !e.use_stderr() {
                return ExitCode::from(exit::STDOUT_CLOSED);
            }
            return ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(exit::INVALID));
        }
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    // ui-qa starts every child through a run's ProcessOwner: whatever the
    // subreaper adopts is a run's, marker or not.
    qa_core::process::claim_unmarked_orphans(true);
    let code = rt.block_on(async {
        let code = match &cli.command {
            Command::Check { flow, json, vars } => cmd::check::run(flow, *json, vars),
            Command::Probe { flow, json, host } => cmd::probe::run(flow, *json, host).await,
            Command::Run(args) => cmd::run::run(args).await,
            Command::Guide { backend, topic } => cmd::guide::run(backend, topic.as_deref()),
            Command::Capabilities { json, host } => cmd::capabilities::run(*json, host).await,
            Command::Report(args) => reports::command::run(args),
            Command::Auth(args) => auth::run(args),
            Command::Mcp { args, host } => mcp::run(args, host.options()).await,
            Command::Inspect {
                url,
                json,
                app,
                connect,
                wait_for,
                steps,
                host,
                command,
            } => {
                let how = inspect::How {
                    app: *app,
                    connect: connect.clone(),
                    json: *json,
                    wait_for: wait_for.clone(),
                    steps: steps.clone(),
                };
                inspect::run(url.as_deref(), command, how, host.options()).await
            }
            Command::Schema { name } => cmd::schema::run(*name),
        };
        // Nothing of ours outlives the command: unattributed orphans ended,
        // zombies collected, the watchdog stopped and collected.
        let ended = qa_core::process::shutdown(
            qa_core::process::DEFAULT_GRACE,
            qa_core::Deadline::after_ms(10_000),
        )
        .await;
        if !ended.ended.is_empty() || !ended.left.is_empty() {
            output::print_shutdown(&ended);
        }
        code
    });
    rt.shutdown_timeout(std::time::Duration::from_secs(2));
    if console::has_failed() {
        return ExitCode::from(exit::STDOUT_CLOSED);
    }
    ExitCode::from(code)
}
