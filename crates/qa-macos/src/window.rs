//! Which window: the one a step uses among the application's AX windows,
//! and the ScreenCaptureKit window that is exactly it (same process, a
//! normal window, the same frame). Pure; the macOS side reads both lists.
//! No private API: the AX window's `CGWindowID` is found by matching, not
//! by `_AXUIElementGetWindow`.

/// A rectangle in screen points (top-left origin).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rect {
    /// Left.
    pub x: f64,
    /// Top.
    pub y: f64,
    /// Width.
    pub width: f64,
    /// Height.
    pub height: f64,
}

impl Rect {
    /// Whether two frames are the same window's: every edge within a point
    /// (AX and the window server round differently).
    pub fn same(&self, other: &Rect) -> bool {
        [
            (self.x, other.x),
            (self.y, other.y),
            (self.width, other.width),
            (self.height, other.height),
        ]
        .iter()
        .all(|(a, b)| (a - b).abs() <= 1.0)
    }

    /// Its area.
    pub fn area(&self) -> f64 {
        self.width.max(0.0) * self.height.max(0.0)
    }
}

/// One of the application's windows as `kAXWindowsAttribute` lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct AxWindow {
    /// `AXTitle`.
    pub title: String,
    /// `AXMain`.
    pub main: bool,
    /// `AXFocused`.
    pub focused: bool,
    /// `AXMinimized`.
    pub minimized: bool,
    /// `AXPosition` and `AXSize`.
    pub frame: Option<Rect>,
}

/// The window a step uses: the one the flow names by title (exactly, and
/// never another), else the focused one, else the main one, else the
/// largest one that is not minimized.
pub fn pick(windows: &[AxWindow], title: Option<&str>) -> Option<usize> {
    if let Some(t) = title {
        return windows.iter().position(|w| w.title == t);
    }
    windows
        .iter()
        .position(|w| w.focused && !w.minimized)
        .or_else(|| windows.iter().position(|w| w.main && !w.minimized))
        .or_else(|| {
            windows
                .iter()
                .enumerate()
                .filter(|(_, w)| !w.minimized)
                .max_by(|(i, a), (j, b)| {
                    let (fa, fb) = (
                        a.frame.map_or(0.0, |f| f.area()),
                        b.frame.map_or(0.0, |f| f.area()),
                    );
                    fa.total_cmp(&fb).then(j.cmp(i))
                })
                .map(|(i, _)| i)
        })
}

/// A window ScreenCaptureKit can capture (`SCWindow`).
#[derive(Debug, Clone, PartialEq)]
pub struct Shareable {
    /// `windowID` (the `CGWindowID`).
    pub id: u32,
    /// `owningApplication.processID`.
    pub pid: i32,
    /// `windowLayer` (0: a normal window).
    pub layer: i64,
    /// `isOnScreen`.
    pub on_screen: bool,
    /// `frame`.
    pub frame: Rect,
    /// `title` (`None` without the Screen Recording grant).
    pub title: Option<String>,
}

/// The shareable window that is exactly the AX window of process `pid`
/// with `frame` and `title`: the same process, layer 0, on screen, the
/// same frame; when several match, the one with the same title. `None`
/// rather than a guess: a capture never shows another window.
pub fn capture_target(cands: &[Shareable], pid: i32, frame: &Rect, title: &str) -> Option<usize> {
    let same: Vec<usize> = cands
        .iter()
        .enumerate()
        .filter(|(_, c)| c.pid == pid && c.layer == 0 && c.on_screen && c.frame.same(frame))
        .map(|(i, _)| i)
        .collect();
    match same.as_slice() {
        [] => None,
        [one] => Some(*one),
        many => {
            let titled: Vec<usize> = many
                .iter()
                .copied()
                .filter(|&i| cands[i].title.as_deref() == Some(title))
                .collect();
            (titled.len() == 1).then(|| titled[0])
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(x: f64, y: f64, w: f64, h: f64) -> Rect {
        Rect {
            x,
            y,
            width: w,
            height: h,
        }
    }

    fn w(title: &str, main: bool, focused: bool, minimized: bool, area: f64) -> AxWindow {
        AxWindow {
            title: title.into(),
            main,
            focused,
            minimized,
            frame: Some(r(0.0, 0.0, area, 1.0)),
        }
    }

    #[test]
    fn the_named_window_then_focused_then_main_then_largest() {
        let ws = [
            w("Untitled", true, false, false, 100.0),
            w("Open", false, true, false, 50.0),
            w("Big", false, false, true, 900.0),
        ];
        assert_eq!(pick(&ws, Some("Untitled")), Some(0));
        assert_eq!(pick(&ws, Some("Nope")), None, "never another window");
        assert_eq!(pick(&ws, None), Some(1));
        let ws = [
            w("a", false, false, false, 10.0),
            w("b", true, false, false, 5.0),
        ];
        assert_eq!(pick(&ws, None), Some(1));
        let ws = [
            w("a", false, false, false, 10.0),
            w("b", false, false, false, 30.0),
            w("c", false, false, true, 99.0),
        ];
        assert_eq!(pick(&ws, None), Some(1), "the largest not minimized");
        assert_eq!(pick(&[], None), None);
    }

    fn s(id: u32, pid: i32, layer: i64, frame: Rect, title: Option<&str>) -> Shareable {
        Shareable {
            id,
            pid,
            layer,
            on_screen: true,
            frame,
            title: title.map(String::from),
        }
    }

    #[test]
    fn the_capture_is_exactly_the_ax_window_or_nothing() {
        let f = r(100.0, 50.0, 640.0, 480.0);
        let cands = [
            s(1, 7, 0, f, Some("Other app")),
            s(2, 42, 25, f, None),
            s(3, 42, 0, r(100.4, 50.0, 640.0, 479.5), Some("Untitled")),
            s(4, 42, 0, r(0.0, 0.0, 640.0, 480.0), Some("Untitled 2")),
        ];
        assert_eq!(capture_target(&cands, 42, &f, "Untitled"), Some(2));
        assert_eq!(capture_target(&cands, 43, &f, "Untitled"), None);
        // Two windows of the process on the same frame: the title decides,
        // and without one nothing is guessed.
        let twins = [s(5, 42, 0, f, Some("A")), s(6, 42, 0, f, Some("B"))];
        assert_eq!(capture_target(&twins, 42, &f, "B"), Some(1));
        let untitled = [s(5, 42, 0, f, None), s(6, 42, 0, f, None)];
        assert_eq!(capture_target(&untitled, 42, &f, "B"), None);
        let mut hidden = s(9, 42, 0, f, Some("A"));
        hidden.on_screen = false;
        assert_eq!(capture_target(&[hidden], 42, &f, "A"), None);
    }
}
