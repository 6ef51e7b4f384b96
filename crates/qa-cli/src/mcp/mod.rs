//! `ui-qa mcp`: interactive sessions and flow runs for an agent over the
//! Model Context Protocol on stdio. What sessions may reach is fixed by
//! the server's flags ([`policy`]); tools are in [`server`]; replies are
//! shaped in [`reply`]; every line of input is answered ([`frame`]). When
//! the client goes away (end of input) or the server is stopped, every
//! session is aborted within the cleanup bound.

pub mod frame;
pub mod policy;
pub mod reply;
pub mod server;

pub use crate::codes::McpCode;

use crate::exit;
use qa_core::driver::RunOptions;
use rmcp::ServiceExt as _;
use std::path::PathBuf;
use std::time::Duration;

/// How long ending every session may take once the client has gone.
const END_ALL_WITHIN: Duration = Duration::from_secs(30);

/// The server's limits, fixed for its whole life.
#[derive(clap::Args, Clone)]
pub struct McpArgs {
    /// An origin (`http://127.0.0.1:8080`) sessions and flows may open
    /// and reach. Repeat for more. Pages reach no other origin.
    #[arg(long = "allow-origin", value_name = "ORIGIN")]
    pub allow_origin: Vec<String>,
    /// A terminal program sessions and flows may run, by its absolute path,
    /// with any arguments: a tool's argv[0] (absolute, or a bare name on
    /// PATH) must resolve to the same file. Allowing an interpreter allows
    /// any script; allow the script itself to be narrower. Repeat for more.
    #[arg(long = "allow-command", value_name = "PROGRAM")]
    pub allow_command: Vec<String>,
    /// A desktop application program sessions and flows may launch, by its
    /// absolute path (argv[0] must resolve to the same file; any
    /// arguments). Repeat for more.
    #[arg(long = "allow-app", value_name = "PROGRAM")]
    pub allow_app: Vec<String>,
    /// A browser ui-qa did not start that flows may attach to
    /// (`target.browser.connect`), named by its DevTools endpoint
    /// (`http://127.0.0.1:9222`); repeatable. None by default.
    #[arg(long = "allow-connect", value_name = "ENDPOINT")]
    pub allow_connect: Vec<String>,
    /// At most this many sessions and flow runs open at once.
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u16).range(1..=64))]
    pub max_sessions: u16,
    /// Workspace for runs and evidence; flow files for the `run` tool are
    /// named relative to it and must be inside it. Default: `.ui-qa` in the
    /// current directory, which must be yours (never another user's).
    #[arg(long, value_name = "DIR")]
    pub workspace: Option<PathBuf>,
}

/// Builds the policy from the flags, or says which flag is wrong.
fn policy(args: &McpArgs) -> Result<policy::Policy, String> {
    let origins = args
        .allow_origin
        .iter()
        .map(|o| policy::parse_origin(o))
        .collect::<Result<Vec<_>, _>>()?;
    let programs = |flag: &str, list: &[String]| {
        list.iter()
            .map(|p| policy::Program::parse(flag, p))
            .collect::<Result<Vec<_>, _>>()
    };
    let commands = programs("--allow-command", &args.allow_command)?;
    let apps = programs("--allow-app", &args.allow_app)?;
    // The workspace is opened without following a symlink and must be
    // this user's; the default one is refused in another user's directory.
    let workspace = match &args.workspace {
        Some(w) => qa_core::evidence::open_workspace(w)
            .map_err(|e| format!("--workspace {}: {e}", w.display()))?,
        None => {
            let here = std::env::current_dir()
                .map_err(|e| format!("the current directory cannot be resolved: {e}"))?;
            qa_core::evidence::default_workspace(&here)
                .and_then(|w| qa_core::evidence::open_workspace(&w))
                .map_err(|e| e.to_string())?
        }
    };
    let connect = args
        .allow_connect
        .iter()
        .map(|c| policy::parse_endpoint(c))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(policy::Policy {
        connect,
        origins,
        commands,
        apps,
        workspace,
    })
}

/// Runs the server until its client closes stdin (or SIGINT/SIGTERM), then
/// ends every session. Returns the exit code.
pub async fn run(args: &McpArgs, options: RunOptions) -> u8 {
    let policy = match policy(args) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("error: {e}");
            return exit::INVALID;
        }
    };
    if policy.origins.is_empty() && policy.commands.is_empty() && policy.apps.is_empty() {
        eprintln!(
            "ui-qa mcp: no --allow-origin, --allow-command or --allow-app: sessions cannot open anything (guide and schema still work)"
        );
    }
    // Every browser run and session reaches these origins and no other,
    // whatever a flow or profile names once resolved.
    let options = RunOptions {
        origin_limit: Some(policy.origins.clone()),
        connect_limit: Some(policy.connect.clone()),
        // An agent chooses its patterns: none may tell it a secret.
        redact_matchers: true,
        ..options
    };
    let server = server::UiQa::new(policy, options, usize::from(args.max_sessions));
    let io = frame::filtered(tokio::io::stdin(), tokio::io::stdout());
    let running = match server.clone().serve(io).await {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: the MCP client did not initialize: {e}");
            server.end_all(END_ALL_WITHIN).await;
            return exit::FAILED;
        }
    };
    let token = running.cancellation_token();
    let stop = async {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{signal, SignalKind};
            match signal(SignalKind::terminate()) {
                Ok(mut term) => {
                    tokio::select! {
                        _ = tokio::signal::ctrl_c() => {}
                        _ = term.recv() => {}
                    }
                }
                Err(_) => {
                    let _ = tokio::signal::ctrl_c().await;
                }
            }
        }
        #[cfg(not(unix))]
        {
            let _ = tokio::signal::ctrl_c().await;
        }
    };
    tokio::select! {
        _ = running.waiting() => {}
        _ = stop => token.cancel(),
    }
    server.end_all(END_ALL_WITHIN).await;
    exit::PASSED
}
