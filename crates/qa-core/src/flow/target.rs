//! Targets: the one thing a flow drives.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The kind of target a flow drives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum TargetKind {
    /// A web page in a real browser (`target.url`).
    Browser,
    /// A terminal program in a real PTY (`target.command`).
    Terminal,
    /// A native application through accessibility (`target.application`).
    Desktop,
}

impl TargetKind {
    /// The lowercase name.
    pub fn as_str(self) -> &'static str {
        match self {
            TargetKind::Browser => "browser",
            TargetKind::Terminal => "terminal",
            TargetKind::Desktop => "desktop",
        }
    }
}

/// The validated target.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum Target {
    /// A browser target.
    Browser(BrowserTarget),
    /// A terminal target.
    Terminal(CommandTarget),
    /// A desktop target.
    Desktop(ApplicationTarget),
}

impl Target {
    /// The kind of this target.
    pub fn kind(&self) -> TargetKind {
        match self {
            Target::Browser(_) => TargetKind::Browser,
            Target::Terminal(_) => TargetKind::Terminal,
            Target::Desktop(_) => TargetKind::Desktop,
        }
    }
}

/// The raw `target` object as written (all kinds' fields; validated into [`Target`]).
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RawTarget {
    /// Optional explicit kind; must agree with the detected one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<TargetKind>,
    /// Browser: the page to open.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Browser: base URL for relative `goto` paths.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    /// Browser: further exact origins the page may reach.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allowed_origins: Option<Vec<String>>,
    /// Browser: the id of an auth profile in `.ui-qa/auth.jsonc` (see
    /// `ui-qa guide --backend browser --topic auth`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    /// Browser: a server the runner starts and owns.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server: Option<ServerSpec>,
    /// Browser: a static directory the runner serves on 127.0.0.1.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub serve: Option<String>,
    /// Browser: a running browser to drive instead of one ui-qa launches.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub browser: Option<BrowserConnection>,
    /// Browser: an application that embeds Chromium, launched by the run
    /// and driven with the browser steps.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub app: Option<EmbeddedApp>,
    /// Terminal: the command to run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<CommandTarget>,
    /// Desktop: the application.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub application: Option<ApplicationTarget>,
}

/// A browser target.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BrowserTarget {
    /// The page to open first (absolute URL, or a path when `serve`/`baseUrl` is set).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Base URL for relative `goto` paths.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    /// Further exact origins (`scheme://host[:port]`) the page may reach.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allowed_origins: Vec<String>,
    /// The id of an auth profile in `.ui-qa/auth.jsonc`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    /// A server the runner starts, waits for and stops.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server: Option<ServerSpec>,
    /// A static directory (relative to the flow file) served on 127.0.0.1.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub serve: Option<String>,
    /// A running browser to drive (`None`: ui-qa launches its own).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub browser: Option<BrowserConnection>,
    /// An application that embeds Chromium, launched and owned by the run,
    /// whose page the browser steps drive.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub app: Option<Box<EmbeddedApp>>,
}

/// An application that embeds Chromium (`target.app`: CEF, Qt WebEngine,
/// Electron): the run launches it like any owned program (ended at
/// cleanup, with everything it started), reaches its DevTools, and drives
/// the page its window shows with the browser steps.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EmbeddedApp {
    /// How to start it. ui-qa adds the DevTools switch to `argv` itself
    /// (`--remote-debugging-pipe`, or `--remote-debugging-port=PORT` and
    /// `QTWEBENGINE_REMOTE_DEBUGGING`).
    pub launch: LaunchSpec,
    /// How ui-qa reaches its DevTools: `pipe` (descriptors 3 and 4 of the
    /// app: nothing else can reach them; CEF, Chromium, Electron) or `port`
    /// (a loopback port ui-qa picks and watches; Qt WebEngine, which has no
    /// pipe).
    pub devtools: DevToolsChannel,
    /// Text the URL of the page to drive includes, when the app shows more
    /// than one (default: its only page).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 2048))]
    pub page_url: Option<String>,
}

/// How the run reaches an embedded Chromium's DevTools.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum DevToolsChannel {
    /// `--remote-debugging-pipe`: the app's descriptors 3 and 4.
    Pipe,
    /// A loopback TCP port: any local process could connect, so the run
    /// watches it and fails closed when another connection appears.
    Port,
}

/// The `HOST:PORT` of a DevTools endpoint (`http`, `https`, `ws` or `wss`
/// URL), as endpoint limits match it; `None` for anything else.
pub fn endpoint_key(connect: &str) -> Option<String> {
    let u = url::Url::parse(connect).ok()?;
    if !matches!(u.scheme(), "http" | "https" | "ws" | "wss") {
        return None;
    }
    Some(format!(
        "{}:{}",
        u.host_str()?.to_ascii_lowercase(),
        u.port_or_known_default()?
    ))
}

/// A browser ui-qa did not start, reached through its DevTools endpoint.
/// The run works in a browser context of its own and never closes the
/// browser or touches its other tabs.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BrowserConnection {
    /// The DevTools endpoint: `http://HOST:PORT` (the endpoint's
    /// `/json/version` names the browser's WebSocket) or the WebSocket
    /// itself, `ws://HOST:PORT/devtools/browser/ID` (or a service's
    /// `ws://…?token=${secret.NAME}`).
    #[schemars(length(min = 1, max = 2048))]
    pub connect: String,
    /// Allows an endpoint off loopback without TLS (`http://`, `ws://`):
    /// everything on that network path can read and drive the session.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub allow_insecure: bool,
    /// Which page the run drives: `new` (default: a page in a browser
    /// context of the run's own) or `existing` (a page the browser already
    /// shows, named by `pageUrl`: for a browser or an app that has no
    /// contexts to give).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page: Option<PageChoice>,
    /// With `"page": "existing"`: text the page's URL includes; exactly one
    /// page may match.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 2048))]
    pub page_url: Option<String>,
}

