//! The exact-origin allowlist and the count of what was blocked.
//!
//! Pure decisions live here (unit tested). Two layers apply them: the CDP
//! mechanics (Fetch interception in every attached target, the in-page
//! WebSocket guard) in the event pump, and underneath, the loopback
//! forward proxy every Chromium connection goes through (`super::proxy`).

use crate::cdp::commands::{BlockPattern, SetBlockedUrls};
use qa_core::{Note, NoteKind};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

/// The exact origins a run may talk to.
#[derive(Debug, Clone, Default)]
pub struct Allowlist {
    origins: Vec<String>,
}

/// What to do with one request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Let it through.
    Allow,
    /// Block it; the origin to report.
    Block(String),
}

/// The ASCII serialization of a URL's origin (`scheme://host[:port]`),
/// default ports omitted, as browsers print it.
pub fn origin_of(url: &url::Url) -> String {
    url.origin().ascii_serialization()
}

/// `(origin + path, path + query)` of a URL: what logs keep and what
/// request matching compares.
pub fn split_url(url: &str) -> (String, String) {
    match url::Url::parse(url) {
        Ok(u) if u.has_host() => {
            let pq = match u.query() {
                Some(q) => format!("{}?{q}", u.path()),
                None => u.path().to_string(),
            };
            (format!("{}{}", origin_of(&u), u.path()), pq)
        }
        Ok(u) => (format!("{}:", u.scheme()), String::new()),
        Err(_) => (String::new(), String::new()),
    }
}

impl Allowlist {
    /// An allowlist of exact origins (each `scheme://host[:port]`).
    pub fn new<I: IntoIterator<Item = String>>(origins: I) -> Allowlist {
        let mut v: Vec<String> = Vec::new();
        for o in origins {
            let norm = url::Url::parse(&o).map(|u| origin_of(&u)).unwrap_or(o);
            if !v.contains(&norm) {
                v.push(norm);
            }
        }
        Allowlist { origins: v }
    }

    /// The origins.
    pub fn origins(&self) -> &[String] {
        &self.origins
    }

    /// Whether `url` may be requested. Only http(s) and ws(s) are checked;
    /// `data:`, `blob:`, `about:` and friends stay inside the page.
    pub fn decide(&self, url: &str) -> Decision {
        let Ok(u) = url::Url::parse(url) else {
            return Decision::Block("an unparsable URL".into());
        };
        match u.scheme() {
            "http" | "https" | "ws" | "wss" => {
                let o = origin_of(&u);
                // A WebSocket to an allowed http(s) origin's host:port is allowed.
                let cmp = match u.scheme() {
                    "ws" | "wss" => o.replacen("ws", "http", 1),
                    _ => o.clone(),
                };
                if self.origins.contains(&cmp) {
                    Decision::Allow
                } else {
                    Decision::Block(o)
                }
            }
            "data" | "blob" | "about" | "javascript" => Decision::Allow,
            // file:, ftp:, chrome:, filesystem:, … never leave the allowlist either.
            other => Decision::Block(format!("{other}:")),
        }
    }

    /// `Network.setBlockedURLs` that lets WebSockets reach only allowed
    /// origins (Fetch interception does not see WebSocket handshakes).
    pub(crate) fn websocket_block(&self) -> SetBlockedUrls {
        let mut pats: Vec<BlockPattern> = Vec::new();
        for o in &self.origins {
            if let Ok(u) = url::Url::parse(o) {
                let host = u.host_str().unwrap_or("");
                let port = u.port_or_known_default().unwrap_or(0);
                let (ws, default) = match u.scheme() {
                    "https" => ("wss", 443),
                    _ => ("ws", 80),
                };
                let hp = if port == default {
                    host.to_string()
                } else {
                    format!("{host}:{port}")
                };
                pats.push(BlockPattern {
                    url_pattern: format!("{ws}://{hp}/*"),
                    block: false,
                });
            }
        }
        for any in ["ws://*:*/*", "wss://*:*/*"] {
            pats.push(BlockPattern {
                url_pattern: any.into(),
                block: true,
            });
        }
        SetBlockedUrls {
            url_patterns: Some(pats),
            urls: None,
        }
    }
}

