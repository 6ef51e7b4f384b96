//! What a `ui-qa mcp` server lets its client reach, fixed by the server's
//! own flags: origins (`--allow-origin`), terminal programs
//! (`--allow-command`), desktop programs (`--allow-app`) and the workspace
//! (`--workspace`). Tool arguments are checked against it before anything
//! launches; nothing a tool names can widen it.

use qa_core::flow::{Flow, Target};
use std::path::{Component, Path, PathBuf};

/// The server's fixed limits.
#[derive(Debug, Clone)]
pub struct Policy {
    /// DevTools endpoints flows may attach to (`HOST:PORT`).
    pub connect: Vec<String>,
    /// Allowed origins, serialized (`http://127.0.0.1:8080`).
    pub origins: Vec<String>,
    /// Allowed terminal programs.
    pub commands: Vec<Program>,
    /// Allowed desktop programs.
    pub apps: Vec<Program>,
    /// The workspace (canonical): runs, exports and flow files live here.
    pub workspace: PathBuf,
}

/// One allowed program: the absolute path a flag names, and the file it
/// resolves to (symlinks followed). A tool's `argv[0]` is allowed when it
/// resolves to the same file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Program {
    /// As the flag gave it.
    pub given: String,
    /// The resolved file.
    pub real: PathBuf,
}

impl Program {
    /// Reads one `flag PROGRAM` value: an absolute path to an existing
    /// file. A relative or bare name is refused: it would be found
    /// differently for each flow (its directory, `PATH`).
    pub fn parse(flag: &str, value: &str) -> Result<Program, String> {
        if !Path::new(value).is_absolute() {
            return Err(format!(
                "{flag} {value:?} must be an absolute path (such as /usr/bin/htop): a relative or bare name would resolve differently for each flow"
            ));
        }
        let real = Path::new(value)
            .canonicalize()
            .map_err(|e| format!("{flag} {value}: {e}"))?;
        Ok(Program {
            given: value.to_string(),
            real,
        })
    }
}

/// The file `argv0` runs: an absolute path (symlinks followed) or a bare
/// name found on `PATH`. A relative path with a `/` resolves against
/// whatever directory the program starts in, so it names nothing here.
fn resolve_program(argv0: &str) -> Option<PathBuf> {
    let p = Path::new(argv0);
    if !p.is_absolute() && argv0.contains('/') {
        return None;
    }
    qa_core::host::which(argv0)?.canonicalize().ok()
}

/// The origin (`scheme://host[:port]`) of an http(s) URL.
pub fn origin_of(url: &str) -> Result<String, String> {
    let u = url::Url::parse(url).map_err(|e| format!("{url:?} is not an absolute URL ({e})"))?;
    if !matches!(u.scheme(), "http" | "https") {
        return Err(format!("{url:?} is not an http or https URL"));
    }
    Ok(u.origin().ascii_serialization())
}

/// Normalizes one `--allow-connect` value (`http://HOST:PORT` or
/// `ws://HOST:PORT/…`) to the `HOST:PORT` a flow's endpoint is matched by.
pub fn parse_endpoint(value: &str) -> Result<String, String> {
    qa_core::flow::endpoint_key(value).ok_or_else(|| {
        format!(
            "--allow-connect {value:?} must name a DevTools endpoint like http://127.0.0.1:9222 or ws://127.0.0.1:9222/devtools/browser/ID"
        )
    })
}

/// Normalizes one `--allow-origin` value; it must be an origin and nothing
/// more (no path, query or credentials).
pub fn parse_origin(value: &str) -> Result<String, String> {
    let u = url::Url::parse(value)
        .map_err(|e| format!("--allow-origin {value:?} is not an origin ({e})"))?;
    let bare = u.path() == "/" && u.query().is_none() && u.fragment().is_none();
    if !matches!(u.scheme(), "http" | "https")
        || !bare
        || !u.username().is_empty()
        || u.password().is_some()
    {
        return Err(format!(
            "--allow-origin {value:?} must be an http(s) origin like http://127.0.0.1:8080 (no path, no credentials)"
        ));
    }
    Ok(u.origin().ascii_serialization())
}

impl Policy {
    /// The refusal for `what`, naming the flag that would allow it.
    fn refuse(what: &str, flag: &str, allowed: &[String]) -> String {
        if allowed.is_empty() {
            format!("{what} is not allowed: this server was started without {flag}")
        } else {
            format!(
                "{what} is not allowed: this server allows only {} (its {flag} flags)",
                allowed.join(", ")
            )
        }
    }

