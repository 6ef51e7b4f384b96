//! X11: finding the application's windows (`_NET_WM_PID`, no window manager
//! needed), raising and focusing them, and exact-window capture.
//!
//! Capture never shows another program's pixels. Without a compositor an
//! X server hands whatever is on the screen where a window is, so every
//! capture happens under a server grab that also checks what lies over the
//! window: with nothing of another program over it, the screen is read;
//! with something, the window's own pixels are read from its Composite
//! pixmap (each captured top-level window is redirected, automatically,
//! the first time it is captured uncovered), and without Composite no
//! picture is taken.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};
use x11rb::connection::Connection;
use x11rb::protocol::composite::{ConnectionExt as _, Redirect};
use x11rb::protocol::xproto::{
    AtomEnum, ConfigureWindowAux, ConnectionExt as _, GetGeometryReply, ImageFormat, InputFocus,
    MapState, StackMode, TranslateCoordinatesReply, Window, WindowClass,
};
use x11rb::protocol::xtest::ConnectionExt as _;
use x11rb::rust_connection::RustConnection;
use x11rb::wrapper::ConnectionExt as _;

/// One top-level window of the application.
#[derive(Debug, Clone)]
pub(crate) struct XWindow {
    /// X window id.
    pub id: Window,
    /// Owning process (`_NET_WM_PID`).
    pub pid: u32,
    /// Title (`_NET_WM_NAME` or `WM_NAME`).
    pub title: String,
    /// Position on the root window.
    pub x: i32,
    /// Position on the root window.
    pub y: i32,
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
}

/// A connection to the run's X display.
pub(crate) struct X11 {
    /// The connection.
    pub conn: RustConnection,
    /// Root window of screen 0.
    pub root: Window,
    atoms: Atoms,
    /// The server has Composite 0.2+ (`NameWindowPixmap`).
    composite: bool,
    /// Held for the length of a server grab.
    grab: Mutex<()>,
    /// Top-level windows this connection tried to redirect, and whether
    /// the server agreed.
    redirected: Mutex<HashMap<Window, bool>>,
    /// When another program's window was last seen over an unredirected
    /// top-level window.
    covered_at: Mutex<HashMap<Window, Instant>>,
}

/// How long after another program's window left an unredirected window
/// its pixels are not read: the application repaints the part it left.
const REPAINT_GRACE: Duration = Duration::from_millis(150);

struct Atoms {
    net_wm_pid: u32,
    net_wm_name: u32,
    utf8: u32,
    gtk_frame_extents: u32,
}

type XResult<T> = Result<T, String>;

fn err<E: std::fmt::Display>(what: &'static str) -> impl Fn(E) -> String {
    move |e| format!("{what}: {e}")
}

/// [`x11rb::connect`] with the given cookie instead of one looked up
/// through `XAUTHORITY` (which is ui-qa's own environment, shared by every
/// run in the process).
fn connect_with_cookie(display: &str, cookie: &[u8]) -> XResult<(RustConnection, usize)> {
    connect_with_auth(display, super::display::COOKIE_NAME, cookie)
}

/// [`x11rb::connect`] with the given authority (empty: none), over the
/// display's Unix socket only: an owned Xvfb listens on no TCP port, and
/// x11rb's fallback (`localhost:6000+N`) could reach another user's
/// listener, which would then be handed the cookie.
fn connect_with_auth(display: &str, name: &[u8], data: &[u8]) -> XResult<(RustConnection, usize)> {
    use x11rb::reexports::x11rb_protocol::parse_display::{parse_display, ConnectAddress};
    use x11rb::rust_connection::DefaultStream;
    let parsed = parse_display(Some(display)).map_err(err("X11 display"))?;
    let screen = usize::from(parsed.screen);
    let mut last = None;
    for addr in parsed
        .connect_instruction()
        .filter(|a| matches!(a, ConnectAddress::Socket(_)))
    {
        match DefaultStream::connect(&addr) {
            Ok((stream, _)) => {
                let conn = RustConnection::connect_to_stream_with_auth_info(
                    stream,
                    screen,
                    name.to_vec(),
                    data.to_vec(),
                )
                .map_err(err("X11 connect"))?;
                return Ok((conn, screen));
            }
            Err(e) => last = Some(e),
        }
    }
    Err(match last {
        Some(e) => format!("X11 connect: {e}"),
        None => format!("X11 connect: no address for {display:?}"),
    })
}

