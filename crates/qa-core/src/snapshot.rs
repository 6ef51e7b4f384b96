//! Accessibility snapshots: the one typed tree every driver writes (the
//! `snapshotAccessibility` and `capture` artifacts, and the tree kept beside
//! a failure) and the report reads.
//!
//! A page's snapshot lists its top-level [`nodes`](AxSnapshot::nodes); an
//! application's has its [`tree`](AxSnapshot::tree) under the application
//! with how it was read. Every string a page or program supplied is
//! redacted before the file is written ([`AxSnapshot::to_redacted_json`]).

use crate::secrets::Secrets;
use serde::{Deserialize, Serialize};

/// One element: its role, name and what was read for it, and its children.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AxNode {
    /// The role as the platform names it (`button`, `push button`).
    pub role: String,
    /// The accessible name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The accessible id (`automationId`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The current value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// The text content.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// State names (`focused`, `checked=mixed`, AT-SPI's `sensitive`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub states: Option<Vec<String>>,
    /// Screen extents.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bounds: Option<AxBounds>,
    /// Children, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub children: Vec<AxNode>,
}

/// Screen extents of an element, in pixels.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AxBounds {
    /// Left.
    pub x: i32,
    /// Top.
    pub y: i32,
    /// Width.
    pub width: i32,
    /// Height.
    pub height: i32,
}

/// The application a desktop snapshot was read from.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AxApplication {
    /// Its accessible name.
    pub name: String,
    /// The process owning its accessibility connection (0: unknown).
    pub pid: u32,
}

/// One snapshot document.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AxSnapshot {
    /// The application (desktop).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub application: Option<AxApplication>,
    /// Nodes read (desktop).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_count: Option<usize>,
    /// The most nodes a snapshot reads (desktop).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_cap: Option<usize>,
    /// Whether a bound cut the tree short (the top is kept).
    #[serde(default)]
    pub truncated: bool,
    /// How long reading took (desktop).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elapsed_ms: Option<u64>,
    /// The application's tree (desktop).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tree: Option<AxNode>,
    /// The top-level nodes (a page or frame, or the element a locator
    /// rooted the snapshot at).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nodes: Option<Vec<AxNode>>,
}

impl AxSnapshot {
    /// The top-level nodes, whichever kind of snapshot this is.
    pub fn roots(&self) -> &[AxNode] {
        match (&self.tree, &self.nodes) {
            (Some(t), _) => std::slice::from_ref(t),
            (None, Some(n)) => n,
            (None, None) => &[],
        }
    }

    /// The document as pretty JSON with every secret redacted — also one
    /// split across the names, values or texts of several elements, which
    /// shows in no single one.
    pub fn to_redacted_json(&self, secrets: &Secrets) -> Vec<u8> {
        self.to_redacted_json_clipped(secrets, usize::MAX)
    }

    /// [`AxSnapshot::to_redacted_json`] with every name, value, text and
    /// description cut to at most `max` bytes after it was redacted
    /// ([`Secrets::redact_then_clip`]): the cut never leaves part of a
    /// secret.
    pub fn to_redacted_json_clipped(&self, secrets: &Secrets, max: usize) -> Vec<u8> {
        const TEXTS: &[&str] = &["name", "value", "text", "description"];
        let mut doc = serde_json::to_value(self).unwrap_or_default();
        secrets.redact_json_across(&mut doc, TEXTS);
        secrets.clip_json(&mut doc, TEXTS, max);
        // Keys are the format's own names: a secret equal to one cannot
        // break the document.
        secrets.redact_json_values(&mut doc);
        serde_json::to_vec_pretty(&doc).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_snapshot_writes_only_what_was_read_and_reads_back() {
        let s = AxSnapshot {
            truncated: false,
            nodes: Some(vec![AxNode {
                role: "button".into(),
                name: Some("Pay hunter22".into()),
                states: Some(vec!["focused".into()]),
                ..Default::default()
            }]),
            ..Default::default()
        };
        let secrets = Secrets::new();
        secrets.add("hunter22");
        let bytes = s.to_redacted_json(&secrets);
        let text = String::from_utf8(bytes.clone()).unwrap();
        assert!(!text.contains("hunter22"), "{text}");
        assert!(
            !text.contains("\"id\"") && !text.contains("\"tree\""),
            "{text}"
        );
        let back: AxSnapshot = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(back.roots().len(), 1);
        assert_eq!(back.roots()[0].role, "button");
        assert_eq!(
            back.roots()[0].states.as_deref(),
            Some(&["focused".to_string()][..])
        );
    }

    #[test]
    fn a_desktop_snapshot_has_one_tree() {
        let s: AxSnapshot = serde_json::from_str(
            r#"{"application":{"name":"calc","pid":7},"nodeCount":2,"nodeCap":2000,"truncated":false,"elapsedMs":5,
                "tree":{"role":"application","name":"calc","children":[{"role":"frame","name":"Calculator","bounds":{"x":0,"y":0,"width":10,"height":20}}]}}"#,
        )
        .unwrap();
        assert_eq!(s.roots()[0].children[0].bounds.unwrap().height, 20);
        assert_eq!(s.application.unwrap().pid, 7);
    }
}