    /// Checks a URL a session opens or navigates to.
    pub fn check_url(&self, url: &str) -> Result<String, String> {
        let o = origin_of(url)?;
        if self.origins.contains(&o) {
            Ok(o)
        } else {
            Err(Self::refuse(
                &format!("origin {o}"),
                "--allow-origin",
                &self.origins,
            ))
        }
    }

    /// Whether `argv`'s program resolves to one of `allowed`; the refusal
    /// names `what` and `flag`.
    fn check_program(
        argv: &[String],
        allowed: &[Program],
        what: &str,
        flag: &str,
    ) -> Result<(), String> {
        let Some(p) = argv.first() else {
            return Err(format!("the {what} command is empty"));
        };
        let real = resolve_program(p);
        if real
            .as_ref()
            .is_some_and(|r| allowed.iter().any(|a| &a.real == r))
        {
            return Ok(());
        }
        let given: Vec<String> = allowed.iter().map(|a| a.given.clone()).collect();
        let how = match real {
            Some(r) => format!("{what} {p:?} ({})", r.display()),
            None if p.contains('/') && !Path::new(p).is_absolute() => {
                format!("{what} {p:?} (a relative path: name it by its absolute path)")
            }
            None => format!("{what} {p:?} (not found)"),
        };
        let mut refusal = Self::refuse(&how, flag, &given);
        // An allowed program of that name: the spelling that is allowed.
        let name = Path::new(p).file_name();
        if let Some(a) = allowed.iter().find(|a| {
            name.is_some()
                && (Path::new(&a.given).file_name() == name || a.real.file_name() == name)
        }) {
            refusal.push_str(&format!(
                "; write argv[0] as {:?}, the allowed program of that name",
                a.given
            ));
        }
        Err(refusal)
    }

    /// Checks a terminal program's argv: its program must resolve to a
    /// program of `--allow-command`.
    pub fn check_command(&self, argv: &[String]) -> Result<(), String> {
        Self::check_program(argv, &self.commands, "program", "--allow-command")
    }

    /// Checks a desktop program's argv: its program must resolve to a
    /// program of `--allow-app`.
    pub fn check_app(&self, argv: &[String]) -> Result<(), String> {
        Self::check_program(argv, &self.apps, "application", "--allow-app")
    }

    /// Whether flows may attach to the browser at `connect`
    /// (`--allow-connect`).
    pub fn check_connect(&self, connect: &str) -> Result<(), String> {
        match qa_core::flow::endpoint_key(connect) {
            Some(k) if self.connect.contains(&k) => Ok(()),
            _ => Err(if self.connect.is_empty() {
                "this server attaches to no browser it did not start: start it with --allow-connect ENDPOINT".to_string()
            } else {
                format!(
                    "{} is not an endpoint this server may attach to; allowed: {}",
                    qa_core::flow::endpoint_key(connect).unwrap_or_else(|| "that".into()),
                    self.connect.join(", ")
                )
            }),
        }
    }

    /// The `target` of a session opening `url`: the page may reach every
    /// allowed origin and no other.
    pub fn browser_target(&self, url: &str) -> Result<serde_json::Value, String> {
        let own = self.check_url(url)?;
        let others: Vec<&String> = self.origins.iter().filter(|o| **o != own).collect();
        let mut t = serde_json::json!({ "url": url });
        if !others.is_empty() {
            t["allowedOrigins"] = serde_json::json!(others);
        }
        Ok(t)
    }

    /// A path inside the workspace, given relative to it: no absolute
    /// paths, no `..`, and no symlink leading out.
    pub fn workspace_file(&self, relative: &str) -> Result<PathBuf, String> {
        let p = Path::new(relative);
        if relative.is_empty()
            || p.components()
                .any(|c| !matches!(c, Component::Normal(_) | Component::CurDir))
        {
            return Err(format!(
                "{relative:?} must be a path relative to the workspace {}, without `..`",
                self.workspace.display()
            ));
        }
        let full = self.workspace.join(p);
        let real = full
            .canonicalize()
            .map_err(|e| format!("{} cannot be read: {e}", full.display()))?;
        if !real.starts_with(&self.workspace) {
            return Err(format!(
                "{relative:?} leads outside the workspace {} (through a symlink)",
                self.workspace.display()
            ));
        }
        Ok(real)
    }

