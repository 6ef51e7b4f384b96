//! Flow variables: `${var.NAME}` in any string of a flow's target and
//! steps, from the flow's own `vars` (defaults) and `ui-qa run --var
//! NAME=VALUE` (which wins), so one flow runs against local and staging
//! without editing it. Replaced before the flow is validated, so every check
//! applies to the result.
//!
//! Secrets: `${secret.NAME}` in the same strings, from the environment
//! variable `UI_QA_SECRET_NAME` ([`SECRET_ENV_PREFIX`]), replaced after the
//! variables ([`substitute_secrets`]).

use super::{FlowError, FlowErrorCode};
use crate::secrets::{MIN_SECRET_BYTES, SECRET_ENV_PREFIX};
use serde_json::Value;
use std::collections::BTreeMap;

/// Values given on the command line (`--var NAME=VALUE`).
pub type Vars = BTreeMap<String, String>;

const OPEN: &str = "${var.";

/// The start of a secret's placeholder.
const SECRET_OPEN: &str = "${secret.";

/// Whether `name` is a variable name: a letter or `_`, then letters,
/// digits and `_`.
pub fn valid_name(name: &str) -> bool {
    let mut c = name.chars();
    c.next()
        .is_some_and(|f| f.is_ascii_alphabetic() || f == '_')
        && c.all(|x| x.is_ascii_alphanumeric() || x == '_')
}

/// Parses `NAME=VALUE`.
pub fn parse_assignment(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((n, v)) if valid_name(n) => Ok((n.to_string(), v.to_string())),
        Some((n, _)) => Err(format!(
            "{n:?} is not a variable name (a letter or _, then letters, digits or _)"
        )),
        None => Err(format!("{s:?} is not NAME=VALUE")),
    }
}

