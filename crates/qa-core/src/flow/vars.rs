//! Flow variables: `${var.NAME}` in any string of a flow's target and
//! steps, from the flow's own `vars` (defaults) and `ui-qa run --var
//! NAME=VALUE` (which wins), so one flow runs against local and staging
//! without editing it. Replaced before the flow is validated, so every check
//! applies to the result.

use super::{FlowError, FlowErrorCode};
use serde_json::Value;
use std::collections::BTreeMap;

/// Values given on the command line (`--var NAME=VALUE`).
pub type Vars = BTreeMap<String, String>;

const OPEN: &str = "${var.";

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
