//! JSONC → validated [`Flow`], with JSON pointers and line/column for every error.

use super::error::{escape_token, FlowError, FlowErrorCode};
use super::steps::{Action, BrowserAction, DesktopAction, TerminalAction};
use super::target::{Environment, RawTarget, TargetKind, Viewport};
use super::validate::{validate_target, validate_viewport};
use super::{Flow, Step, DEFAULT_MAX_STEPS, MAX_FLOW_BYTES};
use serde::Deserialize;
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::collections::HashMap;
use std::path::Path;

/// Limits applied while parsing.
#[derive(Debug, Clone)]
pub struct ParseLimits {
    /// Maximum number of steps (default 100).
    pub max_steps: usize,
    /// Maximum size of the flow text in bytes (default 16 MiB).
    pub max_bytes: usize,
    /// Maximum length of any single string value in bytes (default 1 MiB).
    pub max_string_bytes: usize,
}

impl Default for ParseLimits {
    fn default() -> Self {
        ParseLimits {
            max_steps: DEFAULT_MAX_STEPS,
            max_bytes: MAX_FLOW_BYTES,
            max_string_bytes: 1024 * 1024,
        }
    }
}

/// Byte offsets of every value (and property name) in the source text, by pointer.
struct Positions<'t> {
    text: &'t str,
    values: HashMap<String, usize>,
    keys: HashMap<String, usize>,
}

impl Positions<'_> {
    fn locate(&self, err: FlowError) -> FlowError {
        // Walk up the pointer until a known position is found.
        let mut p = err.pointer.clone();
        // Errors about a key (rather than its value) point at the key.
        let about_key = err.code == FlowErrorCode::UnknownField.as_str()
            || err.code == FlowErrorCode::DuplicateKey.as_str()
            || err.code == FlowErrorCode::UnsupportedLocator.as_str()
            || (err.code == FlowErrorCode::NulCharacter.as_str()
                && p.rsplit('/').next().is_some_and(|t| t.contains('\0')));
        if about_key {
            if let Some(&off) = self.keys.get(&p) {
                return err.at_offset(self.text.as_bytes(), off);
            }
        }
        loop {
            if let Some(&off) = self.values.get(&p) {
                return err.at_offset(self.text.as_bytes(), off);
            }
            match p.rfind('/') {
                Some(i) => p.truncate(i),
                None => return err,
            }
        }
    }
}

/// The 1-based line of each of the first `count` steps of the flow text
/// `source` (`None` where it cannot be found, or when `source` does not
/// parse).
pub fn step_lines(source: &str, count: usize) -> Vec<Option<usize>> {
    let Ok((_, positions)) = to_value(source) else {
        return vec![None; count];
    };
    (0..count)
        .map(|i| {
            positions.values.get(&format!("/steps/{i}")).map(|&off| {
                1 + source.as_bytes()[..off.min(source.len())]
                    .iter()
                    .filter(|&&b| b == b'\n')
                    .count()
            })
        })
        .collect()
}

impl FlowError {
    /// Gives an error that has no position yet (for example one found by
    /// driver admission after parsing) the line/column of its pointer in
    /// `source`, the flow text it was parsed from. An error that already has
    /// a position, or a source that does not parse, is returned unchanged.
    pub fn with_position(self, source: &str) -> FlowError {
        if self.line.is_some() {
            return self;
        }
        match to_value(source) {
            Ok((_, positions)) => positions.locate(self),
            Err(_) => self,
        }
    }
}

fn too_large(bytes: &[u8], size: Option<u64>, limit: usize) -> FlowError {
    let size = match size {
        Some(n) => format!("{n} bytes"),
        None => format!("more than {limit} bytes"),
    };
    FlowError::new(
        FlowErrorCode::TooLarge,
        "",
        format!("the flow is {size}; the limit is {limit} bytes (the position is the first byte past the limit); split the flow"),
    )
    .at_offset(bytes, limit)
}

/// Reads a flow file (at most one byte past the size limit, whatever the
/// file claims its size is) and parses it; returns the text too.
pub(crate) fn load_flow(path: &Path, limits: &ParseLimits) -> Result<(Flow, String), FlowError> {
    load_flow_all(path, limits, &super::vars::Vars::new()).map_err(first)
}

/// The first of a non-empty list of errors.
fn first(mut v: Vec<FlowError>) -> FlowError {
    v.swap_remove(0)
}

