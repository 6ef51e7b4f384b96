//! HTML text for reports: escaping, data for inline scripts, relative links
//! and the page shell with its Content-Security-Policy.
//!
//! Every string that comes from a result is untrusted (page text, names a
//! flow chose, file names) and goes through [`escape`] before it reaches
//! the page; data handed to the report's own script goes through
//! [`script_json`]. Nothing here ever emits markup taken from data.

use std::fmt::Write as _;

/// Text made safe for HTML element content and quoted attribute values:
/// `& < > " '` become character references; control characters (C0 other
/// than tab and newline, DEL, C1) and the bidirectional formatting
/// characters are written as visible `\u{..}` escapes, so data can neither
/// break out of its element or attribute nor reorder what the page shows.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + s.len() / 8);
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '\n' | '\t' => out.push(c),
            c if hidden(c) => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    out
}

/// Characters that must not reach a page raw: controls (C0, DEL, C1),
/// the bidirectional marks, embeddings, overrides and isolates, and the
/// line and paragraph separators.
fn hidden(c: char) -> bool {
    c.is_control()
        || matches!(c as u32, 0x061C | 0x200E | 0x200F | 0x202A..=0x202E | 0x2066..=0x2069 | 0x2028 | 0x2029)
}

/// A JSON value as text for a `<script type="application/json">` element:
/// `<`, `>` and `&` are written as `\u003c`, `\u003e`, `\u0026` (so
/// nothing can close the element or open a comment), and U+2028/U+2029 as
/// escapes. `JSON.parse` of the element's text gives the value back.
pub fn script_json(v: &serde_json::Value) -> String {
    let s = serde_json::to_string(v).unwrap_or_else(|_| "null".into());
    let mut out = String::with_capacity(s.len() + 16);
    for c in s.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    out
}

/// A relative URL path (`artifacts/screenshots/a%20b.png`) for path
/// segments: every byte outside the unreserved set is percent-encoded.
/// Answers `None` when a segment is empty, `.` or `..`.
pub fn relative_href<'a>(segments: impl IntoIterator<Item = &'a str>) -> Option<String> {
    let mut out = String::new();
    for (i, seg) in segments.into_iter().enumerate() {
        if seg.is_empty() || seg == "." || seg == ".." {
            return None;
        }
        if i > 0 {
            out.push('/');
        }
        for b in seg.bytes() {
            if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
                out.push(b as char);
            } else {
                let _ = write!(out, "%{b:02X}");
            }
        }
    }
    (!out.is_empty()).then_some(out)
}

/// The Content-Security-Policy of every report: inline script and style
/// only, images and media from `data:` and `blob:` only, no connections,
/// no plugins, no forms, no `<base>`. `wasm` also allows compiling inline
/// WebAssembly (`'wasm-unsafe-eval'`), which the terminal replay player
/// needs for its terminal emulator; it allows no `eval` of script text.
pub fn content_security_policy(wasm: bool) -> String {
    format!(
        "default-src 'none'; script-src 'unsafe-inline'{}; style-src 'unsafe-inline'; \
         img-src data: blob:; media-src data: blob:; connect-src 'none'; font-src 'none'; \
         object-src 'none'; worker-src 'none'; frame-src 'none'; base-uri 'none'; form-action 'none'",
        if wasm { " 'wasm-unsafe-eval'" } else { "" }
    )
}

/// The stylesheet every report shares.
const STYLE: &str = include_str!("../../assets/report/report.css");

/// A whole page: `title` (text; escaped here), extra `<head>` markup built
/// by the report itself, and the body markup.
pub(crate) struct Page<'a> {
    /// The document title (plain text).
    pub title: &'a str,
    /// Whether the page may compile inline WebAssembly.
    pub wasm: bool,
    /// Extra markup for `<head>` (styles of vendored parts).
    pub head: &'a str,
    /// The body markup.
    pub body: &'a str,
    /// Script run at the end of the body (the report's own behaviour).
    pub script: &'a str,
}

