//! Objective-C: AppKit's running applications, LaunchServices through
//! NSWorkspace, NSBundle, and ScreenCaptureKit for exactly one window's
//! pixels. One of the crate's two modules with `unsafe` (the other is
//! `ffi`).
//!
//! ScreenCaptureKit answers through completion handlers on its own queue;
//! these functions run on a blocking thread and wait for the answer with a
//! bound.

#![allow(unsafe_code)]

use crate::pixels;
use crate::window::{self, Rect, Shareable};
use block2::RcBlock;
use objc2::rc::Retained;
use objc2::AllocAnyThread;
use objc2_app_kit::{NSApplicationActivationOptions, NSRunningApplication, NSWorkspace};
use objc2_core_foundation::{CGPoint, CGRect, CGSize};
use objc2_core_graphics::{
    CGBitmapContextCreate, CGColorSpace, CGContext, CGImage, CGImageAlphaInfo, CGImageByteOrderInfo,
};
use objc2_foundation::{NSBundle, NSError, NSString};
use objc2_screen_capture_kit::{
    SCContentFilter, SCScreenshotManager, SCShareableContent, SCStreamConfiguration, SCWindow,
};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

/// A running application.
#[derive(Debug, Clone)]
pub(crate) struct RunningApp {
    /// Its process id.
    pub pid: i32,
    /// Its localized name.
    pub name: String,
}

fn running(app: &NSRunningApplication) -> RunningApp {
    RunningApp {
        pid: app.processIdentifier(),
        name: app
            .localizedName()
            .map(|n| n.to_string())
            .unwrap_or_default(),
    }
}

/// Every running application (NSWorkspace's list).
pub(crate) fn running_apps() -> Vec<RunningApp> {
    NSWorkspace::sharedWorkspace()
        .runningApplications()
        .iter()
        .filter(|a| !a.isTerminated())
        .map(|a| running(&a))
        .collect()
}

/// The running applications with a bundle identifier.
pub(crate) fn running_with_bundle_id(id: &str) -> Vec<RunningApp> {
    NSRunningApplication::runningApplicationsWithBundleIdentifier(&NSString::from_str(id))
        .iter()
        .filter(|a| !a.isTerminated())
        .map(|a| running(&a))
        .collect()
}

/// The running application with process id `pid`.
pub(crate) fn app_for_pid(pid: i32) -> Option<RunningApp> {
    NSRunningApplication::runningApplicationWithProcessIdentifier(pid)
        .filter(|a| !a.isTerminated())
        .map(|a| running(&a))
}

/// Brings the application of `pid` to the front with all its windows.
pub(crate) fn activate(pid: i32) -> bool {
    #[allow(deprecated)] // IgnoringOtherApps: still honoured, needed from a background process.
    let opts = NSApplicationActivationOptions::ActivateAllWindows
        | NSApplicationActivationOptions::ActivateIgnoringOtherApps;
    NSRunningApplication::runningApplicationWithProcessIdentifier(pid)
        .is_some_and(|a| a.activateWithOptions(opts))
}

/// The executable of a `.app` bundle (`CFBundleExecutable`).
pub(crate) fn bundle_executable(bundle: &Path) -> Option<PathBuf> {
    let path = NSString::from_str(&bundle.to_string_lossy());
    let b = NSBundle::bundleWithPath(&path)?;
    b.executablePath().map(|p| PathBuf::from(p.to_string()))
}

/// The `.app` LaunchServices knows for a bundle identifier.
pub(crate) fn bundle_for_id(id: &str) -> Option<PathBuf> {
    let url = NSWorkspace::sharedWorkspace()
        .URLForApplicationWithBundleIdentifier(&NSString::from_str(id))?;
    url.path().map(|p| PathBuf::from(p.to_string()))
}

/// Why a capture failed.
pub(crate) enum CaptureError {
    /// No on-screen window is exactly the AX window (the windows seen).
    NoWindow(String),
    /// ScreenCaptureKit failed or did not answer.
    Failed(String),
}

/// One window's pixels.
pub(crate) struct Pixels {
    /// Its `CGWindowID`.
    pub window_id: u32,
    /// Its frame in points.
    pub frame: Rect,
    /// Pixel width.
    pub width: u32,
    /// Pixel height.
    pub height: u32,
    /// Straight RGBA, top row first.
    pub rgba: Vec<u8>,
}

/// A value a completion handler hands over to the waiting thread.
struct Handed<T>(T);
// SAFETY: ScreenCaptureKit's SCShareableContent and SCWindow are
// immutable snapshots and CGImage is thread-safe; the waiting thread is
// the only user once the handler has sent them.
unsafe impl<T> Send for Handed<T> {}

fn ns_error(e: *mut NSError) -> String {
    if e.is_null() {
        return "no error given".into();
    }
    // SAFETY: a non-null NSError the handler received, valid for the call.
    let e = unsafe { &*e };
    e.localizedDescription().to_string()
}

fn shareable_content(bound: Duration) -> Result<Retained<SCShareableContent>, String> {
    let (tx, rx) = mpsc::channel::<Result<Handed<Retained<SCShareableContent>>, String>>();
    let block = RcBlock::new(move |content: *mut SCShareableContent, err: *mut NSError| {
        // SAFETY: ScreenCaptureKit passes a valid object or null; retain
        // it past the handler.
        let c = unsafe { Retained::retain(content) };
        let _ = tx.send(c.map(Handed).ok_or_else(|| ns_error(err)));
    });
    // SAFETY: the handler matches the declared signature and lives as
    // long as ScreenCaptureKit holds it (RcBlock is copied by the callee).
    unsafe {
        SCShareableContent::getShareableContentExcludingDesktopWindows_onScreenWindowsOnly_completionHandler(
            true, true, &block,
        )
    };
    match rx.recv_timeout(bound) {
        Ok(Ok(c)) => Ok(c.0),
        Ok(Err(e)) => Err(format!("SCShareableContent failed: {e}")),
        Err(_) => Err(format!(
            "SCShareableContent did not answer within {} ms",
            bound.as_millis()
        )),
    }
}

