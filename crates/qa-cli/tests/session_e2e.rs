//! Interactive sessions through the Rust API (`qa_runner::runner::interactive`)
//! against the loopback fixture app in real Chromium: observe → act by
//! reference → a stale reference refused → finish with the same result
//! document and evidence as a flow run; the exported flow passes under
//! `ui-qa run`.

mod common;

use common::{bin, App};
use qa_core::recording::RecordMode;
use qa_core::result::{RunStatus, StepStatus};
use qa_core::SurfaceDriver;
use qa_runner::runner::interactive::{Interactive, On, SessionConfig, SessionError};
use serde_json::json;
use std::sync::Arc;

fn refs_by_name(o: &qa_core::observe::Observation) -> std::collections::HashMap<String, String> {
    o.elements
        .iter()
        .filter_map(|e| e.reference.clone().map(|r| (e.name.clone(), r)))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn observe_act_by_reference_finish_and_replay_the_export() {
    let dir = tempfile::tempdir().unwrap();
    let app = App::start(
        dir.path(),
        json!({ "username": "staff", "password": "session-pw-1234" }),
    );
    let drivers: Vec<Arc<dyn SurfaceDriver>> = vec![Arc::new(qa_web::WebDriver::new())];
    let mut config = SessionConfig::new(dir.path().join("ws"));
    config.options.video = Some(RecordMode::Off);
    let mut s = Interactive::start(
        &drivers,
        json!({ "url": format!("{}/login", app.a) }),
        config,
    )
    .await
    .unwrap_or_else(|e| panic!("start: {e}"));

    let o1 = s.observe().await.unwrap();
    assert_eq!(o1.id, "o1");
    let refs = refs_by_name(&o1);
    let user = refs["Username"].clone();
    let pass = refs["Password"].clone();
    let out = s
        .act(
            On::Ref(user.clone()),
            json!({ "action": "fill", "value": "staff" }),
        )
        .await
        .unwrap();
    assert_eq!(out.status, StepStatus::Passed, "{:?}", out.reason);
    assert!(out.invalidated, "a fill is an action");

    // The password's reference came from o1, which the fill made stale.
    match s
        .act(
            On::Ref(pass.clone()),
            json!({ "action": "fill", "value": "x" }),
        )
        .await
    {
        Err(SessionError::StaleRef { reference, of, .. }) => {
            assert_eq!((reference.as_str(), of.as_str()), (pass.as_str(), "o1"));
        }
        other => panic!("a stale reference must be refused, got {other:?}"),
    }
    // A reference that never existed is refused too.
    let o2 = s.observe().await.unwrap();
    assert_eq!(o2.id, "o2");
    assert!(matches!(
        s.act(On::Ref("@e99".into()), json!({ "action": "click" }))
            .await,
        Err(SessionError::UnknownRef { .. })
    ));
    let refs = refs_by_name(&o2);
    let out = s
        .act(
            On::Ref(refs["Password"].clone()),
            json!({ "action": "fill", "value": "session-pw-1234" }),
        )
        .await
        .unwrap();
    assert_eq!(out.status, StepStatus::Passed);
    let o3 = s.observe().await.unwrap();
    let out = s
        .act(
            On::Ref(refs_by_name(&o3)["Sign in"].clone()),
            json!({ "action": "click" }),
        )
        .await
        .unwrap();
    assert_eq!(out.status, StepStatus::Passed, "{:?}", out.reason);
    let heading = qa_core::flow::Locator {
        role: Some("heading".into()),
        name: Some("Signed in".into()),
        ..Default::default()
    };
    let out = s
        .act(
            On::Locator(Box::new(heading)),
            json!({ "action": "assertVisible" }),
        )
        .await
        .unwrap();
    assert_eq!(out.status, StepStatus::Passed, "{:?}", out.reason);
    assert!(!out.invalidated, "an assertion keeps the references");

    let run_dir = s.run_dir().to_path_buf();
    let export = dir.path().join("explored.jsonc");
    let (r, exported) = s.finish(Some(&export)).await;
    assert_eq!(r.status, RunStatus::Passed, "{r:#?}");
    assert_eq!(
        r.steps.len(),
        4,
        "the stale and unknown references ran nothing"
    );
    assert_eq!(exported.as_deref(), Some(export.as_path()));
    assert!(run_dir.join("result.json").exists());
    assert!(run_dir.join("report.html").exists());
    assert!(!r.cleanup.ended.is_empty(), "the browser was ended");
    assert!(r.cleanup.left.is_empty(), "{:?}", r.cleanup);

    // The exported flow replays.
    let text = std::fs::read_to_string(&export).unwrap();
    assert!(
        text.contains(r#""label""#) || text.contains(r#""role""#),
        "{text}"
    );
    let o = std::process::Command::new(bin())
        .args(["run", "--json", "--video", "off", "--workspace"])
        .arg(dir.path().join("ws2"))
        .arg(&export)
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["status"], "PASSED", "{v:#}\n{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_terminal_session_observes_its_screen_and_aborts_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let drivers: Vec<Arc<dyn SurfaceDriver>> = vec![Arc::new(qa_tui::TuiDriver::new())];
    let mut s = Interactive::start(
        &drivers,
        json!({ "command": { "argv": ["sh", "-c", "printf 'ready> '; read x; echo got:$x; sleep 30"] } }),
        SessionConfig::new(dir.path().join("ws")),
    )
    .await
    .unwrap_or_else(|e| panic!("start: {e}"));
    let out = s
        .act(
            On::Nothing,
            json!({ "action": "waitForText", "text": "ready>" }),
        )
        .await
        .unwrap();
    assert_eq!(out.status, StepStatus::Passed, "{:?}", out.reason);
    s.act(On::Nothing, json!({ "action": "sendText", "text": "abc" }))
        .await
        .unwrap();
    s.act(
        On::Nothing,
        json!({ "action": "sendKeys", "keys": ["Enter"] }),
    )
    .await
    .unwrap();
    let out = s
        .act(
            On::Nothing,
            json!({ "action": "waitForText", "text": "got:abc" }),
        )
        .await
        .unwrap();
    assert_eq!(out.status, StepStatus::Passed, "{:?}", out.reason);
    let o = s.observe().await.unwrap();
    let screen = o.screen.expect("a terminal observation has a screen");
    assert!(
        screen.lines.iter().any(|l| l.contains("got:abc")),
        "{screen:?}"
    );
    let r = s.abort().await;
    assert_eq!(r.status, RunStatus::Failed);
    assert!(r.cancelled, "{r:#?}");
    assert!(r.cleanup.left.is_empty(), "{:?}", r.cleanup);
    assert!(
        !r.cleanup.ended.is_empty(),
        "the program (sleeping) was ended"
    );
}
