//! The peer tools: installed on first use into a cache outside the
//! repository, `$XDG_CACHE_HOME/ui-qa-bench` (else `~/.cache/ui-qa-bench`).
//!
//! - `<cache>/node`: `playwright-core`, `agent-browser@0.41`, `node-pty`,
//!   `@xterm/headless`, and for the observation-size comparison `todomvc`,
//!   `@playwright/mcp` and `@modelcontextprotocol/sdk` from npm, then `npm rebuild node-pty agent-browser
//!   --foreground-scripts` (npm 11 no longer runs install scripts by
//!   default; the rebuild does: node-pty's native module, agent-browser's
//!   native binary). The peer scripts of `xtask/bench/peers/` are copied
//!   next to that `node_modules` so that their imports resolve.
//! - Debian packages: `tmux` (terminal peer), `python3-pyatspi` for the
//!   system Python (desktop peer), and the desktop host pieces (`xvfb`,
//!   `dbus`, `at-spi2-core`, `gtk-4-examples`) when missing.

use super::{first_line, Options};
use std::path::{Path, PathBuf};
use std::process::Command;

/// npm packages of the browser and terminal peers.
const NPM_PACKAGES: &[&str] = &[
    "playwright-core",
    "agent-browser",
    "node-pty",
    "@xterm/headless",
    // The observation-size comparison: the page, the peer and the client.
    "todomvc",
    "@playwright/mcp",
    "@modelcontextprotocol/sdk",
];

/// The agent-browser minor version the bench pins.
const AGENT_BROWSER_PIN: &str = "0.41";

/// The peer scripts copied into the npm directory.
const NODE_SCRIPTS: &[&str] = &["playwright-task.mjs", "xterm-wait.mjs", "observe-bytes.mjs"];

/// Where the peers are.
#[derive(Debug)]
pub struct Peers {
    /// `<cache>/node`: `node_modules` and the copied peer scripts.
    pub node_dir: PathBuf,
    /// The agent-browser command (its native binary, as a global install
    /// runs it, or else the npm wrapper script).
    pub agent_browser: PathBuf,
    /// The Python that has pyatspi (Debian's, not a pyenv or venv one).
    pub python: PathBuf,
}

/// The bench's peer cache directory.
pub fn cache_dir() -> PathBuf {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").unwrap_or_else(|| "/root".into())).join(".cache")
        });
    base.join("ui-qa-bench")
}

/// A program on PATH.
pub fn which(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join(name))
            .find(|p| p.is_file())
    })
}

/// `version` from `node_modules/<pkg>/package.json`.
fn npm_version(node_dir: &Path, pkg: &str) -> Option<String> {
    let text =
        std::fs::read_to_string(node_dir.join("node_modules").join(pkg).join("package.json"))
            .ok()?;
    let v: serde_json::Value = serde_json::from_str(&text).ok()?;
    v.get("version")?.as_str().map(str::to_owned)
}

/// The native agent-browser binary for this machine, if the package has one.
fn agent_browser_native(node_dir: &Path) -> Option<PathBuf> {
    let arch = match std::env::consts::ARCH {
        "x86_64" => "x64",
        "aarch64" => "arm64",
        _ => return None,
    };
    let p = node_dir
        .join("node_modules/agent-browser/bin")
        .join(format!("agent-browser-linux-{arch}"));
    p.is_file().then_some(p)
}

fn npm(node_dir: &Path, args: &[&str]) -> bool {
    crate::run(Command::new("npm").current_dir(node_dir).args(args))
}

/// Installs (or completes) the npm peers; None when they cannot be had.
fn ensure_npm(node_dir: &Path) -> Option<()> {
    if which("node").is_none() || which("npm").is_none() {
        eprintln!("xtask bench: node and npm are needed for the web and terminal peers (apt-get install -y nodejs npm)");
        return None;
    }
    std::fs::create_dir_all(node_dir).ok()?;
    let missing = |d: &Path| -> Vec<&str> {
        NPM_PACKAGES
            .iter()
            .copied()
            .filter(|p| npm_version(d, p).is_none())
            .collect()
    };
    let pinned = |d: &Path| {
        npm_version(d, "agent-browser")
            .is_some_and(|v| v.starts_with(&format!("{AGENT_BROWSER_PIN}.")))
    };
    let mut changed = false;
    if !missing(node_dir).is_empty() || !pinned(node_dir) {
        eprintln!(
            "xtask bench: installing the npm peers into {}",
            node_dir.display()
        );
        let ab = format!("agent-browser@{AGENT_BROWSER_PIN}");
        let mut args = vec!["install", "--no-audit", "--no-fund"];
        args.extend(NPM_PACKAGES.iter().map(|p| {
            if *p == "agent-browser" {
                ab.as_str()
            } else {
                p
            }
        }));
        changed = true;
        if !npm(node_dir, &args) {
            let still = missing(node_dir);
            if !still.is_empty() {
                // Whatever agent-browser npm can give, rather than none.
                let mut args = vec!["install", "--no-audit", "--no-fund"];
                args.extend(still);
                npm(node_dir, &args);
            }
        }
        if !pinned(node_dir) {
            eprintln!(
                "xtask bench: WARNING: agent-browser@{AGENT_BROWSER_PIN} could not be installed; using {}",
                npm_version(node_dir, "agent-browser").unwrap_or_else(|| "none".into())
            );
        }
    }
    let pty_built = node_dir
        .join("node_modules/node-pty/build/Release/pty.node")
        .is_file();
    if changed || !pty_built || agent_browser_native(node_dir).is_none() {
        npm(
            node_dir,
            &[
                "rebuild",
                "node-pty",
                "agent-browser",
                "--foreground-scripts",
            ],
        );
    }
    let still = missing(node_dir);
    if !still.is_empty() {
        eprintln!(
            "xtask bench: npm peers missing after install: {}",
            still.join(" ")
        );
        return None;
    }
    Some(())
}

