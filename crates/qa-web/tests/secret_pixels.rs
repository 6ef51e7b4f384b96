//! Secrets in pixels: before a screenshot is published, every element that
//! shows a secret is covered; a secret shown where it cannot be covered (a
//! canvas, a cross-origin frame) withholds the picture. Proven with OCR of
//! every published PNG, with a control word OCR must still read.

mod common;
use common::*;
use qa_core::flow::StepClass;
use qa_core::{Artifact, Cadence, Deadline, Flow, Step, SurfaceDriver, SurfaceSession, Verdict};
use qa_runner::ocr::{fold, text_of};
use std::path::{Path, PathBuf};

/// OCR-friendly: letters and a digit, no look-alike pairs to speak of.
const SECRET: &str = "Wombat7Quartz";
/// A word every fixture page shows next to the secret: OCR must read it in
/// every published picture, so a blank or unreadable PNG fails the test.
const CONTROL: &str = "Kangaroo";

struct Open {
    run: Run,
    flow: Flow,
    s: Box<dyn SurfaceSession>,
    profile: PathBuf,
}

/// Opens `flow` (JSONC) against the web fixtures, with [`SECRET`] in the
/// run's secrets when `secret` (as `--secret-env` would put it there).
async fn open(flow: &str, secret: bool) -> Open {
    let flow = parse_flow(flow, &fixtures());
    let run = context();
    if secret {
        run.ctx.secrets.add(SECRET);
    }
    let profile = run.ctx.evidence.run_dir().join("work/chromium-profile");
    let s = qa_web::WebDriver::new()
        .open(&flow, run.ctx.clone())
        .await
        .unwrap_or_else(|e| panic!("open: {}: {}", e.code, e.message));
    // Where the profile really is (a link when the browser runs as its own user).
    let profile = common::real_path(&profile);
    Open {
        run,
        flow,
        s,
        profile,
    }
}

fn d() -> Deadline {
    Deadline::after_ms(20_000)
}

/// Runs one step like the runner: an action once, an assertion until it
/// holds. Returns the step's artifacts and observations.
async fn step(o: &mut Open, i: usize) -> (Vec<Artifact>, Vec<String>) {
    let st: &Step = &o.flow.steps[i];
    let deadline = d();
    match st.class() {
        StepClass::Assertion => {
            let mut cadence = Cadence::new();
            let mut last = String::new();
            loop {
                assert!(
                    cadence.wait(deadline).await,
                    "step {} never held: {last}",
                    i + 1
                );
                match o.s.verify(st, deadline).await {
                    Ok(Verdict::Holds) => return (vec![], vec![]),
                    Ok(Verdict::NotYet { observed, .. }) => last = observed,
                    Ok(Verdict::Fails { reason }) => panic!("step {} failed: {reason}", i + 1),
                    Err(e) => panic!("step {}: {}: {}", i + 1, e.code, e.message),
                }
            }
        }
        _ => {
            let published = o.run.ctx.evidence.artifacts().len();
            let out =
                o.s.perform(st, deadline)
                    .await
                    .unwrap_or_else(|e| panic!("step {}: {}: {}", i + 1, e.code, e.message));
            let written = o.run.ctx.evidence.artifacts()[published..].to_vec();
            (written, messages(&out.notes))
        }
    }
}

/// Closes the session; the run (its directory) stays alive while the test
/// reads the pictures.
async fn close(o: Open) -> (Vec<String>, Run) {
    let closed = o.s.close(Deadline::after_ms(15_000)).await;
    assert!(closed.cleanup.left.is_empty(), "{:?}", closed.cleanup.left);
    assert!(processes_mentioning(&o.profile).is_empty());
    (messages(&closed.notes), o.run)
}

/// OCR of `png` reads the control word but not the secret.
fn assert_masked(png: &Path, what: &str) {
    let text = fold(&text_of(png));
    assert!(
        text.contains(&fold(CONTROL)),
        "{what}: OCR must read the control word {CONTROL:?} (positive control) in {}",
        png.display()
    );
    // The OCR text is not printed: it would contain the secret.
    assert!(
        !text.contains(&fold(SECRET)),
        "{what}: the secret is readable in {}",
        png.display()
    );
}

fn png_files(run: &Run) -> Vec<PathBuf> {
    let dir = run.ctx.evidence.run_dir().join("artifacts/screenshots");
    let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|r| r.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    v.sort();
    v
}

fn withheld_note(obs: &[String]) -> Option<&String> {
    obs.iter()
        .find(|o| o.contains("withheld") && o.contains("secret"))
}

