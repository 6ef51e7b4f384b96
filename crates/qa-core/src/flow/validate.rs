//! Target, viewport and path validation.

use super::error::{escape_token, FlowError, FlowErrorCode};
use super::target::{
    ApplicationTarget, BrowserConnection, BrowserTarget, CommandTarget, EmbeddedApp, RawTarget,
    Target, TargetKind, Viewport,
};
use std::path::{Path, PathBuf};

pub(crate) fn validate_viewport(kind: TargetKind, vp: Option<&Viewport>) -> Result<(), FlowError> {
    let Some(vp) = vp else { return Ok(()) };
    let browser_fields = [
        ("width", vp.width.is_some()),
        ("height", vp.height.is_some()),
    ];
    let terminal_fields = [("cols", vp.cols.is_some()), ("rows", vp.rows.is_some())];
    let bad: Vec<(&str, bool)> = match kind {
        TargetKind::Browser => terminal_fields.to_vec(),
        TargetKind::Terminal => browser_fields.to_vec(),
        TargetKind::Desktop => browser_fields
            .iter()
            .chain(&terminal_fields)
            .copied()
            .collect(),
    };
    if let Some((f, _)) = bad.iter().find(|(_, set)| *set) {
        return Err(FlowError::new(
            FlowErrorCode::UnknownField,
            format!("/viewport/{f}"),
            format!(
                "viewport.{f} does not apply to a {} flow (browser: width/height; terminal: cols/rows)",
                kind.as_str()
            ),
        ));
    }
    let ranges: [(&str, Option<u32>, u32, u32); 4] = [
        ("width", vp.width, 100, 7680),
        ("height", vp.height, 100, 4320),
        ("cols", vp.cols.map(u32::from), 2, 1000),
        ("rows", vp.rows.map(u32::from), 2, 500),
    ];
    for (f, v, lo, hi) in ranges {
        if let Some(v) = v {
            if v < lo || v > hi {
                return Err(FlowError::new(
                    FlowErrorCode::OutOfRange,
                    format!("/viewport/{f}"),
                    format!("viewport.{f} must be {lo}..={hi}"),
                ));
            }
        }
    }
    Ok(())
}

/// The project a flow belongs to: the nearest directory at or above
/// `base_dir` holding `.git` or `.ui-qa`; without one, `base_dir` itself.
///
/// On Unix the search never climbs into a directory where another user
/// could have planted a marker: it stops below the first directory that
/// is writable by everyone (`/tmp`, sticky or not) or that belongs to
/// neither the owner of `base_dir` nor root, and a marker that itself
/// belongs to another user is not taken. So a `.ui-qa` another user put in
/// a shared parent never becomes the project root of someone else's flow.
pub fn project_root(base_dir: &Path) -> PathBuf {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let Ok(first) = std::fs::metadata(base_dir) else {
            return base_dir.to_path_buf();
        };
        let trusted = |uid: u32| uid == first.uid() || uid == 0;
        for (i, a) in base_dir.ancestors().enumerate() {
            let Ok(m) = std::fs::metadata(a) else {
                break;
            };
            if i > 0 && (!trusted(m.uid()) || m.mode() & 0o002 != 0) {
                break;
            }
            let marker = |name: &str| {
                std::fs::symlink_metadata(a.join(name)).is_ok_and(|m| {
                    trusted(m.uid()) && (name == ".git" || m.is_dir() || m.file_type().is_symlink())
                })
            };
            if marker(".git") || marker(".ui-qa") {
                return a.to_path_buf();
            }
        }
        base_dir.to_path_buf()
    }
    #[cfg(not(unix))]
    {
        base_dir
            .ancestors()
            .find(|a| a.join(".git").exists() || a.join(".ui-qa").is_dir())
            .unwrap_or(base_dir)
            .to_path_buf()
    }
}

