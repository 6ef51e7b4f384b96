//! `ui-qa auth list|init`: what auth profiles a project has — ids, kinds,
//! descriptions and origins, never a value.

use crate::exit;
use clap::{Args, Subcommand};
use std::path::PathBuf;

/// `ui-qa auth …`.
#[derive(Args)]
pub struct AuthArgs {
    #[command(subcommand)]
    command: AuthCommand,
}

#[derive(Subcommand)]
enum AuthCommand {
    /// List the profiles of .ui-qa/auth.jsonc: ids, types, descriptions and
    /// allowed origins (never a value). With no file: an empty list, and
    /// nothing is created.
    List {
        /// Print a JSON array on stdout.
        #[arg(long)]
        json: bool,
        /// Workspace holding auth.jsonc.
        #[arg(long, value_name = "DIR", default_value = ".ui-qa")]
        workspace: PathBuf,
    },
    /// Create a private (0600), empty auth.jsonc template for a person to
    /// fill; an existing file is left alone.
    Init {
        /// Workspace to hold auth.jsonc.
        #[arg(long, value_name = "DIR", default_value = ".ui-qa")]
        workspace: PathBuf,
    },
}

/// Runs the command; returns the exit code.
pub fn run(args: &AuthArgs) -> u8 {
    match &args.command {
        AuthCommand::List { json, workspace } => match qa_runner::auth::list(workspace) {
            Ok(list) => {
                if *json {
                    crate::console::write(format_args!(
                        "{}\n",
                        serde_json::to_string_pretty(&list).expect("json")
                    ));
                } else if list.is_empty() {
                    let file = qa_runner::auth::auth_file_path(workspace);
                    crate::console::write(format_args!(
                        "no auth profiles ({} {})\n",
                        file.display(),
                        if file.exists() {
                            "has none"
                        } else {
                            "does not exist"
                        }
                    ));
                } else {
                    for p in &list {
                        crate::console::write(format_args!(
                            "{:<20} {:<15} {}{}\n{:<20} origins: {}\n",
                            p.id,
                            p.kind.as_str(),
                            p.description.as_deref().unwrap_or("(no description)"),
                            if p.state_cached {
                                " (login state cached)"
                            } else {
                                ""
                            },
                            "",
                            p.allowed_origins.join(", ")
                        ));
                    }
                }
                exit::PASSED
            }
            Err(b) => refused(&b),
        },
        AuthCommand::Init { workspace } => match qa_runner::auth::init(workspace) {
            Ok(created) => {
                let file = qa_runner::auth::auth_file_path(workspace);
                eprintln!(
                    "{} {} — a person fills in the values (mode 0600; `ui-qa guide --backend browser --topic auth`)",
                    if created { "created" } else { "left as it is:" },
                    file.display()
                );
                exit::PASSED
            }
            Err(b) => refused(&b),
        },
    }
}

fn refused(b: &qa_core::auth::AuthBlock) -> u8 {
    eprintln!("ui-qa: {}\n  fix: {}", b.reason, b.remediation);
    exit::BLOCKED
}
