//! The origin-attack page: nothing reaches the second origin.

mod common;
use common::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn origin_attack_reaches_nothing() {
    let first = Recorder::start(Some(fixtures().join("web")));
    let second = Recorder::start(None);
    let evil = second.origin.clone();
    let flow = format!(
        r#"{{ "target": {{ "url": "{}/attack.html?evil={}" }}, "steps": [
            {{ "action": "assertText", "locator": {{ "testId": "status" }}, "equals": "done" }},
            {{ "action": "assertText", "locator": {{ "testId": "ws-proto" }}, "equals": "closed" }},
            {{ "action": "assertText", "locator": {{ "testId": "worker-fetch" }}, "equals": "failed" }},
            {{ "action": "assertText", "locator": {{ "testId": "worker-import" }}, "equals": "failed" }},
            {{ "action": "assertText", "locator": {{ "testId": "worker-ws" }}, "equals": "closed" }},
            {{ "action": "waitForTimeout", "ms": 500 }}
        ] }}"#,
        first.origin, evil
    );
    let o = run_flow(&flow, &fixtures()).await;
    assert_eq!(o.failure(), None, "{:?}", o.steps);
    // Give stray connections a moment to arrive (there must be none).
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert_eq!(
        second.requests(),
        Vec::<String>::new(),
        "requests reached the second origin"
    );
    let line = o
        .observations
        .iter()
        .find(|x| x.starts_with(&format!("blocked request to {evil} (")))
        .unwrap_or_else(|| panic!("no blocked observation: {:?}", o.observations));
    // The note names the fix.
    assert!(
        line.ends_with(&format!("add \"{evil}\" to target.allowedOrigins")),
        "{line}"
    );
    let n: u32 = line
        .rsplit('(')
        .next()
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!(
        n >= 10,
        "expected most escapes to be blocked and counted, got {line}"
    );
    // The WebSockets created past the in-page guard (page and worker) were
    // stopped by the network proxy: Chromium tunnels ws:// with CONNECT.
    let host_port = evil.trim_start_matches("http://");
    let proxy_line = o
        .observations
        .iter()
        .find(|x| x.contains("blocked at the network proxy"))
        .unwrap_or_else(|| panic!("no proxy-layer observation: {:?}", o.observations));
    let tunnels: u32 = o
        .observations
        .iter()
        .find(|x| {
            x.starts_with(&format!(
                "blocked tunnel (https, wss or ws) to {host_port} ("
            ))
        })
        .and_then(|l| {
            l.rsplit('(')
                .next()?
                .split_whitespace()
                .next()?
                .parse()
                .ok()
        })
        .unwrap_or_else(|| panic!("no blocked tunnel observation: {:?}", o.observations));
    assert!(
        tunnels >= 2,
        "page + worker WebSockets past the guard: {tunnels}"
    );
    assert!(proxy_line.contains(host_port), "{proxy_line}");
    assert!(
        !o.observations
            .iter()
            .any(|x| x.contains("could not be contained")),
        "the dedicated worker runs: {:?}",
        o.observations
    );
    assert!(
        first.requests().iter().any(|r| r.contains("/redirect?to=")),
        "the redirect hop was requested"
    );
    assert!(o.close.cleanup.left.is_empty());
    assert!(processes_mentioning(&o.real_profile_dir).is_empty());
    eprintln!("observations: {:#?}", o.observations);
    eprintln!("first server saw: {:#?}", first.requests());
}