    /// A working directory a flow names (relative to its file): it must be
    /// inside the workspace.
    fn check_dir(&self, flow_dir: &Path, dir: &str, field: &str) -> Result<(), String> {
        let real = flow_dir
            .join(dir)
            .canonicalize()
            .map_err(|e| format!("{field} {dir:?} cannot be used: {e}"))?;
        if real.starts_with(&self.workspace) {
            Ok(())
        } else {
            Err(format!(
                "{field} {dir:?} is outside the workspace {}",
                self.workspace.display()
            ))
        }
    }

    /// Checks a flow file's target before it runs. A flow may not start a
    /// server, set a program's environment or attach to a running
    /// application over MCP: each of those names code the flags did not
    /// allow.
    pub fn check_flow(&self, flow: &Flow) -> Result<(), String> {
        let dir = flow.base_dir.as_path();
        match &flow.target {
            Target::Browser(b) => {
                if b.server.is_some() {
                    return Err("target.server is not allowed over MCP: it starts a program; start the server yourself and allow its origin".into());
                }
                if let Some(s) = &b.serve {
                    self.check_dir(dir, s, "target.serve")?;
                }
                for u in b.url.iter().chain(&b.base_url) {
                    if url::Url::parse(u).is_ok() {
                        self.check_url(u)?;
                    }
                }
                for o in &b.allowed_origins {
                    self.check_url(o)?;
                }
                if let Some(app) = &b.app {
                    // An app that embeds Chromium is a program like any
                    // other: only one --allow-app names.
                    let l = &app.launch;
                    self.check_app(&l.argv)?;
                    if !l.env.is_empty() {
                        return Err("target.app.launch.env is not allowed over MCP (an environment can load code); set it in the server's own environment".into());
                    }
                    if let Some(d) = &l.cwd {
                        self.check_dir(dir, d, "target.app.launch.cwd")?;
                    }
                }
                Ok(())
            }
            Target::Terminal(c) => {
                self.check_command(&c.argv)?;
                if !c.env.is_empty() {
                    return Err("target.command.env is not allowed over MCP (an environment can load code, e.g. LD_PRELOAD); set it in the server's own environment".into());
                }
                if let Some(d) = &c.cwd {
                    self.check_dir(dir, d, "target.command.cwd")?;
                }
                Ok(())
            }
            Target::Desktop(a) => {
                let Some(l) = &a.launch else {
                    return Err("attaching to a running application is not allowed over MCP; launch an allowed application (target.application.launch)".into());
                };
                if a.pid.is_some() || a.name.is_some() || a.bundle_id.is_some() {
                    return Err("attaching to a running application is not allowed over MCP".into());
                }
                self.check_app(&l.argv)?;
                if !l.env.is_empty() {
                    return Err("target.application.launch.env is not allowed over MCP (an environment can load code); set it in the server's own environment".into());
                }
                if let Some(d) = &l.cwd {
                    self.check_dir(dir, d, "target.application.launch.cwd")?;
                }
                Ok(())
            }
        }
    }