const ECHO_FLOW: &str = r#"{ "target": { "serve": "web", "url": "/secret-echo.html" },
    "viewport": { "width": 1280, "height": 900 }, "steps": [
    { "action": "fill", "locator": { "label": "Access token" }, "value": "Wombat7Quartz" },
    { "action": "click", "locator": { "role": "button", "name": "Echo", "exact": true } },
    { "action": "assertText", "locator": { "testId": "count" }, "equals": "echoed 1 times" },
    { "action": "screenshot", "name": "view" },
    { "action": "screenshot", "name": "full", "fullPage": true },
    { "action": "screenshot", "name": "element", "locator": { "testId": "echo" } },
    { "action": "screenshot", "name": "in-frame", "target": { "type": "frame", "locator": { "css": "iframe#frame" } } },
    { "action": "openPopup", "name": "echo", "locator": { "role": "button", "name": "Open echo window" } },
    { "action": "screenshot", "name": "popup", "target": { "type": "popup", "name": "echo" } },
    { "action": "assertText", "locator": { "testId": "echo" }, "equals": "not this" },
    { "action": "assertText", "target": { "type": "popup", "name": "echo" }, "locator": { "testId": "echo" }, "equals": "not this" }
] }"#;

/// The secret typed into a field and echoed into a paragraph (split across
/// text nodes), a title attribute, open and closed shadow roots, a
/// same-origin frame, a popup and below the fold: no published PNG shows
/// it (viewport, full page, element, frame step, popup, failure pictures).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_published_screenshot_masks_the_secret() {
    let mut o = open(ECHO_FLOW, true).await;
    let mut shots = Vec::new();
    let mut notes = Vec::new();
    for i in 0..9 {
        let (a, obs) = step(&mut o, i).await;
        shots.extend(a);
        notes.extend(obs);
    }
    assert_eq!(
        shots.len(),
        5,
        "every screenshot step publishes its picture: {notes:?}"
    );
    // A failure leaves its picture and, redacted, the accessibility tree
    // beside it; the pictures are read back below, the trees here.
    let (in_page, page_trees): (Vec<_>, Vec<_>) =
        o.s.capture_failure(&o.flow.steps[9])
            .await
            .into_iter()
            .partition(|a| a.path.ends_with(".png"));
    let (in_popup, popup_trees): (Vec<_>, Vec<_>) =
        o.s.capture_failure(&o.flow.steps[10])
            .await
            .into_iter()
            .partition(|a| a.path.ends_with(".png"));
    assert_eq!(in_page.len(), 1, "the page's failure picture");
    assert_eq!(in_popup.len(), 1, "the popup's failure picture");
    for t in page_trees.iter().chain(&popup_trees) {
        let text = std::fs::read_to_string(&t.path).unwrap();
        assert!(t.path.ends_with(".json"), "{}", t.path);
        assert!(!text.contains(SECRET), "the secret is in {}", t.path);
    }
    shots.extend(in_page);
    shots.extend(in_popup);
    let (closing, _run) = close(o).await;
    notes.extend(closing);
    assert_eq!(withheld_note(&notes), None, "nothing withheld: {notes:?}");
    for a in &shots {
        assert_masked(Path::new(&a.path), &a.path);
    }
}

/// The masks are gone right after the capture: the DOM is as before (no
/// leftover element, nothing left in the top layer) and the covered
/// elements take clicks and input again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn masks_are_removed_after_the_capture() {
    let flow = r#"{ "target": { "serve": "web", "url": "/secret-echo.html" },
        "viewport": { "width": 1280, "height": 900 }, "steps": [
        { "action": "fill", "locator": { "label": "Access token" }, "value": "Wombat7Quartz" },
        { "action": "click", "locator": { "role": "button", "name": "Echo", "exact": true } },
        { "action": "click", "locator": { "role": "button", "name": "Count nodes" } },
        { "action": "assertText", "locator": { "testId": "census" }, "regex": "^\\d+ elements" },
        { "action": "screenshot", "name": "masked" },
        { "action": "click", "locator": { "role": "button", "name": "Count nodes" } },
        { "action": "assertText", "locator": { "testId": "census" }, "equals": "unchanged" },
        { "action": "assertCount", "locator": { "css": ":popover-open, [aria-hidden=true]" }, "count": 0 },
        { "action": "click", "locator": { "role": "button", "name": "Echo", "exact": true } },
        { "action": "assertText", "locator": { "testId": "count" }, "equals": "echoed 2 times" },
        { "action": "click", "locator": { "label": "Access token" } },
        { "action": "fill", "locator": { "label": "Access token" }, "value": "plain words" },
        { "action": "assertValue", "locator": { "label": "Access token" }, "equals": "plain words" }
    ] }"#;
    let mut o = open(flow, true).await;
    let mut shots = Vec::new();
    for i in 0..o.flow.steps.len() {
        let (a, _) = step(&mut o, i).await;
        shots.extend(a);
    }
    let _run = close(o).await;
    assert_eq!(shots.len(), 1);
    // The picture was masked (so there were masks to remove).
    assert_masked(Path::new(&shots[0].path), "masked");
}

