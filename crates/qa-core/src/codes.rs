//! Stable error codes as enums.
//!
//! Every code a run can report (`reasonCode` in a result, `code` of a
//! [`DriverError`](crate::DriverError) or [`FlowError`](crate::FlowError))
//! is a variant of an enum that implements [`ErrorCode`]. Each crate
//! declares its own enum with [`error_codes!`], so a code is written once,
//! carries its meaning as a doc comment, and shows up in the generated table
//! of `docs/errors.md`. A test in the CLI crate checks that no two enums
//! share a code and that the table is current.

/// A stable, documented error code.
pub trait ErrorCode: Copy + Send + Sync + 'static {
    /// The machine code, e.g. `web.cdp.timeout`.
    fn as_str(self) -> &'static str;
    /// What the code means, in one sentence (its doc comment).
    fn meaning(self) -> &'static str;
}

/// One row of the error table: a code and its meaning.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CodeInfo {
    /// The machine code.
    pub code: &'static str,
    /// What it means.
    pub meaning: &'static str,
}

/// Declares an enum of stable error codes.
///
/// ```
/// qa_core::error_codes! {
///     /// Codes of an example driver.
///     pub enum DemoCode {
///         /// The program could not be found.
///         NotFound = "demo.launch.not_found",
///     }
/// }
/// use qa_core::codes::ErrorCode;
/// assert_eq!(DemoCode::NotFound.as_str(), "demo.launch.not_found");
/// assert_eq!(DemoCode::ALL.len(), 1);
/// ```
#[macro_export]
macro_rules! error_codes {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident {
            $(
                #[doc = $doc:literal]
                $variant:ident = $code:literal,
            )+
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        $vis enum $name {
            $(
                #[doc = $doc]
                $variant,
            )+
        }

        impl $name {
            /// The machine code.
            pub fn as_str(self) -> &'static str {
                <$name as $crate::codes::ErrorCode>::as_str(self)
            }

            /// Every code of this enum, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// Every code with its meaning, for the error table.
            pub fn table() -> ::std::vec::Vec<$crate::codes::CodeInfo> {
                use $crate::codes::ErrorCode as _;
                Self::ALL
                    .iter()
                    .map(|c| $crate::codes::CodeInfo { code: c.as_str(), meaning: c.meaning() })
                    .collect()
            }
        }

        impl $crate::codes::ErrorCode for $name {
            fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $code,)+
                }
            }
            fn meaning(self) -> &'static str {
                match self {
                    $($name::$variant => $doc.trim(),)+
                }
            }
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

error_codes! {
    /// Codes the runner and the evidence store report for any backend.
    pub enum CoreCode {
        /// An assertion can never hold (for example, the program it watches exited).
        AssertionFailed = "assertion.failed",
        /// An assertion did not hold before its step deadline; the last observation is in the reason.
        AssertionTimeout = "assertion.timeout",
        /// A step's deadline passed while the driver was still working on it.
        StepTimeout = "step.timeout",
        /// The flow deadline passed.
        RunTimeout = "run.timeout",
        /// No driver handles the flow's target kind (a build without that backend).
        RunNoDriver = "run.no_driver",
        /// The run was cancelled (Ctrl-C or SIGTERM).
        RunCancelled = "run.cancelled",
        /// The selected driver is missing a capability on this host; the run is BLOCKED.
        RunBlockedMissingCapability = "run.blocked.missing_capability",
        /// An evidence name contained a separator, `..` or an absolute path.
        EvidenceUnsafeName = "evidence.unsafe_name",
        /// A path component of the run directory is a symlink.
        EvidenceSymlink = "evidence.symlink",
        /// An evidence file already existed; evidence is never overwritten.
        EvidenceExists = "evidence.exists",
        /// The run directory or a file in it was replaced during the run; the run fails closed.
        EvidenceSwapped = "evidence.swapped",
        /// The workspace, or the project directory the default workspace would be made in, belongs to another user; it is never adopted (pass `--workspace` with a directory of your own).
        EvidenceForeignOwner = "evidence.owner",
        /// Writing evidence failed with an I/O error.
        EvidenceIo = "evidence.io",
        /// A driver was asked to do something its surface does not support.
        Unsupported = "driver.unsupported",
        /// The driver is not implemented on this platform yet; the run is BLOCKED.
        DriverUnavailable = "driver.unavailable",
        /// The flow asks for an auth profile and there was no auth file; a private template was created for a person to fill; the run is BLOCKED.
        AuthProvideCredentials = "auth.provide_credentials",
        /// The flow's auth profile is missing, incomplete, rejected or expired; a person must update it; the run is BLOCKED.
        AuthUpdateRequired = "auth.update_required",
        /// The auth file (or a file it names) is unsafe or invalid: a symlink on its path, group/other permissions, another owner, or not valid; the run is BLOCKED.
        AuthFileRefused = "auth.file_refused",
    }
}

/// Checks one family of codes: every code is unique, dotted lowercase
/// (`a-z`, `0-9`, `_`, `.`), has a meaning and starts with one of
/// `prefixes`. Each crate's test calls it on its own table; the command
/// line checks uniqueness across all of them.
pub fn check_table(rows: &[CodeInfo], prefixes: &[&str]) -> Result<(), String> {
    let mut seen = std::collections::HashSet::new();
    for r in rows {
        if !seen.insert(r.code) {
            return Err(format!("{} is declared twice", r.code));
        }
        if r.meaning.is_empty() {
            return Err(format!("{} has no meaning", r.code));
        }
        let well_formed = r.code.contains('.')
            && r.code
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '.' || c == '_');
        if !well_formed {
            return Err(format!("{} is not a dotted lowercase code", r.code));
        }
        if !prefixes.iter().any(|p| r.code.starts_with(p)) {
            return Err(format!(
                "{} does not start with one of {prefixes:?}",
                r.code
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn core_codes_are_unique_and_documented() {
        check_table(
            &CoreCode::table(),
            &[
                "assertion.",
                "step.",
                "run.",
                "evidence.",
                "driver.",
                "auth.",
            ],
        )
        .unwrap();
        assert_eq!(CoreCode::StepTimeout.to_string(), "step.timeout");
    }

    #[test]
    fn a_bad_table_is_named() {
        let row = |code| CodeInfo { code, meaning: "m" };
        assert!(check_table(&[row("a.b"), row("a.b")], &["a."])
            .unwrap_err()
            .contains("twice"));
        assert!(check_table(&[row("a.B")], &["a."])
            .unwrap_err()
            .contains("lowercase"));
        assert!(check_table(&[row("b.c")], &["a."])
            .unwrap_err()
            .contains("start"));
        assert!(check_table(
            &[CodeInfo {
                code: "a.b",
                meaning: ""
            }],
            &["a."]
        )
        .unwrap_err()
        .contains("meaning"));
    }
}