/// `apt-get install` of the named Debian packages (root only).
fn apt_install(pkgs: &[&str]) -> bool {
    eprintln!("xtask bench: installing {}", pkgs.join(" "));
    crate::run(
        Command::new("apt-get")
            .env("DEBIAN_FRONTEND", "noninteractive")
            .args(["install", "-y", "-qq", "--no-install-recommends"])
            .args(pkgs),
    )
}

/// The system Python that imports pyatspi.
fn python_with_pyatspi() -> Option<PathBuf> {
    let candidates = [PathBuf::from("/usr/bin/python3")];
    candidates.into_iter().find(|p| {
        Command::new(p)
            .args(["-c", "import pyatspi"])
            .output()
            .is_ok_and(|o| o.status.success())
    })
}

/// Makes sure the peers the selected surfaces need are installed.
pub fn ensure(opts: &Options) -> Option<Peers> {
    let node_dir = cache_dir().join("node");
    if opts.web || opts.tui {
        ensure_npm(&node_dir)?;
        let scripts = crate::root().join("xtask/bench/peers");
        for s in NODE_SCRIPTS {
            if let Err(e) = std::fs::copy(scripts.join(s), node_dir.join(s)) {
                eprintln!(
                    "xtask bench: cannot copy {s} into {}: {e}",
                    node_dir.display()
                );
                return None;
            }
        }
    }
    if opts.tui && which("tmux").is_none() && !apt_install(&["tmux"]) {
        return None;
    }
    if opts.desktop {
        let host: Vec<&str> = [
            ("Xvfb", "xvfb"),
            ("dbus-daemon", "dbus"),
            ("gtk4-demo", "gtk-4-examples"),
        ]
        .iter()
        .filter(|(bin, _)| which(bin).is_none())
        .map(|(_, pkg)| *pkg)
        .chain(
            (!Path::new("/usr/share/dbus-1/services/org.a11y.Bus.service").is_file())
                .then_some("at-spi2-core"),
        )
        .collect();
        if !host.is_empty() && !apt_install(&host) {
            return None;
        }
        if python_with_pyatspi().is_none() && !apt_install(&["python3-pyatspi"]) {
            return None;
        }
    }
    let agent_browser = agent_browser_native(&node_dir)
        .unwrap_or_else(|| node_dir.join("node_modules/.bin/agent-browser"));
    let python = if opts.desktop {
        match python_with_pyatspi() {
            Some(p) => p,
            None => {
                eprintln!("xtask bench: /usr/bin/python3 cannot import pyatspi");
                return None;
            }
        }
    } else {
        PathBuf::from("/usr/bin/python3")
    };
    Some(Peers {
        node_dir,
        agent_browser,
        python,
    })
}

/// The installed version of a Debian package.
fn deb_version(pkg: &str) -> String {
    first_line(Command::new("dpkg-query").args(["-W", "-f=${Version}", pkg]))
        .unwrap_or_else(|| "not installed".into())
}

impl Peers {
    /// `(name, version)` of every peer the selected surfaces use.
    pub fn versions(&self, opts: &Options) -> Vec<(String, String)> {
        let npm = |p: &str| npm_version(&self.node_dir, p).unwrap_or_else(|| "missing".into());
        let mut v = Vec::new();
        if opts.web || opts.tui {
            v.push((
                "node".into(),
                first_line(Command::new("node").arg("--version")).unwrap_or_default(),
            ));
        }
        if opts.web {
            v.push(("playwright-core".into(), npm("playwright-core")));
            let how = if agent_browser_native(&self.node_dir).is_some() {
                "native binary"
            } else {
                "npm wrapper"
            };
            v.push((
                "agent-browser".into(),
                format!("{} ({how})", npm("agent-browser")),
            ));
        }
        if opts.tui {
            v.push((
                "tmux".into(),
                first_line(Command::new("tmux").arg("-V")).unwrap_or_default(),
            ));
            v.push(("node-pty".into(), npm("node-pty")));
            v.push(("@xterm/headless".into(), npm("@xterm/headless")));
        }
        if opts.desktop {
            v.push((
                "pyatspi".into(),
                format!(
                    "{} ({})",
                    deb_version("python3-pyatspi"),
                    first_line(Command::new(&self.python).arg("--version")).unwrap_or_default()
                ),
            ));
            v.push(("gtk4-demo".into(), deb_version("gtk-4-examples")));
            v.push(("Xvfb".into(), deb_version("xvfb")));
            v.push(("at-spi2-core".into(), deb_version("at-spi2-core")));
        }
        v
    }
}
