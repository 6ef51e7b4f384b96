//! The Windows command line of an argv.
//!
//! A Windows program receives one string and splits it itself, almost
//! always with the rules of the Microsoft C runtime (the same as
//! `CommandLineToArgvW`). [`command_line`] quotes each argument so those
//! rules give back exactly the argv the flow wrote:
//!
//! - `argv[0]` (the program name) is split without escapes: it ends at the
//!   next `"` when it starts with one, else at the first space or tab. It
//!   is quoted when it is empty or contains a space or tab, and it cannot
//!   contain `"`.
//! - Every other argument is written as is when it is non-empty and has no
//!   space, tab, newline, vertical tab or `"`. Otherwise it is put in
//!   quotes, a `"` in it becomes `\"`, backslashes right before a `"` (or
//!   before the closing quote) are doubled, and other backslashes are kept
//!   as they are.
//!
//! `cmd.exe` splits differently (the terminal driver refuses batch files
//! for that reason).

/// Most UTF-16 units a command line may have, its terminating NUL included.
pub const MAX_UNITS: usize = 32_767;

/// Why an argv has no Windows command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CommandLineError {
    /// There is no `argv[0]`.
    Empty,
    /// Argument `index` contains a NUL character.
    Nul {
        /// Index in argv.
        index: usize,
    },
    /// `argv[0]` contains `"`, which the program-name rule cannot carry.
    QuoteInProgramName,
    /// The command line is longer than Windows accepts.
    TooLong {
        /// Its length in UTF-16 units, NUL included.
        units: usize,
    },
}

impl std::fmt::Display for CommandLineError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CommandLineError::Empty => f.write_str("argv is empty"),
            CommandLineError::Nul { index } => {
                write!(f, "argv[{index}] contains a NUL character")
            }
            CommandLineError::QuoteInProgramName => f.write_str(
                "argv[0] contains a double quote, which a Windows command line cannot pass in the program name",
            ),
            CommandLineError::TooLong { units } => write!(
                f,
                "the command line is {units} UTF-16 units long; Windows accepts at most {MAX_UNITS}"
            ),
        }
    }
}

/// The command line that gives the program `argv` back, `argv[0]` first.
pub fn command_line(argv: &[String]) -> Result<String, CommandLineError> {
    let (program, args) = argv.split_first().ok_or(CommandLineError::Empty)?;
    if let Some(index) = argv.iter().position(|a| a.contains('\0')) {
        return Err(CommandLineError::Nul { index });
    }
    if program.contains('"') {
        return Err(CommandLineError::QuoteInProgramName);
    }
    let mut line = String::new();
    if program.is_empty() || program.contains([' ', '\t']) {
        line.push('"');
        line.push_str(program);
        line.push('"');
    } else {
        line.push_str(program);
    }
    for arg in args {
        line.push(' ');
        push_argument(&mut line, arg);
    }
    let units = line.encode_utf16().count() + 1;
    if units > MAX_UNITS {
        return Err(CommandLineError::TooLong { units });
    }
    Ok(line)
}

/// Appends one argument (not the program name), quoted when it must be.
fn push_argument(line: &mut String, arg: &str) {
    let plain = !arg.is_empty() && !arg.contains([' ', '\t', '\n', '\u{b}', '"']);
    if plain {
        line.push_str(arg);
        return;
    }
    line.push('"');
    let mut backslashes = 0usize;
    for c in arg.chars() {
        match c {
            '\\' => backslashes += 1,
            '"' => {
                // Each backslash doubled, then one more to escape the quote.
                push_backslashes(line, 2 * backslashes + 1);
                line.push('"');
                backslashes = 0;
            }
            _ => {
                push_backslashes(line, backslashes);
                line.push(c);
                backslashes = 0;
            }
        }
    }
    // Doubled, so the closing quote is not escaped.
    push_backslashes(line, 2 * backslashes);
    line.push('"');
}

