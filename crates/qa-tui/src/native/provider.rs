//! Which terminal emulator shows the program, and how it is started: a
//! fixed font and size so pixels are reproducible, the bridge as its only
//! command, and nothing of the program (argv, cwd, environment) on its
//! command line. Pure: the command is built here and tested on every OS.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// A terminal emulator ui-qa can own a window of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Provider {
    /// xterm: X11 only, sets `_NET_WM_PID`, answers every query a VT420
    /// does.
    Xterm,
}

/// The providers, in the order they are tried.
pub const PROVIDERS: &[Provider] = &[Provider::Xterm];

/// The font every provider is given.
pub const FONT: &str = "DejaVu Sans Mono";
/// Its size in points.
pub const FONT_POINTS: u16 = 12;

impl Provider {
    /// The provider's name (`xterm`).
    pub fn name(self) -> &'static str {
        match self {
            Provider::Xterm => "xterm",
        }
    }

    /// The executable looked for on `PATH`.
    pub fn program(self) -> &'static str {
        match self {
            Provider::Xterm => "xterm",
        }
    }

    /// How the Debian package that installs it is called.
    pub fn package(self) -> &'static str {
        match self {
            Provider::Xterm => "xterm",
        }
    }

    /// The arguments that open one window of `cols`×`rows` cells titled
    /// `title`, running `bridge` (with no arguments) as its command.
    pub fn args(self, cols: u16, rows: u16, title: &str, bridge: &Path) -> Vec<OsString> {
        match self {
            Provider::Xterm => {
                let mut v: Vec<OsString> = [
                    "-geometry".to_string(),
                    format!("{cols}x{rows}+0+0"),
                    "-T".into(),
                    title.into(),
                    "-fa".into(),
                    FONT.into(),
                    "-fs".into(),
                    FONT_POINTS.to_string(),
                    // UTF-8, no scroll bar, no border, no login shell.
                    "-u8".into(),
                    "+sb".into(),
                    "-bw".into(),
                    "0".into(),
                    "+ls".into(),
                    // The program cannot retitle, move or resize the window
                    // or read its title back.
                    "-xrm".into(),
                    "XTerm*allowWindowOps: false".into(),
                    "-e".into(),
                ]
                .into_iter()
                .map(OsString::from)
                .collect();
                v.push(bridge.as_os_str().to_owned());
                v
            }
        }
    }
}

/// The first provider installed here, with its path (`which` finds a
/// program on `PATH`).
pub fn find(which: impl Fn(&str) -> Option<PathBuf>) -> Option<(Provider, PathBuf)> {
    PROVIDERS
        .iter()
        .find_map(|p| which(p.program()).map(|path| (*p, path)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xterm_gets_the_size_the_font_and_only_the_bridge() {
        let args = Provider::Xterm.args(100, 30, "ui-qa: vim", Path::new("/opt/ui-qa"));
        let args: Vec<String> = args
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        let at = |flag: &str| {
            let i = args.iter().position(|a| a == flag).unwrap();
            args[i + 1].clone()
        };
        assert_eq!(at("-geometry"), "100x30+0+0");
        assert_eq!(at("-fa"), FONT);
        assert_eq!(at("-T"), "ui-qa: vim");
        // The bridge is the command, and the last argument.
        assert_eq!(at("-e"), "/opt/ui-qa");
        assert_eq!(args.last().unwrap(), "/opt/ui-qa");
    }

    #[test]
    fn the_first_installed_provider_is_chosen() {
        assert_eq!(find(|_| None), None);
        assert_eq!(
            find(|p| (p == "xterm").then(|| PathBuf::from("/usr/bin/xterm"))),
            Some((Provider::Xterm, PathBuf::from("/usr/bin/xterm")))
        );
    }
}