/// Errors a flow reports at most in one check.
pub const MAX_REPORTED_ERRORS: usize = 20;

/// Like [`load_flow`], with every step's error (at most
/// [`MAX_REPORTED_ERRORS`]) rather than the first.
pub(crate) fn load_flow_all(
    path: &Path,
    limits: &ParseLimits,
    given: &super::vars::Vars,
) -> Result<(Flow, String), Vec<FlowError>> {
    let (text, base) = read_flow(path, limits).map_err(|e| vec![e])?;
    let flow = parse_flow_all(&text, &base, limits, given)?;
    Ok((flow, text))
}

/// Reads a flow file and parses it, keeping the flow of the steps that
/// parsed when some did not (for `check`), and the text when it was read.
pub(crate) fn load_flow_checked(
    path: &Path,
    limits: &ParseLimits,
    given: &super::vars::Vars,
) -> (Result<Flow, Failed>, Option<String>) {
    match read_flow(path, limits) {
        Ok((text, base)) => (parse_flow_checked(&text, &base, limits, given), Some(text)),
        Err(e) => (Err(Failed::from(vec![e])), None),
    }
}

/// What kind of file `meta` describes, for an error.
fn file_kind(meta: &std::fs::Metadata) -> &'static str {
    let t = meta.file_type();
    if t.is_dir() {
        return "a directory";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return "a FIFO";
        }
        if t.is_socket() {
            return "a socket";
        }
        if t.is_block_device() || t.is_char_device() {
            return "a device";
        }
    }
    "not a regular file"
}

/// The text of a flow file (at most one byte past the size bound is read)
/// and the directory its relative paths resolve against.
fn read_flow(path: &Path, limits: &ParseLimits) -> Result<(String, std::path::PathBuf), FlowError> {
    use std::io::Read;
    let io_err = |e: std::io::Error| {
        FlowError::new(
            FlowErrorCode::Io,
            "",
            format!("cannot read {}: {e}", path.display()),
        )
    };
    // Opened without blocking (a FIFO would wait for a writer forever),
    // then refused unless it is a regular file.
    let mut open = std::fs::OpenOptions::new();
    open.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        open.custom_flags(libc::O_NONBLOCK);
    }
    let file = open.open(path).map_err(io_err)?;
    let meta = file.metadata().map_err(io_err)?;
    if !meta.is_file() {
        return Err(FlowError::new(
            FlowErrorCode::NotAFile,
            "",
            format!(
                "{} is not a regular file ({}); a flow is a .jsonc or .json file",
                path.display(),
                file_kind(&meta)
            ),
        ));
    }
    let size = Some(meta.len());
    let mut bytes = Vec::new();
    file.take(limits.max_bytes as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(io_err)?;
    if bytes.len() > limits.max_bytes {
        let size = size.filter(|&n| n > limits.max_bytes as u64);
        return Err(too_large(&bytes, size, limits.max_bytes));
    }
    let text = String::from_utf8(bytes).map_err(|e| {
        let bad = e.utf8_error().valid_up_to();
        let bytes = e.as_bytes();
        FlowError::new(
            FlowErrorCode::Syntax,
            "",
            format!(
                "not valid UTF-8 (byte 0x{:02X}); save the flow as UTF-8",
                bytes[bad]
            ),
        )
        .at_offset(bytes, bad)
    })?;
    let base = path
        .canonicalize()
        .ok()
        .and_then(|p| p.parent().map(Path::to_path_buf))
        .unwrap_or_else(|| Path::new(".").to_path_buf());
    Ok((text, base))
}

pub(crate) fn parse_flow(
    text: &str,
    base_dir: &Path,
    limits: &ParseLimits,
) -> Result<Flow, FlowError> {
    if text.len() > limits.max_bytes {
        return Err(too_large(
            text.as_bytes(),
            Some(text.len() as u64),
            limits.max_bytes,
        ));
    }
    parse_flow_all(text, base_dir, limits, &super::vars::Vars::new()).map_err(first)
}

/// Like [`parse_flow`], with every step's error (at most
/// [`MAX_REPORTED_ERRORS`]), each placed in the text.
pub(crate) fn parse_flow_all(
    text: &str,
    base_dir: &Path,
    limits: &ParseLimits,
    given: &super::vars::Vars,
) -> Result<Flow, Vec<FlowError>> {
    parse_flow_checked(text, base_dir, limits, given).map_err(|f| f.errors)
}

