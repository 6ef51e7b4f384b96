//! Strict JSONC: comments and trailing commas are the only extensions to
//! JSON a flow may use. Every other leniency of the parser is refused with
//! `flow.syntax` and the line/column of the offending text; strings that a
//! process cannot receive are refused at check time; every pointer is built
//! structurally, whatever the key text.

use qa_core::flow::{Flow, ParseLimits};
use qa_core::FlowError;
use std::path::Path;

fn parse(s: &str) -> Result<Flow, FlowError> {
    Flow::parse(s, Path::new("/tmp"))
}

fn err(s: &str) -> FlowError {
    parse(s).expect_err("flow must be rejected")
}

/// `(code, pointer, line, column)` of an error, for one-line assertions.
fn where_(e: &FlowError) -> (&str, &str, Option<usize>, Option<usize>) {
    (e.code, e.pointer.as_str(), e.line, e.column)
}

/// The 1-based line and column (in characters) of the first occurrence of
/// `needle` in `text`.
fn pos_of(text: &str, needle: &str) -> (Option<usize>, Option<usize>) {
    let off = text
        .find(needle)
        .unwrap_or_else(|| panic!("{needle:?} not in {text:?}"));
    let before = &text[..off];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().unwrap().chars().count() + 1;
    (Some(line), Some(col))
}

#[test]
fn a_flow_without_any_comma_is_rejected() {
    let text = "{\n  \"target\": { \"command\": { \"argv\": [\"bash\" \"--norc\"] } }\n  \"steps\": [ { \"action\": \"sendText\" \"text\": \"hi\" } ]\n}\n";
    let e = err(text);
    assert_eq!(e.code, "flow.syntax", "{e}");
    // The first missing comma: right after "bash" on line 2.
    let (l, c) = pos_of(text, " \"--norc\"");
    assert_eq!((e.line, e.column), (l, c), "{e}");
}

#[test]
fn a_flow_missing_one_comma_is_rejected() {
    // Between two properties.
    let text = "{\n  \"target\": { \"command\": { \"argv\": [\"bash\"] } }\n  \"steps\": [ { \"action\": \"capture\" } ]\n}\n";
    let e = err(text);
    assert_eq!(e.code, "flow.syntax", "{e}");
    assert_eq!((e.line, e.column), pos_of(text, "\n  \"steps\""), "{e}");
    // Between two array elements.
    let text = "{\"target\":{\"command\":{\"argv\":[\"x\"]}},\"steps\":[{\"action\":\"capture\"} {\"action\":\"capture\"}]}";
    let e = err(text);
    assert_eq!(e.code, "flow.syntax", "{e}");
    assert_eq!((e.line, e.column), pos_of(text, " {\"action"), "{e}");
}