/// `p` with `.` and `..` folded away, without touching the file system.
fn lexical(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// A directory the flow names (`serve`, a `cwd`): relative, and inside the
/// project root — `..` may climb from a `flows/` folder to `../site`, never
/// out of the project, by name or through a symlink.
pub(crate) fn check_project_path(p: &str, at: &str, base_dir: &Path) -> Result<(), FlowError> {
    let root = project_root(base_dir);
    let escape = || {
        FlowError::new(
            FlowErrorCode::UnsafePath,
            at,
            format!(
                "{p:?} must be a relative path that stays inside the project ({}; the nearest directory above the flow with .git or .ui-qa, else the flow's own)",
                root.display()
            ),
        )
    };
    if Path::new(p).is_absolute() {
        return Err(escape());
    }
    let joined = lexical(&base_dir.join(p));
    if !joined.starts_with(lexical(&root)) {
        return Err(escape());
    }
    if let (Ok(real), Ok(real_root)) = (joined.canonicalize(), root.canonicalize()) {
        if !real.starts_with(real_root) {
            return Err(escape());
        }
    }
    Ok(())
}

/// Refuses a NUL character in strings handed to a process or used as a
/// path: no process can receive one, so the launch would fail.
fn check_no_nul(s: &str, at: &str, what: &str) -> Result<(), FlowError> {
    if s.contains('\0') {
        return Err(FlowError::new(
            FlowErrorCode::NulCharacter,
            at,
            format!("{what} contains a NUL character (\\u0000), which no process can receive; remove it"),
        ));
    }
    Ok(())
}

/// NUL checks for a program's argv, environment and working directory at `at`.
fn check_process_strings(
    argv: &[String],
    argv_field: &str,
    env: &std::collections::BTreeMap<String, String>,
    cwd: Option<&str>,
    at: &str,
) -> Result<(), FlowError> {
    for (i, a) in argv.iter().enumerate() {
        check_no_nul(
            a,
            &format!("{at}/{argv_field}/{i}"),
            &format!("{argv_field}[{i}]"),
        )?;
    }
    for (k, v) in env {
        let p = format!("{at}/env/{}", escape_token(k));
        check_no_nul(k, &p, "an environment variable name")?;
        check_no_nul(v, &p, "an environment variable value")?;
    }
    if let Some(c) = cwd {
        check_no_nul(c, &format!("{at}/cwd"), "cwd")?;
    }
    Ok(())
}

/// Whether `id` is a valid auth profile id (1-64 letters, digits, `.`,
/// `_` or `-`, starting with a letter or digit: also a safe file name).
pub fn valid_profile_id(id: &str) -> bool {
    let b = id.as_bytes();
    !b.is_empty()
        && b.len() <= 64
        && b[0].is_ascii_alphanumeric()
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'_' | b'-'))
}

/// Checks an exact origin as a flow or auth file writes it
/// (`scheme://host[:port]`: http, https, ws or wss, no path, no wildcard);
/// the error is at pointer `at`.
pub fn check_origin(o: &str, at: &str) -> Result<(), FlowError> {
    let bad = || {
        FlowError::new(
            FlowErrorCode::InvalidOrigin,
            at,
            format!(
                "{o:?} is not an exact origin; write scheme://host[:port] with no path or wildcard"
            ),
        )
    };
    let u = url::Url::parse(o).map_err(|_| bad())?;
    if !matches!(u.scheme(), "http" | "https" | "ws" | "wss")
        || u.host_str().is_none()
        || o.contains('*')
        || o.trim_end_matches('/') != u.origin().ascii_serialization()
    {
        return Err(bad());
    }
    Ok(())
}

/// The three ways to name a target, for a flow whose target names none.
pub(crate) const TARGET_KINDS: &str = r#"`url` (browser: "target": {"url": "http://localhost:8000/"}), `command` (terminal: "target": {"command": {"argv": ["prog", "arg"]}}) or `application` (desktop: "target": {"application": {"launch": {"argv": ["prog"]}}})"#;

/// The schemes a browser target opens directly.
const KNOWN_SCHEMES: &[&str] = &[
    "http", "https", "file", "about", "data", "blob", "chrome", "ws", "wss",
];

/// Checks that `u` (at pointer `at`, the field `field`) is an absolute URL,
/// and names the fix for one written without its scheme
/// (`localhost:8000/admin`, `example.com`), which either does not parse or
/// parses with the host as its scheme. `relative` is added to the message
/// when the URL does not parse at all.
fn check_absolute_url(u: &str, at: &str, field: &str, relative: &str) -> Result<(), FlowError> {
    let no_scheme = |also: &str| {
        FlowError::new(
            FlowErrorCode::InvalidUrl,
            at,
            format!(
                "{field} {u:?} has no scheme; add http:// (or https://): {:?}{also}",
                format!("http://{u}")
            ),
        )
    };
    match url::Url::parse(u) {
        Ok(p) => {
            // `localhost:8000/x` parses with scheme `localhost` and path
            // `8000/x`: a host and port, not a scheme.
            if !KNOWN_SCHEMES.contains(&p.scheme()) && looks_like_host(u) {
                return Err(no_scheme(""));
            }
            Ok(())
        }
        // `example.com`, or a page name (`index.html`) meant relative.
        Err(url::ParseError::RelativeUrlWithoutBase) if looks_like_host(u) => {
            Err(no_scheme(relative))
        }
        Err(e) => Err(FlowError::new(
            FlowErrorCode::InvalidUrl,
            at,
            format!("not an absolute URL ({e}){relative}"),
        )),
    }
}