/// Replaces every `${var.NAME}` in the flow's strings (not inside `vars`
/// itself): `given` first, then the flow's `vars`. An unknown or malformed
/// placeholder is an error at its string's pointer.
pub fn substitute(flow: &mut Value, given: &Vars) -> Result<(), Vec<FlowError>> {
    let mut vars: Vars = BTreeMap::new();
    if let Some(own) = flow.get("vars").and_then(Value::as_object) {
        for (k, v) in own {
            let Some(s) = v.as_str() else {
                return Err(vec![FlowError::new(
                    FlowErrorCode::WrongType,
                    format!("/vars/{}", super::escape_token(k)),
                    "a variable's value is a string",
                )]);
            };
            if !valid_name(k) {
                return Err(vec![FlowError::new(
                    FlowErrorCode::InvalidVar,
                    format!("/vars/{}", super::escape_token(k)),
                    format!(
                        "{k:?} is not a variable name (a letter or _, then letters, digits or _)"
                    ),
                )]);
            }
            vars.insert(k.clone(), s.to_string());
        }
    }
    vars.extend(given.iter().map(|(k, v)| (k.clone(), v.clone())));
    let mut errors = Vec::new();
    if let Some(o) = flow.as_object_mut() {
        for (k, v) in o.iter_mut().filter(|(k, _)| k.as_str() != "vars") {
            walk(
                v,
                &format!("/{}", super::escape_token(k)),
                &vars,
                &mut errors,
            );
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

fn walk(v: &mut Value, at: &str, vars: &Vars, errors: &mut Vec<FlowError>) {
    match v {
        Value::String(s) if s.contains(OPEN) => match expand(s, vars) {
            Ok(x) => *s = x,
            Err(m) => errors.push(FlowError::new(FlowErrorCode::InvalidVar, at, m)),
        },
        Value::Array(a) => {
            for (i, x) in a.iter_mut().enumerate() {
                walk(x, &format!("{at}/{i}"), vars, errors);
            }
        }
        Value::Object(o) => {
            for (k, x) in o.iter_mut() {
                walk(x, &format!("{at}/{}", super::escape_token(k)), vars, errors);
            }
        }
        _ => {}
    }
}

/// Replaces every `${secret.NAME}` in the flow's strings (not inside `vars`,
/// whose values reach the strings through [`substitute`] first) with
/// `lookup(NAME)`: the value of the environment variable
/// `UI_QA_SECRET_NAME` ([`SECRET_ENV_PREFIX`]) when a flow is parsed. Run it
/// after [`substitute`], so a variable's value may hold `${secret.NAME}`; a
/// secret's value is never scanned again (a `${var.` or `${secret.` in it
/// stays as written).
///
/// Nothing here registers the value as a secret: every `UI_QA_SECRET_*`
/// variable already is one for the whole run
/// ([`Secrets::from_env`](crate::secrets::Secrets::from_env)), so it is
/// redacted from every file and output. A placeholder without a value, one
/// whose value is shorter than [`MIN_SECRET_BYTES`] (too short to redact),
/// a name that is not [`valid_name`] and an unclosed placeholder are
/// errors at their string's pointer; no message holds a secret's value.
pub fn substitute_secrets(
    flow: &mut Value,
    lookup: impl Fn(&str) -> Option<String>,
) -> Result<(), Vec<FlowError>> {
    let mut errors = Vec::new();
    if let Some(o) = flow.as_object_mut() {
        for (k, v) in o.iter_mut().filter(|(k, _)| k.as_str() != "vars") {
            walk_secrets(
                v,
                &format!("/{}", super::escape_token(k)),
                &lookup,
                &mut errors,
            );
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

/// Refuses every string of `v` (at pointer `at`) that holds
/// `${secret.`: a step given to a running session takes no secrets (its
/// caller, an agent over MCP, could read a secret back from how the page
/// shows what was typed); a flow file does.
pub fn refuse_secrets(v: &Value, at: &str) -> Result<(), Vec<FlowError>> {
    fn walk(v: &Value, at: &str, errors: &mut Vec<FlowError>) {
        match v {
            Value::String(s) if s.contains(SECRET_OPEN) => errors.push(FlowError::new(
                FlowErrorCode::InvalidVar,
                at,
                "a step given to a session takes no ${secret.NAME}: write the step in a flow file, which replaces it",
            )),
            Value::Array(a) => {
                for (i, x) in a.iter().enumerate() {
                    walk(x, &format!("{at}/{i}"), errors);
                }
            }
            Value::Object(o) => {
                for (k, x) in o {
                    walk(x, &format!("{at}/{}", super::escape_token(k)), errors);
                }
            }
            _ => {}
        }
    }
    let mut errors = Vec::new();
    walk(v, at, &mut errors);
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

fn walk_secrets(
    v: &mut Value,
    at: &str,
    lookup: &dyn Fn(&str) -> Option<String>,
    errors: &mut Vec<FlowError>,
) {
    match v {
        Value::String(s) if s.contains(SECRET_OPEN) => match expand_secrets(s, lookup) {
            Ok(x) => *s = x,
            Err(m) => errors.push(FlowError::new(FlowErrorCode::InvalidVar, at, m)),
        },
        Value::Array(a) => {
            for (i, x) in a.iter_mut().enumerate() {
                walk_secrets(x, &format!("{at}/{i}"), lookup, errors);
            }
        }
        Value::Object(o) => {
            for (k, x) in o.iter_mut() {
                walk_secrets(
                    x,
                    &format!("{at}/{}", super::escape_token(k)),
                    lookup,
                    errors,
                );
            }
        }
        _ => {}
    }
}

/// `s` with its secrets' placeholders replaced. Only `s` itself is scanned,
/// never a value put in; an error names the placeholder and the variable,
/// never a value.
fn expand_secrets(s: &str, lookup: &dyn Fn(&str) -> Option<String>) -> Result<String, String> {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find(SECRET_OPEN) {
        out.push_str(&rest[..i]);
        let after = &rest[i + SECRET_OPEN.len()..];
        let Some(end) = after.find('}') else {
            return Err(format!("an unclosed ${{secret.…}} in {s:?}"));
        };
        let name = &after[..end];
        if !valid_name(name) {
            return Err(format!(
                "${{secret.{name}}}: {name:?} is not a secret's name (a letter or _, then letters, digits or _)"
            ));
        }
        let var = format!("{SECRET_ENV_PREFIX}{name}");
        match lookup(name) {
            Some(v) if v.len() >= MIN_SECRET_BYTES => out.push_str(&v),
            Some(_) => {
                return Err(format!(
                    "the value of {var} (for ${{secret.{name}}}) is shorter than {MIN_SECRET_BYTES} bytes, too short to redact from evidence; give it a longer value"
                ))
            }
            None => {
                return Err(format!(
                    "no value for ${{secret.{name}}}: set the environment variable {var} (every {SECRET_ENV_PREFIX}* variable is a secret: it never appears in evidence)"
                ))
            }
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// `s` with its placeholders replaced.
fn expand(s: &str, vars: &Vars) -> Result<String, String> {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find(OPEN) {
        out.push_str(&rest[..i]);
        let after = &rest[i + OPEN.len()..];
        let Some(end) = after.find('}') else {
            return Err(format!("an unclosed ${{var.…}} in {s:?}"));
        };
        let name = &after[..end];
        match vars.get(name) {
            Some(v) => out.push_str(v),
            None => {
                let known: Vec<&str> = vars.keys().map(String::as_str).collect();
                return Err(format!(
                    "no value for ${{var.{name}}}{}: give one with --var {name}=VALUE or in the flow's vars",
                    super::suggest::did_you_mean(name, known.iter().copied())
                ));
            }
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn flow_defaults_then_given_values_replace_placeholders() {
        let mut f = json!({
            "vars": { "base": "http://127.0.0.1:3000", "user": "ada" },
            "target": { "url": "${var.base}/login" },
            "steps": [ { "action": "fill", "value": "${var.user} ${var.user}" } ]
        });
        let given: Vars = [("base".to_string(), "https://staging.example".to_string())].into();
        substitute(&mut f, &given).unwrap();
        assert_eq!(f["target"]["url"], "https://staging.example/login");
        assert_eq!(f["steps"][0]["value"], "ada ada");
        assert_eq!(
            f["vars"]["base"], "http://127.0.0.1:3000",
            "vars itself untouched"
        );
    }

    #[test]
    fn unknown_and_unclosed_placeholders_point_at_their_string() {
        let mut f = json!({
            "vars": { "base": "x" },
            "target": { "url": "${var.bse}/" },
            "steps": [ { "action": "goto", "path": "${var.base" } ]
        });
        let e = substitute(&mut f, &Vars::new()).unwrap_err();
        assert_eq!(e.len(), 2);
        let at = |p: &str| e.iter().find(|x| x.pointer == p).unwrap().message.clone();
        assert!(at("/steps/0/path").contains("unclosed"));
        let m = at("/target/url");
        assert!(m.contains("did you mean \"base\""), "{m}");
        // Shell text is left alone.
        let mut f = json!({ "steps": [ { "text": "echo ${HOME} $((6*7))" } ] });
        substitute(&mut f, &Vars::new()).unwrap();
        assert_eq!(f["steps"][0]["text"], "echo ${HOME} $((6*7))");
    }

    /// A lookup of these `UI_QA_SECRET_*` values (by NAME).
    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let m: BTreeMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |n: &str| m.get(n).cloned()
    }

    #[test]
    fn secrets_replace_placeholders_in_nested_strings_and_arrays() {
        let mut f = json!({
            "target": { "url": "https://app.example/?t=${secret.TOKEN}", "port": 3000 },
            "steps": [
                { "action": "fill", "value": "${secret.PASS}" },
                { "action": "run", "argv": ["login", "--token=${secret.TOKEN}", "${secret.TOKEN}${secret.PASS}"] },
                { "action": "x", "deep": { "list": [ { "k": "a ${secret._pw2} b" } ] } }
            ]
        });
        let lookup = env(&[
            ("TOKEN", "tok-1234"),
            ("PASS", "hunter22"),
            ("_pw2", "p@ss w0rd"),
        ]);
        substitute_secrets(&mut f, lookup).unwrap();
        assert_eq!(f["target"]["url"], "https://app.example/?t=tok-1234");
        assert_eq!(f["target"]["port"], 3000);
        assert_eq!(f["steps"][0]["value"], "hunter22");
        assert_eq!(
            f["steps"][1]["argv"],
            json!(["login", "--token=tok-1234", "tok-1234hunter22"])
        );
        assert_eq!(f["steps"][2]["deep"]["list"][0]["k"], "a p@ss w0rd b");
        // Text that is no secret placeholder is left alone.
        let mut f = json!({ "steps": [ { "text": "echo ${HOME} ${secretX} $secret.A" } ] });
        substitute_secrets(&mut f, env(&[])).unwrap();
        assert_eq!(f["steps"][0]["text"], "echo ${HOME} ${secretX} $secret.A");
    }

    #[test]
    fn secrets_come_after_vars_and_their_values_are_not_scanned() {
        let mut f = json!({
            "vars": { "auth": "Bearer ${secret.TOKEN}" },
            "steps": [
                { "action": "header", "value": "${var.auth}" },
                { "action": "fill", "value": "${secret.ODD}" },
                { "action": "fill", "value": "${secret.LOOP}!" }
            ]
        });
        substitute(&mut f, &Vars::new()).unwrap();
        assert_eq!(f["steps"][0]["value"], "Bearer ${secret.TOKEN}");
        let lookup = env(&[
            ("TOKEN", "tok-1234"),
            ("ODD", "${var.auth}"),
            ("LOOP", "${secret.LOOP}"),
        ]);
        substitute_secrets(&mut f, lookup).unwrap();
        assert_eq!(f["steps"][0]["value"], "Bearer tok-1234");
        assert_eq!(f["steps"][1]["value"], "${var.auth}", "not expanded again");
        assert_eq!(
            f["steps"][2]["value"], "${secret.LOOP}!",
            "not expanded again"
        );
        assert_eq!(
            f["vars"]["auth"], "Bearer ${secret.TOKEN}",
            "vars itself untouched"
        );
    }

    #[test]
    fn an_unset_secret_names_its_variable_at_its_string_without_a_value() {
        let mut f = json!({
            "target": { "url": "https://app.example/" },
            "steps": [
                { "action": "fill", "value": "${secret.PASS}" },
                { "action": "fill", "value": "${secret.KNOWN}-${secret.TOKEN}" }
            ]
        });
        let before = f.clone();
        let e = substitute_secrets(&mut f, env(&[("KNOWN", "s3cr3t-value"), ("PASS", "pw")]))
            .unwrap_err();
        assert_eq!(e.len(), 2, "{e:?}");
        assert!(e.iter().all(|x| x.code == "flow.invalid_var"));
        let at = |p: &str| e.iter().find(|x| x.pointer == p).unwrap().message.clone();
        let m = at("/steps/1/value");
        assert_eq!(
            m,
            "no value for ${secret.TOKEN}: set the environment variable UI_QA_SECRET_TOKEN (every UI_QA_SECRET_* variable is a secret: it never appears in evidence)"
        );
        // Set but too short to redact: refused, naming the variable alone.
        let m = at("/steps/0/value");
        assert!(
            m.contains("UI_QA_SECRET_PASS") && m.contains("shorter than 4 bytes"),
            "{m}"
        );
        for x in &e {
            assert!(!x.message.contains("s3cr3t-value"), "{}", x.message);
            assert!(!x.message.contains("pw"), "{}", x.message);
        }
        assert_eq!(f, before, "a string with an error is left as written");
    }

    #[test]
    fn malformed_secret_placeholders_are_errors() {
        for (text, says) in [
            ("${secret.}", "is not a secret's name"),
            ("${secret.1A}", "is not a secret's name"),
            ("${secret.A-B}", "is not a secret's name"),
            ("x ${secret.TOKEN", "unclosed"),
        ] {
            let mut f = json!({ "steps": [ { "action": "fill", "value": text } ] });
            let e = substitute_secrets(&mut f, env(&[("TOKEN", "tok-1234"), ("1A", "tok-1234")]))
                .unwrap_err();
            assert_eq!(e.len(), 1, "{text}");
            assert_eq!(e[0].code, "flow.invalid_var", "{text}");
            assert_eq!(e[0].pointer, "/steps/0/value", "{text}");
            assert!(e[0].message.contains(says), "{text}: {}", e[0].message);
            assert!(!e[0].message.contains("tok-1234"), "{}", e[0].message);
        }
    }

    #[test]
    fn a_session_step_refuses_secrets() {
        let v = json!({ "action": "fill", "value": "${secret.TOKEN}", "k": ["ok"] });
        let e = refuse_secrets(&v, "/steps/0").unwrap_err();
        assert_eq!(e.len(), 1);
        assert_eq!(e[0].code, "flow.invalid_var");
        assert_eq!(e[0].pointer, "/steps/0/value");
        refuse_secrets(&json!({ "action": "fill", "value": "${HOME}" }), "/steps/0").unwrap();
    }

    #[test]
    fn assignments_parse() {
        assert_eq!(
            parse_assignment("base=http://x=1").unwrap(),
            ("base".into(), "http://x=1".into())
        );
        assert!(parse_assignment("1x=a").is_err());
        assert!(parse_assignment("novalue").is_err());
    }
}