/// The page a run in a browser it did not start drives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum PageChoice {
    /// A new page in a browser context of the run's own.
    New,
    /// A page the browser already shows (`pageUrl`), in the browser's own
    /// context: never closed; the run's settings leave with it.
    Existing,
}

impl BrowserConnection {
    /// Whether the run drives an existing page.
    pub fn existing(&self) -> bool {
        self.page == Some(PageChoice::Existing)
    }
}

/// A server the runner starts before the browser.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ServerSpec {
    /// Program and arguments (no shell).
    #[schemars(length(min = 1, max = 256))]
    pub command: Vec<String>,
    /// Working directory, relative to the flow file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// Extra environment variables.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// URL that answers once the server is ready.
    pub ready_url: String,
    /// How long to wait for `readyUrl` (default 30000).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 600000))]
    pub ready_timeout_ms: Option<u64>,
}

/// How terminal output is presented.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Presentation {
    /// A PTY modelled by a terminal core (default).
    #[default]
    Pty,
    /// The same PTY mirrored into a real terminal window.
    NativeTerminal,
}

/// The terminal emulator whose window shows the program in
/// `native-terminal` presentation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum TerminalApp {
    /// kitty.
    Kitty,
    /// Alacritty.
    Alacritty,
    /// xterm.
    Xterm,
}

/// The `TERM` a terminal target's program is given: the terminal ui-qa's
/// model emulates.
pub const EMULATED_TERM: &str = "xterm-256color";

/// Which home directory a launched program gets (`target.command.home`,
/// `target.application.launch.home`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Home {
    /// A fresh, empty home in the run's scratch (removed when the run
    /// ends): `HOME` and the XDG base directories (`XDG_CONFIG_HOME`,
    /// `XDG_DATA_HOME`, `XDG_CACHE_HOME`, `XDG_STATE_HOME`) point into it,
    /// so nothing the program saves lands in the user's home (Linux and
    /// macOS; on Windows the program keeps the user's profile). The
    /// default.
    #[default]
    Fresh,
    /// The user's own `HOME` (and XDG directories, where the driver passes
    /// them on): what the program saves stays after the run.
    Inherit,
}

/// A terminal target: `target.command`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CommandTarget {
    /// Program and arguments (no shell).
    #[schemars(length(min = 1, max = 256))]
    pub argv: Vec<String>,
    /// Working directory, relative to the flow file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// Environment variables merged over the safe base.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// `fresh` (default: `HOME` and the XDG directories in the run's
    /// scratch) or `inherit` (the user's `HOME`). `env` wins over either.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub home: Option<Home>,
    /// `pty` (default) or `native-terminal`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub presentation: Option<Presentation>,
    /// With `native-terminal`: which terminal's window shows the program
    /// (default: the first installed of kitty, alacritty, xterm).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub terminal: Option<TerminalApp>,
}

/// A desktop target: `target.application`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ApplicationTarget {
    /// Launch (and own) this program.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub launch: Option<LaunchSpec>,
    /// Attach to a running process (never signalled).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub pid: Option<u32>,
    /// Attach to a running application by its accessible name (never signalled).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// macOS bundle identifier to attach to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bundle_id: Option<String>,
    /// Which window of the application.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window: Option<WindowSpec>,
    /// Run inside an owned virtual display and private session bus (Linux).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub virtual_display: Option<bool>,
}

/// How to launch a desktop application.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LaunchSpec {
    /// Program and arguments (no shell).
    #[schemars(length(min = 1, max = 256))]
    pub argv: Vec<String>,
    /// Working directory, relative to the flow file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// Extra environment variables.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// `fresh` (default: `HOME` and the XDG directories in the run's
    /// scratch) or `inherit` (the user's `HOME`). `env` wins over either.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub home: Option<Home>,
}

/// Which window of a desktop application to use.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WindowSpec {
    /// Window title (exact).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Window automation id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub automation_id: Option<String>,
}

/// Browser viewport (`width`/`height`) or terminal size (`cols`/`rows`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Viewport {
    /// Browser viewport width in CSS pixels.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 100, max = 7680))]
    pub width: Option<u32>,
    /// Browser viewport height in CSS pixels.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 100, max = 4320))]
    pub height: Option<u32>,
    /// Terminal columns.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 2, max = 1000))]
    pub cols: Option<u16>,
    /// Terminal rows.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 2, max = 500))]
    pub rows: Option<u16>,
}

/// Browser emulation settings. Defaults: en-US, UTC, light, reduce.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Environment {
    /// BCP 47 locale.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub locale: Option<String>,
    /// IANA time zone id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timezone_id: Option<String>,
    /// `light`, `dark` or `no-preference`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub color_scheme: Option<ColorScheme>,
    /// `reduce` or `no-preference`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reduced_motion: Option<ReducedMotion>,
    /// Quiet window after an interaction before the page counts as settled (ms, default 100).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(max = 10000))]
    pub settle_ms: Option<u64>,
    /// How long the video holds each performed step's result on screen
    /// (ms, default 500). The run does not wait for it: the pause is in
    /// the video's timeline (the artifact's `holds`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(max = 10000))]
    pub video_settle_ms: Option<u64>,
}

/// Emulated `prefers-color-scheme`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ColorScheme {
    /// Light.
    Light,
    /// Dark.
    Dark,
    /// No preference.
    NoPreference,
}

/// Emulated `prefers-reduced-motion`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ReducedMotion {
    /// Reduce.
    Reduce,
    /// No preference.
    NoPreference,
}