impl X11 {
    /// Connects to `display` (e.g. `:99`): with `cookie`, the
    /// MIT-MAGIC-COOKIE-1 of a display the run owns; without, the
    /// authority `XAUTHORITY` names (the host's display).
    pub(crate) fn connect(display: &str, cookie: Option<&[u8]>) -> XResult<X11> {
        let (conn, screen) = match cookie {
            Some(c) => connect_with_cookie(display, c)?,
            None => x11rb::connect(Some(display)).map_err(err("X11 connect"))?,
        };
        let root = conn.setup().roots[screen].root;
        let intern = |n: &[u8]| -> XResult<u32> {
            Ok(conn
                .intern_atom(false, n)
                .map_err(err("InternAtom"))?
                .reply()
                .map_err(err("InternAtom"))?
                .atom)
        };
        let atoms = Atoms {
            net_wm_pid: intern(b"_NET_WM_PID")?,
            net_wm_name: intern(b"_NET_WM_NAME")?,
            utf8: intern(b"UTF8_STRING")?,
            gtk_frame_extents: intern(b"_GTK_FRAME_EXTENTS")?,
        };
        let composite = conn
            .composite_query_version(0, 4)
            .ok()
            .and_then(|c| c.reply().ok())
            .is_some_and(|v| (v.major_version, v.minor_version) >= (0, 2));
        let x = X11 {
            conn,
            root,
            atoms,
            composite,
            grab: Mutex::new(()),
            redirected: Mutex::new(HashMap::new()),
            covered_at: Mutex::new(HashMap::new()),
        };
        // Fail closed: a display of the run's that lets in a client
        // without the cookie (an Xvfb that could not load its authority
        // file lets in every local user) is not used.
        if cookie.is_some() && connect_with_auth(display, &[], &[]).is_ok() {
            return Err(format!(
                "the X server of {display} lets in clients without its authority cookie"
            ));
        }
        Ok(x)
    }

    fn pid_of(&self, w: Window) -> Option<u32> {
        let r = self
            .conn
            .get_property(false, w, self.atoms.net_wm_pid, AtomEnum::CARDINAL, 0, 1)
            .ok()?
            .reply()
            .ok()?;
        let v = r.value32()?.next();
        v
    }

    fn title_of(&self, w: Window) -> String {
        let get = |prop: u32, ty: u32| -> Option<String> {
            let r = self
                .conn
                .get_property(false, w, prop, ty, 0, 1024)
                .ok()?
                .reply()
                .ok()?;
            (!r.value.is_empty()).then(|| String::from_utf8_lossy(&r.value).into_owned())
        };
        get(self.atoms.net_wm_name, self.atoms.utf8)
            .or_else(|| get(AtomEnum::WM_NAME.into(), AtomEnum::STRING.into()))
            .unwrap_or_default()
    }

    /// Viewable windows (children of the root, or of a window manager's
    /// frames) whose `_NET_WM_PID` is in `pids`.
    pub(crate) fn windows_of(&self, pids: &[u32]) -> Vec<XWindow> {
        let mut out = Vec::new();
        let mut stack = vec![(self.root, 0u8)];
        while let Some((w, depth)) = stack.pop() {
            let Ok(Ok(tree)) = self.conn.query_tree(w).map(|c| c.reply()) else {
                continue;
            };
            for &c in &tree.children {
                let Ok(Ok(attrs)) = self.conn.get_window_attributes(c).map(|c| c.reply()) else {
                    continue;
                };
                if attrs.map_state != MapState::VIEWABLE {
                    continue;
                }
                match self.pid_of(c) {
                    Some(pid) if pids.contains(&pid) => {
                        if let Some(win) = self.describe(c, pid) {
                            out.push(win);
                        }
                    }
                    Some(_) => {}
                    None if depth < 2 => stack.push((c, depth + 1)),
                    None => {}
                }
            }
        }
        out
    }

