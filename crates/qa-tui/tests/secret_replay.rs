//! The terminal replay never shows a secret, however the program's bytes
//! spell it: split by an escape sequence, or across two writes (and two PTY
//! reads). The published `terminal.cast` is replayed through a fresh
//! alacritty_terminal model and checked after every event.

#![cfg(unix)]

mod secret_support;

use secret_support::{assert_no_encoding, js, replay_texts, run_with_secrets, SecretRun};

const SECRET: &str = "Kiwi7Mango42Plum";

async fn run_printing(script: &str) -> SecretRun {
    let flow = format!(
        r#"{{ "viewport": {{ "cols": 60, "rows": 8 }},
            "target": {{ "command": {{ "argv": ["sh", "-c", {script}], "env": {{ "TOK": {tok} }} }} }},
            "steps": [ {{ "action": "waitForText", "text": "VISIBLE-END", "timeoutMs": 10000 }},
                       {{ "action": "waitForStable", "stableMs": 200 }} ] }}"#,
        script = js(script),
        tok = js(SECRET),
    );
    run_with_secrets(&flow, &[SECRET]).await
}

/// The replay is published, shows the secret at no event (nor its first
/// five characters), still shows the program's other output, and no
/// published byte holds an encoding of the secret.
fn check(run: &SecretRun) {
    assert!(run.steps.iter().all(|s| s.is_ok()), "{:?}", run.steps);
    let casts = run.published("cast");
    assert_eq!(
        casts.len(),
        1,
        "the replay is published: withheld {:?}, observations {:?}",
        run.evidence.withheld(),
        run.close.notes
    );
    let texts = replay_texts(&casts[0]);
    assert!(!texts.is_empty());
    for (i, t) in texts.iter().enumerate() {
        let flat: String = t.chars().filter(|c| !c.is_whitespace()).collect();
        assert!(
            !flat.contains(SECRET),
            "event {i} of the replay shows the secret:\n{t}"
        );
        assert!(
            !flat.contains("Kiwi7"),
            "event {i} of the replay shows the start of the secret:\n{t}"
        );
    }
    let last = texts.last().unwrap();
    assert!(
        last.contains("VISIBLE-END"),
        "the replay is useful:\n{last}"
    );
    assert!(last.contains("shown:"), "{last}");
    for f in run.files() {
        assert_no_encoding(
            &f.display().to_string(),
            &std::fs::read(&f).unwrap(),
            SECRET,
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_secret_split_by_sgr_is_not_replayed() {
    let run = run_printing(
        r#"printf 'shown: %.5s\033[1m%s\033[0m\r\n' "$TOK" "${TOK#?????}"
printf 'VISIBLE-END\r\n'
exec sleep 30"#,
    )
    .await;
    check(&run);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_secret_split_across_two_writes_is_not_replayed() {
    let run = run_printing(
        r#"printf 'shown: %.5s' "$TOK"; printf '%s\r\n' "${TOK#?????}"
printf 'VISIBLE-END\r\n'
exec sleep 30"#,
    )
    .await;
    check(&run);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_secret_split_across_two_reads_is_not_replayed() {
    // The pause makes the two halves arrive in two PTY reads (two events).
    let run = run_printing(
        r#"printf 'shown: %.5s' "$TOK"; sleep 0.3; printf '%s\r\n' "${TOK#?????}"
printf 'VISIBLE-END\r\n'
exec sleep 30"#,
    )
    .await;
    check(&run);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_secret_that_scrolls_right_after_its_prefix_is_not_replayed() {
    // The prefix is printed on the bottom row; the rest arrives in a later
    // read together with enough lines to scroll it up.
    let run = run_printing(
        r#"i=0; while [ $i -lt 12 ]; do printf 'filler %s\r\n' $i; i=$((i+1)); done
printf 'shown: %.5s' "$TOK"; sleep 0.3; printf '%s\r\nmore 1\r\nmore 2\r\n' "${TOK#?????}"
printf 'VISIBLE-END\r\n'
exec sleep 30"#,
    )
    .await;
    check(&run);
}
