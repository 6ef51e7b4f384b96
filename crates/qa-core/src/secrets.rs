//! Redaction: every string that leaves the runner passes through [`Secrets`].
//!
//! A secret is matched in every form it commonly takes on its way out, not
//! only as its raw bytes: base64 (standard and URL-safe, padded or not, and
//! inside a longer base64 value at any of its three alignments), URL
//! encoding (`%2F`/`%2f`, `+` for a space, any mix of encoded and raw
//! characters), hex (any case), JSON string escapes (`\"`, `\/`, `\u00e9`,
//! surrogate pairs, and JSON-in-JSON), HTML escapes (`&amp;` `&lt;` `&gt;`
//! `&quot;` `&apos;` `&#39;` `&#NN;` `&#xNN;`) and, in artifacts, UTF-16
//! (LE and BE). The forms are built once in [`Secrets::add`] and compiled,
//! per value, into one matcher for strings and one for bytes; matching never
//! re-encodes. An encoded form shorter than [`MIN_FORM_CHARS`] is not used
//! (base64 of a 4-byte value inside a longer blob leaves fewer characters
//! that depend on the value alone), so ordinary text is not redacted.

use std::borrow::Cow;
use std::ops::Range;
use std::sync::RwLock;

/// The replacement text for a redacted secret.
pub const REDACTED: &str = "[REDACTED]";

/// Prefix of environment variables whose values are secrets.
pub const SECRET_ENV_PREFIX: &str = "UI_QA_SECRET_";

/// Values shorter than this (bytes) are not secrets: they would redact
/// ordinary text.
pub const MIN_SECRET_BYTES: usize = 4;

/// A secret of only letters or only digits shorter than this (bytes) is
/// common text ([`Secrets::weakness`]).
pub const COMMON_BELOW: usize = 8;

/// An encoded form shorter than this (characters) is not matched: it would
/// redact ordinary text (the raw value itself only needs
/// [`MIN_SECRET_BYTES`]).
pub const MIN_FORM_CHARS: usize = 6;

/// Values up to this many characters are matched with per-character
/// alternatives (any mix of escaped and raw characters); longer values (keys,
/// certificates) by the canonical output of each encoder, which keeps `add`
/// and the compiled matcher small.
const PER_CHAR_MAX: usize = 256;

/// Size limit of the compiled matchers.
const REGEX_SIZE_LIMIT: usize = 64 << 20;

/// A set of secret values.
#[derive(Debug, Default)]
pub struct Secrets {
    /// One entry per value, longest value first (so a secret that contains
    /// another is replaced whole).
    entries: RwLock<Vec<Entry>>,
}

/// A value, its forms and their compiled matcher. Each value has its own
/// matcher: one automaton for every form of every value thrashes the lazy
/// DFA once a long value is among them.
#[derive(Debug, Clone)]
struct Entry {
    value: String,
    matcher: Matcher,
    /// The value's characters other than whitespace, with any run of
    /// whitespace allowed between them: text joined from pieces (`a b`
    /// from `<b>a</b>b`), a page's collapsed spaces, a terminal line break.
    /// `None` when the value has fewer than [`MIN_SECRET_BYTES`] bytes that
    /// are not whitespace, or more than [`PER_CHAR_MAX`] characters.
    loose: Option<regex::Regex>,
    /// The value without its whitespace (for clip points).
    bare: Vec<char>,
    /// Where the value came from (`UI_QA_SECRET_TOKEN`, `auth profile
    /// `staff``), for notes that never show the value.
    source: Option<String>,
}

/// One way a secret can be written: a sequence of fragments.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Form {
    frags: Vec<Frag>,
    /// Text forms are redacted from strings; binary ones (UTF-16) are only
    /// searched for in artifact bytes.
    text: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Frag {
    /// These bytes exactly.
    Lit(Vec<u8>),
    /// These ASCII bytes, letters in either case (hex digits, `x` of `&#x`).
    AnyCase(Vec<u8>),
    /// One of several fragment sequences (the first is the canonical one).
    Alt(Vec<Vec<Frag>>),
}

#[derive(Debug, Clone)]
enum Matcher {
    Regex {
        text: regex::Regex,
        bytes: regex::bytes::Regex,
    },
    /// Fallback when the forms do not compile within the size limit: the
    /// canonical instance of every form, searched one by one.
    Literals {
        text: Vec<String>,
        bytes: Vec<Vec<u8>>,
    },
}

impl Matcher {
    fn find(&self, s: &str, out: &mut Vec<Range<usize>>) {
        match self {
            Matcher::Regex { text, .. } => out.extend(text.find_iter(s).map(|m| m.range())),
            Matcher::Literals { text, .. } => {
                for l in text {
                    out.extend(s.match_indices(l.as_str()).map(|(i, m)| i..i + m.len()));
                }
            }
        }
    }

    fn redact<'a>(&self, s: &'a str) -> Cow<'a, str> {
        match self {
            Matcher::Regex { text, .. } => text.replace_all(s, regex::NoExpand(REDACTED)),
            Matcher::Literals { text, .. } => {
                if !text.iter().any(|l| s.contains(l.as_str())) {
                    return Cow::Borrowed(s);
                }
                let mut out = s.to_string();
                for l in text {
                    out = out.replace(l.as_str(), REDACTED);
                }
                Cow::Owned(out)
            }
        }
    }

    fn found_in(&self, hay: &[u8]) -> bool {
        match self {
            Matcher::Regex { bytes, .. } => bytes.is_match(hay),
            Matcher::Literals { bytes, .. } => bytes.iter().any(|l| contains(hay, l)),
        }
    }
}

impl Secrets {
    /// An empty set.
    pub fn new() -> Secrets {
        Secrets::default()
    }

    /// Secrets from every `UI_QA_SECRET_*` environment variable.
    pub fn from_env() -> Secrets {
        let s = Secrets::new();
        for (k, v) in std::env::vars_os() {
            if k.to_string_lossy().starts_with(SECRET_ENV_PREFIX) {
                s.add_from(&v.to_string_lossy(), &k.to_string_lossy());
            }
        }
        s
    }

    /// Adds a secret value and precomputes the matcher of its encoded forms
    /// (once; matching never re-encodes). Values shorter than 4 bytes are
    /// ignored (they would redact ordinary text).
    pub fn add(&self, value: &str) {
        self.insert(value, None);
    }

    /// [`Secrets::add`], remembering where the value came from (an
    /// environment variable's name, an auth profile) for
    /// [`Secrets::weak`]'s notes.
    pub fn add_from(&self, value: &str, source: &str) {
        self.insert(value, Some(source.to_string()));
    }