/// The binding the WebSocket guard reports blocked URLs through.
pub const WS_BINDING: &str = "__uiQaBlockedWebSocket";

impl Allowlist {
    /// JavaScript that replaces `WebSocket` with a constructor refusing
    /// disallowed origins (evaluated in pages, frames and workers before
    /// their own scripts run).
    pub fn websocket_guard_script(&self) -> String {
        let origins = serde_json::to_string(&self.origins).unwrap_or_else(|_| "[]".into());
        format!(
            r#"(() => {{ const G = globalThis; if (!G.WebSocket || G.WebSocket.__uiQa) return;
  const A = {origins}; const O = G.WebSocket; const B = G["{WS_BINDING}"];
  const W = function WebSocket(url, protocols) {{
    const u = new URL(url, G.location && G.location.href);
    const o = u.protocol.replace(/^ws/, 'http') + '//' + u.host;
    if (!A.includes(o)) {{ try {{ B && B(u.href); }} catch (e) {{}}
      throw new DOMException('blocked by ui-qa origin containment', 'SecurityError'); }}
    return protocols === undefined ? new O(url) : new O(url, protocols);
  }};
  W.prototype = O.prototype; W.__uiQa = true;
  for (const k of ['CONNECTING', 'OPEN', 'CLOSING', 'CLOSED']) Object.defineProperty(W, k, {{ value: O[k] }});
  Object.defineProperty(G, 'WebSocket', {{ value: W, writable: false, configurable: false }});
}})();"#
        )
    }
}

/// Key prefix for a refused proxy tunnel (`CONNECT host:port`): the proxy
/// cannot tell whether it was for https, wss or (Chromium) ws.
pub const TUNNEL_KEY: &str = "tunnel ";

/// Domains of the services Chromium itself talks to (component and
/// extension updates, account checks, safe browsing, hints). A connection
/// to one of them that only the network proxy saw — no page, frame or
/// worker asked for it through in-browser interception — is the browser's
/// own background traffic: still blocked, reported in one line of its own.
const BROWSER_SERVICE_DOMAINS: &[&str] = &[
    "google.com",
    "googleapis.com",
    "gstatic.com",
    "gvt1.com",
    "gvt2.com",
    "googleusercontent.com",
];

/// The host of a blocked-request key (`http://host:port` or
/// `tunnel host:port`).
fn key_host(key: &str) -> &str {
    let rest = match key.strip_prefix(TUNNEL_KEY) {
        Some(hp) => hp,
        None => key.split_once("://").map_or(key, |(_, r)| r),
    };
    let hp = rest.split('/').next().unwrap_or(rest);
    match hp.rsplit_once(':') {
        Some((h, port)) if port.chars().all(|c| c.is_ascii_digit()) => h,
        _ => hp,
    }
}

/// Whether a blocked-request key names one of Chromium's own service hosts.
pub fn browser_service(key: &str) -> bool {
    let host = key_host(key).to_ascii_lowercase();
    BROWSER_SERVICE_DOMAINS
        .iter()
        .any(|d| host == *d || host.ends_with(&format!(".{d}")))
}

/// Origins counted one by one at most; requests to further origins are
/// counted together (a page that asks for endless random hosts cannot grow
/// the run's memory or its result).
const MAX_ORIGINS_TRACKED: usize = 1000;

/// Origins named one by one in notes and summaries at most (the most
/// blocked first); the rest are one item.
const MAX_ORIGINS_LISTED: usize = 20;

