//! Platforms without process cleanup: registrations are reported as left.

use super::{CleanupReport, CleanupStatus, LeftProcess};
use crate::deadline::Deadline;
use std::sync::Mutex;
use std::time::Duration;

/// Records registrations and reports them honestly.
#[derive(Debug)]
pub(super) struct Owner {
    roots: Mutex<Vec<(u32, String)>>,
}

impl Owner {
    pub(super) fn new(_seq: u64) -> Owner {
        Owner {
            roots: Mutex::new(Vec::new()),
        }
    }

    pub(super) fn marker(&self, _seq: Option<u64>) -> String {
        String::new()
    }

    pub(super) fn register(&self, pid: u32, label: &str, _seq: Option<u64>) {
        self.roots
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((pid, label.to_string()));
    }

    pub(super) async fn end_all(&self, _grace: Duration, _deadline: Deadline) -> CleanupReport {
        let roots = std::mem::take(&mut *self.roots.lock().unwrap_or_else(|e| e.into_inner()));
        let mut report = CleanupReport::default();
        for (pid, label) in roots {
            report.left.push(LeftProcess {
                pid,
                label,
                reason: "process cleanup is not implemented on this platform".into(),
            });
        }
        if !report.left.is_empty() {
            report.status = CleanupStatus::Incomplete;
        }
        report
    }

    pub(super) fn hang_up(&self, _pid: u32) -> bool {
        false
    }

    pub(super) fn kill_all_now(&self) {}
}