    /// A note for every value too common to redact reliably
    /// ([`Secrets::weakness`]), naming where it came from, never the value.
    pub fn weak(&self) -> Vec<String> {
        self.entries
            .read()
            .expect("secrets lock")
            .iter()
            .filter_map(|e| {
                let why = Secrets::weakness(&e.value)?;
                let from = e.source.as_deref().unwrap_or("a registered secret");
                Some(format!(
                    "the secret from {from} is too common to redact reliably: {why}"
                ))
            })
            .collect()
    }

    fn insert(&self, value: &str, source: Option<String>) {
        if value.len() < MIN_SECRET_BYTES {
            return;
        }
        if self
            .entries
            .read()
            .expect("secrets lock")
            .iter()
            .any(|e| e.value == value)
        {
            return;
        }
        let entry = Entry {
            value: value.to_string(),
            matcher: compile(&forms_of(value)),
            loose: loose_of(value),
            bare: value.chars().filter(|c| !c.is_whitespace()).collect(),
            source,
        };
        let mut v = self.entries.write().expect("secrets lock");
        if !v.iter().any(|e| e.value == value) {
            v.push(entry);
            v.sort_by_key(|e| std::cmp::Reverse(e.value.len()));
        }
    }

    /// A new set holding this set's values (their matchers are shared, not
    /// rebuilt). A run works on its own fork, so the values one flow's auth
    /// profile adds redact and withhold that flow's evidence only.
    pub fn fork(&self) -> Secrets {
        Secrets {
            entries: RwLock::new(self.entries.read().expect("secrets lock").clone()),
        }
    }

    /// Adds every value of `other` (for text that spans several runs: an
    /// index report, a tally, `--json` of many results).
    pub fn absorb(&self, other: &Secrets) {
        if std::ptr::eq(self, other) {
            return;
        }
        let theirs = other.entries.read().expect("secrets lock").clone();
        let mut v = self.entries.write().expect("secrets lock");
        for e in theirs {
            if !v.iter().any(|x| x.value == e.value) {
                v.push(e);
            }
        }
        v.sort_by_key(|e| std::cmp::Reverse(e.value.len()));
    }

    /// How many values the set holds.
    pub fn len(&self) -> usize {
        self.entries.read().expect("secrets lock").len()
    }

    /// Why `value` is too common to redact reliably, if it is: a short word
    /// or number (under [`COMMON_BELOW`] bytes, only letters or only
    /// digits) is ordinary text — a page's markup, a report's own words — so
    /// evidence that shows it anywhere is redacted or withheld. `None` for a
    /// value that is long or mixed enough.
    pub fn weakness(value: &str) -> Option<String> {
        let bare: String = value.chars().filter(|c| !c.is_whitespace()).collect();
        if bare.len() < MIN_SECRET_BYTES {
            return Some(format!(
                "it has {} bytes, fewer than {MIN_SECRET_BYTES}: it is not registered and cannot be withheld",
                bare.len()
            ));
        }
        if bare.len() >= COMMON_BELOW {
            return None;
        }
        let kind = if bare.chars().all(char::is_alphabetic) {
            "only letters"
        } else if bare.chars().all(|c| c.is_ascii_digit()) {
            "only digits"
        } else {
            return None;
        };
        Some(format!(
            "it is {} bytes of {kind}, a word or number ordinary text also contains: evidence that shows it anywhere is redacted or withheld (use a value of {COMMON_BELOW} or more mixed characters)",
            bare.len()
        ))
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.entries.read().expect("secrets lock").is_empty()
    }

    /// Byte ranges of `s` that show a secret in any text form, sorted and
    /// merged (overlapping or touching ranges become one). The raw value
    /// also matches with whitespace inserted between its characters or its
    /// own whitespace changed or left out (text joined from pieces with a
    /// space, a line break in a terminal): a false match is redacted, a
    /// missed one would leak.
    pub fn find(&self, s: &str) -> Vec<Range<usize>> {
        let mut all = Vec::new();
        for e in self.entries.read().expect("secrets lock").iter() {
            e.matcher.find(s, &mut all);
            if let Some(l) = &e.loose {
                all.extend(l.find_iter(s).map(|m| m.range()));
            }
        }
        all.sort_by_key(|r| r.start);
        let mut out: Vec<Range<usize>> = Vec::with_capacity(all.len());
        for r in all {
            match out.last_mut() {
                Some(last) if r.start <= last.end => last.end = last.end.max(r.end),
                _ => out.push(r),
            }
        }
        out
    }

