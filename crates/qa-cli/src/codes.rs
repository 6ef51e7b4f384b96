//! Stable codes of the command line itself (`guide.*`, and `mcp.*` in
//! every refused `ui-qa mcp` tool call's `error.code`), and the error
//! table of `docs/errors.md`, generated from every crate's code enum.

qa_core::error_codes! {
    #[allow(clippy::enum_variant_names)]
    /// Codes of `ui-qa` subcommands that are not runs (`guide.*`).
    pub enum CliCode {
        /// `ui-qa guide --backend` names no backend (use browser, tui or desktop).
        GuideUnknownBackend = "guide.unknown_backend",
        /// `ui-qa guide --topic` is not a plain topic name.
        GuideInvalidTopic = "guide.invalid_topic",
        /// The topic belongs to another backend's guide.
        GuideCrossBackend = "guide.cross_backend",
        /// The backend's guide has no such topic.
        GuideUnknownTopic = "guide.unknown_topic",
    }
}

qa_core::error_codes! {
    /// Why a `ui-qa mcp` tool call was refused or did not pass.
    pub enum McpCode {
        /// The call names an origin, program or path outside the server's `--allow-*` flags and workspace.
        NotAllowed = "mcp.not_allowed",
        /// `--max-sessions` sessions and flow runs are already open; finish or abort one.
        MaxSessions = "mcp.max_sessions",
        /// No open session has that id (it was finished, aborted, or never started).
        UnknownSession = "mcp.unknown_session",
        /// The reference belongs to an earlier observation that an action made stale; observe again.
        StaleRef = "mcp.stale_ref",
        /// The reference is not in the current observation.
        UnknownRef = "mcp.unknown_ref",
        /// The element has a reference but no locator finds only it; act on a locator instead.
        NoLocator = "mcp.no_locator",
        /// The arguments or the step are not valid (the message names the field).
        InvalidArguments = "mcp.invalid_arguments",
        /// The target could not be opened; the run's result says why (BLOCKED or FAILED).
        NotOpened = "mcp.not_opened",
        /// The surface could not be observed.
        ObserveFailed = "mcp.observe_failed",
        /// The step ran and did not pass (its reason and the run's evidence say why).
        StepFailed = "mcp.step_failed",
        /// `run` refused a flow that checks nothing (no assert* or waitFor* step); add an assertion or pass allowUnchecked.
        NothingChecked = "mcp.nothing_checked",
        /// The server is ending its sessions (its client went away or it was stopped).
        Closing = "mcp.closing",
    }
}

#[cfg(test)]
/// Marks the start of the generated table in `docs/errors.md`.
pub const TABLE_BEGIN: &str = "<!-- BEGIN GENERATED: error codes -->";
#[cfg(test)]
/// Marks the end of the generated table in `docs/errors.md`.
pub const TABLE_END: &str = "<!-- END GENERATED: error codes -->";

#[cfg(test)]
/// Every code family: a heading and its rows.
pub fn families() -> Vec<(&'static str, Vec<qa_core::codes::CodeInfo>)> {
    vec![
        (
            "Flow (`ui-qa check`, exit 2)",
            qa_core::flow::FlowErrorCode::table(),
        ),
        ("Runner and evidence", qa_core::CoreCode::table()),
        ("Browser driver (`browser/cdp`)", qa_web::WebCode::table()),
        ("Terminal driver (`tui/pty`)", qa_tui::TuiCode::table()),
        (
            "Linux desktop driver (`desktop/linux-at-spi`)",
            qa_linux::DesktopCode::table(),
        ),
        ("Command line", CliCode::table()),
        ("MCP server (`ui-qa mcp`)", McpCode::table()),
    ]
}

#[cfg(test)]
/// The generated Markdown table (between the markers).
pub fn markdown() -> String {
    let mut out = String::new();
    out.push_str(TABLE_BEGIN);
    out.push('\n');
    for (title, rows) in families() {
        out.push_str(&format!("\n### {title}\n\n| code | meaning |\n|---|---|\n"));
        for r in rows {
            out.push_str(&format!(
                "| `{}` | {} |\n",
                r.code,
                r.meaning.replace('|', "\\|")
            ));
        }
    }
    out.push('\n');
    out.push_str(TABLE_END);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;
    use std::path::Path;

    #[test]
    fn every_code_is_unique_and_documented() {
        assert!(qa_core::codes::check_table(&CliCode::table(), &["guide."]).is_ok());
        assert!(qa_core::codes::check_table(&McpCode::table(), &["mcp."]).is_ok());
        let mut seen: HashMap<&str, &str> = HashMap::new();
        for (family, rows) in families() {
            assert!(!rows.is_empty(), "{family} has no codes");
            for r in rows {
                if let Some(other) = seen.insert(r.code, family) {
                    panic!("{} is declared twice: in {other} and in {family}", r.code);
                }
            }
        }
    }

    /// `docs/errors.md` carries the generated table; regenerate it with
    /// `UI_QA_WRITE_ERRORS=1 cargo test -p qa-cli errors_doc`.
    #[test]
    fn errors_doc_is_current() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/errors.md");
        let doc = std::fs::read_to_string(&path).expect("docs/errors.md");
        let (Some(b), Some(e)) = (doc.find(TABLE_BEGIN), doc.find(TABLE_END)) else {
            panic!("docs/errors.md has no generated table markers");
        };
        let current = &doc[b..e + TABLE_END.len()];
        let want = markdown();
        if current != want {
            if std::env::var_os("UI_QA_WRITE_ERRORS").is_some() {
                let new = format!("{}{}{}", &doc[..b], want, &doc[e + TABLE_END.len()..]);
                std::fs::write(&path, new).expect("write docs/errors.md");
            } else {
                panic!(
                    "docs/errors.md's error table is out of date; run \
                     `UI_QA_WRITE_ERRORS=1 cargo test -p qa-cli errors_doc`"
                );
            }
        }
    }
}
