//! Backend guides embedded at build time, served from a fixed allowlist.

use crate::codes::CliCode;

/// Largest guide document allowed (checked by a test).
pub const MAX_GUIDE_BYTES: usize = 64 * 1024;

/// One embedded guide document.
pub struct Guide {
    /// `browser`, `tui` or `desktop`.
    pub backend: &'static str,
    /// `None` for the backend's base guide.
    pub topic: Option<&'static str>,
    /// Markdown text.
    pub text: &'static str,
}

/// Every guide, base documents first.
pub const GUIDES: &[Guide] = &[
    Guide {
        backend: "browser",
        topic: None,
        text: include_str!("../../../guides/browser.md"),
    },
    Guide {
        backend: "browser",
        topic: Some("cdp"),
        text: include_str!("../../../guides/browser/cdp.md"),
    },
    Guide {
        backend: "browser",
        topic: Some("auth"),
        text: include_str!("../../../guides/browser/auth.md"),
    },
    Guide {
        backend: "tui",
        topic: None,
        text: include_str!("../../../guides/tui.md"),
    },
    Guide {
        backend: "tui",
        topic: Some("pty"),
        text: include_str!("../../../guides/tui/pty.md"),
    },
    Guide {
        backend: "tui",
        topic: Some("native-terminal"),
        text: include_str!("../../../guides/tui/native-terminal.md"),
    },
    Guide {
        backend: "desktop",
        topic: None,
        text: include_str!("../../../guides/desktop.md"),
    },
    Guide {
        backend: "desktop",
        topic: Some("linux-at-spi"),
        text: include_str!("../../../guides/desktop/linux-at-spi.md"),
    },
    Guide {
        backend: "desktop",
        topic: Some("windows-uia"),
        text: include_str!("../../../guides/desktop/windows-uia.md"),
    },
    Guide {
        backend: "desktop",
        topic: Some("macos-accessibility"),
        text: include_str!("../../../guides/desktop/macos-accessibility.md"),
    },
];

/// Why a guide request was refused.
#[derive(Debug, PartialEq, Eq)]
pub enum GuideError {
    /// Not one of browser, tui, desktop.
    UnknownBackend(String),
    /// A topic with path characters.
    Traversal(String),
    /// A topic of another backend.
    CrossBackend {
        /// The topic asked for.
        topic: String,
        /// The backend it belongs to.
        belongs_to: &'static str,
    },
    /// No such topic.
    UnknownTopic(String),
}

impl std::fmt::Display for GuideError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            GuideError::UnknownBackend(b) => write!(
                f,
                "{}: {b:?} is not a backend; use browser, tui or desktop",
                CliCode::GuideUnknownBackend
            ),
            GuideError::Traversal(t) => write!(
                f,
                "{}: {t:?} is not a topic name (topics are plain names like pty)",
                CliCode::GuideInvalidTopic
            ),
            GuideError::CrossBackend { topic, belongs_to } => write!(
                f,
                "{}: topic {topic:?} belongs to the {belongs_to} backend; use --backend {belongs_to}",
                CliCode::GuideCrossBackend
            ),
            GuideError::UnknownTopic(t) => {
                write!(f, "{}: no topic {t:?}", CliCode::GuideUnknownTopic)
            }
        }
    }
}

/// The topics of a backend.
pub fn topics(backend: &str) -> Vec<&'static str> {
    GUIDES
        .iter()
        .filter(|g| g.backend == backend)
        .filter_map(|g| g.topic)
        .collect()
}

/// Finds exactly one guide document.
pub fn find(backend: &str, topic: Option<&str>) -> Result<&'static Guide, GuideError> {
    if !["browser", "tui", "desktop"].contains(&backend) {
        return Err(GuideError::UnknownBackend(backend.into()));
    }
    let Some(t) = topic else {
        return Ok(GUIDES
            .iter()
            .find(|g| g.backend == backend && g.topic.is_none())
            .expect("base guide"));
    };
    if t.is_empty()
        || !t
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
    {
        return Err(GuideError::Traversal(t.into()));
    }
    if let Some(g) = GUIDES
        .iter()
        .find(|g| g.backend == backend && g.topic == Some(t))
    {
        return Ok(g);
    }
    if let Some(g) = GUIDES.iter().find(|g| g.topic == Some(t)) {
        return Err(GuideError::CrossBackend {
            topic: t.into(),
            belongs_to: g.backend,
        });
    }
    Err(GuideError::UnknownTopic(t.into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guides_are_bounded_and_non_empty() {
        for g in GUIDES {
            assert!(
                g.text.len() > 200,
                "{}/{:?} is too short",
                g.backend,
                g.topic
            );
            assert!(
                g.text.len() <= MAX_GUIDE_BYTES,
                "{}/{:?} too big",
                g.backend,
                g.topic
            );
        }
    }

    #[test]
    fn allowlist_is_enforced() {
        assert!(find("tui", Some("pty")).is_ok());
        assert!(matches!(
            find("tui", Some("../desktop")),
            Err(GuideError::Traversal(_))
        ));
        assert!(matches!(
            find("tui", Some("windows-uia")),
            Err(GuideError::CrossBackend {
                belongs_to: "desktop",
                ..
            })
        ));
        assert!(matches!(
            find("tui", Some("nope")),
            Err(GuideError::UnknownTopic(_))
        ));
        assert!(matches!(
            find("web", None),
            Err(GuideError::UnknownBackend(_))
        ));
    }
}
