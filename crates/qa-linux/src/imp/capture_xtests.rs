//! [`X11::capture_window`] against a real Xvfb (with and without the
//! Composite extension): an "application" window and a window of "another
//! program", each from its own X connection, filled by the server with a
//! background colour so every pixel is known. And [`X11::connect`] to an
//! Xvfb with a run's authority: only the cookie gets in, and a display that
//! lets in a client without it is refused.

use super::*;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use x11rb::protocol::xproto::{CreateWindowAux, PropMode};

const APP_PID: u32 = 4242;
const OTHER_PID: u32 = 999_999;
const GREEN: u32 = 0x00ff00;
const MAGENTA: u32 = 0xff00ff;

/// An Xvfb this test started (and ends).
struct Xvfb {
    child: Child,
    display: String,
}

impl Xvfb {
    fn start(composite: bool) -> Xvfb {
        Xvfb::start_with(composite, None)
    }

    /// With `auth`: `-auth` on that authority file, as a run's own Xvfb.
    fn start_with(composite: bool, auth: Option<&std::path::Path>) -> Xvfb {
        let mut c = Command::new("Xvfb");
        if let Some(a) = auth {
            c.arg("-auth").arg(a);
        }
        c.args([
            "-displayfd",
            "1",
            "-screen",
            "0",
            "640x480x24",
            "-nolisten",
            "tcp",
        ]);
        if !composite {
            c.args(["-extension", "Composite"]);
        }
        let mut child = c
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("Xvfb (cargo xtask deps installs it)");
        let out = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(out).read_line(&mut line);
            let _ = tx.send(line);
        });
        // Wide: it only matters when Xvfb hangs.
        let n = rx
            .recv_timeout(Duration::from_secs(60))
            .expect("Xvfb did not report its display within 60 s");
        Xvfb {
            child,
            display: format!(":{}", n.trim()),
        }
    }
}

impl Drop for Xvfb {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A client with one window filled with `colour` and `_NET_WM_PID` `pid`.
struct Client {
    conn: RustConnection,
    win: Window,
}

impl Client {
    fn new(display: &str, pid: u32, colour: u32, (x, y, w, h): (i16, i16, u16, u16)) -> Client {
        let (conn, screen) = x11rb::connect(Some(display)).unwrap();
        let root = conn.setup().roots[screen].root;
        let win = conn.generate_id().unwrap();
        conn.create_window(
            x11rb::COPY_DEPTH_FROM_PARENT,
            win,
            root,
            x,
            y,
            w,
            h,
            0,
            WindowClass::INPUT_OUTPUT,
            x11rb::COPY_FROM_PARENT,
            &CreateWindowAux::new().background_pixel(colour),
        )
        .unwrap();
        let atom = conn
            .intern_atom(false, b"_NET_WM_PID")
            .unwrap()
            .reply()
            .unwrap()
            .atom;
        conn.change_property32(PropMode::REPLACE, win, atom, AtomEnum::CARDINAL, &[pid])
            .unwrap();
        let c = Client { conn, win };
        c.map();
        c
    }

    fn map(&self) {
        self.conn.map_window(self.win).unwrap();
        self.conn.sync().unwrap();
    }

    fn unmap(&self) {
        self.conn.unmap_window(self.win).unwrap();
        self.conn.sync().unwrap();
    }