/// Whether `u` starts with what reads as `host[:port]` (`example.com`,
/// `localhost:8000/admin`, `127.0.0.1`), so it is a URL that lacks only
/// its scheme.
fn looks_like_host(u: &str) -> bool {
    let authority = u.split(['/', '?', '#']).next().unwrap_or_default();
    let (host, port) = match authority.rsplit_once(':') {
        Some((h, p)) => (h, Some(p)),
        None => (authority, None),
    };
    !host.is_empty()
        && !host.starts_with(['.', '-'])
        && host
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'))
        && port.is_none_or(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()))
}

/// `target.browser.connect`: an `http`, `ws` or `wss` URL with a host; an
/// endpoint off loopback without TLS only with `allowInsecure`.
fn check_connect(b: &BrowserConnection) -> Result<(), FlowError> {
    const AT: &str = "/target/browser/connect";
    let bad = |m: String| Err(FlowError::new(FlowErrorCode::InvalidUrl, AT, m));
    let Ok(u) = url::Url::parse(&b.connect) else {
        return bad(
            "connect is the browser's DevTools endpoint: http://HOST:PORT or ws://HOST:PORT/devtools/browser/ID".into(),
        );
    };
    let tls = match u.scheme() {
        "http" | "ws" => false,
        "https" | "wss" => true,
        other => {
            return bad(format!(
                "connect is an http://, ws:// or wss:// URL, not {other}:"
            ))
        }
    };
    let Some(host) = u.host() else {
        return bad("connect names no host".into());
    };
    if !u.username().is_empty() || u.password().is_some() {
        return bad(
            "connect carries no user or password; put a token in the query as ${secret.NAME}"
                .into(),
        );
    }
    let loopback = match host {
        url::Host::Domain(d) => d.eq_ignore_ascii_case("localhost"),
        url::Host::Ipv4(a) => a.is_loopback(),
        url::Host::Ipv6(a) => a.is_loopback(),
    };
    match (b.existing(), b.page_url.as_deref()) {
        (true, None | Some("")) => {
            return Err(FlowError::new(
                FlowErrorCode::MissingField,
                "/target/browser/pageUrl",
                "\"page\": \"existing\" drives a page the browser already shows: name it with pageUrl, text its URL includes",
            ))
        }
        (false, Some(_)) => {
            return Err(FlowError::new(
                FlowErrorCode::UnknownField,
                "/target/browser/pageUrl",
                "pageUrl names the page of \"page\": \"existing\"; a new page opens at target.url",
            ))
        }
        _ => {}
    }
    if !tls && !loopback && !b.allow_insecure {
        return Err(FlowError::new(
            FlowErrorCode::OutOfRange,
            AT,
            "connect reaches a browser off this machine without TLS: anyone on the path could read and drive the session; use wss://, or set \"allowInsecure\": true if the network is yours",
        ));
    }
    Ok(())
}

/// `target.app`: a program to launch, not beside `browser.connect`.
fn check_app(app: &EmbeddedApp, connect: bool, base_dir: &Path) -> Result<(), FlowError> {
    const AT: &str = "/target/app/launch";
    if connect {
        return Err(FlowError::new(
            FlowErrorCode::TargetKind,
            "/target/app",
            "use either app (ui-qa launches an app that embeds Chromium) or browser.connect (a browser it did not start), not both",
        ));
    }
    let l = &app.launch;
    check_process_strings(&l.argv, "argv", &l.env, l.cwd.as_deref(), AT)?;
    if l.argv.is_empty() || l.argv[0].is_empty() {
        return Err(FlowError::new(
            FlowErrorCode::OutOfRange,
            "/target/app/launch/argv",
            "argv needs a program as its first element",
        ));
    }
    if let Some(cwd) = &l.cwd {
        check_project_path(cwd, "/target/app/launch/cwd", base_dir)?;
    }
    for (i, a) in l.argv.iter().enumerate() {
        if a.starts_with("--remote-debugging-") {
            return Err(FlowError::new(
                FlowErrorCode::OutOfRange,
                format!("/target/app/launch/argv/{i}"),
                format!("{a:?}: ui-qa gives the app its DevTools switch itself (\"devtools\": \"pipe\" or \"port\"); remove it from argv"),
            ));
        }
    }
    if l.env.contains_key("QTWEBENGINE_REMOTE_DEBUGGING") {
        return Err(FlowError::new(
            FlowErrorCode::OutOfRange,
            "/target/app/launch/env/QTWEBENGINE_REMOTE_DEBUGGING",
            "ui-qa gives the app its DevTools port itself (\"devtools\": \"port\"); remove it from env",
        ));
    }
    Ok(())
}

