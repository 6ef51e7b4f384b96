//! Safety net after cleanup: processes whose command line names this run's
//! private profile directory (unique to the run, so never someone else's).

use std::path::Path;

/// Pids (other than zombies) whose command line contains `profile`.
pub fn processes_using(profile: &Path) -> Vec<u32> {
    let needle = profile.display().to_string();
    let mut out = Vec::new();
    #[cfg(target_os = "linux")]
    if let Ok(rd) = std::fs::read_dir("/proc") {
        for e in rd.flatten() {
            let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
                continue;
            };
            let Ok(cmd) = std::fs::read(format!("/proc/{pid}/cmdline")) else {
                continue;
            };
            if !String::from_utf8_lossy(&cmd).contains(&needle) {
                continue;
            }
            let zombie = std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .ok()
                .and_then(|s| {
                    s.rsplit(')')
                        .next()
                        .map(|r| r.trim_start().starts_with('Z'))
                })
                .unwrap_or(true);
            if !zombie {
                out.push(pid);
            }
        }
    }
    let _ = needle;
    out
}

/// SIGKILL each pid.
pub fn kill(pids: &[u32]) {
    #[cfg(unix)]
    for &p in pids {
        #[allow(unsafe_code)]
        // SAFETY: kill(2) with a positive pid has no memory-safety preconditions.
        unsafe {
            libc::kill(p as i32, libc::SIGKILL);
        }
    }
    #[cfg(not(unix))]
    let _ = pids;
}