/// Like [`parse_flow_all`], keeping the flow of the steps that parsed.
pub(crate) fn parse_flow_checked(
    text: &str,
    base_dir: &Path,
    limits: &ParseLimits,
    given: &super::vars::Vars,
) -> Result<Flow, Failed> {
    if text.len() > limits.max_bytes {
        return Err(Failed::from(vec![too_large(
            text.as_bytes(),
            Some(text.len() as u64),
            limits.max_bytes,
        )]));
    }
    let (value, positions) = to_value(text).map_err(|e| Failed::from(vec![e]))?;
    let mut value = value;
    super::vars::substitute(&mut value, given).map_err(|v| {
        Failed::from(
            v.into_iter()
                .map(|e| positions.locate(e))
                .collect::<Vec<_>>(),
        )
    })?;
    let used = std::cell::RefCell::new(Vec::new());
    super::vars::substitute_secrets(&mut value, |name| {
        let v = secret_from_env(name);
        used.borrow_mut().extend(v.clone());
        v
    })
    .map_err(|v| {
        Failed::from(
            v.into_iter()
                .map(|e| positions.locate(e))
                .collect::<Vec<_>>(),
        )
    })?;
    let used = used.into_inner();
    from_value(value, base_dir, limits).map_err(|f| Failed {
        errors: redact_errors(f.errors, &used)
            .into_iter()
            .map(|e| positions.locate(e))
            .collect(),
        partial: f.partial,
    })
}

/// The value of `${secret.NAME}` when a flow is parsed: the environment
/// variable `UI_QA_SECRET_NAME`. Every such variable is a secret of the run
/// already ([`Secrets::from_env`](crate::secrets::Secrets::from_env)), so
/// the value is redacted from every file and output without registering it
/// here.
fn secret_from_env(name: &str) -> Option<String> {
    std::env::var(format!("{}{name}", crate::secrets::SECRET_ENV_PREFIX)).ok()
}

/// `errors` with the secrets' values `used` in the flow redacted from their
/// messages (a message may quote a string a secret was put in, such as a URL
/// that does not parse).
fn redact_errors(mut errors: Vec<FlowError>, used: &[String]) -> Vec<FlowError> {
    if used.is_empty() || errors.is_empty() {
        return errors;
    }
    let secrets = crate::secrets::Secrets::new();
    for v in used {
        secrets.add(v);
    }
    for e in &mut errors {
        if let std::borrow::Cow::Owned(m) = secrets.redact(&e.message) {
            e.message = m;
        }
    }
    errors
}

/// The only extensions to JSON (RFC 8259) a flow may use: comments and
/// trailing commas. Every option is spelled out so that a new leniency in a
/// future jsonc-parser cannot slip in through `Default`.
const JSONC: jsonc_parser::ParseOptions = jsonc_parser::ParseOptions {
    allow_comments: true,
    allow_trailing_commas: true,
    allow_loose_object_property_names: false,
    allow_missing_commas: false,
    allow_single_quoted_strings: false,
    allow_hexadecimal_numbers: false,
    allow_unary_plus_numbers: false,
    allow_bare_decimal_point_numbers: false,
    allow_non_finite_numbers: false,
    allow_extended_string_escapes: false,
};

/// What JSON forbids, jsonc-parser accepts, and no option turns off: raw
/// U+0000..=U+001F inside strings, and whitespace other than space, tab, LF
/// and CR between tokens (vertical tab, form feed, no-break space, the
/// Unicode line separators, ...). Returns the byte offset and a message.
/// Comments may contain anything; an unterminated string or comment is left
/// to the parser.
fn strict_json_violation(text: &str) -> Option<(usize, String)> {
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'"' => {
                i += 1;
                loop {
                    match b.get(i) {
                        None => return None,
                        Some(b'"') => break,
                        // Skip the escaped character; bytes of a multi-byte
                        // character are all >= 0x80 and cannot end the string.
                        Some(b'\\') => i += 2,
                        Some(&c) if c < 0x20 => {
                            return Some((
                                i,
                                format!(
                                    "raw control character U+{:04X} inside a string; write it as \\u{:04x} (or \\n, \\t)",
                                    c, c
                                ),
                            ))
                        }
                        Some(_) => i += 1,
                    }
                }
                i += 1;
            }
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' && b[i] != b'\r' {
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'*') => match text[i + 2..].find("*/") {
                Some(end) => i += 2 + end + 2,
                None => return None,
            },
            b' ' | b'\t' | b'\n' | b'\r' => i += 1,
            c if c < 0x20 || c == 0x7F => {
                return Some((
                    i,
                    format!("raw control character U+{c:04X} outside a string"),
                ))
            }
            c if c >= 0x80 => {
                let ch = text[i..].chars().next().unwrap_or('\u{FFFD}');
                if ch.is_whitespace() {
                    return Some((
                        i,
                        format!(
                            "U+{:04X} is not JSON whitespace; use spaces, tabs and newlines",
                            ch as u32
                        ),
                    ));
                }
                // Not whitespace: the parser reports it as an unexpected token.
                i += ch.len_utf8();
            }
            _ => i += 1,
        }
    }
    None
}