impl Page<'_> {
    /// The document.
    pub(crate) fn render(&self) -> String {
        let mut out = String::with_capacity(self.body.len() + self.head.len() + 8192);
        out.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
        let _ = writeln!(
            out,
            "<meta http-equiv=\"Content-Security-Policy\" content=\"{}\">",
            content_security_policy(self.wasm)
        );
        out.push_str("<meta name=\"referrer\" content=\"no-referrer\">\n");
        out.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
        // No implicit `/favicon.ico` request.
        out.push_str("<link rel=\"icon\" href=\"data:,\">\n");
        let _ = writeln!(out, "<title>{}</title>", escape(self.title));
        let _ = writeln!(out, "<style>\n{STYLE}</style>");
        out.push_str(self.head);
        out.push_str("</head>\n<body>\n");
        out.push_str(self.body);
        if !self.script.is_empty() {
            let _ = writeln!(out, "<script>\n{}</script>", self.script);
        }
        out.push_str("</body>\n</html>\n");
        out
    }
}

/// `<span class="status status-failed">FAILED</span>` for a run status.
pub(crate) fn status_badge(status: qa_core::result::RunStatus) -> String {
    let s = status.as_str();
    format!(
        "<span class=\"status status-{}\">{s}</span>",
        s.to_ascii_lowercase()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_characters_become_references() {
        assert_eq!(
            escape("<script>alert('x')</script> & \"q\""),
            "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;q&quot;"
        );
        assert_eq!(escape("plain é ✓ 日本"), "plain é ✓ 日本");
        assert_eq!(escape(""), "");
    }

    #[test]
    fn attribute_values_cannot_be_closed() {
        let hostile = "\" onmouseover=\"alert(1)\" x='";
        let attr = format!("<a title=\"{}\">", escape(hostile));
        assert!(!attr[10..attr.len() - 2].contains('"'), "{attr}");
        assert!(!attr.contains('\''), "{attr}");
    }

    #[test]
    fn controls_and_bidi_characters_are_shown_not_obeyed() {
        assert_eq!(
            escape("a\u{1b}[31mb\u{0}\u{7f}\u{9b}\u{202e}c\u{2066}\u{2028}"),
            r"a\u{1b}[31mb\u{0}\u{7f}\u{9b}\u{202e}c\u{2066}\u{2028}"
        );
        assert_eq!(escape("line\n\tnext"), "line\n\tnext");
    }

    #[test]
    fn script_json_cannot_close_its_element() {
        let v = serde_json::json!({
            "text": "</script><script>alert(1)</script><!-- & \u{2028}",
        });
        let s = script_json(&v);
        assert!(
            !s.contains('<') && !s.contains('>') && !s.contains('&'),
            "{s}"
        );
        assert!(!s.contains('\u{2028}'));
        let back: serde_json::Value = serde_json::from_str(&s).unwrap();
        assert_eq!(back, v);
    }

    #[test]
    fn hrefs_are_relative_and_encoded() {
        assert_eq!(
            relative_href(["artifacts", "screenshots", "a b\"<.png"]).as_deref(),
            Some("artifacts/screenshots/a%20b%22%3C.png")
        );
        assert_eq!(relative_href(["..", "x"]), None);
        assert_eq!(relative_href(["a", ""]), None);
        assert_eq!(relative_href(["é"]).as_deref(), Some("%C3%A9"));
        assert_eq!(relative_href(std::iter::empty()), None);
    }

    #[test]
    fn the_policy_allows_no_network() {
        for wasm in [false, true] {
            let csp = content_security_policy(wasm);
            assert!(csp.contains("default-src 'none'"));
            assert!(csp.contains("connect-src 'none'"));
            assert!(!csp.contains("http"), "{csp}");
            assert!(!csp.contains("'unsafe-eval'"), "{csp}");
            assert_eq!(csp.contains("'wasm-unsafe-eval'"), wasm);
        }
    }

    #[test]
    fn the_title_is_escaped() {
        let p = Page {
            title: "</title><script>x</script>",
            wasm: false,
            head: "",
            body: "",
            script: "",
        }
        .render();
        assert!(p.contains("<title>&lt;/title&gt;&lt;script&gt;x&lt;/script&gt;</title>"));
        assert!(p.starts_with("<!DOCTYPE html>"));
    }
}