    /// `_NET_WM_PID` of `w`, or of a client inside it (a window manager's frame).
    fn owner_of(&self, w: Window, depth: u8) -> Option<u32> {
        if let Some(p) = self.pid_of(w) {
            return Some(p);
        }
        if depth >= 2 {
            return None;
        }
        let tree = self.conn.query_tree(w).ok()?.reply().ok()?;
        tree.children
            .iter()
            .find_map(|&c| self.owner_of(c, depth + 1))
    }

    fn describe(&self, w: Window, pid: u32) -> Option<XWindow> {
        let g = self.conn.get_geometry(w).ok()?.reply().ok()?;
        let t = self
            .conn
            .translate_coordinates(w, self.root, 0, 0)
            .ok()?
            .reply()
            .ok()?;
        Some(XWindow {
            id: w,
            pid,
            title: self.title_of(w),
            x: t.dst_x as i32,
            y: t.dst_y as i32,
            width: g.width as u32,
            height: g.height as u32,
        })
    }

    /// Raises the window and gives it the keyboard focus.
    pub(crate) fn raise_and_focus(&self, w: Window) -> XResult<()> {
        self.conn
            .configure_window(w, &ConfigureWindowAux::new().stack_mode(StackMode::ABOVE))
            .map_err(err("ConfigureWindow"))?;
        self.conn
            .set_input_focus(InputFocus::PARENT, w, x11rb::CURRENT_TIME)
            .map_err(err("SetInputFocus"))?;
        self.conn.sync().map_err(err("sync"))?;
        Ok(())
    }

    /// Moves the pointer to `(x, y)` on the root window and clicks button 1
    /// (XTest: MotionNotify, ButtonPress, ButtonRelease).
    pub(crate) fn click(&self, x: i16, y: i16) -> XResult<()> {
        const MOTION: u8 = 6;
        const PRESS: u8 = 4;
        const RELEASE: u8 = 5;
        for (ty, detail) in [(MOTION, 0u8), (PRESS, 1), (RELEASE, 1)] {
            self.conn
                .xtest_fake_input(ty, detail, x11rb::CURRENT_TIME, self.root, x, y, 0)
                .map_err(err("XTest"))?;
        }
        self.conn.sync().map_err(err("sync"))?;
        Ok(())
    }

    /// Client-side-decoration margins (`_GTK_FRAME_EXTENTS`: left, right,
    /// top, bottom) that lie outside the window's visible frame.
    pub(crate) fn frame_extents(&self, w: Window) -> [u32; 4] {
        let r = self
            .conn
            .get_property(
                false,
                w,
                self.atoms.gtk_frame_extents,
                AtomEnum::CARDINAL,
                0,
                4,
            )
            .ok()
            .and_then(|c| c.reply().ok());
        let v: Vec<u32> = r
            .and_then(|r| r.value32().map(|i| i.collect()))
            .unwrap_or_default();
        match v.as_slice() {
            [l, r, t, b] => [*l, *r, *t, *b],
            _ => [0; 4],
        }
    }