pub(crate) fn validate_target(raw: RawTarget, base_dir: &Path) -> Result<Target, FlowError> {
    let browser = raw.url.is_some()
        || raw.base_url.is_some()
        || raw.serve.is_some()
        || raw.server.is_some()
        || raw.browser.is_some()
        || raw.app.is_some();
    let terminal = raw.command.is_some();
    let desktop = raw.application.is_some();
    let n = [browser, terminal, desktop].iter().filter(|b| **b).count();
    if n == 0 {
        return Err(FlowError::new(
            FlowErrorCode::TargetKind,
            "/target",
            format!("the target needs exactly one of {TARGET_KINDS}"),
        ));
    }
    if n > 1 {
        let mut kinds = Vec::new();
        if browser {
            kinds.push("url");
        }
        if terminal {
            kinds.push("command");
        }
        if desktop {
            kinds.push("application");
        }
        return Err(FlowError::new(
            FlowErrorCode::TargetKind,
            "/target",
            format!(
                "the target names {} kinds ({}); a flow drives exactly one",
                n,
                kinds.join(", ")
            ),
        ));
    }
    let detected = if browser {
        TargetKind::Browser
    } else if terminal {
        TargetKind::Terminal
    } else {
        TargetKind::Desktop
    };
    if let Some(k) = raw.kind {
        if k != detected {
            return Err(FlowError::new(
                FlowErrorCode::TargetKind,
                "/target/kind",
                format!(
                    "kind {:?} contradicts the target, which is a {} target",
                    k.as_str(),
                    detected.as_str()
                ),
            ));
        }
    }
    let stray = |f: &str, set: bool| -> Result<(), FlowError> {
        if set {
            Err(FlowError::new(
                FlowErrorCode::UnknownField,
                format!("/target/{f}"),
                format!(
                    "target.{f} does not apply to a {} target",
                    detected.as_str()
                ),
            ))
        } else {
            Ok(())
        }
    };
    match detected {
        TargetKind::Browser => {
            if let Some(u) = &raw.url {
                // Relative to serve's root, baseUrl or the server's readyUrl.
                if raw.serve.is_none() && raw.base_url.is_none() && raw.server.is_none() {
                    check_absolute_url(
                        u,
                        "/target/url",
                        "url",
                        "; a relative url needs serve, server or baseUrl",
                    )?;
                }
            }
            if let Some(b) = &raw.base_url {
                check_absolute_url(b, "/target/baseUrl", "baseUrl", "")?;
            }
            for (i, o) in raw.allowed_origins.iter().flatten().enumerate() {
                check_origin(o, &format!("/target/allowedOrigins/{i}"))?;
            }
            if let Some(s) = &raw.serve {
                check_no_nul(s, "/target/serve", "serve")?;
                check_project_path(s, "/target/serve", base_dir)?;
                if raw.server.is_some() {
                    return Err(FlowError::new(
                        FlowErrorCode::TargetKind,
                        "/target/serve",
                        "use either serve (static directory) or server (a command), not both",
                    ));
                }
            }
            if let Some(s) = &raw.server {
                check_process_strings(
                    &s.command,
                    "command",
                    &s.env,
                    s.cwd.as_deref(),
                    "/target/server",
                )?;
                if s.command.is_empty() {
                    return Err(FlowError::new(
                        FlowErrorCode::OutOfRange,
                        "/target/server/command",
                        "server.command needs a program",
                    ));
                }
                if let Some(c) = &s.cwd {
                    check_project_path(c, "/target/server/cwd", base_dir)?;
                }
                check_absolute_url(&s.ready_url, "/target/server/readyUrl", "readyUrl", "")?;
            }
            if let Some(b) = &raw.browser {
                check_connect(b)?;
                let page_named = raw.url.is_some()
                    || raw.base_url.is_some()
                    || raw.serve.is_some()
                    || raw.server.is_some();
                if !b.existing() && !page_named {
                    return Err(FlowError::new(
                        FlowErrorCode::MissingField,
                        "/target/url",
                        "the run opens a new page in that browser: give target.url (or drive a page it already shows with \"page\": \"existing\" and pageUrl)",
                    ));
                }
            }
            if let Some(app) = &raw.app {
                check_app(app, raw.browser.is_some(), base_dir)?;
            }
            if let Some(p) = &raw.profile {
                if !valid_profile_id(p) {
                    return Err(FlowError::new(
                        FlowErrorCode::OutOfRange,
                        "/target/profile",
                        "profile is the id of a profile in .ui-qa/auth.jsonc: 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit",
                    ));
                }
            }
            Ok(Target::Browser(BrowserTarget {
                url: raw.url,
                base_url: raw.base_url,
                allowed_origins: raw.allowed_origins.unwrap_or_default(),
                profile: raw.profile,
                server: raw.server,
                serve: raw.serve,
                browser: raw.browser,
                app: raw.app.map(Box::new),
            }))
        }
        TargetKind::Terminal => {
            stray("allowedOrigins", raw.allowed_origins.is_some())?;
            stray("profile", raw.profile.is_some())?;
            let c: CommandTarget = raw.command.expect("detected");
            check_process_strings(&c.argv, "argv", &c.env, c.cwd.as_deref(), "/target/command")?;
            if c.argv.is_empty() || c.argv[0].is_empty() {
                return Err(FlowError::new(
                    FlowErrorCode::OutOfRange,
                    "/target/command/argv",
                    "argv needs a program as its first element",
                ));
            }
            if let Some(cwd) = &c.cwd {
                check_project_path(cwd, "/target/command/cwd", base_dir)?;
            }
            Ok(Target::Terminal(c))
        }
        TargetKind::Desktop => {
            stray("allowedOrigins", raw.allowed_origins.is_some())?;
            stray("profile", raw.profile.is_some())?;
            let a: ApplicationTarget = raw.application.expect("detected");
            let n = [
                a.launch.is_some(),
                a.pid.is_some(),
                a.name.is_some(),
                a.bundle_id.is_some(),
            ]
            .iter()
            .filter(|b| **b)
            .count();
            if n != 1 {
                return Err(FlowError::new(
                    FlowErrorCode::TargetKind,
                    "/target/application",
                    "application needs exactly one of launch, pid, name, bundleId",
                ));
            }
            if let Some(l) = &a.launch {
                check_process_strings(
                    &l.argv,
                    "argv",
                    &l.env,
                    l.cwd.as_deref(),
                    "/target/application/launch",
                )?;
                if l.argv.is_empty() || l.argv[0].is_empty() {
                    return Err(FlowError::new(
                        FlowErrorCode::OutOfRange,
                        "/target/application/launch/argv",
                        "argv needs a program as its first element",
                    ));
                }
                if let Some(cwd) = &l.cwd {
                    check_project_path(cwd, "/target/application/launch/cwd", base_dir)?;
                }
            }
            Ok(Target::Desktop(a))
        }
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::project_root;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn the_project_search_stops_below_a_world_writable_parent() {
        let t = tempfile::tempdir().unwrap();
        let shared = t.path().join("shared");
        let mine = shared.join("mine");
        std::fs::create_dir_all(&mine).unwrap();
        std::fs::create_dir(shared.join(".ui-qa")).unwrap();
        assert_eq!(project_root(&mine), shared, "a marker above is taken");
        // Anyone may write in the parent (like /tmp): its marker is not.
        std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o1777)).unwrap();
        assert_eq!(project_root(&mine), mine);
    }

    #[test]
    fn a_marker_of_another_user_is_never_taken() {
        // SAFETY: geteuid(2) cannot fail and touches no memory.
        #[allow(unsafe_code)]
        if unsafe { libc::geteuid() } != 0 {
            return;
        }
        let t = tempfile::tempdir().unwrap();
        let mine = t.path().join("p/mine");
        std::fs::create_dir_all(&mine).unwrap();
        let planted = t.path().join("p/.ui-qa");
        std::fs::create_dir(&planted).unwrap();
        std::os::unix::fs::lchown(&planted, Some(65534), Some(65534)).unwrap();
        assert_eq!(project_root(&mine), mine);
        // Nor is a directory of another user climbed into.
        std::os::unix::fs::lchown(&planted, Some(0), Some(0)).unwrap();
        std::os::unix::fs::lchown(t.path().join("p"), Some(65534), Some(65534)).unwrap();
        assert_eq!(project_root(&mine), mine);
    }
}
