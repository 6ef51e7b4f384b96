//! Manual exploration: EXPLORE='["app"]' cargo test -p qa-linux --test explore -- --ignored --nocapture
mod common;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore]
async fn explore() {
    let argv = std::env::var("EXPLORE").unwrap();
    let flow = format!(
        r#"{{ "target": {{ "application": {{ "launch": {{ "argv": {argv} }} }} }},
      "steps": [ {{ "action": "waitForWindow" }}, {{ "action": "capture" }} ] }}"#
    );
    let r = common::run(&flow).await;
    println!("error: {:?}\nelapsed {:?}", r.error, r.elapsed);
    for a in &r.artifacts {
        println!("{}", a.path);
        if a.path.ends_with(".json") {
            std::fs::write("/tmp/explore.json", common::read_artifact(a)).unwrap();
        }
    }
    println!("{:?}", r.cleanup);
}