/// Counts of blocked requests per origin.
#[derive(Debug, Clone, Default)]
pub struct BlockedRequests {
    by_origin: BTreeMap<String, u32>,
    /// Requests to origins past [`MAX_ORIGINS_TRACKED`].
    untracked: u64,
}

/// Where blocked attempts are counted, shared by every layer (Fetch
/// interception, the WebSocket guard and the network proxy).
pub type BlockedSink = Arc<Mutex<BlockedRequests>>;

impl BlockedRequests {
    /// Records one blocked request.
    pub fn record(&mut self, origin: &str) {
        if let Some(n) = self.by_origin.get_mut(origin) {
            *n = n.saturating_add(1);
        } else if self.by_origin.len() < MAX_ORIGINS_TRACKED {
            self.by_origin.insert(origin.to_string(), 1);
        } else {
            self.untracked = self.untracked.saturating_add(1);
        }
    }

    /// Whether nothing was blocked.
    pub fn is_empty(&self) -> bool {
        self.by_origin.is_empty() && self.untracked == 0
    }

    /// Total blocked.
    pub fn total(&self) -> u32 {
        let tracked: u64 = self.by_origin.values().map(|&n| u64::from(n)).sum();
        u32::try_from(tracked + self.untracked).unwrap_or(u32::MAX)
    }

    /// What was blocked: one item per origin, the most blocked first, at
    /// most [`MAX_ORIGINS_LISTED`] (`request to <origin> (N times)` or
    /// `tunnel (https, wss or ws) to <host:port> (N times)`), then one item
    /// for the rest (`N more requests to M other origins`).
    fn items(&self) -> Vec<String> {
        let times = |n: u64| {
            if n == 1 {
                "1 time".to_string()
            } else {
                format!("{n} times")
            }
        };
        let mut by_count: Vec<(&String, &u32)> = self.by_origin.iter().collect();
        by_count.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        let mut out: Vec<String> = by_count
            .iter()
            .take(MAX_ORIGINS_LISTED)
            .map(|(o, n)| {
                let what = match o.strip_prefix(TUNNEL_KEY) {
                    Some(hp) => format!("tunnel (https, wss or ws) to {hp}"),
                    None => format!("request to {o}"),
                };
                format!("{what} ({})", times(u64::from(**n)))
            })
            .collect();
        let rest = &by_count[by_count.len().min(MAX_ORIGINS_LISTED)..];
        let requests: u64 = rest.iter().map(|(_, &n)| u64::from(n)).sum::<u64>() + self.untracked;
        if requests > 0 {
            let origins = if self.untracked > 0 {
                format!("{} or more other origins", rest.len() + 1)
            } else {
                format!("{} other origins", rest.len())
            };
            out.push(format!("requests to {origins} ({})", times(requests)));
        }
        out
    }

    /// Observation lines: `blocked request to <origin> (N times)`, each
    /// followed by the fix (the origin to add to `target.allowedOrigins`,
    /// if the app needs it).
    pub fn observations(&self) -> Vec<String> {
        let fixes = self.fixes();
        self.items()
            .into_iter()
            .enumerate()
            .map(|(i, item)| match fixes.get(i) {
                Some(origin) => format!(
                    "blocked {item}: not an origin of this flow; if the app needs it, add \"{origin}\" to target.allowedOrigins"
                ),
                None => format!("blocked {item}"),
            })
            .collect()
    }

    /// The origin to allow for each listed item, in [`Self::items`] order
    /// (a tunnel's `host:port` as `https://host:port`, the scheme every
    /// tunnel but plain `ws` uses; a `ws`/`wss` origin as its `http`/`https`
    /// one, which allows it); the item for the rest has none.
    fn fixes(&self) -> Vec<String> {
        let mut by_count: Vec<(&String, &u32)> = self.by_origin.iter().collect();
        by_count.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        by_count
            .iter()
            .take(MAX_ORIGINS_LISTED)
            .map(|(o, _)| {
                // A WebSocket URL is allowed through its http(s) origin.
                if let Some(hp) = o.strip_prefix(TUNNEL_KEY) {
                    format!("https://{hp}")
                } else if let Some(rest) = o.strip_prefix("ws://") {
                    format!("http://{rest}")
                } else if let Some(rest) = o.strip_prefix("wss://") {
                    format!("https://{rest}")
                } else {
                    (*o).clone()
                }
            })
            .collect()
    }