const CANVAS_FLOW: &str = r#"{ "target": { "serve": "web", "url": "/secret-canvas.html" },
    "viewport": { "width": 1280, "height": 900 }, "steps": [
    { "action": "screenshot", "name": "before" },
    { "action": "fill", "locator": { "label": "Access token" }, "value": "Wombat7Quartz" },
    { "action": "click", "locator": { "role": "button", "name": "Draw" } },
    { "action": "assertValue", "locator": { "label": "Access token" }, "equals": "" },
    { "action": "screenshot", "name": "drawn" },
    { "action": "screenshot", "name": "drawn-full", "fullPage": true },
    { "action": "assertText", "locator": { "css": "h1" }, "equals": "not this" }
] }"#;

/// A secret drawn into a canvas has no element box to cover; the driver
/// knows it is on the page (hidden markup keeps it) and withholds every
/// picture, saying why. Control: without the secret registered, the same
/// picture shows it (the fixture and OCR work).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_secret_that_cannot_be_masked_withholds_the_screenshot() {
    // Control run: nothing registered as secret.
    let mut o = open(CANVAS_FLOW, false).await;
    let mut shots = Vec::new();
    for i in 0..5 {
        shots.extend(step(&mut o, i).await.0);
    }
    let _control = close(o).await;
    assert_eq!(shots.len(), 2);
    let t = fold(&text_of(Path::new(&shots[1].path)));
    assert!(
        t.contains(&fold(SECRET)),
        "control: OCR reads the canvas text when it is not a secret"
    );

    let mut o = open(CANVAS_FLOW, true).await;
    let (before, _) = step(&mut o, 0).await;
    assert_eq!(before.len(), 1, "no secret on the page yet: published");
    assert_masked(Path::new(&before[0].path), "before");
    for i in 1..4 {
        step(&mut o, i).await;
    }
    for i in 4..6 {
        let (a, obs) = step(&mut o, i).await;
        assert!(a.is_empty(), "step {}: withheld, not published", i + 1);
        let note = withheld_note(&obs)
            .unwrap_or_else(|| panic!("step {}: no withheld observation: {obs:?}", i + 1));
        assert!(!note.contains(SECRET), "{note}");
        assert!(note.contains("could not be masked"), "{note}");
    }
    let failure = o.s.capture_failure(&o.flow.steps[6]).await;
    assert!(
        failure.iter().all(|a| !a.path.ends_with(".png")),
        "the failure picture is withheld too (the accessibility snapshot beside it is text): {failure:?}"
    );
    let run_files = png_files(&o.run);
    let (notes, _run) = close(o).await;
    assert!(
        withheld_note(&notes).is_some_and(|n| n.contains("failure-step7")),
        "the failure picture's withholding is reported: {notes:?}"
    );
    assert_eq!(
        run_files,
        vec![PathBuf::from(&before[0].path)],
        "no other PNG was written"
    );
}

/// A secret shown inside a frame of another (allowed) origin cannot be
/// reached for masking: the picture is withheld. Control: without the
/// secret registered, the frame shows it. Same site (another port: the
/// frame renders in the page's process) ...
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_secret_in_a_cross_origin_frame_withholds_the_screenshot() {
    cross_origin_frame(false).await;
}

/// ... and another site (`localhost` next to `127.0.0.1`: an out-of-process
/// frame, its own target).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_secret_in_a_cross_site_frame_withholds_the_screenshot() {
    cross_origin_frame(true).await;
}

