//! Windows: every registered process is put in the owner's Job Object, so
//! the processes it starts later are in the job too.
//!
//! The job is created with `JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE`: when the
//! runner ends — normally or killed — its handle closes and Windows ends
//! everything in the job (the role the watchdog has on Unix). Cleanup lists
//! the job's processes, ends them all with `TerminateJobObject` (Windows has
//! no polite signal every program answers; it is reported as `SIGKILL`), and
//! waits for the job to be empty within the deadline. A process is never
//! signalled by pid outside the job, so nothing the run did not start is
//! touched. [`super::ProcessOwner::spawn`] starts a program suspended, puts
//! it in the job, then lets it run ([`resume`]), so even a launcher that
//! starts its real program at once cannot leave it outside the job. A
//! process started elsewhere and only registered can (a short window
//! between its start and the registration).

use super::{CleanupReport, CleanupStatus, EndedProcess, Ending, LeftProcess};
use crate::deadline::Deadline;
use std::sync::Mutex;
use std::time::Duration;
use windows_sys::Win32::Foundation::{CloseHandle, HANDLE};
use windows_sys::Win32::System::Diagnostics::ToolHelp::{
    CreateToolhelp32Snapshot, Thread32First, Thread32Next, TH32CS_SNAPTHREAD, THREADENTRY32,
};
use windows_sys::Win32::System::JobObjects::{
    AssignProcessToJobObject, CreateJobObjectW, JobObjectBasicProcessIdList,
    JobObjectExtendedLimitInformation, QueryInformationJobObject, SetInformationJobObject,
    TerminateJobObject, JOBOBJECT_BASIC_PROCESS_ID_LIST, JOBOBJECT_EXTENDED_LIMIT_INFORMATION,
    JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
};
use windows_sys::Win32::System::Threading::{
    OpenProcess, OpenThread, ResumeThread, PROCESS_SET_QUOTA, PROCESS_TERMINATE,
    THREAD_SUSPEND_RESUME,
};

/// The creation flag [`super::ProcessOwner::spawn`] starts a program with,
/// so it is in the job before it runs.
pub(super) const START_SUSPENDED: u32 = windows_sys::Win32::System::Threading::CREATE_SUSPENDED;

/// Lets a process started with [`START_SUSPENDED`] run: resumes the
/// threads of `pid` (a new process has one). Returns how many it resumed.
#[allow(unsafe_code)]
pub(super) fn resume(pid: u32) -> usize {
    // SAFETY: a snapshot of every thread; closed below.
    let snap = unsafe { CreateToolhelp32Snapshot(TH32CS_SNAPTHREAD, 0) };
    if snap.is_null() || snap == windows_sys::Win32::Foundation::INVALID_HANDLE_VALUE {
        return 0;
    }
    // SAFETY: a zeroed entry with its size set is what the walk expects.
    let mut e: THREADENTRY32 = unsafe { std::mem::zeroed() };
    e.dwSize = std::mem::size_of::<THREADENTRY32>() as u32;
    let mut resumed = 0;
    // SAFETY: a valid snapshot and entry.
    let mut ok = unsafe { Thread32First(snap, &mut e) };
    while ok != 0 {
        if e.th32OwnerProcessID == pid {
            // SAFETY: an owned thread handle or null; closed once.
            let t = unsafe { OpenThread(THREAD_SUSPEND_RESUME, 0, e.th32ThreadID) };
            if !t.is_null() {
                // SAFETY: a valid thread handle.
                if unsafe { ResumeThread(t) } != u32::MAX {
                    resumed += 1;
                }
                // SAFETY: closed once.
                unsafe { CloseHandle(t) };
            }
        }
        // SAFETY: as above.
        ok = unsafe { Thread32Next(snap, &mut e) };
    }
    // SAFETY: the snapshot is closed once.
    unsafe { CloseHandle(snap) };
    resumed
}

/// Most process ids read from the job at once.
const MAX_LISTED: usize = 4096;

/// How often cleanup looks whether the job is empty.
const POLL: Duration = Duration::from_millis(25);

/// The exit code of processes the job's termination ends.
const TERMINATED: u32 = 1;

/// A job handle, closed (ending what is left in it) on drop.
#[derive(Debug)]
struct Job(HANDLE);

// SAFETY: a job handle is a kernel object handle, usable from any thread.
#[allow(unsafe_code)]
unsafe impl Send for Job {}
// SAFETY: as above; the calls made on it are thread-safe.
#[allow(unsafe_code)]
unsafe impl Sync for Job {}

impl Job {
    /// A new anonymous job whose processes end when its last handle closes.
    #[allow(unsafe_code)]
    fn create() -> Option<Job> {
        // SAFETY: null attributes and name create an anonymous job.
        let h = unsafe { CreateJobObjectW(std::ptr::null(), std::ptr::null()) };
        if h.is_null() {
            return None;
        }
        let job = Job(h);
        // SAFETY: a zeroed limit structure is valid; only the flag is set.
        let mut info: JOBOBJECT_EXTENDED_LIMIT_INFORMATION = unsafe { std::mem::zeroed() };
        info.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
        // SAFETY: `info` is the structure this information class reads, of
        // the size given.
        let ok = unsafe {
            SetInformationJobObject(
                job.0,
                JobObjectExtendedLimitInformation,
                (&info as *const JOBOBJECT_EXTENDED_LIMIT_INFORMATION).cast(),
                std::mem::size_of::<JOBOBJECT_EXTENDED_LIMIT_INFORMATION>() as u32,
            )
        };
        (ok != 0).then_some(job)
    }