fn rect(r: CGRect) -> Rect {
    Rect {
        x: r.origin.x,
        y: r.origin.y,
        width: r.size.width,
        height: r.size.height,
    }
}

fn describe(w: &SCWindow) -> Shareable {
    // SAFETY: plain property reads of a live SCWindow.
    unsafe {
        Shareable {
            id: w.windowID(),
            pid: w.owningApplication().map_or(-1, |a| a.processID()),
            layer: w.windowLayer() as i64,
            on_screen: w.isOnScreen(),
            frame: rect(w.frame()),
            title: w.title().map(|t| t.to_string()),
        }
    }
}

/// Captures exactly the window of process `pid` whose frame is `frame`
/// (and, among twins, whose title is `title`), within `bound`.
pub(crate) fn capture(
    pid: i32,
    frame: &Rect,
    title: &str,
    bound: Duration,
) -> Result<Pixels, CaptureError> {
    let content = shareable_content(bound).map_err(CaptureError::Failed)?;
    // SAFETY: a property read of a live SCShareableContent.
    let windows = unsafe { content.windows() };
    let list: Vec<Retained<SCWindow>> = windows.iter().collect();
    let described: Vec<Shareable> = list.iter().map(|w| describe(w)).collect();
    let Some(i) = window::capture_target(&described, pid, frame, title) else {
        let mine: Vec<String> = described
            .iter()
            .filter(|s| s.pid == pid)
            .map(|s| format!("window {} at {:?}", s.id, s.frame))
            .collect();
        return Err(CaptureError::NoWindow(if mine.is_empty() {
            "ScreenCaptureKit lists no on-screen window of the application".into()
        } else {
            format!(
                "none of the application's on-screen windows has the frame of its accessibility window {frame:?} (theirs: {})",
                mine.join(", ")
            )
        }));
    };
    let (target, info) = (&list[i], &described[i]);
    // SAFETY: creating a filter on a live SCWindow; a fresh
    // configuration; property reads and writes of those objects.
    let (filter, config) = unsafe {
        let filter =
            SCContentFilter::initWithDesktopIndependentWindow(SCContentFilter::alloc(), target);
        let scale = f64::from(filter.pointPixelScale()).max(1.0);
        let config = SCStreamConfiguration::new();
        config.setWidth((info.frame.width * scale).round().max(1.0) as usize);
        config.setHeight((info.frame.height * scale).round().max(1.0) as usize);
        config.setShowsCursor(false);
        config.setIgnoreShadowsSingleWindow(true);
        (filter, config)
    };
    let (tx, rx) =
        mpsc::channel::<Result<Handed<objc2_core_foundation::CFRetained<CGImage>>, String>>();
    let block = RcBlock::new(move |image: *mut CGImage, err: *mut NSError| {
        let r = match std::ptr::NonNull::new(image) {
            // SAFETY: a valid CGImage for the handler's duration; retained
            // past it.
            Some(p) => Ok(Handed(unsafe {
                objc2_core_foundation::CFRetained::retain(p)
            })),
            None => Err(ns_error(err)),
        };
        let _ = tx.send(r);
    });
    // SAFETY: live filter and configuration; the handler matches the
    // declared signature.
    unsafe {
        SCScreenshotManager::captureImageWithFilter_configuration_completionHandler(
            &filter,
            &config,
            Some(&block),
        )
    };
    let image = match rx.recv_timeout(bound) {
        Ok(Ok(i)) => i.0,
        Ok(Err(e)) => {
            return Err(CaptureError::Failed(format!(
                "SCScreenshotManager failed: {e}"
            )))
        }
        Err(_) => {
            return Err(CaptureError::Failed(format!(
                "SCScreenshotManager did not answer within {} ms",
                bound.as_millis()
            )))
        }
    };
    let (width, height, rgba) = rgba(&image).map_err(CaptureError::Failed)?;
    Ok(Pixels {
        window_id: info.id,
        frame: info.frame,
        width,
        height,
        rgba,
    })
}

/// Draws an image into a premultiplied RGBA bitmap and returns straight
/// RGBA, top row first.
fn rgba(image: &CGImage) -> Result<(u32, u32, Vec<u8>), String> {
    let (w, h) = (CGImage::width(Some(image)), CGImage::height(Some(image)));
    if w == 0 || h == 0 {
        return Err("the captured image is empty".into());
    }
    let mut buf = vec![0u8; w * h * 4];
    let space = CGColorSpace::new_device_rgb().ok_or("no RGB colour space")?;
    let info = CGImageAlphaInfo::PremultipliedLast.0 | CGImageByteOrderInfo::Order32Big.0;
    // SAFETY: buf holds exactly height rows of width*4 bytes and outlives
    // the context, which is dropped before buf is read.
    let ctx = unsafe {
        CGBitmapContextCreate(buf.as_mut_ptr().cast(), w, h, 8, w * 4, Some(&space), info)
    }
    .ok_or("CGBitmapContextCreate failed")?;
    let all = CGRect::new(CGPoint::new(0.0, 0.0), CGSize::new(w as f64, h as f64));
    CGContext::draw_image(Some(&ctx), all, Some(image));
    drop(ctx);
    pixels::unpremultiply(&mut buf);
    Ok((w as u32, h as u32, buf))
}