    /// Replaces every secret in `s`, in any text form, with [`REDACTED`] —
    /// also the raw value with whitespace inserted, changed or left out
    /// between its characters (see [`Secrets::find`]). A text that ends in
    /// a clip mark (`…`) right after the start of a secret (a clip made
    /// before redaction, which left [`MIN_SECRET_BYTES`] or more of it) has
    /// that start replaced too: a clip never leaves a prefix of a secret.
    pub fn redact<'a>(&self, s: &'a str) -> Cow<'a, str> {
        let mut out = Cow::Borrowed(s);
        let entries = self.entries.read().expect("secrets lock");
        for e in entries.iter() {
            if let Cow::Owned(r) = e.matcher.redact(&out) {
                out = Cow::Owned(r);
            }
            if let Some(l) = &e.loose {
                if let Cow::Owned(r) = l.replace_all(&out, regex::NoExpand(REDACTED)) {
                    out = Cow::Owned(r);
                }
            }
        }
        if let Some(body) = out.strip_suffix(CLIP_MARK) {
            let cut = clip_point(&entries, body, body.len());
            if bare_len(&body[cut..]) >= MIN_SECRET_BYTES {
                out = Cow::Owned(format!("{}{REDACTED}{CLIP_MARK}", &body[..cut]));
            }
        }
        out
    }

    /// `s` redacted ([`Secrets::redact`]), then cut to at most `max` bytes
    /// (on a character boundary, with `…` added): redaction runs on the
    /// whole text, so a secret straddling the cut is replaced whole, and
    /// the cut is moved back before anything at its end that starts a
    /// secret (replaced with [`REDACTED`] when [`MIN_SECRET_BYTES`] or
    /// more of it would be left) and before a [`REDACTED`] it would split.
    /// A clip never leaves a prefix of a secret.
    pub fn redact_then_clip(&self, s: &str, max: usize) -> String {
        let r = self.redact(s);
        if r.len() <= max {
            return r.into_owned();
        }
        self.clip_redacted(&r, max)
    }

    /// [`Secrets::redact_then_clip`] to at most `max` characters.
    pub fn redact_then_clip_chars(&self, s: &str, max: usize) -> String {
        let r = self.redact(s);
        match r.char_indices().nth(max) {
            Some((end, _)) => self.clip_redacted(&r, end),
            None => r.into_owned(),
        }
    }

    /// The redacted text `r` cut at or before byte `max`.
    fn clip_redacted(&self, r: &str, max: usize) -> String {
        let mut end = max;
        while !r.is_char_boundary(end) {
            end -= 1;
        }
        // Not inside a `[REDACTED]`.
        if let Some(m) = r[..end].rfind(REDACTED.as_bytes()[0] as char) {
            if end < m + REDACTED.len() && r[m..].starts_with(REDACTED) {
                end = m;
            }
        }
        let entries = self.entries.read().expect("secrets lock");
        let cut = clip_point(&entries, r, end);
        let mark = if bare_len(&r[cut..end]) >= MIN_SECRET_BYTES {
            REDACTED
        } else {
            ""
        };
        format!("{}{mark}{CLIP_MARK}", r[..cut].trim_end())
    }

    /// Redacts secrets that span consecutive `texts` — one element's text
    /// ending where the next one's begins, as inline elements render side by
    /// side (`<span>hunter2-TOP</span><span>SECRET-9876</span>`) — the way
    /// pictures are masked: each text's share of such a match becomes
    /// [`REDACTED`], and so does every other text equal to one of those
    /// shares (the same text repeated deeper in a tree). A secret inside one
    /// text is left to [`Secrets::redact`]. Returns how many texts changed.
    pub fn redact_across(&self, texts: &mut [&mut String]) -> usize {
        if texts.len() < 2 || self.is_empty() {
            return 0;
        }
        let mut joined = String::new();
        let mut starts = Vec::with_capacity(texts.len());
        for t in texts.iter() {
            starts.push(joined.len());
            joined.push_str(t);
        }
        // The text holding byte `at` of `joined` (the last one starting at
        // or before it that is not empty).
        let holder = |at: usize| {
            (0..texts.len())
                .rev()
                .find(|&i| starts[i] <= at && !texts[i].is_empty())
                .unwrap_or(0)
        };
        let mut cuts: Vec<Vec<Range<usize>>> = vec![Vec::new(); texts.len()];
        for r in self.find(&joined) {
            let (first, last) = (holder(r.start), holder(r.end - 1));
            if first == last {
                continue;
            }
            for i in first..=last {
                let (s, e) = (starts[i], starts[i] + texts[i].len());
                let (a, b) = (r.start.max(s), r.end.min(e));
                if a < b {
                    cuts[i].push(a - s..b - s);
                }
            }
        }
        let mut shares = std::collections::HashSet::new();
        let mut changed = 0;
        for (i, mut c) in cuts.into_iter().enumerate() {
            if c.is_empty() {
                continue;
            }
            c.sort_by_key(|r| std::cmp::Reverse(r.start));
            for r in c {
                shares.insert(texts[i][r.clone()].to_string());
                texts[i].replace_range(r, REDACTED);
            }
            changed += 1;
        }
        shares.retain(|s: &String| s.len() >= MIN_SECRET_BYTES);
        for t in texts.iter_mut() {
            if shares.contains(t.as_str()) {
                **t = REDACTED.to_string();
                changed += 1;
            }
        }
        changed
    }

    /// [`Secrets::redact_across`] over the string values under `keys`
    /// (`name`, `value`, `text`, …) of a JSON document, in document order.
    pub fn redact_json_across(&self, value: &mut serde_json::Value, keys: &[&str]) -> usize {
        fn collect<'a>(v: &'a mut serde_json::Value, keys: &[&str], out: &mut Vec<&'a mut String>) {
            use serde_json::Value;
            match v {
                Value::Object(o) => {
                    for (k, x) in o.iter_mut() {
                        if keys.contains(&k.as_str()) && x.is_string() {
                            if let Value::String(s) = x {
                                out.push(s);
                            }
                        } else {
                            collect(x, keys, out);
                        }
                    }
                }
                Value::Array(a) => a.iter_mut().for_each(|x| collect(x, keys, out)),
                _ => {}
            }
        }
        let mut texts = Vec::new();
        collect(value, keys, &mut texts);
        self.redact_across(&mut texts)
    }

    /// Every string value under `keys` (at any depth) redacted and cut to
    /// at most `max` bytes ([`Secrets::redact_then_clip`]).
    pub fn clip_json(&self, value: &mut serde_json::Value, keys: &[&str], max: usize) {
        use serde_json::Value;
        match value {
            Value::Object(o) => {
                for (k, x) in o.iter_mut() {
                    match x {
                        Value::String(s) if keys.contains(&k.as_str()) => {
                            *s = self.redact_then_clip(s, max);
                        }
                        _ => self.clip_json(x, keys, max),
                    }
                }
            }
            Value::Array(a) => a.iter_mut().for_each(|x| self.clip_json(x, keys, max)),
            _ => {}
        }
    }

    /// Redacts every string (keys and values) in a JSON value.
    pub fn redact_json(&self, value: &mut serde_json::Value) {
        use serde_json::Value;
        match value {
            Value::String(s) => {
                if let Cow::Owned(r) = self.redact(s) {
                    *s = r;
                }
            }
            Value::Array(a) => a.iter_mut().for_each(|x| self.redact_json(x)),
            Value::Object(o) => {
                let entries: Vec<(String, Value)> = std::mem::take(o).into_iter().collect();
                for (k, mut v) in entries {
                    self.redact_json(&mut v);
                    o.insert(self.redact(&k).into_owned(), v);
                }
            }
            _ => {}
        }
    }

    /// [`Secrets::redact_json`] of the values only: every string value is
    /// redacted, object keys are left as they are. For documents whose keys
    /// are all the format's own field names (the result document), so a
    /// secret that happens to equal a field name cannot break the document.
    pub fn redact_json_values(&self, value: &mut serde_json::Value) {
        use serde_json::Value;
        match value {
            Value::String(s) => {
                if let Cow::Owned(r) = self.redact(s) {
                    *s = r;
                }
            }
            Value::Array(a) => a.iter_mut().for_each(|x| self.redact_json_values(x)),
            Value::Object(o) => o.values_mut().for_each(|x| self.redact_json_values(x)),
            _ => {}
        }
    }

    /// Whether `bytes` contain any secret in any form (text forms and UTF-16).
    pub fn found_in(&self, bytes: &[u8]) -> bool {
        self.entries
            .read()
            .expect("secrets lock")
            .iter()
            .any(|e| e.matcher.found_in(bytes))
    }
}