    /// Checks one step a session is asked to run: an absolute URL it names
    /// must be of an allowed origin (the browser's containment refuses the
    /// rest anyway; this says why before anything happens).
    pub fn check_step(&self, step: &serde_json::Value) -> Result<(), String> {
        if let Some(u) = step.get("url").and_then(|u| u.as_str()) {
            self.check_url(u)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(ws: &Path) -> Policy {
        Policy {
            connect: Vec::new(),
            origins: vec!["http://127.0.0.1:8080".into()],
            commands: vec![Program::parse("--allow-command", "/bin/sh").unwrap()],
            apps: vec![],
            workspace: ws.canonicalize().unwrap(),
        }
    }

    #[test]
    fn origins_are_exact() {
        assert_eq!(
            parse_origin("http://127.0.0.1:8080").unwrap(),
            "http://127.0.0.1:8080"
        );
        assert_eq!(
            parse_origin("HTTP://LOCALHOST:80/").unwrap(),
            "http://localhost"
        );
        for bad in [
            "http://a.test/x",
            "file:///etc",
            "http://u:p@a.test",
            "a.test",
        ] {
            assert!(parse_origin(bad).is_err(), "{bad}");
        }
        let d = tempfile::tempdir().unwrap();
        let p = policy(d.path());
        assert!(p.check_url("http://127.0.0.1:8080/login?x=1").is_ok());
        let e = p.check_url("http://127.0.0.1:8081/").unwrap_err();
        assert!(e.contains("http://127.0.0.1:8081") && e.contains("--allow-origin"));
        assert!(p.check_url("file:///etc/passwd").is_err());
        assert!(p
            .check_step(&serde_json::json!({"action":"goto","url":"https://example.com/"}))
            .is_err());
        assert!(p
            .check_step(&serde_json::json!({"action":"goto","path":"/x"}))
            .is_ok());
    }

    #[test]
    fn programs_are_absolute_and_compared_resolved() {
        let d = tempfile::tempdir().unwrap();
        let p = policy(d.path());
        assert!(p.check_command(&["/bin/sh".into(), "-c".into()]).is_ok());
        // The same file by another name (PATH, a symlink): the same program.
        assert!(p.check_command(&["sh".into()]).is_ok());
        assert!(p.check_command(&[]).is_err());
        let e = p.check_app(&["/usr/bin/python3".into()]).unwrap_err();
        assert!(e.contains("without --allow-app"), "{e}");
        // A relative path names whatever lies in the program's directory.
        let e = p.check_command(&["./sh".into()]).unwrap_err();
        assert!(e.contains("relative"), "{e}");
        // A different program that happens to share the name.
        let app = d.path().join("sh");
        std::fs::copy("/bin/true", &app).unwrap();
        let e = p.check_command(&[app.display().to_string()]).unwrap_err();
        assert!(e.contains("--allow-command"), "{e}");
        // The refusal of a name that is not found names the allowed
        // spelling of that program.
        assert!(
            e.ends_with("write argv[0] as \"/bin/sh\", the allowed program of that name"),
            "{e}"
        );
        let mut no_path = policy(d.path());
        no_path.commands = vec![Program::parse("--allow-command", "/bin/true").unwrap()];
        let e = no_path
            .check_command(&["no-such-program-here".into()])
            .unwrap_err();
        assert!(!e.contains("write argv[0]"), "{e}");
        // Flags: absolute paths only.
        for bad in ["./app", "app", "bin/app"] {
            let e = Program::parse("--allow-command", bad).unwrap_err();
            assert!(e.contains("absolute path"), "{e}");
        }
        assert!(Program::parse("--allow-app", "/nonexistent/app").is_err());
    }

    #[test]
    fn workspace_files_stay_inside() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("f.jsonc"), "{}").unwrap();
        let p = policy(d.path());
        assert!(p.workspace_file("f.jsonc").is_ok());
        for bad in ["../f.jsonc", "/etc/passwd", "", "a/../../x"] {
            assert!(p.workspace_file(bad).is_err(), "{bad}");
        }
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink("/etc/hostname", d.path().join("out")).unwrap();
            assert!(p.workspace_file("out").unwrap_err().contains("outside"));
        }
    }

    #[test]
    fn an_app_that_embeds_chromium_is_a_program_only_allow_app_names() {
        let d = tempfile::tempdir().unwrap();
        let p = policy(d.path());
        let flow = |app: &str| {
            qa_core::Flow::parse(
                &format!(
                    r#"{{ "target": {{ "app": {app} }}, "steps": [{{ "action": "screenshot" }}] }}"#
                ),
                d.path(),
            )
            .unwrap()
        };
        // No --allow-app: a flow cannot launch one through target.app.
        let e = p
            .check_flow(&flow(
                r#"{ "launch": { "argv": ["/bin/sh", "-c", "id"] }, "devtools": "pipe" }"#,
            ))
            .unwrap_err();
        assert!(e.contains("--allow-app"), "{e}");
        // Allowed program, but an environment: refused (it can load code).
        let mut allowed = policy(d.path());
        allowed.apps = vec![Program::parse("--allow-app", "/bin/sh").unwrap()];
        assert!(allowed
            .check_flow(&flow(
                r#"{ "launch": { "argv": ["/bin/sh"] }, "devtools": "port" }"#
            ))
            .is_ok());
        let e = allowed
            .check_flow(&flow(
                r#"{ "launch": { "argv": ["/bin/sh"], "env": { "LD_PRELOAD": "/tmp/x.so" } }, "devtools": "port" }"#,
            ))
            .unwrap_err();
        assert!(e.contains("target.app.launch.env"), "{e}");
    }
}
