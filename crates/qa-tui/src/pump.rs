//! The output pump: one task reads the PTY and hands the bytes over
//! ([`crate::inbox`]) to a thread that feeds the terminal model, answers
//! the program's queries, ends synchronized updates whose timeout passed,
//! records the replay and bumps a generation counter that waiters watch.
//! A writer task owns the PTY's write half. The same on every OS: the PTY
//! itself is behind [`crate::pty`].
//!
//! On Windows the bytes are ConPTY's rendering of the console, not the
//! program's own: ConPTY repaints whole regions and may reorder escape
//! sequences relative to the text. Nothing here depends on the byte
//! stream's shape; every assertion reads the model's screen.

use crate::inbox::{End, Inbox, StopOnDrop, Taken};
use crate::palette;
use crate::pty;
use crate::replay::Replay;
use crate::text_runs::{Memo, TextRuns};
use alacritty_terminal::event::{Event, EventListener, WindowSize};
use alacritty_terminal::term::test::TermSize;
use alacritty_terminal::term::{Config, Term};
use alacritty_terminal::vte::ansi::{Processor, StdSyncHandler};
use qa_core::Secrets;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};
use tokio::sync::{mpsc, oneshot, watch};

/// Lines of scrollback kept by the model.
pub const SCROLLBACK_LINES: usize = 10_000;
/// Bytes read from the PTY at a time (at most).
pub const READ_CHUNK: usize = 64 * 1024;
/// Pixel size reported for one cell (answers to `CSI 14/16/18 t`).
const CELL_PX: (u16, u16) = (10, 20);

/// Collects the model's events while it is borrowed; the pump answers them.
#[derive(Clone, Default)]
pub struct Listener {
    events: Arc<Mutex<Vec<Event>>>,
}

impl EventListener for Listener {
    fn send_event(&self, event: Event) {
        match event {
            Event::PtyWrite(_) | Event::ColorRequest(..) | Event::TextAreaSizeRequest(_) => {
                self.events.lock().expect("events lock").push(event)
            }
            _ => {}
        }
    }
}

/// The terminal model and everything recorded with it.
pub struct Model {
    /// The terminal.
    pub term: Term<Listener>,
    /// The escape-sequence processor (holds synchronized updates).
    pub processor: Processor<StdSyncHandler>,
    /// The replay (taken at close): the program's bytes, or with secrets
    /// configured, screen updates re-encoded from the masked model.
    pub cast: Option<Replay>,
    /// Total bytes read from the program.
    pub bytes_read: u64,
    /// When output last arrived.
    pub last_output: Instant,
    /// The PTY reached end of output (EOF, or EIO on Unix).
    pub eof: bool,
    listener: Listener,
    /// What the text-run writer keeps between feeds.
    memo: Memo,
}

impl Model {
    /// Queries the program asked since the last call, as the bytes to send back.
    fn take_replies(&mut self) -> Vec<u8> {
        let events: Vec<Event> =
            std::mem::take(&mut *self.listener.events.lock().expect("events lock"));
        let mut out = Vec::new();
        for e in events {
            match e {
                Event::PtyWrite(s) => out.extend_from_slice(s.as_bytes()),
                Event::ColorRequest(i, fmt) => {
                    let rgb = palette::resolve_index(self.term.colors(), i);
                    out.extend_from_slice(fmt(rgb).as_bytes());
                }
                Event::TextAreaSizeRequest(fmt) => {
                    let g = self.term.grid();
                    use alacritty_terminal::grid::Dimensions;
                    let ws = WindowSize {
                        num_lines: g.screen_lines() as u16,
                        num_cols: g.columns() as u16,
                        cell_width: CELL_PX.0,
                        cell_height: CELL_PX.1,
                    };
                    out.extend_from_slice(fmt(ws).as_bytes());
                }
                _ => {}
            }
        }
        out
    }

    /// Whether a synchronized update is holding bytes back.
    pub fn sync_pending(&self) -> bool {
        self.processor.sync_timeout().sync_timeout().is_some()
    }

    /// Ends a pending synchronized update and records the screen it shows.
    pub fn stop_sync(&mut self) {
        let Model {
            term,
            processor,
            cast,
            memo,
            ..
        } = self;
        processor.stop_sync(&mut TextRuns::new(term, memo));
        if let Some(c) = cast.as_mut() {
            c.refresh(Instant::now(), term);
        }
    }
}

/// How the program ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExitInfo {
    /// Exit code, when it exited normally.
    pub code: Option<i32>,
    /// Signal number, when a signal ended it.
    pub signal: Option<i32>,
    /// When the exit was seen.
    pub at: Instant,
}