    /// [`BlockedRequests::observations`] as typed notes.
    pub fn notes(&self) -> Vec<Note> {
        self.observations()
            .into_iter()
            .map(|l| Note::new(NoteKind::BlockedRequest, l))
            .collect()
    }

    /// Every item in one line, `; `-separated (`request to … (1 time);
    /// tunnel … (2 times)`).
    pub fn summary(&self) -> String {
        self.items().join("; ")
    }

    /// Splits into (Chromium's own service traffic, the rest).
    pub fn split_browser_service(&self) -> (BlockedRequests, BlockedRequests) {
        let (mut own, mut rest) = (BlockedRequests::default(), BlockedRequests::default());
        for (k, n) in &self.by_origin {
            let side = if browser_service(k) {
                &mut own
            } else {
                &mut rest
            };
            side.by_origin.insert(k.clone(), *n);
        }
        rest.untracked = self.untracked;
        (own, rest)
    }

    /// The hosts, in order, each once (`update.googleapis.com, accounts.google.com`).
    pub fn hosts(&self) -> Vec<String> {
        let mut v: Vec<String> = Vec::new();
        for k in self.by_origin.keys() {
            let h = key_host(k).to_string();
            if !v.contains(&h) {
                v.push(h);
            }
        }
        v
    }

    /// Counts since a previous snapshot (for per-step observations).
    pub fn since(&self, before: &BlockedRequests) -> BlockedRequests {
        let mut d = BlockedRequests::default();
        for (o, n) in &self.by_origin {
            let prev = before.by_origin.get(o).copied().unwrap_or(0);
            if *n > prev {
                d.by_origin.insert(o.clone(), n - prev);
            }
        }
        d.untracked = self.untracked.saturating_sub(before.untracked);
        d
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_asking_for_endless_origins_gets_bounded_notes() {
        let mut b = BlockedRequests::default();
        for i in 0..5773 {
            b.record(&format!("http://h{i}.example.test"));
        }
        for _ in 0..3 {
            b.record("http://h7.example.test");
        }
        assert_eq!(b.total(), 5776);
        assert!(b.by_origin.len() <= MAX_ORIGINS_TRACKED);
        let notes = b.notes();
        assert_eq!(notes.len(), MAX_ORIGINS_LISTED + 1);
        // The most blocked first; the rest in one line that counts them.
        assert_eq!(
            notes[0].message,
            "blocked request to http://h7.example.test (4 times): not an origin of this flow; if the app needs it, add \"http://h7.example.test\" to target.allowedOrigins"
        );
        let last = &notes[MAX_ORIGINS_LISTED].message;
        assert!(
            last.contains("981 or more other origins") && last.ends_with("(5753 times)"),
            "{last}"
        );
        assert!(b.summary().len() < 4096);
        // A few origins are all listed.
        let mut few = BlockedRequests::default();
        few.record("http://a.test");
        few.record("http://b.test");
        assert_eq!(few.notes().len(), 2);
    }

    #[test]
    fn exact_origin_only() {
        let a = Allowlist::new(["http://127.0.0.1:8000".to_string()]);
        assert_eq!(a.decide("http://127.0.0.1:8000/x?y"), Decision::Allow);
        assert_eq!(
            a.decide("http://127.0.0.1:8001/x"),
            Decision::Block("http://127.0.0.1:8001".into())
        );
        assert_eq!(
            a.decide("https://127.0.0.1:8000/"),
            Decision::Block("https://127.0.0.1:8000".into())
        );
        assert_eq!(
            a.decide("http://localhost:8000/"),
            Decision::Block("http://localhost:8000".into())
        );
        assert_eq!(
            a.decide("ws://127.0.0.1:9/"),
            Decision::Block("ws://127.0.0.1:9".into())
        );
        assert_eq!(a.decide("ws://127.0.0.1:8000/sock"), Decision::Allow);
        assert_eq!(a.decide("data:text/plain,hi"), Decision::Allow);
        assert_eq!(a.decide("blob:http://127.0.0.1:8000/uuid"), Decision::Allow);
        assert!(matches!(a.decide("file:///etc/passwd"), Decision::Block(_)));
    }

    #[test]
    fn urls_lose_their_query_in_logs() {
        assert_eq!(
            split_url("http://127.0.0.1:8000/a/b?token=x"),
            ("http://127.0.0.1:8000/a/b".into(), "/a/b?token=x".into())
        );
        assert_eq!(split_url("data:text/plain,hi"), ("data:".into(), "".into()));
    }

    #[test]
    fn default_ports_normalize() {
        let a = Allowlist::new(["https://example.com:443".to_string()]);
        assert_eq!(a.decide("https://example.com/a"), Decision::Allow);
        assert_eq!(a.origins(), ["https://example.com"]);
    }

    #[test]
    fn chromium_service_hosts_are_told_apart() {
        assert!(browser_service("http://update.googleapis.com"));
        assert!(browser_service(&format!(
            "{TUNNEL_KEY}accounts.google.com:443"
        )));
        assert!(browser_service(&format!(
            "{TUNNEL_KEY}redirector.gvt1.com:443"
        )));
        assert!(!browser_service("http://127.0.0.1:9"));
        assert!(!browser_service(&format!("{TUNNEL_KEY}notgoogle.com:443")));
        assert!(!browser_service("https://google.com.evil.example"));
        let mut b = BlockedRequests::default();
        b.record("http://update.googleapis.com");
        b.record(&format!("{TUNNEL_KEY}update.googleapis.com:443"));
        b.record(&format!("{TUNNEL_KEY}accounts.google.com:443"));
        b.record("http://127.0.0.1:9");
        let (own, rest) = b.split_browser_service();
        assert_eq!(own.total(), 3);
        assert_eq!(
            own.hosts(),
            ["update.googleapis.com", "accounts.google.com"]
        );
        assert_eq!(
            rest.observations(),
            ["blocked request to http://127.0.0.1:9 (1 time): not an origin of this flow; if the app needs it, add \"http://127.0.0.1:9\" to target.allowedOrigins"]
        );
        let mut t = BlockedRequests::default();
        t.record(&format!("{TUNNEL_KEY}api.example.test:8443"));
        assert!(t.observations()[0]
            .ends_with("add \"https://api.example.test:8443\" to target.allowedOrigins"));
    }

    #[test]
    fn observation_lines() {
        let mut b = BlockedRequests::default();
        b.record("http://127.0.0.1:9");
        b.record("http://127.0.0.1:9");
        let before = b.clone();
        b.record("http://127.0.0.1:9");
        let fix = ": not an origin of this flow; if the app needs it, add \"http://127.0.0.1:9\" to target.allowedOrigins";
        assert_eq!(
            b.observations(),
            [format!(
                "blocked request to http://127.0.0.1:9 (3 times){fix}"
            )]
        );
        assert_eq!(
            b.since(&before).observations(),
            [format!(
                "blocked request to http://127.0.0.1:9 (1 time){fix}"
            )]
        );
        b.record(&format!("{TUNNEL_KEY}127.0.0.1:9"));
        assert_eq!(
            b.summary(),
            "request to http://127.0.0.1:9 (3 times); tunnel (https, wss or ws) to 127.0.0.1:9 (1 time)"
        );
        assert_eq!(b.notes()[1].kind, NoteKind::BlockedRequest);
    }
}