/// What a clip adds at the end of the text it cut.
pub const CLIP_MARK: &str = "…";

/// The loose matcher of a value (see [`Entry::loose`]).
fn loose_of(value: &str) -> Option<regex::Regex> {
    let bare: Vec<char> = value.chars().filter(|c| !c.is_whitespace()).collect();
    if bare.iter().map(|c| c.len_utf8()).sum::<usize>() < MIN_SECRET_BYTES
        || value.chars().count() > PER_CHAR_MAX
    {
        return None;
    }
    let p: Vec<String> = bare.iter().map(|c| regex::escape(&c.to_string())).collect();
    regex::RegexBuilder::new(&p.join(r"\s*"))
        .size_limit(REGEX_SIZE_LIMIT)
        .build()
        .ok()
}

/// Bytes of `s` that are not whitespace.
fn bare_len(s: &str) -> usize {
    s.chars()
        .filter(|c| !c.is_whitespace())
        .map(char::len_utf8)
        .sum()
}

/// Where to cut `s` at or before `end` so that what is kept does not end in
/// the start of a secret (its characters, whitespace anywhere between
/// them): `end` moved back past every such ending.
fn clip_point(entries: &[Entry], s: &str, end: usize) -> usize {
    /// How far back an ending is looked for.
    const WINDOW: usize = 4096;
    let mut end = end;
    'again: loop {
        let from = end.saturating_sub(WINDOW);
        // The earliest start whose text up to `end` starts a secret.
        for (i, c) in s[..end].char_indices() {
            if i < from || c.is_whitespace() {
                continue;
            }
            let tail = &s[i..end];
            if entries.iter().any(|e| starts(&e.bare, tail)) {
                end = i;
                continue 'again;
            }
        }
        return end;
    }
}

/// Whether `tail` (not empty) is the start of `bare`, whitespace aside.
fn starts(bare: &[char], tail: &str) -> bool {
    let mut want = bare.iter();
    let mut any = false;
    for c in tail.chars().filter(|c| !c.is_whitespace()) {
        match want.next() {
            Some(&w) if w == c => any = true,
            _ => return false,
        }
    }
    any
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    !needle.is_empty() && hay.windows(needle.len()).any(|w| w == needle)
}

// ---------------------------------------------------------------------------
// Forms.

fn lit(s: impl AsRef<[u8]>) -> Frag {
    Frag::Lit(s.as_ref().to_vec())
}

fn raw_char(c: char) -> Vec<Frag> {
    vec![lit(c.encode_utf8(&mut [0u8; 4]).as_bytes())]
}

/// Every form of `value` worth matching.
fn forms_of(value: &str) -> Vec<Form> {
    let bytes = value.as_bytes();
    let per_char = value.chars().count() <= PER_CHAR_MAX;
    let mut out: Vec<Form> = Vec::new();
    let mut push = |frags: Vec<Frag>, text: bool, always: bool| {
        let f = Form { frags, text };
        if (always || min_len(&f.frags) >= MIN_FORM_CHARS) && !out.contains(&f) {
            out.push(f);
        }
    };
    push(vec![lit(bytes)], true, true);
    // Per-character forms: every instance is at least as long as the value
    // (the raw value is one of them), so they are kept like the value.
    let json1: Vec<Vec<Vec<Frag>>> = value.chars().map(json_alts).collect();
    let json2: Vec<Vec<Vec<Frag>>> = json1
        .iter()
        .map(|alts| alts.iter().map(|a| json_escape_frags(a)).collect())
        .collect();
    for alts in [
        json1,
        json2,
        value.chars().map(percent_alts).collect(),
        value.chars().map(html_alts).collect(),
    ] {
        let frags: Vec<Frag> = alts.into_iter().map(Frag::Alt).collect();
        let frags = if per_char {
            frags
        } else {
            first_choice(&frags)
        };
        push(frags, true, true);
    }
    // Hex, any case.
    push(
        vec![Frag::AnyCase(hex::encode(bytes).into_bytes())],
        true,
        false,
    );
    // Base64, both alphabets: the whole value (padded and not), and the
    // characters that depend only on the value when it sits inside a longer
    // base64 value at each of the three byte alignments.
    for alphabet in [B64_STD, B64_URL] {
        let full = base64(&alphabet, bytes);
        let pad = "=".repeat((3 - bytes.len() % 3) % 3);
        push(vec![lit(format!("{full}{pad}"))], true, false);
        push(vec![lit(&full)], true, false);
        for k in 0..3usize {
            let mut shifted = vec![0u8; k];
            shifted.extend_from_slice(bytes);
            let enc = base64(&alphabet, &shifted);
            let start = (8 * k).div_ceil(6);
            let end = 8 * (k + bytes.len()) / 6;
            if end > start {
                push(vec![lit(&enc[start..end])], true, false);
            }
        }
    }
    // UTF-16, for binary artifacts.
    let le: Vec<u8> = value.encode_utf16().flat_map(u16::to_le_bytes).collect();
    let be: Vec<u8> = value.encode_utf16().flat_map(u16::to_be_bytes).collect();
    push(vec![Frag::Lit(le)], false, true);
    push(vec![Frag::Lit(be)], false, true);
    out
}

/// `\uXXXX` (a surrogate pair outside the BMP) for `c`.
fn json_u(c: char) -> Vec<Frag> {
    let mut units = [0u16; 2];
    let mut out = Vec::new();
    for u in c.encode_utf16(&mut units) {
        out.push(lit("\\u"));
        out.push(Frag::AnyCase(format!("{u:04X}").into_bytes()));
    }
    out
}

/// Ways a JSON string writes `c`: its short escape, itself (unless it must
/// be escaped), `\uXXXX`.
fn json_alts(c: char) -> Vec<Vec<Frag>> {
    let short = match c {
        '"' => Some("\\\""),
        '\\' => Some("\\\\"),
        '/' => Some("\\/"),
        '\u{8}' => Some("\\b"),
        '\u{c}' => Some("\\f"),
        '\n' => Some("\\n"),
        '\r' => Some("\\r"),
        '\t' => Some("\\t"),
        _ => None,
    };
    let mut alts = Vec::new();
    let must_escape = c == '"' || c == '\\' || (c as u32) < 0x20;
    if let Some(s) = short.filter(|_| must_escape) {
        alts.push(vec![lit(s)]);
    }
    if !must_escape {
        alts.push(raw_char(c));
    }
    if let Some(s) = short.filter(|_| !must_escape) {
        alts.push(vec![lit(s)]);
    }
    alts.push(json_u(c));
    alts
}

