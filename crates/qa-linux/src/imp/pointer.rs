//! The pointer-click fallback of `activate`: an element with no AT-SPI
//! action (no Action interface, or zero actions — an event box, a label
//! with a click handler) is clicked at the centre of its extents with XTest.
//!
//! Coordinates: the element's offset inside its top-level accessible window
//! is taken from their extents in one coordinate system (toolkits disagree
//! on what "screen" means — GTK 3 answers root coordinates, GTK 4
//! window-relative ones — but the difference is the same in both), then
//! placed on the X window found for that top-level (root position from
//! `TranslateCoordinates`), plus the `_GTK_FRAME_EXTENTS` margins when the
//! accessible frame excludes them.

use super::app::App;
use super::bus::{accessible, proxy};
use super::capture::XWindow;
use super::display::missing;
use super::objref::{ObjRef, ROOT_PATH};
use super::tree::Node;
use atspi::proxy::component::ComponentProxy;
use atspi::CoordType;
use qa_core::DriverError;
use qa_desktop::locate::describe;
use qa_desktop::DesktopCode;
use std::time::Duration;

/// Extents `(x, y, width, height)`.
pub(crate) type Extents = (i32, i32, i32, i32);

/// The element's top-level accessible window: name and extents.
struct Toplevel {
    name: String,
    extents: Option<Extents>,
}

/// Walks `Parent` up to the child of the application root.
async fn toplevel_of(conn: &zbus::Connection, obj: &ObjRef) -> Option<Toplevel> {
    let mut cur = obj.clone();
    for _ in 0..64 {
        let p = accessible(conn, &cur).await.ok()?;
        let parent = ObjRef::from_owned(&p.parent().await.ok()?)?;
        if parent.path == ROOT_PATH {
            let name = p.name().await.unwrap_or_default();
            let extents = match proxy::<ComponentProxy>(conn, &cur).await {
                Ok(c) => c.get_extents(CoordType::Screen).await.ok(),
                Err(_) => None,
            };
            return Some(Toplevel { name, extents });
        }
        cur = parent;
    }
    None
}

/// The root-window point to click: the element's centre, relative to its
/// top-level frame, placed on the X window. `margins` are the X window's
/// `_GTK_FRAME_EXTENTS` (left, right, top, bottom). Errors when the element
/// has no area or its centre lies outside the window.
pub(crate) fn click_point(
    element: Extents,
    frame: Option<Extents>,
    win: &XWindow,
    margins: [u32; 4],
) -> Result<(i32, i32), String> {
    let (ex, ey, ew, eh) = element;
    if ew <= 0 || eh <= 0 {
        return Err(format!("it has no on-screen area ({ew}x{eh})"));
    }
    let (fx, fy, fw, fh) = frame.unwrap_or((0, 0, win.width as i32, win.height as i32));
    let [l, r, t, b] = margins.map(|m| m as i32);
    // The accessible frame is the X window minus the CSD margins when its
    // size says so; otherwise it is the X window itself.
    let inset = (l + r > 0 || t + b > 0)
        && (fw - (win.width as i32 - l - r)).abs() <= 2
        && (fh - (win.height as i32 - t - b)).abs() <= 2;
    let (ox, oy) = if inset { (l, t) } else { (0, 0) };
    let cx = ex - fx + ew / 2 + ox;
    let cy = ey - fy + eh / 2 + oy;
    if cx < 0 || cy < 0 || cx >= win.width as i32 || cy >= win.height as i32 {
        return Err(format!(
            "its centre ({cx},{cy}) lies outside its {}x{} window (scrolled out of view?)",
            win.width, win.height
        ));
    }
    Ok((win.x + cx, win.y + cy))
}

/// Raises the element's window and clicks the centre of its extents.
/// Returns the step detail.
pub(crate) async fn click(app: &App, n: &Node) -> Result<String, DriverError> {
    let fail = |why: String| {
        DriverError::new(
            DesktopCode::ActivateNoAction,
            format!(
                "{} cannot be clicked with the pointer: {why}",
                describe(&n.view)
            ),
        )
        .with_remediation(
            "locate the clickable element itself (snapshotAccessibility shows roles), or use pressKey",
        )
    };
    let element = n
        .bounds
        .ok_or_else(|| fail("it has no Component extents".into()))?;
    let top = toplevel_of(app.conn(), &n.element.obj).await;
    let win = match &top {
        Some(t) => app
            .x_windows()
            .await
            .into_iter()
            .find(|w| w.title == t.name),
        None => None,
    };
    let win = match win {
        Some(w) => w,
        None => app.x_window().await?,
    };
    let id = win.id;
    let margins = app
        .with_x11(DesktopCode::InputFailed, move |x| {
            x.raise_and_focus(id)?;
            Ok::<_, String>(x.frame_extents(id))
        })
        .await?
        .map_err(|e| DriverError::new(DesktopCode::InputFailed, e))?;
    let (px, py) =
        click_point(element, top.and_then(|t| t.extents), &win, margins).map_err(fail)?;
    // Let the raise take effect before the pointer lands.
    tokio::time::sleep(Duration::from_millis(50)).await;
    let (cx, cy) = (
        i16::try_from(px).map_err(|_| fail(format!("x {px} is off the screen")))?,
        i16::try_from(py).map_err(|_| fail(format!("y {py} is off the screen")))?,
    );
    app.with_x11(DesktopCode::InputFailed, move |x| x.click(cx, cy))
        .await?
        .map_err(|e| {
            DriverError::blocked(
                DesktopCode::InputFailed,
                missing(
                    "pointer-input",
                    e,
                    "the X server needs the XTEST extension (Xvfb and Xorg have it)",
                ),
            )
        })?;
    Ok(format!(
        "pointer click at ({px},{py}) in window 0x{:x}: the element exposes no AT-SPI action",
        win.id
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn win(x: i32, y: i32, w: u32, h: u32) -> XWindow {
        XWindow {
            id: 1,
            pid: 1,
            title: String::new(),
            x,
            y,
            width: w,
            height: h,
        }
    }

    #[test]
    fn gtk3_root_coordinates_on_bare_xvfb() {
        // Frame at the root origin, element at (10,164) 340x17.
        let w = win(0, 0, 360, 214);
        let p = click_point((10, 164, 340, 17), Some((0, 0, 360, 214)), &w, [0; 4]);
        assert_eq!(p, Ok((180, 172)));
    }

    #[test]
    fn moved_window_and_window_relative_extents() {
        // GTK 4: extents relative to the visible frame, CSD margins of 10 px
        // around it; the X window sits at (100,50).
        let w = win(100, 50, 380, 234);
        let p = click_point(
            (10, 10, 20, 20),
            Some((0, 0, 360, 214)),
            &w,
            [10, 10, 10, 10],
        );
        assert_eq!(p, Ok((100 + 10 + 20, 50 + 10 + 20)));
        // Root coordinates with the frame elsewhere: only the offset counts.
        let p = click_point((510, 310, 20, 20), Some((500, 300, 380, 234)), &w, [0; 4]);
        assert_eq!(p, Ok((100 + 20, 50 + 20)));
    }

    #[test]
    fn empty_or_outside_is_an_error() {
        let w = win(0, 0, 100, 100);
        assert!(click_point((0, 0, 0, 10), None, &w, [0; 4]).is_err());
        assert!(click_point((0, 500, 10, 10), None, &w, [0; 4]).is_err());
    }
}