async fn cross_origin_frame(other_site: bool) {
    let second = Recorder::start(Some(fixtures().join("web")));
    let xo = if other_site {
        second.origin.replace("127.0.0.1", "localhost")
    } else {
        second.origin.clone()
    };
    let flow = format!(
        r#"{{ "target": {{ "serve": "web", "url": "/secret-xo-host.html?xo={xo}", "allowedOrigins": ["{xo}"] }},
        "viewport": {{ "width": 1280, "height": 900 }}, "steps": [
        {{ "action": "fill", "locator": {{ "label": "Access token" }}, "value": "Wombat7Quartz" }},
        {{ "action": "click", "locator": {{ "role": "button", "name": "Send" }} }},
        {{ "action": "assertValue", "locator": {{ "label": "Access token" }}, "equals": "" }},
        {{ "action": "screenshot", "name": "sent" }}
    ] }}"#
    );
    let run = |secret| {
        let flow = flow.clone();
        async move {
            let mut o = open(&flow, secret).await;
            for i in 0..3 {
                step(&mut o, i).await;
            }
            // The frame gets the message asynchronously.
            tokio::time::sleep(std::time::Duration::from_millis(700)).await;
            let (shots, obs) = step(&mut o, 3).await;
            let (_, run) = close(o).await;
            (shots, obs, run)
        }
    };
    let (control, _, _control_run) = run(false).await;
    assert_eq!(control.len(), 1);
    assert!(
        fold(&text_of(Path::new(&control[0].path))).contains(&fold(SECRET)),
        "control: the cross-origin frame shows the value"
    );
    let (shots, obs, _run) = run(true).await;
    assert!(shots.is_empty(), "withheld, not published");
    let note = withheld_note(&obs).unwrap_or_else(|| panic!("no withheld observation: {obs:?}"));
    // Same site: the frame's nodes are found but cannot be reached from
    // the page; another site: the frame's own target shows it.
    let why = if other_site {
        "inside a cross-origin frame"
    } else {
        "cannot reach"
    };
    assert!(note.contains(why), "{note}");
    assert!(note.contains("could not be masked"), "{note}");
}

/// The top layer and scrolling: a secret in a modal dialog (painted above
/// any z-index) and in a fixed banner, on a scrolled page, viewport and
/// full page.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn masks_cover_modal_dialogs_and_scrolled_pages() {
    let flow = r#"{ "target": { "serve": "web", "url": "/secret-dialog.html" },
        "viewport": { "width": 1280, "height": 900 }, "steps": [
        { "action": "fill", "locator": { "label": "Access token" }, "value": "Wombat7Quartz" },
        { "action": "click", "locator": { "role": "button", "name": "Confirm" } },
        { "action": "assertVisible", "locator": { "role": "dialog" } },
        { "action": "screenshot", "name": "dialog" },
        { "action": "screenshot", "name": "dialog-full", "fullPage": true },
        { "action": "click", "locator": { "role": "button", "name": "Done" } },
        { "action": "assertHidden", "locator": { "role": "dialog" } },
        { "action": "evaluate", "operation": "scrollTo", "x": 0, "y": 1000 },
        { "action": "screenshot", "name": "scrolled" },
        { "action": "screenshot", "name": "scrolled-full", "fullPage": true },
        { "action": "assertCount", "locator": { "css": ":popover-open, [aria-hidden=true]" }, "count": 0 }
    ] }"#;
    let mut o = open(flow, true).await;
    let mut shots = Vec::new();
    let mut notes = Vec::new();
    for i in 0..o.flow.steps.len() {
        let (a, obs) = step(&mut o, i).await;
        shots.extend(a);
        notes.extend(obs);
    }
    let (_, _run) = close(o).await;
    assert_eq!(shots.len(), 4, "{notes:?}");
    for a in &shots {
        assert_masked(Path::new(&a.path), &a.path);
    }
}

/// A page that takes the masks away as soon as they appear: the picture
/// is not published (the masks are checked after the capture). Control:
/// without the secret registered, the picture shows it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_that_removes_the_masks_gets_no_picture() {
    let flow = r#"{ "target": { "serve": "web", "url": "/secret-hostile.html" },
        "viewport": { "width": 1280, "height": 900 }, "steps": [
        { "action": "fill", "locator": { "label": "Access token" }, "value": "Wombat7Quartz" },
        { "action": "click", "locator": { "role": "button", "name": "Echo" } },
        { "action": "assertValue", "locator": { "label": "Access token" }, "equals": "" },
        { "action": "screenshot", "name": "hostile" }
    ] }"#;
    let mut o = open(flow, false).await;
    let mut control = Vec::new();
    for i in 0..4 {
        control.extend(step(&mut o, i).await.0);
    }
    let (_, _control_run) = close(o).await;
    assert_eq!(control.len(), 1);
    assert!(
        fold(&text_of(Path::new(&control[0].path))).contains(&fold(SECRET)),
        "control: the page shows the value"
    );
    let mut o = open(flow, true).await;
    for i in 0..3 {
        step(&mut o, i).await;
    }
    let (shots, obs) = step(&mut o, 3).await;
    let (_, _run) = close(o).await;
    assert!(shots.is_empty(), "withheld, not published");
    let note = withheld_note(&obs).unwrap_or_else(|| panic!("no withheld observation: {obs:?}"));
    assert!(note.contains("could not be masked"), "{note}");
}