    /// Captures exactly the application's window `w` (its visible frame,
    /// without client-side shadow margins), never another program's pixels.
    ///
    /// Under a server grab (nothing changes between the check and the read):
    /// when no window of another program lies over the area, the screen's
    /// pixels there (the application's own popups and menus included);
    /// when one does, the window's own pixels from its Composite pixmap if
    /// this connection redirected it, else [`CaptureError::Covered`] (also
    /// for [`REPAINT_GRACE`] after it left).
    /// `app_pids` gives the application's processes (asked only when some
    /// window lies over `w`).
    pub(crate) fn capture_window(
        &self,
        w: Window,
        app_pids: &mut dyn FnMut() -> Vec<u32>,
    ) -> Result<RgbFrame, CaptureError> {
        let _grab = self.grab_server()?;
        let area = self.area_of(w)?;
        let top = self.top_of(w)?;
        let owners = self.owners_over(top, &area.on_root)?;
        let foreign = !owners.is_empty() && foreign(&owners, &app_pids());
        if !self.is_redirected(top) && self.just_covered(top, foreign) {
            return Err(CaptureError::Covered);
        }
        if !foreign {
            let frame = self.read(self.root, area.root_x, area.root_y, area.width, area.height)?;
            // Uncovered now: the pixmap starts as these same pixels.
            self.redirect(top);
            return Ok(frame);
        }
        if !self.is_redirected(top) {
            return Err(CaptureError::Covered);
        }
        self.read_own(w, top, &area)
    }

    /// Whether the server can hand a window's own pixels (Composite 0.2+).
    pub(crate) fn has_composite(&self) -> bool {
        self.composite
    }