    /// Puts process `pid` in the job.
    #[allow(unsafe_code)]
    fn assign(&self, pid: u32) -> Result<(), String> {
        // SAFETY: OpenProcess returns a handle we own or null.
        let p = unsafe { OpenProcess(PROCESS_SET_QUOTA | PROCESS_TERMINATE, 0, pid) };
        if p.is_null() {
            return Err(format!(
                "cannot open process {pid}: {}",
                std::io::Error::last_os_error()
            ));
        }
        // SAFETY: both handles are valid; the process handle is closed once.
        let ok = unsafe { AssignProcessToJobObject(self.0, p) };
        let err = std::io::Error::last_os_error();
        // SAFETY: `p` came from OpenProcess and is closed exactly once.
        unsafe { CloseHandle(p) };
        if ok == 0 {
            return Err(format!("cannot put process {pid} in the run's job: {err}"));
        }
        Ok(())
    }

    /// The ids of the processes in the job now.
    #[allow(unsafe_code)]
    fn pids(&self) -> Vec<u32> {
        // The list structure holds one id inline; the buffer holds the rest.
        let words = 2 + MAX_LISTED;
        let mut buf = vec![0usize; words];
        // SAFETY: the buffer is large enough for the header and MAX_LISTED
        // ids, and aligned for the structure.
        let ok = unsafe {
            QueryInformationJobObject(
                self.0,
                JobObjectBasicProcessIdList,
                buf.as_mut_ptr().cast(),
                (words * std::mem::size_of::<usize>()) as u32,
                std::ptr::null_mut(),
            )
        };
        if ok == 0 {
            return Vec::new();
        }
        // SAFETY: the call filled the header at the start of the buffer.
        let list = unsafe { &*(buf.as_ptr() as *const JOBOBJECT_BASIC_PROCESS_ID_LIST) };
        let n = (list.NumberOfProcessIdsInList as usize).min(MAX_LISTED);
        let header = std::mem::offset_of!(JOBOBJECT_BASIC_PROCESS_ID_LIST, ProcessIdList)
            / std::mem::size_of::<usize>();
        buf[header..header + n].iter().map(|&p| p as u32).collect()
    }

    /// Ends every process in the job.
    #[allow(unsafe_code)]
    fn terminate(&self) {
        // SAFETY: a valid job handle.
        unsafe { TerminateJobObject(self.0, TERMINATED) };
    }
}

impl Drop for Job {
    #[allow(unsafe_code)]
    fn drop(&mut self) {
        // SAFETY: the handle is owned and closed once.
        unsafe { CloseHandle(self.0) };
    }
}

/// The Job Object owner.
#[derive(Debug)]
pub(super) struct Owner {
    job: Option<Job>,
    roots: Mutex<Vec<(u32, String)>>,
    /// Roots that could not be put in the job, with why.
    outside: Mutex<Vec<(u32, String, String)>>,
}

impl Owner {
    pub(super) fn new(_seq: u64) -> Owner {
        Owner {
            job: Job::create(),
            roots: Mutex::new(Vec::new()),
            outside: Mutex::new(Vec::new()),
        }
    }

    pub(super) fn marker(&self, _seq: Option<u64>) -> String {
        String::new()
    }

    pub(super) fn register(&self, pid: u32, label: &str, _seq: Option<u64>) {
        let assigned = match &self.job {
            Some(j) => j.assign(pid),
            None => Err("the run's job object could not be created".into()),
        };
        match assigned {
            Ok(()) => lock(&self.roots).push((pid, label.to_string())),
            Err(why) => lock(&self.outside).push((pid, label.to_string(), why)),
        }
    }

    pub(super) async fn end_all(&self, _grace: Duration, deadline: Deadline) -> CleanupReport {
        let roots = std::mem::take(&mut *lock(&self.roots));
        let outside = std::mem::take(&mut *lock(&self.outside));
        let mut report = CleanupReport::default();
        let running = self.job.as_ref().map(Job::pids).unwrap_or_default();
        let label_of = |pid: u32| {
            roots
                .iter()
                .find(|(p, _)| *p == pid)
                .map(|(_, l)| l.clone())
                .unwrap_or_else(|| {
                    roots
                        .first()
                        .map(|(_, l)| format!("{l} descendant"))
                        .unwrap_or_else(|| "descendant".into())
                })
        };
        for (pid, label) in &roots {
            if !running.contains(pid) {
                report.ended.push(EndedProcess {
                    pid: *pid,
                    label: label.clone(),
                    how: Ending::Exited,
                });
            }
        }
        if let Some(job) = &self.job {
            if !running.is_empty() {
                job.terminate();
                while !job.pids().is_empty() && !deadline.expired() {
                    tokio::time::sleep(POLL.min(deadline.remaining())).await;
                }
            }
            let still = job.pids();
            for pid in running {
                if still.contains(&pid) {
                    report.left.push(LeftProcess {
                        pid,
                        label: label_of(pid),
                        reason: "still running after the job was terminated".into(),
                    });
                } else {
                    report.ended.push(EndedProcess {
                        pid,
                        label: label_of(pid),
                        how: Ending::Sigkill,
                    });
                }
            }
        }
        for (pid, label, why) in outside {
            report.left.push(LeftProcess {
                pid,
                label,
                reason: why,
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

    pub(super) fn kill_all_now(&self) {
        if let Some(j) = &self.job {
            j.terminate();
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