/// A fragment sequence as it reads after one more level of JSON string
/// escaping (JSON text inside a JSON string).
fn json_escape_frags(frags: &[Frag]) -> Vec<Frag> {
    frags
        .iter()
        .map(|f| match f {
            Frag::Lit(b) => {
                let s = String::from_utf8_lossy(b);
                let esc = serde_json::to_string(&*s).unwrap_or_default();
                lit(&esc.as_bytes()[1..esc.len() - 1])
            }
            Frag::AnyCase(b) => Frag::AnyCase(b.clone()),
            Frag::Alt(alts) => Frag::Alt(alts.iter().map(|a| json_escape_frags(a)).collect()),
        })
        .collect()
}

/// Ways a URL writes `c`: percent-encoded (either hex case), `+` for a
/// space, or as itself.
fn percent_alts(c: char) -> Vec<Vec<Frag>> {
    let mut enc = Vec::new();
    for b in c.encode_utf8(&mut [0u8; 4]).bytes() {
        enc.push(lit("%"));
        enc.push(Frag::AnyCase(format!("{b:02X}").into_bytes()));
    }
    let unreserved = c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_' | '~');
    if unreserved {
        vec![raw_char(c), enc]
    } else if c == ' ' {
        vec![enc, vec![lit("+")], raw_char(c)]
    } else {
        vec![enc, raw_char(c)]
    }
}

/// Ways HTML writes `c`: its named entity, itself, `&#NN;`, `&#xNN;`.
fn html_alts(c: char) -> Vec<Vec<Frag>> {
    let named: &[&str] = match c {
        '&' => &["&amp;"],
        '<' => &["&lt;"],
        '>' => &["&gt;"],
        '"' => &["&quot;"],
        '\'' => &["&#39;", "&apos;"],
        _ => &[],
    };
    let mut alts: Vec<Vec<Frag>> = named.iter().map(|n| vec![lit(n)]).collect();
    let (first_raw, last_raw) = if named.is_empty() {
        (Some(raw_char(c)), None)
    } else {
        (None, Some(raw_char(c)))
    };
    alts.extend(first_raw);
    alts.push(vec![lit(format!("&#{};", c as u32))]);
    alts.push(vec![
        lit("&#"),
        Frag::AnyCase(format!("x{:X}", c as u32).into_bytes()),
        lit(";"),
    ]);
    alts.extend(last_raw);
    alts
}

/// The canonical instance of a form as fragments without alternatives.
fn first_choice(frags: &[Frag]) -> Vec<Frag> {
    let mut out = Vec::new();
    for f in frags {
        match f {
            Frag::Alt(alts) => out.extend(first_choice(alts.first().map_or(&[][..], |a| a))),
            other => out.push(other.clone()),
        }
    }
    out
}

/// Length of the shortest text a form matches.
fn min_len(frags: &[Frag]) -> usize {
    frags
        .iter()
        .map(|f| match f {
            Frag::Lit(b) | Frag::AnyCase(b) => b.len(),
            Frag::Alt(alts) => alts.iter().map(|a| min_len(a)).min().unwrap_or(0),
        })
        .sum()
}

/// The concrete byte strings of a form without alternatives: `AnyCase`
/// fragments as upper and as lower case.
fn instances(frags: &[Frag]) -> Vec<Vec<u8>> {
    let mut upper = Vec::new();
    let mut lower = Vec::new();
    for f in frags {
        match f {
            Frag::Lit(b) => {
                upper.extend_from_slice(b);
                lower.extend_from_slice(b);
            }
            Frag::AnyCase(b) => {
                upper.extend(b.to_ascii_uppercase());
                lower.extend(b.to_ascii_lowercase());
            }
            Frag::Alt(_) => {}
        }
    }
    if upper == lower {
        vec![upper]
    } else {
        vec![upper, lower]
    }
}

/// The regex of a form, for strings (`bytes == false`) or for bytes with
/// Unicode off.
fn pattern(frags: &[Frag], bytes: bool, out: &mut String) {
    use std::fmt::Write as _;
    let byte = |b: u8, out: &mut String| {
        if bytes {
            let _ = write!(out, "\\x{b:02X}");
        } else {
            out.push_str(&regex::escape(&(b as char).to_string()));
        }
    };
    for f in frags {
        match f {
            Frag::Lit(b) if bytes => b.iter().for_each(|&x| byte(x, out)),
            Frag::Lit(b) => out.push_str(&regex::escape(&String::from_utf8_lossy(b))),
            Frag::AnyCase(b) => {
                for &x in b {
                    if x.is_ascii_alphabetic() {
                        out.push('[');
                        byte(x.to_ascii_lowercase(), out);
                        byte(x.to_ascii_uppercase(), out);
                        out.push(']');
                    } else {
                        byte(x, out);
                    }
                }
            }
            Frag::Alt(alts) => {
                out.push_str("(?:");
                for (i, a) in alts.iter().enumerate() {
                    if i > 0 {
                        out.push('|');
                    }
                    pattern(a, bytes, out);
                }
                out.push(')');
            }
        }
    }
}

/// One matcher for all forms, longest forms first so a match covers as much
/// as it can (leftmost-first alternation).
fn compile(forms: &[Form]) -> Matcher {
    let mut order: Vec<&Form> = forms.iter().collect();
    order.sort_by_key(|f| std::cmp::Reverse(min_len(&f.frags)));
    let join = |bytes: bool| {
        let mut p = String::new();
        for f in order.iter().filter(|f| bytes || f.text) {
            if !p.is_empty() {
                p.push('|');
            }
            pattern(&f.frags, bytes, &mut p);
        }
        p
    };
    let text = regex::RegexBuilder::new(&join(false))
        .size_limit(REGEX_SIZE_LIMIT)
        .build();
    let bytes = regex::bytes::RegexBuilder::new(&join(true))
        .unicode(false)
        .size_limit(REGEX_SIZE_LIMIT)
        .build();
    match (text, bytes) {
        (Ok(text), Ok(bytes)) => Matcher::Regex { text, bytes },
        _ => literals(&order),
    }
}

/// The fallback matcher: the canonical instances of the forms (longest first).
fn literals(order: &[&Form]) -> Matcher {
    let mut text = Vec::new();
    let mut bytes = Vec::new();
    for f in order {
        for inst in instances(&first_choice(&f.frags)) {
            if f.text {
                text.push(String::from_utf8_lossy(&inst).into_owned());
            }
            bytes.push(inst);
        }
    }
    Matcher::Literals { text, bytes }
}