impl ExitInfo {
    fn from_end(end: pty::Ended) -> ExitInfo {
        ExitInfo {
            code: end.code,
            signal: end.signal,
            at: Instant::now(),
        }
    }

    /// "code 3" or "signal 9".
    pub fn describe(&self) -> String {
        match (self.code, self.signal) {
            (Some(c), _) => format!("exit code {c}"),
            (None, Some(s)) => format!("signal {s}"),
            _ => "unknown status".into(),
        }
    }
}

/// State shared by the pump, the writer, the exit watcher and the session.
pub struct Shared {
    model: Mutex<Model>,
    exit: Mutex<Option<ExitInfo>>,
    generation: watch::Sender<u64>,
}

impl Shared {
    /// A fresh model of `cols`×`rows` with a replay starting now (masked
    /// and re-encoded when `secrets` is not empty).
    pub fn new(cols: u16, rows: u16, title: Option<&str>, secrets: Arc<Secrets>) -> Arc<Shared> {
        let listener = Listener::default();
        let term = Term::new(
            Config {
                scrolling_history: SCROLLBACK_LINES,
                ..Config::default()
            },
            &TermSize::new(usize::from(cols), usize::from(rows)),
            listener.clone(),
        );
        let now = Instant::now();
        Arc::new(Shared {
            model: Mutex::new(Model {
                term,
                processor: Processor::new(),
                cast: Some(Replay::new(
                    cols,
                    rows,
                    now,
                    crate::cast::DEFAULT_CAP_BYTES,
                    title,
                    secrets,
                )),
                bytes_read: 0,
                last_output: now,
                eof: false,
                listener,
                memo: Memo::default(),
            }),
            exit: Mutex::new(None),
            generation: watch::channel(0).0,
        })
    }

    /// Locks the model.
    pub fn model(&self) -> MutexGuard<'_, Model> {
        self.model.lock().expect("model lock")
    }

    /// How the program ended, once it has.
    pub fn exit(&self) -> Option<ExitInfo> {
        *self.exit.lock().expect("exit lock")
    }

    /// Tells waiters something changed.
    pub fn bump(&self) {
        self.generation.send_modify(|g| *g = g.wrapping_add(1));
    }

    /// A receiver that sees every change.
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.generation.subscribe()
    }

    /// Whether no more output can change the screen: the program exited and
    /// the PTY reached EOF, or nothing arrived for `quiet` since the exit
    /// (a descendant may hold the PTY open, so EIO may never come).
    pub fn drained(&self, quiet: Duration) -> bool {
        let Some(exit) = self.exit() else {
            return false;
        };
        let m = self.model();
        m.eof || (exit.at.elapsed() >= quiet && m.last_output.elapsed() >= quiet)
    }
}

/// A message for the writer task.
pub enum WriterMsg {
    /// Bytes to write, with an acknowledgement.
    Bytes(Vec<u8>, Option<oneshot::Sender<std::io::Result<()>>>),
    /// Resize the PTY (Unix: the kernel sends SIGWINCH; Windows: ConPTY
    /// resizes its console and repaints).
    Resize(u16, u16, oneshot::Sender<std::io::Result<()>>),
}

/// Runs the writer: bytes and resizes in order.
pub async fn run_writer(mut pty: pty::Input, mut rx: mpsc::UnboundedReceiver<WriterMsg>) {
    while let Some(msg) = rx.recv().await {
        match msg {
            WriterMsg::Bytes(b, ack) => {
                let r = pty.write(&b).await;
                if let Some(ack) = ack {
                    let _ = ack.send(r);
                }
            }
            WriterMsg::Resize(cols, rows, ack) => {
                let _ = ack.send(pty.resize(cols, rows));
            }
        }
    }
}

/// Feeds bytes into the model (and the replay), returning query answers.
pub fn feed(model: &mut Model, bytes: &[u8]) -> Vec<u8> {
    let now = Instant::now();
    model.bytes_read += bytes.len() as u64;
    model.last_output = now;
    let Model {
        term,
        processor,
        cast,
        memo,
        ..
    } = model;
    // Lines the rest of the chunk scrolls out of the scrollback again are
    // not parsed; the model is the same (see `skip`).
    crate::skip::advance(term, processor, memo, bytes, SCROLLBACK_LINES);
    if let Some(cast) = cast.as_mut() {
        // After the model: a masked replay records what the screen shows.
        cast.output(now, bytes, term);
    }
    model.take_replies()
}