#[test]
fn every_non_json_leniency_is_refused_with_a_position() {
    // (what, flow text, the text the error must point at)
    let head = "{\"target\":{\"command\":{\"argv\":[\"x\"]}},\"steps\":[{\"action\":\"capture\"}],";
    let cases: Vec<(&str, String, &str)> = vec![
        ("unquoted key", format!("{head}timeoutMs:5}}"), "timeoutMs:"),
        (
            "single-quoted string",
            format!("{head}'name':\"a\"}}"),
            "'name'",
        ),
        (
            "single-quoted value",
            format!("{head}\"name\":'a'}}"),
            "'a'",
        ),
        (
            "hexadecimal number",
            format!("{head}\"timeoutMs\":0x10}}"),
            "0x10",
        ),
        ("unary plus", format!("{head}\"timeoutMs\":+5}}"), "+5"),
        (
            "leading decimal point",
            format!("{head}\"timeoutMs\":.5}}"),
            ".5",
        ),
        (
            "trailing decimal point",
            format!("{head}\"timeoutMs\":5.}}"),
            "5.",
        ),
        (
            "Infinity",
            format!("{head}\"timeoutMs\":Infinity}}"),
            "Infinity",
        ),
        (
            "-Infinity",
            format!("{head}\"timeoutMs\":-Infinity}}"),
            "-Infinity",
        ),
        ("NaN", format!("{head}\"timeoutMs\":NaN}}"), "NaN"),
        ("\\x escape", format!("{head}\"name\":\"\\x41\"}}"), "\\x41"),
        ("\\v escape", format!("{head}\"name\":\"\\v\"}}"), "\\v"),
        ("\\0 escape", format!("{head}\"name\":\"\\0\"}}"), "\\0"),
        ("\\' escape", format!("{head}\"name\":\"\\'\"}}"), "\\'"),
        (
            "line continuation",
            format!("{head}\"name\":\"a\\\nb\"}}"),
            "\\\nb",
        ),
        (
            "lone surrogate",
            format!("{head}\"name\":\"\\ud800\"}}"),
            "\\ud800",
        ),
        ("backtick string", format!("{head}\"name\":`a`}}"), "`a`"),
        (
            "undefined",
            format!("{head}\"name\":undefined}}"),
            "undefined",
        ),
        ("two values", format!("{head}\"name\":\"a\"}} {{}}"), "{}"),
        (
            "vertical tab as whitespace",
            format!("{head}\"name\":\u{0b}\"a\"}}"),
            "\u{0b}",
        ),
        (
            "form feed as whitespace",
            format!("{head}\"name\":\u{0c}\"a\"}}"),
            "\u{0c}",
        ),
        (
            "no-break space as whitespace",
            format!("{head}\"name\":\u{a0}\"a\"}}"),
            "\u{a0}",
        ),
        (
            "line separator as whitespace",
            format!("{head}\n\"name\":\u{2028}\"a\"}}"),
            "\u{2028}",
        ),
        (
            "empty array element",
            format!("{head}\"a\":[1,,2]}}"),
            ",2]",
        ),
        ("leading comma", format!("{head}\"a\":[,1]}}"), ",1]"),
    ];
    for (what, text, at) in cases {
        let e = match parse(&text) {
            Ok(_) => panic!("{what}: accepted: {text:?}"),
            Err(e) => e,
        };
        assert_eq!(e.code, "flow.syntax", "{what}: {e}");
        assert_eq!((e.line, e.column), pos_of(&text, at), "{what}: {e}");
    }
}

#[test]
fn empty_documents_have_a_position() {
    for text in ["", "   ", "// nothing here\n", "/* nothing */"] {
        let e = err(text);
        assert_eq!(
            where_(&e),
            ("flow.syntax", "", Some(1), Some(1)),
            "{text:?}: {e}"
        );
    }
}

#[test]
fn comments_and_trailing_commas_are_still_allowed() {
    let f = parse(
        "// line comment\n/* block\n comment */\n{\n  \"target\": { \"command\": { \"argv\": [\"bash\", \"--norc\",], \"env\": {\"A\": \"1\",}, }, }, // after\n  \"steps\": [\n    { \"action\": \"sendKeys\", \"keys\": [\"Enter\",], /* inline */ },\n    { \"action\": \"capture\", },\n  ],\n  \"timeoutMs\": 10000,\n  \"name\": \"tab\\there \\\"quoted\\\" \\u00e9 \\/ \\\\\",\n}\n// trailing comment without newline",
    )
    .unwrap();
    assert_eq!(f.steps.len(), 2);
    assert_eq!(f.timeout_ms, Some(10_000));
    assert_eq!(f.name.as_deref(), Some("tab\there \"quoted\" é / \\"));
    // Escaped control characters are valid JSON (the raw ones are not).
    let f = parse(
        r#"{"name":"a\u001b\u0000b","target":{"command":{"argv":["x"]}},"steps":[{"action":"capture"}]}"#,
    )
    .unwrap();
    assert_eq!(f.name.as_deref(), Some("a\u{1b}\u{0}b"));
}

