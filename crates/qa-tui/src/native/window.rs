//! The session's side of a native terminal: start the owned terminal
//! window on the window host's display with the bridge as its command,
//! accept exactly one bridge that knows the token, and wait for the window
//! to show. What the program writes is then mirrored to the window
//! ([`Mirror`]), and what the window answers is handed back.

use super::bridge::{parse_hello, token_matches, SOCKET_ENV, TOKEN_ENV};
use super::provider::Provider;
use crate::codes::TuiCode;
use qa_core::window::WindowScreen;
use qa_core::{Deadline, DriverError, SessionContext};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use tokio::io::AsyncWriteExt;
use tokio::net::unix::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::{UnixListener, UnixStream};
use tokio::sync::{mpsc, watch};

/// The label the terminal window is registered under with the run's
/// process owner.
pub(crate) const LABEL: &str = "terminal window";

/// How long one connection may take to send its handshake.
const HELLO_MS: u64 = 2_000;
/// The longest handshake line accepted.
const HELLO_MAX: usize = 128;

/// An open terminal window with its bridge connected.
pub(crate) struct NativeWindow {
    /// Which terminal emulator.
    pub provider: Provider,
    /// The terminal emulator's process.
    pub pid: u32,
    /// The window, as the display names it.
    pub window: String,
    /// The window's size in cells, as the bridge reported it.
    pub cols: u16,
    /// Rows.
    pub rows: u16,
    /// The display.
    pub screen: Box<dyn WindowScreen>,
    /// The private directory holding the socket (removed on drop).
    dir: PathBuf,
}

