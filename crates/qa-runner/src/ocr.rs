//! OCR for secret tests (feature `conformance`): reads the text of a
//! published PNG with Debian's `tesseract` and checks it for a secret, so a
//! test proves that a secret is absent from the *pixels*, not only from the
//! bytes of the file.
//!
//! Tesseract confuses a few glyphs (`z`/`2`, `O`/`0`, `l`/`1`/`I`, `S`/`5`,
//! `B`/`8`): both sides are folded to one form before comparing, and white
//! space is dropped, so a secret split across a line break or read with an
//! odd space still counts as seen.

use std::path::Path;
use std::process::Command;

/// The text tesseract reads in `png` (English model, one block of text).
/// Panics with the remediation when tesseract is not installed: a secret
/// test must never pass because it could not look.
pub fn text_of(png: &Path) -> String {
    let out = Command::new("tesseract")
        .arg(png)
        .arg("stdout")
        .args(["--psm", "6"])
        .output()
        .unwrap_or_else(|e| {
            panic!("cannot run tesseract ({e}): apt-get install -y tesseract-ocr tesseract-ocr-eng (cargo xtask deps)")
        });
    assert!(
        out.status.success(),
        "tesseract failed on {}: {}",
        png.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `s` folded for comparison: lower case, look-alike glyphs merged, only
/// letters and digits kept.
pub fn fold(s: &str) -> String {
    s.chars()
        .filter(|c| c.is_alphanumeric())
        .map(|c| match c.to_ascii_lowercase() {
            'z' => '2',
            'o' => '0',
            'l' | 'i' | '|' => '1',
            's' => '5',
            'b' => '8',
            'g' => '9',
            c => c,
        })
        .collect()
}

/// Whether OCR of `png` shows `secret` (folded, see [`fold`]).
pub fn shows(png: &Path, secret: &str) -> bool {
    fold(&text_of(png)).contains(&fold(secret))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folding_merges_look_alikes_and_drops_spaces() {
        assert_eq!(fold("Zebra O1l I"), fold("2e8ra 0 1 1 1"));
        assert!(fold("token: s3cr-Et Value").contains(&fold("S3CRET")));
    }
}