/// The two base64 alphabets, without padding (padding is matched apart).
const B64_STD: base64::engine::GeneralPurpose = base64::engine::general_purpose::STANDARD_NO_PAD;
const B64_URL: base64::engine::GeneralPurpose = base64::engine::general_purpose::URL_SAFE_NO_PAD;

/// Base64 of `bytes` without padding.
fn base64(engine: &base64::engine::GeneralPurpose, bytes: &[u8]) -> String {
    use base64::Engine;
    engine.encode(bytes)
}

#[cfg(test)]
mod across_tests {
    use super::*;

    #[test]
    fn a_secret_split_across_texts_is_redacted_in_each_share() {
        let s = Secrets::new();
        s.add("hunter2-TOPSECRET-9876");
        let mut v = serde_json::json!({"nodes": [{"role": "paragraph", "children": [
            {"role": "StaticText", "name": "hunter2-TOP",
             "children": [{"role": "InlineTextBox", "name": "hunter2-TOP"}]},
            {"role": "StaticText", "name": "SECRET-9876"},
            {"role": "button", "name": "Save"}
        ]}]});
        assert!(s.redact_json_across(&mut v, &["name", "value"]) >= 3);
        let text = v.to_string();
        assert!(
            !text.contains("hunter2") && !text.contains("SECRET-9876"),
            "{text}"
        );
        assert!(
            text.contains("\"Save\"") && text.contains("StaticText"),
            "{text}"
        );
        // Partly shared texts keep what is not the secret.
        let (mut a, mut b) = (
            "Key: hunter2-TOP".to_string(),
            "SECRET-9876 (copy)".to_string(),
        );
        s.redact_across(&mut [&mut a, &mut b]);
        assert_eq!(
            (a.as_str(), b.as_str()),
            ("Key: [REDACTED]", "[REDACTED] (copy)")
        );
        // Nothing split: nothing changes.
        let (mut a, mut b) = ("hunter2".to_string(), "other".to_string());
        assert_eq!(s.redact_across(&mut [&mut a, &mut b]), 0);
    }
}

#[cfg(test)]
mod joined_and_clipped_tests {
    use super::*;

    const SECRET: &str = "hunter2-TOPSECRET-9876-abcdefghij";

    fn set() -> Secrets {
        let s = Secrets::new();
        s.add(SECRET);
        s
    }

    /// No 6 bytes or more of the secret's start are in `text`.
    #[track_caller]
    fn no_prefix(text: &str) {
        for n in 6..=SECRET.len() {
            assert!(!text.contains(&SECRET[..n]), "{n} bytes of it in {text:?}");
        }
    }

    #[test]
    fn a_secret_joined_from_pieces_with_whitespace_is_redacted() {
        let s = set();
        // Pieces joined with a space, a terminal line break, collapsed or
        // added whitespace.
        for text in [
            "Your key: hunter2-TOP SECRET-9876-abcdefghij.",
            "Your key: hunter2-TOP\nSECRET-9876-abcdefghij.",
            "Your key: hunter2-TOP \n  SECRET-9876 -abcdefghij.",
            "Your key: hunter2-TOP\u{a0}SECRET-9876-abcdefghij.",
        ] {
            let red = s.redact(text);
            assert_eq!(red, "Your key: [REDACTED].", "{text:?}");
            assert_eq!(s.find(text).len(), 1, "{text:?}");
        }
        // A secret with its own space, shown with the space collapsed or doubled.
        let t = Secrets::new();
        t.add("hunter2-TOP SECRET-9876");
        for text in [
            "hunter2-TOP SECRET-9876",
            "hunter2-TOP  SECRET-9876",
            "hunter2-TOPSECRET-9876",
        ] {
            assert_eq!(t.redact(&format!("k {text}!")), "k [REDACTED]!", "{text:?}");
        }
        // Across texts joined with nothing, one of them ending in a space.
        let (mut a, mut b) = (
            "Key: hunter2-TOP ".to_string(),
            "SECRET-9876-abcdefghij".to_string(),
        );
        assert_eq!(s.redact_across(&mut [&mut a, &mut b]), 2);
        no_prefix(&a);
        no_prefix(&b);
        // Whitespace alone does not match.
        assert_eq!(s.redact("hunter2 TOP"), "hunter2 TOP");
    }

    #[test]
    fn redact_then_clip_never_leaves_a_prefix() {
        let s = set();
        for fill in 150..200 {
            let text = format!("{}{SECRET} and more text after it", "f".repeat(fill));
            let out = s.redact_then_clip(&text, 200);
            no_prefix(&out);
            assert!(
                out.ends_with(CLIP_MARK) || out.ends_with("after it"),
                "{out}"
            );
            assert!(out.len() <= 200 + REDACTED.len() + CLIP_MARK.len(), "{out}");
            assert!(!out.contains("[REDAC…"), "{out}");
        }
        // The text straddling the cut is the secret: replaced whole.
        let text = format!("{}{SECRET} tail", "x".repeat(190));
        assert_eq!(
            s.redact_then_clip(&text, 200),
            format!("{}{REDACTED}…", "x".repeat(190))
        );
        // Only the start of the secret is in the text (its end is elsewhere):
        // the clip goes before it.
        let text = format!("{}{}", "y".repeat(190), &SECRET[..19]);
        assert!(text.len() > 200 || s.redact_then_clip(&text, 200) == text);
        let long = format!("{}{} {}", "y".repeat(180), &SECRET[..19], "z".repeat(50));
        let out = s.redact_then_clip(&long, 195);
        no_prefix(&out);
        assert_eq!(out, format!("{}{REDACTED}…", "y".repeat(180)));
        // A short text is only redacted; an ordinary long one is cut.
        assert_eq!(s.redact_then_clip("short", 200), "short");
        assert_eq!(s.redact_then_clip("abcdef", 3), "abc…");
        assert_eq!(s.redact_then_clip("ää", 3), "ä…");
    }