const VIDEO_FLOW: &str = r#"{ "target": { "serve": "web", "url": "/secret-echo.html" },
    "viewport": { "width": 1280, "height": 900 }, "steps": [
    { "action": "fill", "locator": { "label": "Access token" }, "value": "Wombat7Quartz" },
    { "action": "click", "locator": { "role": "button", "name": "Echo", "exact": true } },
    { "action": "assertText", "locator": { "testId": "count" }, "equals": "echoed 1 times" },
    { "action": "click", "locator": { "role": "button", "name": "Echo", "exact": true } }
] }"#;

/// Runs [`VIDEO_FLOW`] with video and the step trace on; returns the run
/// (its evidence) once the session closed.
async fn recorded_run(secret: bool) -> Run {
    use qa_core::recording::{RecordMode, Recording};
    let flow = parse_flow(VIDEO_FLOW, &fixtures());
    let mut run = context();
    run.ctx.recording = Recording {
        video: RecordMode::On,
        trace: RecordMode::On,
        ..Default::default()
    };
    if secret {
        run.ctx.secrets.add(SECRET);
    }
    let profile = run.ctx.evidence.run_dir().join("work/chromium-profile");
    let s = qa_web::WebDriver::new()
        .open(&flow, run.ctx.clone())
        .await
        .unwrap_or_else(|e| panic!("open: {}: {}", e.code, e.message));
    // Where the profile really is (a link when the browser runs as its own user).
    let profile = common::real_path(&profile);
    let mut o = Open {
        run,
        flow,
        s,
        profile,
    };
    for i in 0..4 {
        step(&mut o, i).await;
    }
    close(o).await.1
}

/// Every distinct frame of every video of the run, as PNG files.
fn video_frames(run: &Run, out: &Path) -> Vec<PathBuf> {
    let dir = run.ctx.evidence.run_dir().join("artifacts/videos");
    let mut frames = Vec::new();
    for v in std::fs::read_dir(&dir).unwrap().flatten() {
        let p = v.path();
        if p.extension().is_none_or(|e| e != "webm") {
            continue;
        }
        let stem = p.file_stem().unwrap().to_string_lossy().into_owned();
        let ok = std::process::Command::new("ffmpeg")
            .args(["-v", "error", "-i"])
            .arg(&p)
            .args(["-vf", "mpdecimate", "-vsync", "vfr"])
            .arg(out.join(format!("{stem}-%04d.png")))
            .status()
            .unwrap();
        assert!(ok.success());
    }
    for f in std::fs::read_dir(out).unwrap().flatten() {
        frames.push(f.path());
    }
    frames.sort();
    frames
}

/// Video frames and the step trace's pictures follow the screenshots'
/// rule: OCR reads the control word and never the secret. The same run
/// without the secret registered shows it (positive control: the check
/// can fail).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn video_frames_and_trace_pictures_mask_the_secret() {
    let run = recorded_run(true).await;
    let tmp = tempfile::tempdir().unwrap();
    let frames = video_frames(&run, tmp.path());
    assert!(!frames.is_empty(), "the run has a video");
    let mut read_control = false;
    for f in &frames {
        let text = fold(&text_of(f));
        assert!(
            !text.contains(&fold(SECRET)),
            "the secret is readable in a video frame"
        );
        read_control |= text.contains(&fold(CONTROL));
    }
    assert!(read_control, "OCR reads the control word in the video");
    let traces = run.ctx.evidence.run_dir().join("artifacts/traces");
    let mut pictures = 0;
    for f in std::fs::read_dir(&traces).unwrap().flatten() {
        let p = f.path();
        if p.extension().is_some_and(|e| e == "jpg") {
            pictures += 1;
            assert_masked(&p, "trace picture");
        }
    }
    assert!(pictures >= 4, "{pictures} trace pictures");
    let trace = std::fs::read(traces.join("trace.json")).expect("the trace was kept");
    assert!(!String::from_utf8_lossy(&trace).contains(SECRET));

    // Positive control: without the secret registered, the video shows it.
    let run = recorded_run(false).await;
    let tmp = tempfile::tempdir().unwrap();
    let shown = video_frames(&run, tmp.path())
        .iter()
        .any(|f| fold(&text_of(f)).contains(&fold(SECRET)));
    assert!(shown, "OCR reads the unregistered value in the video");
}