/// Parses JSONC text (the flow's dialect: comments, trailing commas, no
/// duplicate keys) into a value; syntax errors carry line and column. For
/// ui-qa's other JSONC documents (the auth file).
pub fn jsonc_value(text: &str) -> Result<Value, FlowError> {
    to_value(text).map(|(v, _)| v)
}

fn to_value(text: &str) -> Result<(Value, Positions<'_>), FlowError> {
    let syntax = |offset: usize, message: String| {
        FlowError::new(FlowErrorCode::Syntax, "", message).at_offset(text.as_bytes(), offset)
    };
    let violation = strict_json_violation(text);
    let parsed = match jsonc_parser::parse_to_ast(text, &Default::default(), &JSONC) {
        Ok(p) => p,
        Err(e) => {
            // Report whichever problem comes first in the text.
            let (off, msg) = match violation {
                Some((off, msg)) if off <= e.range().start => (off, msg),
                _ => (e.range().start, format!("not valid JSONC: {}", e.kind())),
            };
            return Err(syntax(off, msg));
        }
    };
    if let Some((off, msg)) = violation {
        return Err(syntax(off, msg));
    }
    let Some(root) = parsed.value else {
        return Err(syntax(0, "the flow is empty".to_string()));
    };
    let mut positions = Positions {
        text,
        values: HashMap::new(),
        keys: HashMap::new(),
    };
    let v = convert(&root, String::new(), &mut positions)?;
    Ok((v, positions))
}