    #[test]
    fn a_clip_made_before_redaction_loses_the_start_it_left() {
        let s = set();
        // Clipped to 200 bytes elsewhere (the page, another driver), then redacted.
        let clipped = format!("{}{}…", "f".repeat(181), &SECRET[..19]);
        let red = s.redact(&clipped);
        no_prefix(&red);
        assert_eq!(red, format!("{}{REDACTED}…", "f".repeat(181)));
        // With whitespace in it, too.
        let red = s.redact("key: hunter2-TOP SECR…");
        assert_eq!(red, "key: [REDACTED]…");
        // Text without a clip mark, or a start shorter than 4 bytes, stays.
        assert_eq!(s.redact("ends in hunter2-TO"), "ends in hunter2-TO");
        assert_eq!(s.redact("ends in hun…"), "ends in hun…");
        assert_eq!(s.redact("Loading…"), "Loading…");
        // In JSON values too.
        let mut v = serde_json::json!({"name": clipped});
        s.redact_json_values(&mut v);
        no_prefix(&v.to_string());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redacts_strings_and_json() {
        let s = Secrets::new();
        s.add("hunter22");
        s.add("abc"); // too short, ignored
        assert_eq!(s.redact("pw=hunter22!"), "pw=[REDACTED]!");
        assert_eq!(s.redact("abc"), "abc");
        let mut j = serde_json::json!({"a": ["x hunter22"], "hunter22": 1});
        s.redact_json(&mut j);
        assert_eq!(
            j,
            serde_json::json!({"a": ["x [REDACTED]"], "[REDACTED]": 1})
        );
        assert!(s.found_in(b"....hunter22...."));
        assert!(!s.found_in(b"nothing here"));
    }

    /// A secret with every kind of character an encoder treats specially:
    /// `/` `+` (base64 and URL), a non-ASCII letter, `"` `<` `&` `>` `'`.
    const S: &str = "pa/ss+wörd\"<&>'Xy";

    fn set(v: &str) -> Secrets {
        let s = Secrets::new();
        s.add(v);
        s
    }

    /// `encoded` (one encoding of the secret, embedded in text) is redacted
    /// from strings and found in artifact bytes. Expected encodings were
    /// produced independently (Python's base64, urllib, json, html).
    #[track_caller]
    fn caught(s: &Secrets, encoded: &str) {
        let line = format!("before {encoded} after");
        let red = s.redact(&line);
        assert!(
            !red.contains(encoded),
            "{encoded:?} survived redaction: {red:?}"
        );
        assert!(red.contains(REDACTED), "{red:?}");
        assert!(red.starts_with("before "), "{red:?}");
        assert!(
            s.found_in(line.as_bytes()),
            "{encoded:?} not found in an artifact"
        );
        let mut j = serde_json::json!({ "reason": line, "k": [line] });
        s.redact_json(&mut j);
        assert!(!j.to_string().contains(encoded), "{j}");
    }

    #[test]
    fn base64_standard_and_url_with_and_without_padding() {
        let s = set(S);
        caught(&s, "cGEvc3Mrd8O2cmQiPCY+J1h5");
        caught(&s, "cGEvc3Mrd8O2cmQiPCY-J1h5");
        let p = set("hunter22");
        caught(&p, "aHVudGVyMjI=");
        caught(&p, "aHVudGVyMjI");
        assert_eq!(p.redact("x aHVudGVyMjI= y"), "x [REDACTED] y");
    }

    #[test]
    fn base64_of_a_secret_inside_a_longer_value_at_every_alignment() {
        let s = set(S);
        // base64(prefix + secret + tail) for prefixes of length 0, 1, 2 (mod 3).
        for blob in [
            "cGEvc3Mrd8O2cmQiPCY+J1h5IXRhaWw=",
            "dXBhL3NzK3fDtnJkIjwmPidYeSF0YWls",
            "dXNwYS9zcyt3w7ZyZCI8Jj4nWHkhdGFpbA==",
            "dXBhL3NzK3fDtnJkIjwmPidYeT8-",
            "dXNwYS9zcyt3w7ZyZCI8Jj4nWHk_Pg==",
        ] {
            assert!(s.found_in(blob.as_bytes()), "{blob}");
            let red = s.redact(blob);
            assert!(red.contains(REDACTED), "{blob}: {red}");
        }
        // HTTP Basic credentials and base64("Basic user:" + secret).
        caught(&s, "dXNlcjpwYS9zcyt3w7ZyZCI8Jj4nWHk=");
        let h = s.redact("Authorization: Basic dXNlcjpwYS9zcyt3w7ZyZCI8Jj4nWHk=");
        assert!(
            !h.contains("cGEvc3Mrd8O2") && !h.contains("wYS9zcyt3w7ZyZCI8Jj4nWHk"),
            "{h}"
        );
        let b = "QmFzaWMgdXNlcjpwYS9zcyt3w7ZyZCI8Jj4nWHk=";
        assert!(s.found_in(b.as_bytes()));
        assert!(
            !s.redact(b).contains("cyt3w7ZyZCI8Jj4nWH"),
            "{}",
            s.redact(b)
        );
    }

    #[test]
    fn url_encoding_upper_lower_and_form() {
        let s = set(S);
        caught(&s, "pa%2Fss%2Bw%C3%B6rd%22%3C%26%3E%27Xy");
        caught(&s, "pa%2fss%2bw%c3%b6rd%22%3c%26%3e%27Xy");
        // encodeURIComponent leaves ' unencoded; a path segment leaves / alone.
        caught(&s, "pa%2Fss%2Bw%C3%B6rd%22%3C%26%3E'Xy");
        caught(&s, "pa/ss%2Bw%C3%B6rd%22%3C%26%3E%27Xy");
        let f = set("my secret/val");
        caught(&f, "my+secret%2Fval");
        caught(&f, "my%20secret%2Fval");
    }

    #[test]
    fn hex_lower_and_upper() {
        let s = set(S);
        caught(&s, "70612f73732b77c3b67264223c263e275879");
        caught(&s, "70612F73732B77C3B67264223C263E275879");
        caught(&set("abcd"), "61626364");
    }

    #[test]
    fn json_string_escapes() {
        let s = set(S);
        // ensure_ascii (\u00f6) and raw UTF-8, both with \" escaped.
        caught(&s, r#"pa/ss+w\u00f6rd\"<&>'Xy"#);
        caught(&s, r#"pa/ss+w\u00F6rd\"<&>'Xy"#);
        caught(&s, r#"pa/ss+wörd\"<&>'Xy"#);
        // PHP escapes slashes; JSON inside a JSON string doubles the escapes.
        caught(&s, r#"pa\/ss+w\u00f6rd\"<&>'Xy"#);
        caught(&s, r#"pa/ss+wörd\\\"<&>'Xy"#);
        // A character outside the BMP is a surrogate pair.
        caught(&set("tök🔑en42"), r#"t\u00f6k\ud83d\udd11en42"#);
    }

    #[test]
    fn html_escapes_named_and_numeric() {
        let s = set(S);
        caught(&s, "pa/ss+wörd&quot;&lt;&amp;&gt;&#x27;Xy");
        caught(&s, "pa/ss+wörd&quot;&lt;&amp;&gt;&#39;Xy");
        caught(&s, "pa/ss+wörd&quot;&lt;&amp;&gt;&apos;Xy");
        caught(&s, "pa/ss+w&#246;rd&#34;&#60;&#38;&#62;&#39;Xy");
        caught(
            &set("tök🔑en42"),
            "&#116;&#246;&#107;&#128273;&#101;&#110;&#52;&#50;",
        );
    }

    #[test]
    fn utf16_in_binary_artifacts() {
        let s = set(S);
        let le: Vec<u8> = S.encode_utf16().flat_map(u16::to_le_bytes).collect();
        let be: Vec<u8> = S.encode_utf16().flat_map(u16::to_be_bytes).collect();
        for enc in [le, be] {
            let mut file = b"\x89PNG\x00\x01junk".to_vec();
            file.extend_from_slice(&enc);
            file.extend_from_slice(b"\x00\xfftrailer");
            assert!(s.found_in(&file));
        }
    }

    #[test]
    fn ordinary_text_and_short_variants_are_left_alone() {
        let s = set("abcd");
        // base64 of a 4-byte value shifted by 1 or 2 bytes leaves fewer than
        // 6 characters that depend only on it: those are not redacted.
        let text = "YWJj ZGVm 616263 the quick brown fox %61b";
        assert_eq!(s.redact(text), text);
        assert!(!s.found_in(text.as_bytes()));
        let t = set("hunter22");
        // (`hunter 22` is redacted: whitespace between a secret's characters
        // may have been inserted by a join.)
        let ordinary = "hunter2 aHVudGVy hunter-22 68756e746572 hunter 2";
        assert_eq!(t.redact(ordinary), ordinary);
        assert!(!t.found_in(ordinary.as_bytes()));
    }

    #[test]
    fn find_reports_merged_ranges_of_every_form() {
        let s = set("hunter22");
        s.add("token-9876");
        let text = "a hunter22 b aHVudGVyMjI= c 68756E7465723232 d token-9876";
        let found: Vec<&str> = s.find(text).into_iter().map(|r| &text[r]).collect();
        assert_eq!(
            found,
            ["hunter22", "aHVudGVyMjI=", "68756E7465723232", "token-9876"]
        );
        assert!(s.find("nothing here").is_empty());
        assert!(Secrets::new().find(text).is_empty());
    }

    #[test]
    fn long_values_use_the_canonical_encodings() {
        let v: String = (0..400)
            .map(|i| char::from(b'a' + (i % 26) as u8))
            .collect::<String>()
            + "/ö\"";
        let s = set(&v);
        let b64 = base64(&B64_STD, v.as_bytes());
        caught(&s, &b64);
        caught(&s, &hex::encode(v.as_bytes()));
        caught(&s, &serde_json::to_string(&v).unwrap()[1..]);
        let pct: String = v
            .bytes()
            .map(|b| {
                if b.is_ascii_alphanumeric() {
                    (b as char).to_string()
                } else {
                    format!("%{b:02X}")
                }
            })
            .collect();
        caught(&s, &pct);
    }

    #[test]
    fn the_literal_fallback_catches_the_canonical_forms() {
        let forms = forms_of(S);
        let order: Vec<&Form> = forms.iter().collect();
        let m = literals(&order);
        for enc in [
            S,
            "cGEvc3Mrd8O2cmQiPCY+J1h5",
            "70612f73732b77c3b67264223c263e275879",
            "70612F73732B77C3B67264223C263E275879",
            "pa%2Fss%2Bw%C3%B6rd%22%3C%26%3E%27Xy",
            "pa/ss+wörd&quot;&lt;&amp;&gt;&#39;Xy",
        ] {
            let line = format!("x {enc} y");
            assert!(m.found_in(line.as_bytes()), "{enc}");
            assert_eq!(m.redact(&line), "x [REDACTED] y", "{enc}");
        }
    }

    #[test]
    fn many_and_long_values_scan_in_linear_time() {
        let s = Secrets::new();
        for i in 0..10 {
            s.add(&format!("sekr3t-{i}-pa/ss+wörd\"<&>'Xy-{i}"));
        }
        s.add(&"k".repeat(4000));
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let data: Vec<u8> = (0..4 << 20)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect();
        let t = std::time::Instant::now();
        assert!(!s.found_in(&data));
        // Generous: a single automaton over every form took minutes here.
        assert!(
            t.elapsed() < std::time::Duration::from_secs(10),
            "{:?}",
            t.elapsed()
        );
    }
}

#[cfg(test)]
mod scope_tests {
    use super::*;

    #[test]
    fn a_fork_is_its_own_set() {
        let base = Secrets::new();
        base.add_from("base-value-1", "UI_QA_SECRET_A");
        let run = base.fork();
        run.add("profile-value-2");
        assert_eq!(
            run.redact("base-value-1 profile-value-2"),
            "[REDACTED] [REDACTED]"
        );
        // The base, and another run's fork, never see what one run added.
        assert_eq!(base.redact("profile-value-2"), "profile-value-2");
        assert_eq!(base.fork().redact("profile-value-2"), "profile-value-2");
        // A set over many runs takes them all.
        let all = base.fork();
        all.absorb(&run);
        all.absorb(&all);
        assert_eq!(all.len(), 2);
        assert_eq!(all.redact("profile-value-2"), "[REDACTED]");
    }

    #[test]
    fn a_common_value_is_named_by_its_source_never_shown() {
        let s = Secrets::new();
        s.add_from("auto", "UI_QA_SECRET_T");
        s.add_from("123456", "--secret-env PIN");
        s.add("Pw-Tr0ub4dor-9xQ");
        s.add("password");
        let weak = s.weak();
        assert_eq!(weak.len(), 2, "{weak:?}");
        assert!(weak
            .iter()
            .any(|w| w.contains("UI_QA_SECRET_T") && w.contains("only letters")));
        assert!(weak
            .iter()
            .any(|w| w.contains("PIN") && w.contains("only digits")));
        for w in &weak {
            assert!(!w.contains("auto") && !w.contains("123456"), "{w}");
        }
        assert!(Secrets::weakness("ab").is_some());
        assert!(
            Secrets::weakness("hunter2").is_none(),
            "letters and a digit"
        );
        assert!(Secrets::weakness("password").is_none(), "8 bytes");
    }
}