    /// Grabs the server until the guard drops (one grab at a time: the
    /// connection is shared by the video task and the steps).
    fn grab_server(&self) -> Result<Grabbed<'_>, CaptureError> {
        let lock = self.grab.lock().unwrap_or_else(|p| p.into_inner());
        self.conn
            .grab_server()
            .map_err(err("GrabServer"))
            .map_err(CaptureError::Failed)?;
        Ok(Grabbed {
            x: self,
            _lock: lock,
        })
    }

    /// `GetGeometry` of `w`.
    fn geometry(&self, w: Window) -> XResult<GetGeometryReply> {
        self.conn
            .get_geometry(w)
            .map_err(err("GetGeometry"))?
            .reply()
            .map_err(err("GetGeometry"))
    }

    /// Where `w`'s origin lies in `to` (`TranslateCoordinates`).
    fn origin_in(&self, w: Window, to: Window) -> XResult<TranslateCoordinatesReply> {
        self.conn
            .translate_coordinates(w, to, 0, 0)
            .map_err(err("TranslateCoordinates"))?
            .reply()
            .map_err(err("TranslateCoordinates"))
    }

    /// The part of `w` a picture shows: its geometry without the
    /// `_GTK_FRAME_EXTENTS` margins, and where that lies on the root window.
    fn area_of(&self, w: Window) -> Result<Area, CaptureError> {
        let g = self.geometry(w)?;
        let at = self.origin_in(w, self.root)?;
        let [l, r, t, b] = self.frame_extents(w);
        let (gw, gh) = (u32::from(g.width), u32::from(g.height));
        let (l, t, width, height) = if l + r < gw && t + b < gh {
            (l, t, gw - l - r, gh - t - b)
        } else {
            (0, 0, gw, gh)
        };
        // Within a u16-sized window, so these fit.
        let (l, t) = (l as i16, t as i16);
        let (width, height) = (width as u16, height as u16);
        Ok(Area {
            left: l,
            top: t,
            width,
            height,
            root_x: at.dst_x.saturating_add(l),
            root_y: at.dst_y.saturating_add(t),
            on_root: Rect::new(
                at.dst_x.saturating_add(l),
                at.dst_y.saturating_add(t),
                width,
                height,
            ),
        })
    }

    /// The child of the root window that holds `w` (`w` itself, or a
    /// window manager's frame).
    fn top_of(&self, w: Window) -> Result<Window, CaptureError> {
        let mut top = w;
        for _ in 0..16 {
            let t = self
                .conn
                .query_tree(top)
                .map_err(err("QueryTree"))?
                .reply()
                .map_err(err("QueryTree"))?;
            if t.parent == self.root || t.parent == x11rb::NONE {
                return Ok(top);
            }
            top = t.parent;
        }
        Err(CaptureError::Failed(format!(
            "window 0x{w:x} is nested too deeply below the root window"
        )))
    }

    /// The owners (`_NET_WM_PID`, looked up in a window manager's frame
    /// too; `None`: unknown) of the viewable windows stacked above `top`
    /// that overlap `area` on the screen: their pixels are what the screen
    /// shows there.
    fn owners_over(&self, top: Window, area: &Rect) -> Result<Vec<Option<u32>>, CaptureError> {
        let stack = self
            .conn
            .query_tree(self.root)
            .map_err(err("QueryTree"))?
            .reply()
            .map_err(err("QueryTree"))?
            .children;
        let Some(pos) = stack.iter().position(|&c| c == top) else {
            return Err(CaptureError::Failed(format!(
                "window 0x{top:x} is not on the screen"
            )));
        };
        let mut out = Vec::new();
        for &c in &stack[pos + 1..] {
            let attrs = self
                .conn
                .get_window_attributes(c)
                .map_err(err("GetWindowAttributes"))?
                .reply();
            // Gone since the QueryTree: it shows nothing.
            let Ok(attrs) = attrs else { continue };
            if attrs.map_state != MapState::VIEWABLE || attrs.class == WindowClass::INPUT_ONLY {
                continue;
            }
            let Ok(Ok(cg)) = self.conn.get_geometry(c).map(|r| r.reply()) else {
                continue;
            };
            let b = 2 * cg.border_width;
            if !area.overlaps(&Rect::new(
                cg.x,
                cg.y,
                cg.width.saturating_add(b),
                cg.height.saturating_add(b),
            )) {
                continue;
            }
            out.push(self.owner_of(c, 0));
        }
        Ok(out)
    }

    /// Redirects `top` to an offscreen pixmap (Composite, automatic: the
    /// screen looks the same) so that its own pixels can be read while
    /// another window covers it. Called under the grab while nothing of
    /// another program covers it: the new pixmap starts as a copy of the
    /// screen there. A refusal (another client's manual redirection) leaves
    /// the window unredirected; covered frames are then left out.
    fn redirect(&self, top: Window) {
        if !self.composite {
            return;
        }
        let mut done = self.redirected.lock().unwrap_or_else(|p| p.into_inner());
        if done.contains_key(&top) {
            return;
        }
        let ok = self
            .conn
            .composite_redirect_window(top, Redirect::AUTOMATIC)
            .ok()
            .and_then(|c| c.check().ok())
            .is_some();
        done.insert(top, ok);
    }

    /// Whether a window of another program lies, or lay a moment ago, over
    /// the unredirected `top`: where it has just left, the screen shows its
    /// pixels until the application repaints there.
    fn just_covered(&self, top: Window, covered_now: bool) -> bool {
        let mut seen = self.covered_at.lock().unwrap_or_else(|p| p.into_inner());
        within_grace(&mut seen, top, covered_now, Instant::now())
    }

    fn is_redirected(&self, top: Window) -> bool {
        let done = self.redirected.lock().unwrap_or_else(|p| p.into_inner());
        done.get(&top).copied().unwrap_or(false)
    }

    /// `w`'s own pixels in `area`, from the pixmap of its redirected
    /// top-level window `top` (which includes `top`'s border).
    fn read_own(&self, w: Window, top: Window, area: &Area) -> Result<RgbFrame, CaptureError> {
        let at = self.origin_in(w, top)?;
        let border = self.geometry(top)?.border_width as i16;
        let pixmap = self.conn.generate_id().map_err(err("generate_id"))?;
        self.conn
            .composite_name_window_pixmap(top, pixmap)
            .map_err(err("NameWindowPixmap"))?
            .check()
            .map_err(err("NameWindowPixmap"))?;
        let frame = self.read(
            pixmap,
            at.dst_x.saturating_add(border).saturating_add(area.left),
            at.dst_y.saturating_add(border).saturating_add(area.top),
            area.width,
            area.height,
        );
        let _ = self.conn.free_pixmap(pixmap);
        frame
    }

    /// `GetImage` of a rectangle of `d`, as RGB.
    fn read(
        &self,
        d: x11rb::protocol::xproto::Drawable,
        x: i16,
        y: i16,
        width: u16,
        height: u16,
    ) -> Result<RgbFrame, CaptureError> {
        let img = self
            .conn
            .get_image(ImageFormat::Z_PIXMAP, d, x, y, width, height, !0)
            .map_err(err("GetImage"))?
            .reply()
            .map_err(err("GetImage"))?;
        let setup = self.conn.setup();
        let bpp = setup
            .pixmap_formats
            .iter()
            .find(|f| f.depth == img.depth)
            .map(|f| f.bits_per_pixel)
            .unwrap_or(0);
        if bpp != 32 || !matches!(img.depth, 24 | 32) {
            return Err(CaptureError::Failed(format!(
                "unsupported window pixel format (depth {}, {} bits per pixel); only 24/32-bit TrueColor is captured",
                img.depth, bpp
            )));
        }
        let lsb = setup.image_byte_order == x11rb::protocol::xproto::ImageOrder::LSB_FIRST;
        let (width, height) = (u32::from(width), u32::from(height));
        let rgb = bgrx_to_rgb(&img.data, width, height, lsb)?;
        Ok(RgbFrame { rgb, width, height })
    }
}

