//! Which terminal emulator shows the program, and how it is started: a
//! fixed font and size so pixels are reproducible, the bridge as its only
//! command, and nothing of the program (argv, cwd, environment) on its
//! command line. Pure: the command is built here and tested on every OS.

use qa_core::flow::TerminalApp;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// A terminal emulator ui-qa can own a window of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Provider {
    /// kitty (OpenGL; under Xvfb, Mesa's software renderer).
    Kitty,
    /// Alacritty (OpenGL, as kitty).
    Alacritty,
    /// xterm (X11 core drawing with Xft fonts).
    Xterm,
}

/// The providers, in the order they are tried when the flow names none.
pub const PROVIDERS: &[Provider] = &[Provider::Kitty, Provider::Alacritty, Provider::Xterm];

/// The font every provider is given.
pub const FONT: &str = "DejaVu Sans Mono";
/// Its size in points.
pub const FONT_POINTS: u16 = 12;

impl Provider {
    /// The provider a flow's `terminal` names.
    pub fn of(app: TerminalApp) -> Provider {
        match app {
            TerminalApp::Kitty => Provider::Kitty,
            TerminalApp::Alacritty => Provider::Alacritty,
            TerminalApp::Xterm => Provider::Xterm,
        }
    }

    /// The provider's name, as a flow's `terminal` spells it.
    pub fn name(self) -> &'static str {
        match self {
            Provider::Kitty => "kitty",
            Provider::Alacritty => "alacritty",
            Provider::Xterm => "xterm",
        }
    }

    /// The executable looked for on `PATH`.
    pub fn program(self) -> &'static str {
        self.name()
    }

    /// The Debian package that installs it.
    pub fn package(self) -> &'static str {
        self.name()
    }

    /// The arguments that open one window of `cols`×`rows` cells titled
    /// `title`, black on white in [`FONT`], with no user configuration
    /// read, no blinking cursor, no padding, and `bridge` (with no
    /// arguments) as its command.
    pub fn args(self, cols: u16, rows: u16, title: &str, bridge: &Path) -> Vec<OsString> {
        let mut v: Vec<String> = match self {
            Provider::Kitty => [
                "--config",
                "NONE",
                "--title",
                title,
                "-o",
                &format!("font_family={FONT}"),
                "-o",
                &format!("font_size={FONT_POINTS}"),
                "-o",
                &format!("initial_window_width={cols}c"),
                "-o",
                &format!("initial_window_height={rows}c"),
                "-o",
                "remember_window_size=no",
                "-o",
                "window_padding_width=0",
                "-o",
                "placement_strategy=top-left",
                "-o",
                "cursor_blink_interval=0",
                "-o",
                "foreground=#000000",
                "-o",
                "background=#ffffff",
                "-o",
                "allow_remote_control=no",
                "-o",
                "shell_integration=disabled",
                "-o",
                "enable_audio_bell=no",
                "-o",
                "update_check_interval=0",
                "-o",
                "linux_display_server=x11",
            ]
            .iter()
            .map(|s| s.to_string())
            .collect(),
            Provider::Alacritty => [
                "--config-file",
                "/dev/null",
                "--title",
                title,
                "-o",
                &format!("font.normal.family={FONT}"),
                "-o",
                &format!("font.size={FONT_POINTS}"),
                "-o",
                &format!("window.dimensions.columns={cols}"),
                "-o",
                &format!("window.dimensions.lines={rows}"),
                "-o",
                "window.padding.x=0",
                "-o",
                "window.padding.y=0",
                "-o",
                "cursor.blinking=Never",
                "-o",
                "colors.primary.foreground='#000000'",
                "-o",
                "colors.primary.background='#ffffff'",
                "-e",
            ]
            .iter()
            .map(|s| s.to_string())
            .collect(),
            Provider::Xterm => [
                "-geometry",
                &format!("{cols}x{rows}+0+0"),
                "-T",
                title,
                "-fa",
                FONT,
                "-fs",
                &FONT_POINTS.to_string(),
                // UTF-8, no scroll bar, no border, no login shell, black
                // on white.
                "-u8",
                "+sb",
                "-bw",
                "0",
                "+ls",
                "-fg",
                "black",
                "-bg",
                "white",
                // The program cannot retitle, move or resize the window
                // or read its title back.
                "-xrm",
                "XTerm*allowWindowOps: false",
                "-e",
            ]
            .iter()
            .map(|s| s.to_string())
            .collect(),
        };
        let mut out: Vec<OsString> = v.drain(..).map(OsString::from).collect();
        out.push(bridge.as_os_str().to_owned());
        out
    }
}

/// The provider to use: `wanted` when the flow names one, else the first
/// of [`PROVIDERS`] installed here; with its path (`which` finds a program
/// on `PATH`).
pub fn find(
    wanted: Option<Provider>,
    which: impl Fn(&str) -> Option<PathBuf>,
) -> Option<(Provider, PathBuf)> {
    let candidates: &[Provider] = match &wanted {
        Some(p) => std::slice::from_ref(p),
        None => PROVIDERS,
    };
    candidates
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
    fn every_provider_gets_the_size_the_font_and_only_the_bridge_as_its_command() {
        for p in PROVIDERS {
            let args: Vec<String> = p
                .args(100, 30, "ui-qa: vim", Path::new("/opt/ui-qa"))
                .iter()
                .map(|a| a.to_string_lossy().into_owned())
                .collect();
            let all = args.join(" ");
            assert!(all.contains("100") && all.contains("30"), "{p:?}: {all}");
            assert!(all.contains(FONT), "{p:?}: {all}");
            assert!(all.contains("ui-qa: vim"), "{p:?}: {all}");
            assert_eq!(args.last().unwrap(), "/opt/ui-qa", "{p:?}");
            assert_eq!(args.iter().filter(|a| *a == "/opt/ui-qa").count(), 1);
        }
    }

    #[test]
    fn the_named_or_else_the_first_installed_provider_is_chosen() {
        let only_xterm = |p: &str| (p == "xterm").then(|| PathBuf::from("/usr/bin/xterm"));
        assert_eq!(find(None, |_| None), None);
        assert_eq!(
            find(None, only_xterm),
            Some((Provider::Xterm, PathBuf::from("/usr/bin/xterm")))
        );
        assert_eq!(find(Some(Provider::Kitty), only_xterm), None);
        let all = |p: &str| Some(PathBuf::from(format!("/usr/bin/{p}")));
        assert_eq!(find(None, all).unwrap().0, Provider::Kitty);
        assert_eq!(
            find(Some(Provider::Alacritty), all).unwrap().0,
            Provider::Alacritty
        );
        assert_eq!(Provider::of(TerminalApp::Xterm), Provider::Xterm);
    }
}