/// Where the program's output goes besides the model: nowhere, or a real
/// terminal window, which then answers the program's queries itself (the
/// model's answers are dropped, so the program gets one answer, the
/// window's).
pub enum Tee {
    /// `pty` presentation: the model answers.
    None,
    /// `native-terminal`: every chunk is copied to the window.
    #[cfg(unix)]
    Window(crate::native::window::Mirror),
}

impl Tee {
    fn output(&self, _bytes: &[u8]) {
        match self {
            Tee::None => {}
            #[cfg(unix)]
            Tee::Window(m) => m.send(_bytes),
        }
    }

    fn answers(&self) -> bool {
        matches!(self, Tee::None)
    }
}

/// Runs the pump until the PTY reaches end of output and everything read
/// is modelled: this task reads, a thread of its own parses (see
/// [`crate::inbox`]), so a program's writes are drained while earlier ones
/// are modelled.
pub async fn run_pump(
    shared: Arc<Shared>,
    mut pty: pty::Output,
    writer: mpsc::UnboundedSender<WriterMsg>,
    tee: Tee,
) {
    let inbox = Arc::new(Inbox::default());
    let (parsed_tx, parsed) = oneshot::channel();
    let job = {
        let (shared, inbox) = (shared.clone(), inbox.clone());
        let answers = tee.answers();
        move || {
            run_parser(&shared, &inbox, answers.then_some(&writer));
            let _ = parsed_tx.send(());
        }
    };
    // A thread of its own (it lives as long as the output and never holds
    // up the runtime's shutdown); if none can be made, a thread of the
    // runtime's blocking pool.
    let slot = Arc::new(Mutex::new(Some(job)));
    let taken = slot.clone();
    let own = std::thread::Builder::new()
        .name("ui-qa-tui-model".into())
        .spawn(move || {
            let job = taken.lock().expect("parser slot").take();
            if let Some(job) = job {
                job();
            }
        });
    if own.is_err() {
        if let Some(job) = slot.lock().expect("parser slot").take() {
            tokio::task::spawn_blocking(job);
        }
    }
    // An aborted task drops this guard: the parser stops too.
    let stop = StopOnDrop(&inbox);
    let mut buf = vec![0u8; READ_CHUNK];
    loop {
        inbox.room().await;
        match pty.read(&mut buf).await {
            Ok(0) => break,
            Ok(n) => {
                tee.output(&buf[..n]);
                inbox.push(&buf[..n]);
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            // EIO (Unix: no process holds the PTY open any more) and any
            // other error end the output like EOF.
            Err(_) => break,
        }
    }
    inbox.end(End::Eof);
    let _ = parsed.await;
    drop(stop);
}

/// Models what the reader hands over, in batches, and ends synchronized
/// updates whose timeout passed; at EOF marks the model drained.
fn run_parser(shared: &Shared, inbox: &Inbox, writer: Option<&mpsc::UnboundedSender<WriterMsg>>) {
    let mut batch = Vec::with_capacity(READ_CHUNK);
    loop {
        let sync_at = shared.model().processor.sync_timeout().sync_timeout();
        let replies = match inbox.take(&mut batch, sync_at) {
            Taken::Bytes => {
                let replies = feed(&mut shared.model(), &batch);
                batch.clear();
                replies
            }
            Taken::TimedOut => {
                let mut m = shared.model();
                let due = m
                    .processor
                    .sync_timeout()
                    .sync_timeout()
                    .is_some_and(|t| t <= Instant::now());
                if due {
                    m.stop_sync();
                }
                m.take_replies()
            }
            Taken::Ended(End::Eof) => break,
            Taken::Ended(End::Stopped | End::Open) => return,
        };
        if let Some(w) = writer {
            send_replies(w, replies);
        }
        shared.bump();
    }
    {
        let mut m = shared.model();
        if m.sync_pending() {
            m.stop_sync();
        }
        m.eof = true;
    }
    shared.bump();
}

fn send_replies(writer: &mpsc::UnboundedSender<WriterMsg>, replies: Vec<u8>) {
    if !replies.is_empty() {
        let _ = writer.send(WriterMsg::Bytes(replies, None));
    }
}

/// Waits for the program to exit and records how.
pub async fn run_exit_watch(shared: Arc<Shared>, child: pty::Child) {
    let info = ExitInfo::from_end(child.wait().await);
    *shared.exit.lock().expect("exit lock") = Some(info);
    if let Some(cast) = shared.model().cast.as_mut() {
        cast.marker(info.at, &format!("program ended ({})", info.describe()));
    }
    shared.bump();
}