impl Drop for NativeWindow {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn start_error(msg: impl Into<String>) -> DriverError {
    DriverError::new(TuiCode::NativeTerminalStart, msg)
}

/// A fresh directory only this user can enter.
fn private_dir() -> std::io::Result<PathBuf> {
    use std::os::unix::fs::DirBuilderExt;
    for _ in 0..100 {
        let p = std::env::temp_dir().join(format!("ui-qa-term-{}", token(6)?));
        match std::fs::DirBuilder::new().mode(0o700).create(&p) {
            Ok(()) => return Ok(p),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(std::io::Error::other("no free private directory name"))
}

/// `n` random bytes, in hex.
fn token(n: usize) -> std::io::Result<String> {
    let mut b = vec![0u8; n];
    getrandom::fill(&mut b).map_err(|e| std::io::Error::other(e.to_string()))?;
    Ok(b.iter().map(|x| format!("{x:02x}")).collect())
}

/// The last lines the terminal emulator wrote to its log.
fn log_tail(dir: &Path) -> String {
    let text = std::fs::read_to_string(dir.join("terminal.log")).unwrap_or_default();
    let lines: Vec<&str> = text.lines().rev().take(3).collect();
    if lines.is_empty() {
        String::new()
    } else {
        let mut l = lines;
        l.reverse();
        format!(": {}", l.join(" / "))
    }
}

/// Starts `provider` (at `program`) on `screen` with `bridge` as its
/// command, a window of `cols`×`rows` titled `title`, and waits for its
/// bridge and its window; the window and the connection to its bridge.
#[allow(clippy::too_many_arguments)]
pub(crate) async fn open(
    provider: Provider,
    program: &Path,
    bridge: &Path,
    screen: Box<dyn WindowScreen>,
    ctx: &SessionContext,
    (cols, rows): (u16, u16),
    title: &str,
    deadline: Deadline,
) -> Result<(NativeWindow, UnixStream), DriverError> {
    let dir = private_dir().map_err(|e| start_error(format!("private directory: {e}")))?;
    let socket = dir.join("bridge.sock");
    let listener = UnixListener::bind(&socket)
        .map_err(|e| start_error(format!("the bridge socket could not be opened: {e}")))?;
    let secret = token(16).map_err(|e| start_error(format!("no random token: {e}")))?;
    let mut cmd = tokio::process::Command::new(program);
    cmd.args(provider.args(cols, rows, title, bridge))
        // Nothing of the program's and nothing of ui-qa's environment: the
        // display, a UTF-8 locale, a PATH, and the bridge's two values.
        .env_clear()
        .envs(screen.env())
        .env("PATH", crate::launch::FALLBACK_PATH)
        .env("LC_ALL", "C.UTF-8")
        // Caches and settings a terminal writes stay in the private
        // directory and go with it.
        .env("HOME", &dir)
        .env(SOCKET_ENV, &socket)
        .env(TOKEN_ENV, &secret)
        .current_dir(&dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(
            std::fs::File::create(dir.join("terminal.log"))
                .map(Stdio::from)
                .unwrap_or_else(|_| Stdio::null()),
        );
    let mut child = ctx
        .processes
        .spawn(cmd, LABEL)
        .map_err(|e| start_error(format!("{} could not be started: {e}", program.display())))?;
    let pid = child.id().unwrap_or_default();
    let accepted = tokio::select! {
        r = accept(&listener, &secret, deadline) => r,
        status = child.wait() => Err(start_error(format!(
            "{} ended before its bridge connected ({}){}",
            provider.name(),
            status.map(|s| s.to_string()).unwrap_or_else(|e| e.to_string()),
            log_tail(&dir)
        ))),
    };
    let (stream, (wcols, wrows)) = match accepted {
        Ok(a) => a,
        Err(e) => {
            let _ = std::fs::remove_dir_all(&dir);
            return Err(e);
        }
    };
    // Only one bridge: nothing else may connect from now on.
    drop(listener);
    let _ = std::fs::remove_file(&socket);
    // The child handle is not needed: the run's process owner ends it.
    drop(child);
    let window = match screen.wait_window(pid, deadline).await {
        Ok(w) => w,
        Err(e) => {
            let _ = std::fs::remove_dir_all(&dir);
            return Err(start_error(format!(
                "{}'s window did not show: {}",
                provider.name(),
                e.message
            )));
        }
    };
    Ok((
        NativeWindow {
            provider,
            pid,
            window,
            cols: wcols,
            rows: wrows,
            screen,
            dir,
        },
        stream,
    ))
}

/// Accepts connections until one sends the token; the others are closed
/// unanswered.
async fn accept(
    listener: &UnixListener,
    secret: &str,
    deadline: Deadline,
) -> Result<(UnixStream, (u16, u16)), DriverError> {
    loop {
        let Some(conn) = deadline.run(listener.accept()).await else {
            return Err(start_error(
                "the terminal window's bridge did not connect before the deadline (the program that embeds ui-qa must call qa_tui::native::bridge::main_if_requested() first thing in main)",
            ));
        };
        let Ok((mut stream, _)) = conn else { continue };
        let hello = Deadline::after_ms(HELLO_MS).min(deadline);
        let Some(Some(line)) = hello.run(read_line(&mut stream)).await else {
            continue;
        };
        match parse_hello(&line) {
            Some((t, c, r)) if token_matches(t, secret) => return Ok((stream, (c, r))),
            _ => continue,
        }
    }
}

/// One handshake line, read a byte at a time so that nothing after it is
/// taken from the stream; `None` past [`HELLO_MAX`] bytes or at its end.
async fn read_line(stream: &mut UnixStream) -> Option<String> {
    use tokio::io::AsyncReadExt;
    let mut line = Vec::new();
    loop {
        let b = stream.read_u8().await.ok()?;
        if b == b'\n' {
            return String::from_utf8(line).ok();
        }
        if line.len() >= HELLO_MAX {
            return None;
        }
        line.push(b);
    }
}

/// What the session asks the window to know it has read everything sent
/// before: a device status report (`CSI 5 n`), which a terminal answers in
/// order, after parsing every byte before it.
pub(crate) const FENCE: &[u8] = b"\x1b[5n";
/// The window's answer to [`FENCE`] ("terminal OK").
pub(crate) const FENCE_REPLY: &[u8] = b"\x1b[0n";

/// Removes the first [`FENCE_REPLY`] from `chunk`; whether there was one.
/// (A program that asked the same question gets the same answer: the
/// window answers in order, so only the count matters.)
pub(crate) fn take_fence_reply(chunk: &mut Vec<u8>) -> bool {
    match chunk
        .windows(FENCE_REPLY.len())
        .position(|w| w == FENCE_REPLY)
    {
        Some(i) => {
            chunk.drain(i..i + FENCE_REPLY.len());
            true
        }
        None => false,
    }
}

/// The program's output on its way to the window.
#[derive(Clone)]
pub(crate) struct Mirror {
    tx: mpsc::UnboundedSender<Vec<u8>>,
    /// Fences sent, and fences whose answer has not come back yet.
    asked: Arc<AtomicU64>,
    pending: Arc<AtomicU64>,
    /// Fences answered.
    answered: watch::Receiver<u64>,
}

impl Mirror {
    /// Sends a copy of `bytes` to the window.
    pub(crate) fn send(&self, bytes: &[u8]) {
        let _ = self.tx.send(bytes.to_vec());
    }

    /// Waits until the window has read everything sent so far (its answer
    /// to a [`FENCE`] came back), the deadline passes or the bridge is
    /// gone; whether it has.
    pub(crate) async fn fence(&self, deadline: Deadline) -> bool {
        let n = self.asked.fetch_add(1, Ordering::SeqCst) + 1;
        self.pending.fetch_add(1, Ordering::SeqCst);
        if self.tx.send(FENCE.to_vec()).is_err() {
            return false;
        }
        let mut w = self.answered.clone();
        let answered = matches!(deadline.run(w.wait_for(|a| *a >= n)).await, Some(Ok(_)));
        answered
    }
}

/// Starts the two copies over the bridge's connection: the program's
/// output to the window (through the returned [`Mirror`]), and the
/// window's bytes to `to_program` (less the answers to fences).
pub(crate) fn start_mirror(
    stream: UnixStream,
    to_program: impl Fn(Vec<u8>) + Send + 'static,
) -> (Mirror, Vec<tokio::task::JoinHandle<()>>) {
    let (read, write): (OwnedReadHalf, OwnedWriteHalf) = stream.into_split();
    let (tx, rx) = mpsc::unbounded_channel();
    let (answer, answered) = watch::channel(0u64);
    let pending = Arc::new(AtomicU64::new(0));
    let out = tokio::spawn(write_out(write, rx));
    let waiting = pending.clone();
    let back = tokio::spawn(async move {
        use tokio::io::AsyncReadExt;
        let mut read = read;
        let mut buf = vec![0u8; 4096];
        while let Ok(n) = read.read(&mut buf).await {
            if n == 0 {
                break;
            }
            let mut chunk = buf[..n].to_vec();
            while waiting.load(Ordering::SeqCst) > 0 && take_fence_reply(&mut chunk) {
                waiting.fetch_sub(1, Ordering::SeqCst);
                answer.send_modify(|a| *a += 1);
            }
            if !chunk.is_empty() {
                to_program(chunk);
            }
        }
    });
    (
        Mirror {
            tx,
            asked: Arc::new(AtomicU64::new(0)),
            pending,
            answered,
        },
        vec![out, back],
    )
}

async fn write_out(mut w: OwnedWriteHalf, mut rx: mpsc::UnboundedReceiver<Vec<u8>>) {
    while let Some(b) = rx.recv().await {
        if w.write_all(&b).await.is_err() {
            break;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::native::bridge::hello;
    use tokio::io::AsyncReadExt;

    /// A connection that sends `line` and stays open.
    async fn connect(path: &Path, line: &str) -> UnixStream {
        let mut s = UnixStream::connect(path).await.unwrap();
        s.write_all(line.as_bytes()).await.unwrap();
        s
    }

    #[tokio::test]
    async fn only_a_bridge_with_the_token_is_accepted() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bridge.sock");
        let listener = UnixListener::bind(&path).unwrap();
        let secret = token(16).unwrap();
        assert_eq!(secret.len(), 32);
        let deadline = Deadline::after_ms(60_000);
        let expected = secret.clone();
        let accepting = tokio::spawn(async move { accept(&listener, &expected, deadline).await });
        // No token, a wrong token of the right length, a line that is not
        // a handshake: each is closed unanswered.
        for line in [
            "80 24\n".to_string(),
            hello(&"0".repeat(32), 80, 24),
            "GET / HTTP/1.1\n".to_string(),
        ] {
            let mut s = connect(&path, &line).await;
            let mut b = [0u8; 1];
            let n = deadline.run(s.read(&mut b)).await.unwrap().unwrap_or(0);
            assert_eq!(n, 0, "{line:?} was answered");
        }
        assert!(
            !accepting.is_finished(),
            "a refused connection was accepted"
        );
        // The bridge's handshake is accepted, with its size, and the bytes
        // after it stay in the stream.
        let mut bridge = connect(&path, &format!("{}xyz", hello(&secret, 100, 30))).await;
        let (mut stream, size) = accepting.await.unwrap().unwrap();
        assert_eq!(size, (100, 30));
        let mut after = [0u8; 3];
        stream.read_exact(&mut after).await.unwrap();
        assert_eq!(&after, b"xyz");
        stream.write_all(b"ok").await.unwrap();
        let mut back = [0u8; 2];
        bridge.read_exact(&mut back).await.unwrap();
        assert_eq!(&back, b"ok");
    }

    #[test]
    fn a_fence_answer_is_taken_once_and_the_rest_kept() {
        let mut chunk = b"a\x1b[0nb\x1b[0n".to_vec();
        assert!(take_fence_reply(&mut chunk));
        assert_eq!(chunk, b"ab\x1b[0n");
        assert!(take_fence_reply(&mut chunk));
        assert_eq!(chunk, b"ab");
        assert!(!take_fence_reply(&mut chunk));
    }

    #[tokio::test]
    async fn a_fence_waits_for_the_windows_answer_which_the_program_never_sees() {
        let (ours, window) = UnixStream::pair().unwrap();
        let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
        let to_program = seen.clone();
        let (mirror, _tasks) = start_mirror(ours, move |b| to_program.lock().unwrap().extend(b));
        mirror.send(b"text");
        let deadline = Deadline::after_ms(60_000);
        let fenced = tokio::spawn({
            let m = mirror.clone();
            async move { m.fence(deadline).await }
        });
        // The window reads the output, then the fence, in order.
        let mut window = window;
        let mut got = [0u8; 8];
        window.read_exact(&mut got).await.unwrap();
        assert_eq!(&got, b"text\x1b[5n");
        assert!(!fenced.is_finished());
        window.write_all(b"key\x1b[0n").await.unwrap();
        assert!(fenced.await.unwrap());
        // A later answer the program asked for is the program's.
        window.write_all(b"\x1b[0n").await.unwrap();
        let want = b"key\x1b[0n".to_vec();
        let arrived = deadline
            .run(async {
                loop {
                    if *seen.lock().unwrap() == want {
                        return;
                    }
                    tokio::task::yield_now().await;
                }
            })
            .await;
        assert!(arrived.is_some(), "{:?}", seen.lock().unwrap());
    }
}