fn push_backslashes(line: &mut String, n: usize) {
    line.extend(std::iter::repeat_n('\\', n));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The C runtime's split, written from its documented rules (the
    /// reference the quoting is checked against).
    fn split(line: &str) -> Vec<String> {
        let chars: Vec<char> = line.chars().collect();
        let mut i = 0;
        let mut argv = Vec::new();
        // The program name: up to the closing quote, or to white space.
        let mut program = String::new();
        if chars.first() == Some(&'"') {
            i = 1;
            while i < chars.len() && chars[i] != '"' {
                program.push(chars[i]);
                i += 1;
            }
            i += 1;
        } else {
            while i < chars.len() && chars[i] != ' ' && chars[i] != '\t' {
                program.push(chars[i]);
                i += 1;
            }
        }
        argv.push(program);
        loop {
            while i < chars.len() && (chars[i] == ' ' || chars[i] == '\t') {
                i += 1;
            }
            if i >= chars.len() {
                return argv;
            }
            let mut arg = String::new();
            let mut quoted = false;
            while i < chars.len() {
                let c = chars[i];
                if c == '\\' {
                    let start = i;
                    while i < chars.len() && chars[i] == '\\' {
                        i += 1;
                    }
                    let n = i - start;
                    if i < chars.len() && chars[i] == '"' {
                        arg.extend(std::iter::repeat_n('\\', n / 2));
                        if n % 2 == 1 {
                            arg.push('"');
                            i += 1;
                        }
                    } else {
                        arg.extend(std::iter::repeat_n('\\', n));
                    }
                    continue;
                }
                if c == '"' {
                    quoted = !quoted;
                    i += 1;
                    continue;
                }
                if (c == ' ' || c == '\t') && !quoted {
                    break;
                }
                arg.push(c);
                i += 1;
            }
            argv.push(arg);
        }
    }

    fn argv(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn the_documented_examples_are_written_as_documented() {
        // Microsoft's "Parsing C command-line arguments" table, read backwards.
        let cases: &[(&[&str], &str)] = &[
            (&["p", "a b c", "d", "e"], r#"p "a b c" d e"#),
            (&["p", r#"ab"c"#, "\\", "d"], r#"p "ab\"c" \ d"#),
            (&["p", r"a\\\b", "de fg", "h"], r#"p a\\\b "de fg" h"#),
            (&["p", r#"a\"b"#, "c", "d"], r#"p "a\\\"b" c d"#),
            (&["p", r"a\\b c", "d", "e"], r#"p "a\\b c" d e"#),
        ];
        for (args, line) in cases {
            assert_eq!(command_line(&argv(args)).unwrap(), *line, "{args:?}");
        }
    }

    #[test]
    fn every_awkward_argument_comes_back_unchanged() {
        let awkward = [
            "",
            " ",
            "a b",
            "tab\there",
            "new\nline",
            "vertical\u{b}tab",
            "\"",
            "\"\"",
            "\\",
            "\\\\",
            "trailing\\",
            "C:\\Program Files\\tool\\",
            "a\\\"b",
            "a\\\\\"b",
            "\\\"",
            "say \"hi\" \\o/",
            "%PATH% ^& | < > !x!",
            "日本語 ünïcödé",
        ];
        for a in awkward {
            let args = argv(&["C:\\Program Files\\ui qa\\prog.exe", a, "end"]);
            let line = command_line(&args).unwrap();
            assert_eq!(split(&line), args, "{a:?} was written as {line:?}");
        }
        let all: Vec<String> = std::iter::once("prog".to_string())
            .chain(awkward.iter().map(|s| s.to_string()))
            .collect();
        assert_eq!(split(&command_line(&all).unwrap()), all);
    }

    #[test]
    fn plain_arguments_are_not_quoted() {
        assert_eq!(
            command_line(&argv(&["python", "-q", "C:\\x\\y.py", "--n=1"])).unwrap(),
            "python -q C:\\x\\y.py --n=1"
        );
    }

    #[test]
    fn the_program_name_is_quoted_without_escapes() {
        assert_eq!(
            command_line(&argv(&["C:\\Program Files\\x.exe", "a"])).unwrap(),
            "\"C:\\Program Files\\x.exe\" a"
        );
        // A trailing backslash stays single: the name has no escapes.
        assert_eq!(
            command_line(&argv(&["C:\\dir with space\\"])).unwrap(),
            "\"C:\\dir with space\\\""
        );
        assert_eq!(command_line(&argv(&[""])).unwrap(), "\"\"");
        assert_eq!(
            command_line(&argv(&["a\"b"])),
            Err(CommandLineError::QuoteInProgramName)
        );
    }

    #[test]
    fn impossible_command_lines_are_refused() {
        assert_eq!(command_line(&[]), Err(CommandLineError::Empty));
        assert_eq!(
            command_line(&argv(&["p", "ok", "nul\0here"])),
            Err(CommandLineError::Nul { index: 2 })
        );
        let long = "x".repeat(MAX_UNITS);
        assert!(matches!(
            command_line(&argv(&["p", &long])),
            Err(CommandLineError::TooLong { .. })
        ));
        let fits = "x".repeat(MAX_UNITS - 3);
        assert!(command_line(&argv(&["p", &fits])).is_ok());
    }
}