fn convert(
    node: &jsonc_parser::ast::Value<'_>,
    ptr: String,
    pos: &mut Positions<'_>,
) -> Result<Value, FlowError> {
    use jsonc_parser::ast::{ObjectPropName, Value as A};
    use jsonc_parser::common::Ranged;
    pos.values.insert(ptr.clone(), node.range().start);
    Ok(match node {
        A::StringLit(s) => Value::String(s.value.to_string()),
        A::NumberLit(n) => {
            let v: Value = serde_json::from_str(n.value).map_err(|_| {
                pos.locate(FlowError::new(
                    FlowErrorCode::Syntax,
                    ptr.clone(),
                    format!("not a JSON number: {}", n.value),
                ))
            })?;
            v
        }
        A::BooleanLit(b) => Value::Bool(b.value),
        A::NullKeyword(_) => Value::Null,
        A::Array(a) => {
            let mut out = Vec::with_capacity(a.elements.len());
            for (i, el) in a.elements.iter().enumerate() {
                out.push(convert(el, format!("{ptr}/{i}"), pos)?);
            }
            Value::Array(out)
        }
        A::Object(o) => {
            let mut out = Map::new();
            for prop in &o.properties {
                let key = match &prop.name {
                    ObjectPropName::String(s) => s.value.to_string(),
                    ObjectPropName::Word(w) => w.value.to_string(),
                };
                let child = format!("{ptr}/{}", escape_token(&key));
                pos.keys.insert(child.clone(), prop.range.start);
                if out.contains_key(&key) {
                    return Err(pos.locate(FlowError::new(
                        FlowErrorCode::DuplicateKey,
                        child,
                        format!("duplicate key {key:?}; keep one"),
                    )));
                }
                let v = convert(&prop.value, child, pos)?;
                out.insert(key, v);
            }
            Value::Object(out)
        }
    })
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct RawFlow {
    #[serde(rename = "$schema")]
    #[allow(dead_code)]
    schema: Option<String>,
    version: Option<u32>,
    name: Option<String>,
    target: RawTarget,
    viewport: Option<Viewport>,
    environment: Option<Environment>,
    evidence: Option<crate::recording::EvidenceSettings>,
    timeout_ms: Option<u64>,
    step_timeout_ms: Option<u64>,
    assert_timeout_ms: Option<u64>,
    /// Defaults of `${var.NAME}` (already substituted).
    #[allow(dead_code)]
    vars: Option<BTreeMap<String, String>>,
    steps: Vec<Value>,
}

/// Deserializes `value` (found at `at`) into `T`, turning serde errors into
/// flow errors with the exact pointer.
pub fn de_at<T: serde::de::DeserializeOwned>(value: Value, at: &str) -> Result<T, FlowError> {
    serde_path_to_error::deserialize(value).map_err(|e| serde_error(e, at))
}

fn serde_error(e: serde_path_to_error::Error<serde_json::Error>, at: &str) -> FlowError {
    let mut ptr = at.to_string();
    for seg in e.path().iter() {
        use serde_path_to_error::Segment;
        match seg {
            Segment::Seq { index } => ptr.push_str(&format!("/{index}")),
            Segment::Map { key } => ptr.push_str(&format!("/{}", escape_token(key))),
            Segment::Enum { variant } => ptr.push_str(&format!("/{}", escape_token(variant))),
            Segment::Unknown => {}
        }
    }
    // The pointer is the path alone: for an unknown field, serde_path_to_error
    // records the offending key as the last segment, whatever its text.
    let inner = e.inner();
    let mut msg = inner.to_string();
    if inner.line() != 0 {
        // Errors from a `Value` carry no position; strip one if present.
        let suffix = format!(" at line {} column {}", inner.line(), inner.column());
        if let Some(stripped) = msg.strip_suffix(&suffix) {
            msg = stripped.to_string();
        }
    }
    let code = if msg.starts_with(super::matcher::INVALID_REGEX) {
        FlowErrorCode::InvalidRegex
    } else if let Some(rest) = msg.strip_prefix(crate::keys::INVALID_KEY) {
        // The driver-independent message names the key problem alone.
        msg = rest.trim_start_matches(": ").to_string();
        FlowErrorCode::InvalidKey
    } else if msg.starts_with("unknown field") {
        FlowErrorCode::UnknownField
    } else if msg.starts_with("missing field") {
        FlowErrorCode::MissingField
    } else if (msg.starts_with("invalid value") && msg.contains("integer"))
        || msg.starts_with("unknown variant")
    {
        FlowErrorCode::OutOfRange
    } else {
        FlowErrorCode::WrongType
    };
    if code == FlowErrorCode::MissingField && ptr.is_empty() && msg == "missing field `target`" {
        msg = format!(
            "missing field `target`: add a target with {}",
            super::validate::TARGET_KINDS
        );
    }
    if code == FlowErrorCode::WrongType
        && ptr.ends_with("/argv")
        && msg.starts_with("invalid type: string")
    {
        msg = "argv is a list, not a command line: the program and each argument as its own string, e.g. [\"bc\", \"-q\"] (no shell; for one, use [\"sh\", \"-c\", \"…\"])".into();
    }
    FlowError::new(code, ptr, msg)
}

fn check_strings(v: &Value, ptr: &str, max: usize) -> Result<(), FlowError> {
    match v {
        Value::String(s) if s.len() > max => Err(FlowError::new(
            FlowErrorCode::OutOfRange,
            ptr,
            format!("string is {} bytes; the limit is {max}", s.len()),
        )),
        Value::Array(a) => a
            .iter()
            .enumerate()
            .try_for_each(|(i, x)| check_strings(x, &format!("{ptr}/{i}"), max)),
        Value::Object(o) => o
            .iter()
            .try_for_each(|(k, x)| check_strings(x, &format!("{ptr}/{}", escape_token(k)), max)),
        _ => Ok(()),
    }
}

fn from_value(value: Value, base_dir: &Path, limits: &ParseLimits) -> Result<Flow, Failed> {
    if !value.is_object() {
        return Err(Failed::from(vec![FlowError::new(
            FlowErrorCode::WrongType,
            "",
            "a flow is a JSON object with target and steps",
        )]));
    }
    check_strings(&value, "", limits.max_string_bytes).map_err(|e| vec![e])?;
    let raw: RawFlow = de_at(value, "").map_err(|e| vec![e])?;
    if let Some(v) = raw.version {
        if v != 1 {
            return Err(Failed::from(vec![FlowError::new(
                FlowErrorCode::OutOfRange,
                "/version",
                format!("version {v} is not supported; use 1"),
            )]));
        }
    }
    if let Some(t) = raw.timeout_ms {
        if !(1..=3_600_000).contains(&t) {
            return Err(Failed::from(vec![FlowError::new(
                FlowErrorCode::OutOfRange,
                "/timeoutMs",
                "timeoutMs must be 1..=3600000",
            )]));
        }
    }
    for (v, field) in [
        (raw.step_timeout_ms, "stepTimeoutMs"),
        (raw.assert_timeout_ms, "assertTimeoutMs"),
    ] {
        if v.is_some_and(|t| !(1..=600_000).contains(&t)) {
            return Err(Failed::from(vec![FlowError::new(
                FlowErrorCode::OutOfRange,
                format!("/{field}"),
                format!("{field} must be 1..=600000"),
            )]));
        }
    }
    let target = validate_target(raw.target, base_dir).map_err(|e| vec![e])?;
    let kind = target.kind();
    validate_viewport(kind, raw.viewport.as_ref()).map_err(|e| vec![e])?;
    if raw.environment.is_some() && kind != TargetKind::Browser {
        return Err(Failed::from(vec![FlowError::new(
            FlowErrorCode::UnknownField,
            "/environment",
            "environment applies to browser flows only",
        )]));
    }
    if raw.steps.is_empty() {
        return Err(Failed::from(vec![FlowError::new(
            FlowErrorCode::NoSteps,
            "/steps",
            "a flow needs at least one step",
        )]));
    }
    if raw.steps.len() > limits.max_steps {
        return Err(Failed::from(vec![FlowError::new(
            FlowErrorCode::TooManySteps,
            format!("/steps/{}", limits.max_steps),
            format!(
                "the flow has {} steps; the limit is {}",
                raw.steps.len(),
                limits.max_steps
            ),
        )]));
    }
    let mut steps = Vec::with_capacity(raw.steps.len());
    let mut errors = Vec::new();
    for (i, s) in raw.steps.into_iter().enumerate() {
        match parse_step(kind, i, s) {
            Ok(mut step) => {
                step.default_timeout_ms = if step.is_assert() {
                    raw.assert_timeout_ms
                        .unwrap_or(super::DEFAULT_ASSERT_TIMEOUT_MS)
                } else {
                    raw.step_timeout_ms
                        .unwrap_or(super::DEFAULT_STEP_TIMEOUT_MS)
                };
                steps.push(step)
            }
            Err(e) => {
                errors.push(e);
                if errors.len() == MAX_REPORTED_ERRORS {
                    break;
                }
            }
        }
    }
    let flow = Flow {
        version: 1,
        name: raw.name,
        target,
        viewport: raw.viewport,
        environment: raw.environment,
        evidence: raw.evidence,
        timeout_ms: raw.timeout_ms,
        step_timeout_ms: raw.step_timeout_ms,
        assert_timeout_ms: raw.assert_timeout_ms,
        steps,
        base_dir: base_dir.to_path_buf(),
    };
    if errors.is_empty() {
        Ok(flow)
    } else {
        // The steps that parsed, so a check can go on with them.
        Err(Failed {
            errors,
            partial: Some(Box::new(flow)),
        })
    }
}

/// Why a flow did not parse: its errors, and when only steps failed, the
/// flow of the steps that parsed (each keeping its index).
pub(crate) struct Failed {
    /// Every error found (bounded).
    pub errors: Vec<FlowError>,
    /// The flow without the failed steps.
    pub partial: Option<Box<Flow>>,
}

impl From<Vec<FlowError>> for Failed {
    fn from(errors: Vec<FlowError>) -> Failed {
        Failed {
            errors,
            partial: None,
        }
    }
}

fn validate_step_target(t: &super::StepTarget, at: &str) -> Result<(), FlowError> {
    use super::StepTargetKind as K;
    match (t.kind, &t.name, &t.locator) {
        (K::Popup, Some(n), None) if !n.is_empty() => Ok(()),
        (K::Popup, _, _) => Err(FlowError::new(
            FlowErrorCode::MissingField,
            at,
            "a popup target needs its name (the name of the openPopup step) and no locator",
        )),
        (K::Frame, None, Some(l)) => {
            if l.kinds().len() != 1 {
                return Err(FlowError::new(
                    FlowErrorCode::InvalidLocator,
                    format!("{at}/locator"),
                    "the frame locator needs exactly one kind",
                ));
            }
            Ok(())
        }
        (K::Frame, _, _) => Err(FlowError::new(
            FlowErrorCode::MissingField,
            at,
            "a frame target needs a locator for the <iframe> and no name",
        )),
    }
}

fn safe_name(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 100
        && s != "."
        && s != ".."
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// One step on its own (see [`Step::parse`]).
pub(crate) fn parse_one_step(kind: TargetKind, value: Value) -> Result<Step, FlowError> {
    check_strings(&value, "/steps/0", ParseLimits::default().max_string_bytes)?;
    // A `${var.NAME}` placeholder is refused as in a flow without vars, and
    // a `${secret.NAME}` is refused: a session's steps take no secrets (see
    // `refuse_secrets`).
    let mut doc = serde_json::json!({ "steps": [value] });
    super::vars::substitute(&mut doc, &super::vars::Vars::new()).map_err(first)?;
    super::vars::refuse_secrets(&doc["steps"][0], "/steps/0").map_err(first)?;
    let value = doc["steps"][0].take();
    let mut step = parse_step(kind, 0, value)?;
    step.default_timeout_ms = if step.is_assert() {
        super::DEFAULT_ASSERT_TIMEOUT_MS
    } else {
        super::DEFAULT_STEP_TIMEOUT_MS
    };
    Ok(step)
}

fn parse_step(kind: TargetKind, index: usize, value: Value) -> Result<Step, FlowError> {
    let at = format!("/steps/{index}");
    let Value::Object(mut map) = value else {
        return Err(FlowError::new(
            FlowErrorCode::WrongType,
            at,
            "a step is an object like {\"action\": \"click\", ...}",
        ));
    };
    let action = match map.remove("action") {
        Some(Value::String(s)) => s,
        Some(_) => {
            return Err(FlowError::new(
                FlowErrorCode::WrongType,
                format!("{at}/action"),
                "action must be a string",
            ))
        }
        None => {
            return Err(FlowError::new(
                FlowErrorCode::MissingField,
                at,
                "missing field `action`",
            ))
        }
    };
    let name = match map.remove("name") {
        None => None,
        Some(Value::String(s)) => {
            if !safe_name(&s) {
                return Err(FlowError::new(
                    FlowErrorCode::UnsafePath,
                    format!("{at}/name"),
                    "step name must be 1-100 characters from A-Z a-z 0-9 - _ . (it names evidence files)",
                ));
            }
            Some(s)
        }
        Some(_) => {
            return Err(FlowError::new(
                FlowErrorCode::WrongType,
                format!("{at}/name"),
                "name must be a string",
            ))
        }
    };
    let timeout_ms = match map.remove("timeoutMs") {
        None => None,
        Some(v) => match v.as_u64() {
            Some(t) if (1..=600_000).contains(&t) => Some(t),
            _ => {
                return Err(FlowError::new(
                    FlowErrorCode::OutOfRange,
                    format!("{at}/timeoutMs"),
                    "timeoutMs must be an integer 1..=600000",
                ))
            }
        },
    };
    let target = match map.remove("target") {
        None => None,
        Some(v) => {
            let tat = format!("{at}/target");
            if kind != TargetKind::Browser {
                return Err(FlowError::new(
                    FlowErrorCode::UnknownField,
                    tat,
                    "a step target (popup or frame) applies to browser steps only",
                ));
            }
            let t: super::StepTarget = de_at(v, &tat)?;
            validate_step_target(&t, &tat)?;
            Some(t)
        }
    };
    let rest = Value::Object(map);
    let parsed = match kind {
        TargetKind::Browser => BrowserAction::parse(&action, rest).map(|r| r.map(Action::Browser)),
        TargetKind::Terminal => {
            TerminalAction::parse(&action, rest).map(|r| r.map(Action::Terminal))
        }
        TargetKind::Desktop => DesktopAction::parse(&action, rest).map(|r| r.map(Action::Desktop)),
    };
    let action = match parsed {
        None => {
            let elsewhere: Vec<&str> = [
                TargetKind::Browser,
                TargetKind::Terminal,
                TargetKind::Desktop,
            ]
            .into_iter()
            .filter(|k| *k != kind && Action::names_for(*k).contains(&action.as_str()))
            .map(|k| k.as_str())
            .collect();
            let msg = if elsewhere.is_empty() {
                let names = Action::names_for(kind);
                format!(
                    "unknown action {action:?}{}; {} actions are: {}",
                    super::suggest::did_you_mean(&action, names.iter().copied()),
                    kind.as_str(),
                    names.join(", ")
                )
            } else {
                let fix = super::suggest::equivalent_action(kind, &action)
                    .map(|f| format!("; {f}"))
                    .unwrap_or_default();
                format!(
                    "{action:?} is a {} action; this is a {} flow{fix}",
                    elsewhere.join("/"),
                    kind.as_str()
                )
            };
            return Err(FlowError::new(
                FlowErrorCode::UnknownAction,
                format!("{at}/action"),
                msg,
            ));
        }
        Some(Err(e)) => return Err(serde_error(e, &at)),
        Some(Ok(a)) => a,
    };
    if let Err(p) = action.validate() {
        return Err(FlowError::new(
            p.code,
            format!("{at}{}", p.pointer),
            p.message,
        ));
    }
    Ok(Step {
        index,
        action,
        name,
        timeout_ms,
        target,
        default_timeout_ms: super::DEFAULT_STEP_TIMEOUT_MS,
    })
}

#[cfg(test)]
mod secret_tests {
    use super::*;

    fn parse(text: &str) -> Result<Flow, Vec<FlowError>> {
        parse_flow_all(
            text,
            Path::new("/tmp"),
            &ParseLimits::default(),
            &super::super::vars::Vars::new(),
        )
    }

    #[test]
    fn a_flow_takes_secrets_from_the_environment_after_its_vars() {
        // Names no other test uses; the values are set once, never removed.
        std::env::set_var("UI_QA_SECRET_QA_CORE_PARSE_T1", "tok-9f3a7c");
        std::env::set_var("UI_QA_SECRET_QA_CORE_PARSE_T2", "zq7-secret-host.example");
        let f = parse(
            r#"{"vars": {"auth": "${secret.QA_CORE_PARSE_T1}"},
                "target": {"url": "http://127.0.0.1:8080/"},
                "steps": [{"action": "fill", "locator": {"label": "Token"}, "value": "${var.auth}!"}]}"#,
        )
        .unwrap();
        let v = serde_json::to_value(&f.steps[0]).unwrap();
        assert!(v.to_string().contains("tok-9f3a7c!"), "{v}");
        // A validation error quoting the string the secret went into holds
        // no part of the value.
        let e = parse(
            r#"{"target": {"url": "${secret.QA_CORE_PARSE_T2}"},
                "steps": [{"action": "goto", "path": "/"}]}"#,
        )
        .unwrap_err();
        assert!(e.iter().any(|x| x.message.contains("[REDACTED]")), "{e:?}");
        for x in &e {
            assert!(!x.message.contains("zq7-secret"), "{x:?}");
        }
    }

    #[test]
    fn an_unset_secret_is_invalid_var_at_its_place() {
        let e = parse(
            "{\"target\": {\"url\": \"http://127.0.0.1:8080/\"},\n \"steps\": [{\"action\": \"fill\", \"locator\": {\"label\": \"P\"},\n   \"value\": \"${secret.QA_CORE_PARSE_UNSET}\"}]}",
        )
        .unwrap_err();
        assert_eq!(e.len(), 1, "{e:?}");
        assert_eq!(e[0].code, "flow.invalid_var");
        assert_eq!(e[0].pointer, "/steps/0/value");
        assert_eq!(e[0].line, Some(3), "{e:?}");
        assert!(
            e[0].message.contains("UI_QA_SECRET_QA_CORE_PARSE_UNSET"),
            "{e:?}"
        );
    }

    #[test]
    fn a_session_step_takes_no_secret() {
        let e = Step::parse(
            TargetKind::Terminal,
            serde_json::json!({"action": "sendText", "text": "${secret.QA_CORE_PARSE_T1}"}),
        )
        .unwrap_err();
        assert_eq!(e.code, "flow.invalid_var");
        assert_eq!(e.pointer, "/steps/0/text", "{e:?}");
    }
}
