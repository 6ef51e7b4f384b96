//! Running one contender process under a deadline and timing it, and the
//! small statistics the tables need.
//!
//! A contender runs in its own process group with stdin from `/dev/null` and
//! stdout/stderr into files (never pipes: a daemon that inherits them, like
//! agent-browser's, must not keep the bench waiting). The wall time is taken
//! from just before the spawn to the moment `wait` returns. On timeout the
//! whole process group — only processes this bench started — is killed.
//!
//! The peak resident memory of the contender process itself (not its
//! children: a browser, a terminal program) is its kernel high-water mark,
//! `VmHWM` in `/proc/<pid>/status`, read every 10 ms while it runs; the
//! last reading before it exits is the peak, short of growth in its last
//! few milliseconds.

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// How one timed process went.
#[derive(Debug)]
pub struct Outcome {
    /// Wall time from spawn to exit, in milliseconds.
    pub ms: f64,
    /// Exit status (None: it could not be started).
    pub status: Option<ExitStatus>,
    /// Whether it was killed at the deadline.
    pub timed_out: bool,
    /// Everything it printed on stdout.
    pub stdout: String,
    /// Everything it printed on stderr (or why it could not start).
    pub stderr: String,
    /// Its peak resident memory in KiB (`None`: never read).
    pub peak_rss_kib: Option<u64>,
}

impl Outcome {
    /// Exited 0 before the deadline.
    pub fn ok(&self) -> bool {
        !self.timed_out && self.status.is_some_and(|s| s.success())
    }

    /// A one-line account of a failure: the status and the last output.
    pub fn why(&self) -> String {
        let how = if self.timed_out {
            "timed out".to_string()
        } else {
            match self.status {
                Some(s) => format!("exited with {s}"),
                None => "could not start".to_string(),
            }
        };
        let tail = tail(&format!("{}\n{}", self.stdout, self.stderr), 6);
        if tail.is_empty() {
            how
        } else {
            format!("{how}: {tail}")
        }
    }
}

/// The last `n` non-empty lines of `text`, joined with " | ".
pub fn tail(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    lines[lines.len().saturating_sub(n)..].join(" | ")
}

/// Kills the process group `pgid` (a group this bench created).
pub fn kill_group(pgid: u32, signal: &str) {
    let _ = Command::new("kill")
        .args([signal, "--", &format!("-{pgid}")])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
}

/// Runs `cmd` to completion (or until `timeout`), timing it. `scratch` is a
/// directory for its output files.
pub fn run_timed(cmd: &mut Command, timeout: Duration, scratch: &Path) -> Outcome {
    run(cmd, timeout, scratch, true)
}

/// [`run_timed`] with stdout going to `/dev/null` (a program whose output is
/// the workload, not a report).
pub fn run_timed_quiet(cmd: &mut Command, timeout: Duration, scratch: &Path) -> Outcome {
    run(cmd, timeout, scratch, false)
}

fn run(cmd: &mut Command, timeout: Duration, scratch: &Path, keep_stdout: bool) -> Outcome {
    let out_path = scratch.join("stdout.txt");
    let err_path = scratch.join("stderr.txt");
    let files = std::fs::File::create(&out_path).and_then(|o| {
        let e = std::fs::File::create(&err_path)?;
        Ok((o, e))
    });
    let (out, err) = match files {
        Ok(f) => f,
        Err(e) => return not_started(format!("output files in {}: {e}", scratch.display())),
    };
    let out = if keep_stdout {
        Stdio::from(out)
    } else {
        Stdio::null()
    };
    cmd.stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .process_group(0);
    let started = Instant::now();
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => return not_started(format!("{cmd:?}: {e}")),
    };
    let pgid = child.id();
    let (rss_done, rss_watch) = mpsc::channel::<()>();
    let rss = std::thread::spawn(move || {
        let mut peak = None;
        loop {
            if let Some(kib) = high_water_kib(pgid) {
                peak = Some(kib);
            }
            match rss_watch.recv_timeout(Duration::from_millis(10)) {
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                _ => return peak,
            }
        }
    });
    let (done, watch) = mpsc::channel::<()>();
    let watchdog = std::thread::spawn(move || {
        if let Err(mpsc::RecvTimeoutError::Timeout) = watch.recv_timeout(timeout) {
            kill_group(pgid, "-KILL");
            true
        } else {
            false
        }
    });
    let status = child.wait().ok();
    let ms = started.elapsed().as_secs_f64() * 1000.0;
    let _ = rss_done.send(());
    let peak_rss_kib = rss.join().ok().flatten();
    let _ = done.send(());
    let timed_out = watchdog.join().unwrap_or(false);
    Outcome {
        ms,
        status,
        timed_out,
        peak_rss_kib,
        stdout: std::fs::read_to_string(&out_path).unwrap_or_default(),
        stderr: std::fs::read_to_string(&err_path).unwrap_or_default(),
    }
}

fn not_started(why: String) -> Outcome {
    Outcome {
        ms: 0.0,
        status: None,
        timed_out: false,
        stdout: String::new(),
        stderr: why,
        peak_rss_kib: None,
    }
}

/// `VmHWM` of process `pid` in KiB (`None`: gone, or a zombie whose memory
/// is already released). The kernel's high-water mark only grows, so one
/// reading just before a process ends is its peak.
pub fn high_water_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// KiB as MiB text (`-` when unknown).
pub fn mib(kib: Option<u64>) -> String {
    kib.map_or_else(|| "-".into(), |k| format!("{:.0} MiB", k as f64 / 1024.0))
}

/// The median of `v` (the mean of the middle two for an even count).
pub fn median(v: &[f64]) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let m = s.len() / 2;
    Some(if s.len() % 2 == 1 {
        s[m]
    } else {
        (s[m - 1] + s[m]) / 2.0
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_and_even_counts() {
        assert_eq!(median(&[]), None);
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), Some(2.5));
    }

    #[test]
    fn memory_reads_in_whole_mib() {
        assert_eq!(mib(None), "-");
        assert_eq!(mib(Some(87_040)), "85 MiB");
    }

    #[test]
    fn reads_its_own_high_water_mark() {
        let kib = high_water_kib(std::process::id()).expect("this process's VmHWM");
        assert!(kib > 0);
        assert_eq!(high_water_kib(u32::MAX), None);
    }

    #[test]
    fn tail_keeps_the_last_lines() {
        assert_eq!(tail("a\n\nb\nc\n", 2), "b | c");
        assert_eq!(tail("", 3), "");
    }

    #[test]
    fn times_a_process_and_kills_it_at_the_deadline() {
        let dir = std::env::temp_dir().join(format!("xtask-timing-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let o = run_timed(
            Command::new("sh").args(["-c", "echo hi; exit 3"]),
            Duration::from_secs(10),
            &dir,
        );
        assert!(!o.ok());
        assert_eq!(o.stdout.trim(), "hi");
        assert_eq!(o.status.and_then(|s| s.code()), Some(3));
        let o = run_timed(
            Command::new("sleep").arg("30"),
            Duration::from_millis(200),
            &dir,
        );
        assert!(o.timed_out && !o.ok());
        assert!(o.ms < 10_000.0);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
