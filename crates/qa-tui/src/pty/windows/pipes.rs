//! The two anonymous pipes between the runner and the console host, and
//! the threads that block on them.
//!
//! Anonymous pipes have no asynchronous reads, so each of our ends has a
//! thread of its own: the reader turns `ReadFile` results into chunks for
//! the pump (and notes when output arrived), the writer performs the
//! writes the session queues, one after another, and acknowledges each.

use super::chunks::{Chunks, IN_FLIGHT};
use super::drain::OutputWatch;
use std::os::windows::io::{AsRawHandle, FromRawHandle, OwnedHandle};
use std::sync::Arc;
use tokio::sync::{mpsc, oneshot};
use windows_sys::Win32::Foundation::HANDLE;
use windows_sys::Win32::Storage::FileSystem::{ReadFile, WriteFile};
use windows_sys::Win32::System::Pipes::CreatePipe;

/// Bytes asked of the output pipe per read.
const READ_CHUNK: usize = 64 * 1024;

/// Both pipes: our ends, and the console host's ends (to hand to
/// `CreatePseudoConsole`, then close).
pub(super) struct Pipes {
    /// Where we write the program's input.
    pub(super) input: OwnedHandle,
    /// Where we read the console's output.
    pub(super) output: OwnedHandle,
    /// The console host reads its input here.
    pub(super) console_input: OwnedHandle,
    /// The console host writes its output here.
    pub(super) console_output: OwnedHandle,
}

/// Creates the two pipes (not inheritable: the console host gets its ends
/// from `CreatePseudoConsole`, never from handle inheritance).
pub(super) fn create() -> std::io::Result<Pipes> {
    let (console_input, input) = pipe()?;
    let (output, console_output) = pipe()?;
    Ok(Pipes {
        input,
        output,
        console_input,
        console_output,
    })
}

/// One anonymous pipe: (read end, write end).
#[allow(unsafe_code)]
fn pipe() -> std::io::Result<(OwnedHandle, OwnedHandle)> {
    let mut read: HANDLE = std::ptr::null_mut();
    let mut write: HANDLE = std::ptr::null_mut();
    // SAFETY: out-pointers to two handles; default security (not
    // inheritable) and buffer size.
    let ok = unsafe { CreatePipe(&mut read, &mut write, std::ptr::null(), 0) };
    if ok == 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: both handles were just created and are owned by nobody else.
    Ok(unsafe {
        (
            OwnedHandle::from_raw_handle(read),
            OwnedHandle::from_raw_handle(write),
        )
    })
}

/// The raw handle of an owned one, for a Win32 call.
pub(super) fn raw(h: &OwnedHandle) -> HANDLE {
    h.as_raw_handle()
}

/// Starts the reader thread on the output pipe. The output the pump reads
/// ends when the pipe does (the console host closed, after
/// `ClosePseudoConsole`) or a read fails; the thread also ends when the
/// pump is gone. `watch` learns when output arrives and when it ended.
pub(super) fn start_reader(
    output: OwnedHandle,
    watch: Arc<OutputWatch>,
) -> std::io::Result<Chunks> {
    let (tx, rx) = mpsc::channel(IN_FLIGHT);
    std::thread::Builder::new()
        .name("ui-qa-conpty-read".into())
        .spawn(move || {
            read_until_end(&output, &watch, &tx);
            // The pump sees the end once it took what is queued.
            drop(tx);
            watch.end();
        })?;
    Ok(Chunks::new(rx))
}

#[allow(unsafe_code)]
fn read_until_end(output: &OwnedHandle, watch: &OutputWatch, tx: &mpsc::Sender<Vec<u8>>) {
    let mut buf = vec![0u8; READ_CHUNK];
    loop {
        let mut n: u32 = 0;
        // SAFETY: a valid pipe handle we own; the buffer outlives the call
        // and is as long as stated; synchronous (no OVERLAPPED).
        let ok = unsafe {
            ReadFile(
                raw(output),
                buf.as_mut_ptr(),
                READ_CHUNK as u32,
                &mut n,
                std::ptr::null_mut(),
            )
        };
        if ok == 0 {
            // ERROR_BROKEN_PIPE: the console host closed its end — the end
            // of output. Any other error ends it too.
            return;
        }
        if n == 0 {
            continue;
        }
        watch.mark();
        if tx.blocking_send(buf[..n as usize].to_vec()).is_err() {
            return;
        }
    }
}

/// One queued write and its acknowledgement.
type Write = (Vec<u8>, oneshot::Sender<std::io::Result<()>>);

/// The writer thread's queue.
pub(super) struct Writer {
    tx: std::sync::mpsc::Sender<Write>,
}

impl Writer {
    /// Starts the writer thread on the input pipe; it ends (closing the
    /// pipe) when the `Writer` is dropped.
    pub(super) fn start(input: OwnedHandle) -> std::io::Result<Writer> {
        let (tx, rx) = std::sync::mpsc::channel::<Write>();
        std::thread::Builder::new()
            .name("ui-qa-conpty-write".into())
            .spawn(move || {
                for (bytes, ack) in rx {
                    let _ = ack.send(write_all(&input, &bytes));
                }
            })?;
        Ok(Writer { tx })
    }

    /// Writes all of `bytes`; done when the console host took them (it
    /// stops taking them while the program does not read its input).
    pub(super) async fn write(&self, bytes: &[u8]) -> std::io::Result<()> {
        let gone = || std::io::Error::new(std::io::ErrorKind::BrokenPipe, "the writer stopped");
        let (ack, done) = oneshot::channel();
        self.tx.send((bytes.to_vec(), ack)).map_err(|_| gone())?;
        done.await.unwrap_or_else(|_| Err(gone()))
    }
}

#[allow(unsafe_code)]
fn write_all(input: &OwnedHandle, mut bytes: &[u8]) -> std::io::Result<()> {
    while !bytes.is_empty() {
        let len = u32::try_from(bytes.len()).unwrap_or(u32::MAX);
        let mut n: u32 = 0;
        // SAFETY: a valid pipe handle we own; `len` bytes of `bytes` are
        // readable; synchronous (no OVERLAPPED).
        let ok = unsafe {
            WriteFile(
                raw(input),
                bytes.as_ptr(),
                len,
                &mut n,
                std::ptr::null_mut(),
            )
        };
        if ok == 0 {
            return Err(std::io::Error::last_os_error());
        }
        bytes = &bytes[n as usize..];
    }
    Ok(())
}
