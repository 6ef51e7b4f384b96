//! Terminal pixels never show a secret: every PNG the terminal driver
//! publishes is rendered from a grid whose secret cells are masked, and the
//! text twin is published with the same mask (not withheld). Proven with OCR
//! of every published PNG, with positive controls on the same screen.

#![cfg(unix)]

mod secret_support;

use qa_runner::ocr;
use secret_support::{assert_no_encoding, b64, js, run_with_secrets};

const SECRET: &str = "Kiwi7Mango42Plum";
/// A non-secret word of the same shape, on the same screen: OCR must read it.
const CONTROL: &str = "Lime3Peach58Fig";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn published_pngs_and_text_twins_mask_every_secret_cell() {
    // The secret plain, split by SGR bold, wrapped across two rows, and as
    // base64; plus two control words.
    let script = r#"printf 'public: VISIBLEBANNER %s\r\n' "$CTL"
printf 'token: %s\r\n' "$TOK"
printf 'bold: %.5s\033[1m%s\033[0m\r\n' "$TOK" "${TOK#?????}"
printf 'wrap: %s%s\r\n' xxxxxxxxxxxxxxxxxxxxxxxxxxx "$TOK"
printf 'b64: %s\r\n' "$TOK64"
printf 'END-OF-SCREEN\r\n'
exec sleep 30"#;
    let flow = format!(
        r#"{{ "viewport": {{ "cols": 40, "rows": 10 }},
            "target": {{ "command": {{ "argv": ["sh", "-c", {script}],
                         "env": {{ "TOK": {tok}, "TOK64": {tok64}, "CTL": {ctl} }} }} }},
            "steps": [ {{ "action": "waitForText", "text": "END-OF-SCREEN", "timeoutMs": 10000 }},
                       {{ "action": "capture" }},
                       {{ "action": "assertText", "text": "never on screen", "timeoutMs": 400 }} ] }}"#,
        script = js(script),
        tok = js(SECRET),
        tok64 = js(&b64(SECRET.as_bytes())),
        ctl = js(CONTROL),
    );
    let run = run_with_secrets(&flow, &[SECRET]).await;
    assert!(run.steps[0].is_ok(), "{:?}", run.steps);
    assert!(run.steps[1].is_ok(), "{:?}", run.steps);
    let reason = run.steps[2].as_ref().unwrap_err();
    assert_no_encoding("the failure reason", reason.as_bytes(), SECRET);

    // Both captures (the capture step and the failure capture) are
    // published: PNG and text twin, nothing withheld.
    let withheld = run.evidence.withheld();
    assert!(
        withheld
            .iter()
            .all(|w| !w.name.ends_with(".png") && !w.name.ends_with(".txt")),
        "captures withheld: {withheld:?}; observations {:?}",
        run.step_observations
    );
    let pngs = run.published("png");
    let txts = run.published("txt");
    assert_eq!(pngs.len(), 2, "{pngs:?}");
    assert_eq!(txts.len(), 2, "{txts:?}");

    for png in &pngs {
        let text = ocr::text_of(png);
        // Positive controls: OCR reads this screen, so a visible secret would be read.
        assert!(
            ocr::fold(&text).contains(&ocr::fold("VISIBLEBANNER")),
            "OCR did not read the banner of {}: {text:?}",
            png.display()
        );
        assert!(
            ocr::fold(&text).contains(&ocr::fold(CONTROL)),
            "OCR did not read the control word of {}: {text:?}",
            png.display()
        );
        assert!(
            !ocr::shows(png, SECRET),
            "{} shows the secret: {text:?}",
            png.display()
        );
        for part in ["Kiwi7Mango", "Mango42Plum"] {
            assert!(
                !ocr::fold(&text).contains(&ocr::fold(part)),
                "{} shows {part:?}: {text:?}",
                png.display()
            );
        }
    }
    for txt in &txts {
        let body = std::fs::read_to_string(txt).unwrap();
        assert!(body.contains("VISIBLEBANNER"), "{body}");
        assert!(body.contains(CONTROL), "{body}");
        assert!(body.contains('█'), "the secret cells are masked: {body}");
        assert_no_encoding(&txt.display().to_string(), body.as_bytes(), SECRET);
        assert!(
            !body.contains("Kiwi7") && !body.contains("42Plum"),
            "{body}"
        );
    }
    for f in run.files() {
        assert_no_encoding(
            &f.display().to_string(),
            &std::fs::read(&f).unwrap(),
            SECRET,
        );
    }
}
