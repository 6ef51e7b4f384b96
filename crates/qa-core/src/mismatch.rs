//! What a failed check expected and what it found — one vocabulary for
//! every backend: expected, received, the locator and, for locator
//! failures, the candidate elements. Drivers fill it in; the runner keeps
//! it on the failed step (`steps[].failure`), and the human output prints
//! it as Expected / Received.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Cap of [`Mismatch::candidates`].
pub const MAX_CANDIDATES: usize = 10;

/// Cap, in characters, of [`Mismatch::received`] and of each text of a
/// candidate.
pub const MAX_RECEIVED_CHARS: usize = 300;

/// What a check expected and what it found: one vocabulary for every
/// backend. Every field is bounded and passes the run's secret redaction.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Mismatch {
    /// What the step expected, e.g. `text equals "Ordered 1 x Medium"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected: Option<String>,
    /// What was there, e.g. `"Ordered 1 x Large"` or `no element matches`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub received: Option<String>,
    /// The step's locator, as the flow wrote it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub locator: Option<String>,
    /// For a locator that matched several elements, those elements; for
    /// one that matched none, the closest elements (at most
    /// [`MAX_CANDIDATES`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub candidates: Vec<ElementCandidate>,
    /// How many elements the candidates were chosen from, when the list is
    /// shorter (`candidates` holds 10 of `candidatesTotal`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub candidates_total: Option<u64>,
}

impl Mismatch {
    /// Whether the candidates are the elements the locator matched (it
    /// matched several) rather than the closest ones (it matched none).
    pub fn candidates_matched(&self) -> bool {
        self.received
            .as_deref()
            .is_some_and(|x| x.ends_with("elements match"))
    }

    /// ` (N of M)` when more candidates existed than are listed, else empty.
    pub fn candidates_of(&self) -> String {
        let shown = self.candidates.len();
        match self.candidates_total {
            Some(t) if t > shown as u64 => format!(" ({shown} of {t})"),
            _ => String::new(),
        }
    }

    /// Expected and received.
    pub fn new(expected: impl Into<String>, received: impl Into<String>) -> Mismatch {
        Mismatch {
            expected: Some(expected.into()),
            received: Some(bounded(&received.into())),
            ..Mismatch::default()
        }
    }

    /// Sets the locator.
    pub fn at(mut self, locator: impl Into<String>) -> Mismatch {
        self.locator = Some(locator.into());
        self
    }

    /// Sets the candidates (the first [`MAX_CANDIDATES`] are kept) and how
    /// many there were in all.
    pub fn with_candidates(mut self, mut c: Vec<ElementCandidate>, total: u64) -> Mismatch {
        c.truncate(MAX_CANDIDATES);
        for x in &mut c {
            x.name = x.name.as_deref().map(bounded);
            x.text = x.text.as_deref().map(bounded);
        }
        if total > c.len() as u64 {
            self.candidates_total = Some(total);
        }
        self.candidates = c;
        self
    }

    /// One line: `expected …, received …`.
    pub fn summary(&self) -> String {
        match (&self.expected, &self.received) {
            (Some(e), Some(r)) => format!("expected {e}, received {r}"),
            (Some(e), None) => format!("expected {e}"),
            (None, Some(r)) => format!("received {r}"),
            (None, None) => String::new(),
        }
    }
}

/// `s` cut to [`MAX_RECEIVED_CHARS`] characters (with `…`).
pub fn bounded(s: &str) -> String {
    if s.chars().count() <= MAX_RECEIVED_CHARS {
        return s.to_string();
    }
    let mut out: String = s.chars().take(MAX_RECEIVED_CHARS).collect();
    out.push('…');
    out
}

/// An element a locator could have meant.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ElementCandidate {
    /// Its role (portable role names).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    /// Its accessible name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Its text, when it differs from the name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// A locator that selects it, when one is known
    /// (`{"testId": "…"}`, `{"role": "button", "name": "…"}`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub locator: Option<String>,
    /// Anything else worth knowing (`not visible`, `disabled`, `button#buy`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

impl ElementCandidate {
    /// `button "Buy now"` (text: "…") [detail].
    pub fn describe(&self) -> String {
        let mut s = self.role.clone().unwrap_or_else(|| "element".into());
        if let Some(n) = self.name.as_deref().filter(|n| !n.is_empty()) {
            s.push_str(&format!(" {n:?}"));
        }
        if let Some(t) = self.text.as_deref().filter(|t| !t.is_empty()) {
            s.push_str(&format!(" text {t:?}"));
        }
        if let Some(d) = self.detail.as_deref().filter(|d| !d.is_empty()) {
            s.push_str(&format!(" ({d})"));
        }
        s
    }
}