#[test]
fn raw_control_characters_in_strings_are_refused() {
    for (what, c) in [
        ("NUL", '\u{0}'),
        ("ESC", '\u{1b}'),
        ("BEL", '\u{7}'),
        ("tab", '\t'),
        ("newline", '\n'),
        ("carriage return", '\r'),
        ("unit separator", '\u{1f}'),
    ] {
        // In a value.
        let text = format!(
            "{{\n  \"name\": \"ab{c}cd\",\n  \"target\": {{\"command\": {{\"argv\": [\"x\"]}}}},\n  \"steps\": [{{\"action\": \"capture\"}}]\n}}"
        );
        let e = err(&text);
        assert_eq!(e.code, "flow.syntax", "{what}: {e}");
        assert_eq!((e.line, e.column), (Some(2), Some(14)), "{what}: {e}");
        assert!(
            e.message.contains(&format!("U+{:04X}", c as u32)),
            "{what}: {}",
            e.message
        );
        // In a key.
        let text = format!(
            "{{\"target\": {{\"command\": {{\"argv\": [\"x\"], \"env\": {{\"K{c}\": \"v\"}}}}}}, \"steps\": [{{\"action\": \"capture\"}}]}}"
        );
        let e = err(&text);
        assert_eq!(e.code, "flow.syntax", "{what} in a key: {e}");
        assert_eq!(
            (e.line, e.column),
            pos_of(&text, &c.to_string()),
            "{what} in a key: {e}"
        );
    }
    // DEL and C1 controls are allowed by JSON; the typed-text checks still apply.
    let f = parse(
        "{\"name\":\"a\u{7f}\u{85}b\",\"target\":{\"command\":{\"argv\":[\"x\"]}},\"steps\":[{\"action\":\"capture\"}]}",
    )
    .unwrap();
    assert_eq!(f.name.as_deref(), Some("a\u{7f}\u{85}b"));
}

#[test]
fn raw_control_characters_outside_strings_are_refused() {
    let text =
        "{\"target\":{\"command\":{\"argv\":[\"x\"]}},\u{1}\"steps\":[{\"action\":\"capture\"}]}";
    let e = err(text);
    assert_eq!(e.code, "flow.syntax", "{e}");
    assert_eq!((e.line, e.column), pos_of(text, "\u{1}"), "{e}");
}