/// Whether `top` is covered `now` or was less than [`REPAINT_GRACE`] ago,
/// recording a cover seen now in `seen`.
fn within_grace(
    seen: &mut HashMap<Window, Instant>,
    top: Window,
    covered_now: bool,
    now: Instant,
) -> bool {
    if covered_now {
        seen.insert(top, now);
        return true;
    }
    seen.get(&top)
        .is_some_and(|&at| now.saturating_duration_since(at) < REPAINT_GRACE)
}

/// A server grab, released (and the lock with it) when dropped.
struct Grabbed<'a> {
    x: &'a X11,
    _lock: MutexGuard<'a, ()>,
}

impl Drop for Grabbed<'_> {
    fn drop(&mut self) {
        // The connection's end releases the grab too, should this fail.
        let _ = self.x.conn.ungrab_server();
        let _ = self.x.conn.flush();
    }
}

/// The part of a window that a picture shows.
struct Area {
    /// Offset from the window's origin (its left margin).
    left: i16,
    /// Offset from the window's origin (its top margin).
    top: i16,
    width: u16,
    height: u16,
    /// Its left edge on the root window.
    root_x: i16,
    /// Its top edge on the root window.
    root_y: i16,
    /// The same area on the root window.
    on_root: Rect,
}

/// Why no picture of a window was taken.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum CaptureError {
    /// A window of another program lay over the window and its own pixels
    /// could not be read (no Composite, or not redirected in time).
    Covered,
    /// The capture failed (the message says where).
    Failed(String),
}

impl CaptureError {
    /// What happened, for a note or a step's reason.
    pub(crate) fn message(&self) -> String {
        match self {
            CaptureError::Covered => {
                "a window of another program lay over the application's window".into()
            }
            CaptureError::Failed(e) => e.clone(),
        }
    }
}

impl From<String> for CaptureError {
    fn from(e: String) -> CaptureError {
        CaptureError::Failed(e)
    }
}

/// Whether any of the covering windows' `owners` is not the application
/// (`pids`); an owner that cannot be told is not the application.
pub(crate) fn foreign(owners: &[Option<u32>], pids: &[u32]) -> bool {
    owners.iter().any(|o| !o.is_some_and(|p| pids.contains(&p)))
}

/// One capture of a window: RGB8 rows, top to bottom.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RgbFrame {
    /// `width * height * 3` bytes.
    pub rgb: Vec<u8>,
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
}

impl RgbFrame {
    /// The frame as a PNG (fast compression).
    pub(crate) fn png(&self) -> XResult<Vec<u8>> {
        encode_png(&self.rgb, self.width, self.height)
    }
}

/// A rectangle on the screen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Rect {
    x: i32,
    y: i32,
    width: i32,
    height: i32,
}