    fn raise(&self) {
        self.conn
            .configure_window(
                self.win,
                &ConfigureWindowAux::new().stack_mode(StackMode::ABOVE),
            )
            .unwrap();
        self.conn.sync().unwrap();
    }
}

/// The application at (100,100) 200×150; the other program's window over
/// part of it.
fn scene(display: &str) -> (Client, X11) {
    let app = Client::new(display, APP_PID, GREEN, (100, 100, 200, 150));
    let x = X11::connect(display, None).unwrap();
    (app, x)
}

fn other(display: &str) -> Client {
    Client::new(display, OTHER_PID, MAGENTA, (150, 150, 100, 60))
}

fn capture(x: &X11, w: Window) -> Result<RgbFrame, CaptureError> {
    x.capture_window(w, &mut || vec![APP_PID])
}

/// The first capture of `w` that is taken, once the repaint grace after a
/// cover has passed; until then only `Covered` is acceptable (a wide "must
/// not hang" bound).
fn first_capture(x: &X11, w: Window) -> RgbFrame {
    let start = Instant::now();
    loop {
        match capture(x, w) {
            Ok(f) => return f,
            Err(CaptureError::Covered) => {
                assert!(start.elapsed() < Duration::from_secs(60), "never uncovered");
                std::thread::yield_now();
            }
            Err(e) => panic!("capture failed: {e:?}"),
        }
    }
}

/// Every pixel is the application's green.
fn assert_all_green(f: &RgbFrame) {
    assert_eq!((f.width, f.height), (200, 150));
    let off = f.rgb.chunks_exact(3).filter(|p| *p != [0, 255, 0]).count();
    assert_eq!(off, 0, "{off} pixels are not the application's");
}

#[test]
fn a_covered_window_shows_its_own_pixels_with_composite() {
    let xvfb = Xvfb::start(true);
    let (app, x) = scene(&xvfb.display);
    assert!(x.composite, "Xvfb has Composite");
    // Uncovered: read from the screen; the window is redirected.
    assert_all_green(&capture(&x, app.win).unwrap());
    let other = other(&xvfb.display);
    // The screen shows the other program there...
    let screen = x.read(x.root, 100, 100, 200, 150).unwrap();
    assert!(screen.rgb.chunks_exact(3).any(|p| p == [255, 0, 255]));
    // ...the capture shows the application's own pixels.
    assert_all_green(&capture(&x, app.win).unwrap());
    drop(other);
}

#[test]
fn a_window_covered_from_its_first_capture_is_not_captured_until_uncovered() {
    let xvfb = Xvfb::start(true);
    let (app, x) = scene(&xvfb.display);
    let other = other(&xvfb.display);
    assert_eq!(capture(&x, app.win), Err(CaptureError::Covered));
    app.raise();
    assert_all_green(&first_capture(&x, app.win));
    other.raise();
    assert_all_green(&capture(&x, app.win).unwrap());
}

#[test]
fn a_covered_window_is_not_captured_without_composite() {
    let xvfb = Xvfb::start(false);
    let (app, x) = scene(&xvfb.display);
    assert!(!x.composite, "Xvfb was started without Composite");
    assert_all_green(&capture(&x, app.win).unwrap());
    let other = other(&xvfb.display);
    assert_eq!(capture(&x, app.win), Err(CaptureError::Covered));
    app.raise();
    // Where the other window just was, the application has to repaint: it
    // is not read for a moment (`within_grace`), then it is.
    assert_all_green(&first_capture(&x, app.win));
    // The application's own windows over it are part of its picture.
    let popup = Client::new(&xvfb.display, APP_PID, GREEN, (120, 120, 50, 50));
    assert_all_green(&capture(&x, app.win).unwrap());
    drop((other, popup));
}

/// Another program maps, unmaps and raises its window over the
/// application as fast as it can while frames are captured: a frame is
/// either the application's own pixels or not taken, never a mix (the
/// check and the read are one moment of the server's state).
fn never_a_foreign_pixel_while_another_program_races(composite: bool) {
    let xvfb = Xvfb::start(composite);
    let (app, x) = scene(&xvfb.display);
    // Captured uncovered first (with Composite: redirected from here on).
    assert_all_green(&capture(&x, app.win).unwrap());
    let stop = Arc::new(AtomicBool::new(false));
    let racer = {
        let (display, stop) = (xvfb.display.clone(), stop.clone());
        std::thread::spawn(move || {
            let o = other(&display);
            let mut n = 0u64;
            while !stop.load(Ordering::Relaxed) {
                match n % 3 {
                    0 => o.unmap(),
                    1 => o.map(),
                    _ => o.raise(),
                }
                n += 1;
            }
            n
        })
    };
    let (mut kept, mut left_out) = (0, 0);
    for i in 0..300 {
        if i % 50 == 0 {
            // The application comes back on top now and then.
            let _ = app.conn.configure_window(
                app.win,
                &ConfigureWindowAux::new().stack_mode(StackMode::ABOVE),
            );
            let _ = app.conn.flush();
        }
        match capture(&x, app.win) {
            Ok(f) => {
                assert_all_green(&f);
                kept += 1;
            }
            Err(CaptureError::Covered) => left_out += 1,
            Err(e) => panic!("capture {i} failed: {e:?}"),
        }
    }
    stop.store(true, Ordering::Relaxed);
    let moves = racer.join().unwrap();
    assert!(moves > 0, "the other program never moved its window");
    assert_eq!(kept + left_out, 300);
    if composite {
        // Its own pixels are always there to read.
        assert_eq!(left_out, 0, "{left_out} frames left out");
    }
}

#[test]
fn never_a_foreign_pixel_while_another_program_races_without_composite() {
    never_a_foreign_pixel_while_another_program_races(false);
}

#[test]
fn never_a_foreign_pixel_while_another_program_races_with_composite() {
    never_a_foreign_pixel_while_another_program_races(true);
}

#[test]
fn an_xvfb_with_the_runs_authority_lets_in_only_its_cookie() {
    use crate::imp::display::XAuth;
    let dir = tempfile::tempdir().unwrap();
    let a = XAuth::create(dir.path()).unwrap();
    let xvfb = Xvfb::start_with(true, Some(&a.file));
    // Without the cookie, or with another one, even this user is refused
    // (by the server: the socket is reachable).
    let e = x11rb::connect(Some(&xvfb.display))
        .err()
        .map(|e| e.to_string());
    assert!(e.as_deref().is_some_and(|e| e.contains("uthoriz")), "{e:?}");
    let e = X11::connect(&xvfb.display, Some(&[7u8; 16])).err();
    assert!(
        e.as_deref()
            .is_some_and(|e| e.contains("MIT-MAGIC-COOKIE-1")),
        "{e:?}"
    );
    // With it: in (and the server was seen to refuse a client without it).
    X11::connect(&xvfb.display, Some(a.cookie())).unwrap();
    // Programs given XAUTHORITY find the cookie in the file.
    let o = Command::new("xauth")
        .args(["-n", "-f"])
        .arg(&a.file)
        .arg("list")
        .output()
        .unwrap();
    let listed = String::from_utf8_lossy(&o.stdout);
    let hex: String = a.cookie().iter().map(|b| format!("{b:02x}")).collect();
    assert!(
        listed.contains("MIT-MAGIC-COOKIE-1") && listed.contains(&hex),
        "{listed}"
    );
}

#[test]
fn an_open_display_is_refused_as_the_runs_own() {
    // An Xvfb that never loaded an authority lets every local user in: the
    // run's own connection refuses to use it.
    let xvfb = Xvfb::start(true);
    let e = X11::connect(&xvfb.display, Some(&[7u8; 16])).err();
    assert!(
        e.as_deref()
            .is_some_and(|e| e.contains("without its authority cookie")),
        "{e:?}"
    );
}