#[test]
fn nul_in_process_strings_is_refused_at_check() {
    let term = |command: &str| {
        format!(
            "{{\n\"target\": {{\"command\": {command}}},\n\"steps\": [{{\"action\": \"capture\"}}]\n}}"
        )
    };
    let desk = |launch: &str| {
        format!(
            "{{\n\"target\": {{\"application\": {{\"launch\": {launch}}}}},\n\"steps\": [{{\"action\": \"activateWindow\"}}]\n}}"
        )
    };
    let web = |server: &str| {
        format!(
            "{{\n\"target\": {{\"url\": \"http://127.0.0.1:9/\", \"server\": {server}}},\n\"steps\": [{{\"action\": \"reload\"}}]\n}}"
        )
    };
    let ready = r#""readyUrl": "http://127.0.0.1:9/""#;
    // (flow text, pointer, the text the error must point at)
    let cases: Vec<(String, &str, &str)> = vec![
        (
            term(r#"{"argv": ["sh", "-c\u0000x"]}"#),
            "/target/command/argv/1",
            r#""-c\u0000x""#,
        ),
        (
            term(r#"{"argv": ["s\u0000h"]}"#),
            "/target/command/argv/0",
            r#""s\u0000h""#,
        ),
        (
            term(r#"{"argv": ["sh"], "env": {"A": "1\u0000"}}"#),
            "/target/command/env/A",
            r#""1\u0000""#,
        ),
        (
            term(r#"{"argv": ["sh"], "env": {"A\u0000B": "1"}}"#),
            "/target/command/env/A\u{0}B",
            r#""A\u0000B""#,
        ),
        (
            term(r#"{"argv": ["sh"], "cwd": "d\u0000"}"#),
            "/target/command/cwd",
            r#""d\u0000""#,
        ),
        (
            desk(r#"{"argv": ["app", "\u0000"]}"#),
            "/target/application/launch/argv/1",
            r#""\u0000""#,
        ),
        (
            desk(r#"{"argv": ["app"], "env": {"X": "\u0000"}}"#),
            "/target/application/launch/env/X",
            r#""\u0000""#,
        ),
        (
            desk(r#"{"argv": ["app"], "env": {"\u0000": "x"}}"#),
            "/target/application/launch/env/\u{0}",
            r#""\u0000""#,
        ),
        (
            web(&format!(r#"{{"command": ["srv", "--x=\u0000"], {ready}}}"#)),
            "/target/server/command/1",
            r#""--x=\u0000""#,
        ),
        (
            web(&format!(
                r#"{{"command": ["srv"], "env": {{"P": "a\u0000"}}, {ready}}}"#
            )),
            "/target/server/env/P",
            r#""a\u0000""#,
        ),
        (
            web(&format!(
                r#"{{"command": ["srv"], "env": {{"P\u0000": "a"}}, {ready}}}"#
            )),
            "/target/server/env/P\u{0}",
            r#""P\u0000""#,
        ),
        (
            web(&format!(r#"{{"command": ["srv"], "cwd": "\u0000", {ready}}}"#)),
            "/target/server/cwd",
            r#""\u0000""#,
        ),
        (
            "{\n\"target\": {\"url\": \"/\", \"serve\": \"site\\u0000\"},\n\"steps\": [{\"action\": \"reload\"}]\n}"
                .to_string(),
            "/target/serve",
            r#""site\u0000""#,
        ),
    ];
    for (text, pointer, at) in cases {
        let e = err(&text);
        let (l, c) = pos_of(&text, at);
        assert_eq!(
            where_(&e),
            ("flow.nul_character", pointer, l, c),
            "{text}: {e}"
        );
    }
    // Other control characters in argv are legitimate (e.g. a newline in `sh -c`).
    parse(r#"{"target":{"command":{"argv":["sh","-c","echo a\necho b"]}},"steps":[{"action":"capture"}]}"#)
        .unwrap();
}

#[test]
fn unknown_key_pointers_are_structural_for_any_key_text() {
    // (key as JSON text, RFC 6901 token)
    let keys: &[(&str, &str)] = &[
        ("a`b", "a`b"),
        ("`", "`"),
        ("``", "``"),
        ("x` at line 1", "x` at line 1"),
        ("unknown field `y`", "unknown field `y`"),
        ("a~b/c", "a~0b~1c"),
        ("~1", "~01"),
        ("/", "~1"),
        ("", ""),
        ("\\u001b[31m", "\u{1b}[31m"),
        ("é`ß", "é`ß"),
    ];
    for (json_key, token) in keys {
        // Inside a step.
        let text = format!(
            "{{\"target\":{{\"command\":{{\"argv\":[\"x\"]}}}},\n\"steps\":[{{\"action\":\"capture\",\n  \"{json_key}\":1}}]}}"
        );
        let e = err(&text);
        assert_eq!(
            where_(&e),
            (
                "flow.unknown_field",
                format!("/steps/0/{token}").as_str(),
                Some(3),
                Some(3)
            ),
            "{json_key:?}: {e}"
        );
        // At the top level.
        let text = format!(
            "{{\"target\":{{\"command\":{{\"argv\":[\"x\"]}}}},\"steps\":[{{\"action\":\"capture\"}}],\n \"{json_key}\":1}}"
        );
        let e = err(&text);
        assert_eq!(
            where_(&e),
            (
                "flow.unknown_field",
                format!("/{token}").as_str(),
                Some(2),
                Some(2)
            ),
            "{json_key:?}: {e}"
        );
        // Nested in the target and in a locator.
        let text = format!(
            "{{\"target\":{{\"command\":{{\"argv\":[\"x\"],\n \"{json_key}\":1}}}},\"steps\":[{{\"action\":\"capture\"}}]}}"
        );
        let e = err(&text);
        assert_eq!(
            (e.code, e.pointer.as_str()),
            (
                "flow.unknown_field",
                format!("/target/command/{token}").as_str()
            ),
            "{json_key:?}: {e}"
        );
        let text = format!(
            "{{\"target\":{{\"url\":\"http://a.test/\"}},\"steps\":[{{\"action\":\"click\",\"locator\":{{\"css\":\"a\",\"{json_key}\":1}}}}]}}"
        );
        let e = err(&text);
        assert_eq!(
            (e.code, e.pointer.as_str()),
            (
                "flow.unknown_field",
                format!("/steps/0/locator/{token}").as_str()
            ),
            "{json_key:?}: {e}"
        );
    }
}

#[test]
fn invalid_utf8_has_the_position_of_the_first_bad_byte() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("bad.jsonc");
    let mut bytes = b"{\n\"name\": \"\xc3\xa9t\xc3\xa9 ".to_vec();
    bytes.push(0xff);
    bytes.extend_from_slice(
        b"\",\n\"target\":{\"command\":{\"argv\":[\"x\"]}},\"steps\":[{\"action\":\"capture\"}]}",
    );
    std::fs::write(&p, &bytes).unwrap();
    let e = Flow::load(&p).expect_err("invalid UTF-8 must be rejected");
    // `"name": "été ` is 13 characters (16 bytes): the bad byte is column 14.
    assert_eq!(where_(&e), ("flow.syntax", "", Some(2), Some(14)), "{e}");
    assert!(e.message.contains("UTF-8"), "{}", e.message);
    // A truncated sequence at the very end.
    std::fs::write(&p, b"{\"name\":\"a\xe2\x82").unwrap();
    let e = Flow::load(&p).unwrap_err();
    assert_eq!(where_(&e), ("flow.syntax", "", Some(1), Some(11)), "{e}");
}

#[test]
fn too_large_has_the_position_where_the_limit_is_crossed() {
    let limits = ParseLimits {
        max_bytes: 40,
        ..ParseLimits::default()
    };
    // Byte 40 (0-based), the first one past the limit, is on line 3.
    let text = "{\n\"name\": \"0123456789\",\n\"target\": {\"command\": {\"argv\": [\"x\"]}}, \"steps\": [{\"action\": \"capture\"}]}";
    let off = 40;
    let before = &text[..off];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().unwrap().chars().count() + 1;
    assert_eq!(line, 3);
    let e = Flow::parse_with_limits(text, Path::new("/tmp"), &limits).unwrap_err();
    assert_eq!(
        where_(&e),
        ("flow.too_large", "", Some(line), Some(col)),
        "{e}"
    );
}

#[test]
fn a_too_large_file_has_the_position_where_the_limit_is_crossed() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("big.jsonc");
    // 1 KiB lines: the first byte past 16 MiB starts line 16385.
    let line = format!("{}\n", " ".repeat(1023));
    let mut text = String::with_capacity(17 * 1024 * 1024);
    text.push('{');
    text.push_str(&line[1..]);
    while text.len() <= 16 * 1024 * 1024 {
        text.push_str(&line);
    }
    text.push_str(
        "\"target\":{\"command\":{\"argv\":[\"x\"]}},\"steps\":[{\"action\":\"capture\"}]}",
    );
    std::fs::write(&p, &text).unwrap();
    let e = Flow::load(&p).unwrap_err();
    assert_eq!(
        where_(&e),
        ("flow.too_large", "", Some(16385), Some(1)),
        "{e}"
    );
}

#[test]
fn errors_found_after_parsing_can_be_located_in_the_source() {
    // Admission (driver support) runs on the parsed flow and reports a
    // pointer only; `with_position` maps it back to the source.
    let text = "{\"target\":{\"url\":\"http://a.test/\"},\n\"steps\":[{\"action\":\"click\",\n  \"locator\":{\"css\":\"a\"}}]}";
    parse(text).unwrap();
    let e = FlowError::new(
        qa_core::flow::FlowErrorCode::UnsupportedLocator,
        "/steps/0/locator/css",
        "css locators are not supported",
    )
    .with_position(text);
    let (l, c) = pos_of(text, "\"css\"");
    assert_eq!(l, Some(3));
    assert_eq!(
        where_(&e),
        ("flow.unsupported_locator", "/steps/0/locator/css", l, c),
        "{e}"
    );
}