impl Rect {
    fn new(x: i16, y: i16, width: u16, height: u16) -> Rect {
        Rect {
            x: x.into(),
            y: y.into(),
            width: width.into(),
            height: height.into(),
        }
    }

    /// Whether the two share at least one pixel.
    fn overlaps(&self, o: &Rect) -> bool {
        self.x < o.x + o.width
            && o.x < self.x + self.width
            && self.y < o.y + o.height
            && o.y < self.y + self.height
    }
}

/// Converts 32-bit BGRX (LSB first) or XRGB (MSB first) rows to RGB.
pub(crate) fn bgrx_to_rgb(
    data: &[u8],
    width: u32,
    height: u32,
    lsb_first: bool,
) -> XResult<Vec<u8>> {
    let need = width as usize * height as usize * 4;
    if data.len() < need {
        return Err(format!(
            "GetImage returned {} bytes, expected {need}",
            data.len()
        ));
    }
    let mut rgb = Vec::with_capacity(width as usize * height as usize * 3);
    for px in data[..need].chunks_exact(4) {
        if lsb_first {
            rgb.extend_from_slice(&[px[2], px[1], px[0]]);
        } else {
            rgb.extend_from_slice(&[px[1], px[2], px[3]]);
        }
    }
    Ok(rgb)
}

/// Encodes RGB8 pixels as PNG.
pub(crate) fn encode_png(rgb: &[u8], width: u32, height: u32) -> XResult<Vec<u8>> {
    let mut out = Vec::new();
    {
        let mut enc = png::Encoder::new(&mut out, width, height);
        enc.set_color(png::ColorType::Rgb);
        enc.set_depth(png::BitDepth::Eight);
        enc.set_compression(png::Compression::Fast);
        let mut w = enc.write_header().map_err(err("PNG header"))?;
        w.write_image_data(rgb).map_err(err("PNG data"))?;
    }
    Ok(out)
}

#[cfg(test)]
#[path = "capture_xtests.rs"]
mod xtests;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rectangles_overlap_only_when_they_share_a_pixel() {
        let a = Rect::new(0, 0, 100, 100);
        assert!(a.overlaps(&Rect::new(99, 99, 10, 10)));
        assert!(a.overlaps(&Rect::new(-5, -5, 10, 10)));
        // Edge to edge: no shared pixel.
        assert!(!a.overlaps(&Rect::new(100, 0, 10, 10)));
        assert!(!a.overlaps(&Rect::new(0, -10, 10, 10)));
    }

    #[test]
    fn a_window_just_left_by_a_cover_waits_out_the_grace() {
        let mut seen = HashMap::new();
        let t0 = Instant::now();
        assert!(!within_grace(&mut seen, 1, false, t0));
        assert!(within_grace(&mut seen, 1, true, t0));
        assert!(within_grace(&mut seen, 1, false, t0 + REPAINT_GRACE / 2));
        assert!(!within_grace(&mut seen, 1, false, t0 + REPAINT_GRACE));
        // Another window is not affected.
        assert!(!within_grace(&mut seen, 2, false, t0 + REPAINT_GRACE / 2));
    }

    #[test]
    fn only_the_applications_own_windows_may_cover_it() {
        let app = [10, 11];
        assert!(!foreign(&[], &app));
        assert!(!foreign(&[Some(11), Some(10)], &app));
        assert!(foreign(&[Some(11), Some(99)], &app));
        // An owner that cannot be told: fail-closed.
        assert!(foreign(&[None], &app));
    }

    #[test]
    fn converts_and_encodes() {
        let data = [0u8, 0, 255, 0, 255, 0, 0, 0]; // red, blue pixels (BGRX)
        let rgb = bgrx_to_rgb(&data, 2, 1, true).unwrap();
        assert_eq!(rgb, vec![255, 0, 0, 0, 0, 255]);
        let png = encode_png(&rgb, 2, 1).unwrap();
        assert_eq!(&png[1..4], b"PNG");
    }
}
