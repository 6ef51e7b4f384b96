//! The environment block `CreateProcessW` takes with
//! `CREATE_UNICODE_ENVIRONMENT`: UTF-16 `NAME=value` entries, each ended by
//! a NUL, sorted by name without regard to case, the block ended by one
//! more NUL.
//!
//! Windows compares variable names without regard to case, so two names
//! that differ only in case are one variable: the later one given wins.

use std::cmp::Ordering;

/// Why an environment cannot be passed to a Windows program.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum EnvBlockError {
    /// The name is empty, contains NUL, or contains `=` after its first
    /// character (a leading `=` is allowed: `=C:` holds a drive's cwd).
    BadName(String),
    /// The value of this variable contains NUL.
    NulInValue(String),
}

impl std::fmt::Display for EnvBlockError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EnvBlockError::BadName(n) => write!(
                f,
                "environment variable name {n:?} is not valid on Windows (empty, or contains '=' or NUL)"
            ),
            EnvBlockError::NulInValue(n) => {
                write!(f, "the value of environment variable {n:?} contains NUL")
            }
        }
    }
}

/// Compares two names the way Windows orders an environment block:
/// ordinal, without regard to case.
fn compare_names(a: &str, b: &str) -> Ordering {
    let upper = |s: &str| -> Vec<u16> { s.to_uppercase().encode_utf16().collect() };
    upper(a).cmp(&upper(b))
}

/// The block for `vars`, in order of precedence (a later name that equals
/// an earlier one without regard to case replaces it).
pub(crate) fn environment_block<'a>(
    vars: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> Result<Vec<u16>, EnvBlockError> {
    let mut entries: Vec<(&str, &str)> = Vec::new();
    for (name, value) in vars {
        let bad = name.is_empty() || name.contains('\0') || name.chars().skip(1).any(|c| c == '=');
        if bad {
            return Err(EnvBlockError::BadName(name.to_string()));
        }
        if value.contains('\0') {
            return Err(EnvBlockError::NulInValue(name.to_string()));
        }
        match entries
            .iter_mut()
            .find(|(n, _)| compare_names(n, name) == Ordering::Equal)
        {
            Some(entry) => *entry = (name, value),
            None => entries.push((name, value)),
        }
    }
    entries.sort_by(|a, b| compare_names(a.0, b.0));
    let mut block = Vec::new();
    for (name, value) in entries {
        block.extend(name.encode_utf16());
        block.push(u16::from(b'='));
        block.extend(value.encode_utf16());
        block.push(0);
    }
    // An empty block still needs its two NULs.
    if block.is_empty() {
        block.push(0);
    }
    block.push(0);
    Ok(block)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(block: &[u16]) -> Vec<String> {
        assert_eq!(block.last(), Some(&0), "the block ends with NUL");
        let text = String::from_utf16(&block[..block.len() - 1]).unwrap();
        assert!(text.ends_with('\0'), "the last entry ends with NUL");
        text.trim_end_matches('\0')
            .split('\0')
            .map(str::to_string)
            .collect()
    }

    #[test]
    fn entries_are_sorted_without_regard_to_case_and_nul_terminated() {
        let block = environment_block([
            ("windir", "C:\\Windows"),
            ("Path", "C:\\bin"),
            ("TERM", "xterm-256color"),
            ("=C:", "C:\\work"),
            ("appdata", "x"),
        ])
        .unwrap();
        assert_eq!(
            entries(&block),
            [
                "=C:=C:\\work",
                "appdata=x",
                "Path=C:\\bin",
                "TERM=xterm-256color",
                "windir=C:\\Windows"
            ]
        );
        assert_eq!(&block[block.len() - 2..], &[0, 0]);
    }

    #[test]
    fn a_later_name_in_another_case_replaces_the_earlier() {
        let block = environment_block([("PATH", "runner"), ("x", "1"), ("Path", "flow")]).unwrap();
        assert_eq!(entries(&block), ["Path=flow", "x=1"]);
    }

    #[test]
    fn values_keep_their_text_in_utf16() {
        let block = environment_block([("NAME", "a=b ünï 日本")]).unwrap();
        let want: Vec<u16> = "NAME=a=b ünï 日本\0\0".encode_utf16().collect();
        assert_eq!(block, want);
    }

    #[test]
    fn an_empty_environment_is_two_nuls() {
        assert_eq!(environment_block([]).unwrap(), vec![0, 0]);
    }

    #[test]
    fn names_and_values_windows_cannot_carry_are_refused() {
        assert_eq!(
            environment_block([("", "x")]),
            Err(EnvBlockError::BadName(String::new()))
        );
        assert_eq!(
            environment_block([("A=B", "x")]),
            Err(EnvBlockError::BadName("A=B".into()))
        );
        assert_eq!(
            environment_block([("A\0", "x")]),
            Err(EnvBlockError::BadName("A\0".into()))
        );
        assert_eq!(
            environment_block([("é=", "x")]),
            Err(EnvBlockError::BadName("é=".into()))
        );
        assert_eq!(
            environment_block([("A", "x\0y")]),
            Err(EnvBlockError::NulInValue("A".into()))
        );
    }
}
