//! A fresh home for a launched program: `HOME` and the XDG base
//! directories in the run's scratch, so what the program saves (settings,
//! caches, history) never lands in the user's home and goes with the run.

use super::{create_private_dir, EvidenceError};
use crate::Evidence;
use std::path::PathBuf;

/// The variables a fresh home sets, each with its directory under the
/// home (`""`: the home itself). Off Unix there are none: a Windows
/// program finds its profile folders through the shell's known folders,
/// not through variables it inherits.
#[cfg(unix)]
pub const HOME_VARS: &[(&str, &str)] = &[
    ("HOME", ""),
    ("XDG_CONFIG_HOME", ".config"),
    ("XDG_DATA_HOME", ".local/share"),
    ("XDG_CACHE_HOME", ".cache"),
    ("XDG_STATE_HOME", ".local/state"),
];

/// See the Unix list: off Unix a fresh home sets nothing.
#[cfg(not(unix))]
pub const HOME_VARS: &[(&str, &str)] = &[];

/// Most homes one run makes (one per launched program).
const MAX_HOMES: usize = 16;

impl Evidence {
    /// A fresh, empty, private home in the run's scratch (`work/home`, or
    /// `work/home-2`… when a run launches more than one program), with its
    /// XDG directories created, and the variables that point a program at
    /// them ([`HOME_VARS`]; none off Unix, and then nothing is created).
    /// Removed with the rest of the scratch when the run ends.
    pub fn fresh_home(&self) -> Result<Vec<(&'static str, PathBuf)>, EvidenceError> {
        if HOME_VARS.is_empty() {
            return Ok(Vec::new());
        }
        let mut last = None;
        for i in 1..=MAX_HOMES {
            let name = if i == 1 {
                "home".to_string()
            } else {
                format!("home-{i}")
            };
            match self.scratch_dir(&name) {
                Ok(home) => {
                    let mut vars = Vec::with_capacity(HOME_VARS.len());
                    for (var, sub) in HOME_VARS {
                        let dir = if sub.is_empty() {
                            home.clone()
                        } else {
                            home.join(sub)
                        };
                        // `.local` first, then what is under it.
                        if let Some(parent) = dir.parent().filter(|p| *p != home) {
                            if !parent.exists() {
                                create_private_dir(parent)?;
                            }
                        }
                        if dir != home {
                            create_private_dir(&dir)?;
                        }
                        vars.push((*var, dir));
                    }
                    return Ok(vars);
                }
                Err(EvidenceError::Exists(p)) => last = Some(EvidenceError::Exists(p)),
                Err(e) => return Err(e),
            }
        }
        Err(last.expect("at least one name was tried"))
    }
}

#[cfg(all(test, unix))]
mod tests {
    use crate::{Evidence, Secrets};
    use std::sync::Arc;

    #[test]
    fn a_fresh_home_is_private_empty_and_in_the_scratch() {
        use std::os::unix::fs::PermissionsExt;
        let ws = tempfile::tempdir().unwrap();
        let ev = Evidence::create(ws.path(), "run", Arc::new(Secrets::new())).unwrap();
        let vars = ev.fresh_home().unwrap();
        let names: Vec<&str> = vars.iter().map(|(k, _)| *k).collect();
        assert_eq!(
            names,
            [
                "HOME",
                "XDG_CONFIG_HOME",
                "XDG_DATA_HOME",
                "XDG_CACHE_HOME",
                "XDG_STATE_HOME"
            ]
        );
        let home = &vars[0].1;
        assert_eq!(home, &ev.run_dir().join("work/home"));
        for (_, d) in &vars {
            assert!(d.is_dir() && d.starts_with(home), "{}", d.display());
            let mode = std::fs::metadata(d).unwrap().permissions().mode();
            assert_eq!(mode & 0o077, 0, "{} is private", d.display());
        }
        // A second program of the same run gets its own.
        assert_eq!(
            ev.fresh_home().unwrap()[0].1,
            ev.run_dir().join("work/home-2")
        );
        // It goes with the scratch.
        ev.remove_scratch().unwrap();
        assert!(!home.exists());
    }
}
